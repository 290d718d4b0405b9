//! SQLite's engine from a run's request: `--db FILE` or a temporary file
//! in the work directory, after every check that needs no work.
//!
//! Not for: running it (`run`).

use crate::kind::KIND;
use crate::SqliteEngine;
use anyhow::bail;
use std::path::PathBuf;
use strata_run::options::DataRequest;
use strata_run::registry::EngineEntry;
use strata_run::request::{work_dir, EngineDefaults, EngineRequest};

/// SQLite in the registry: `--engine sqlite`, and the embedded default
/// where no PostgreSQL can run (it needs nothing but strata).
pub const ENGINE: EngineEntry = EngineEntry {
    kind: KIND,
    claims_db: |_| false,
    embedded_here: |_| Ok(()),
    defaults: |_| defaults(),
    shown_db: |db| Ok(db.to_string()),
    configure: |data, request| Ok(Box::new(configure(data, request)?)),
    observe: None,
};

/// SQLite's page and its cache: each session's cache_size.
pub fn defaults() -> EngineDefaults {
    EngineDefaults {
        block_bytes: crate::schema::DEFAULT_PAGE_BYTES,
        cache: "each SQLite session's cache_size",
        cache_bytes: crate::DEFAULT_SESSION_CACHE_BYTES,
        ways_out: "or --page-cache-limit none to measure the cache on purpose",
    }
}

/// SQLite's engine on `--db FILE` or a temporary file in the work
/// directory, once no PostgreSQL-only option was given and its own checks
/// pass: all before any work starts.
pub fn configure(data: &DataRequest, request: EngineRequest) -> anyhow::Result<SqliteEngine> {
    let database = match &data.db {
        Some(_) if data.work_dir.is_some() => {
            bail!("--work-dir applies to SQLite's temporary file, not to --db FILE")
        }
        Some(file) => crate::SqliteDatabase::File(PathBuf::from(file)),
        None => crate::SqliteDatabase::Temporary {
            work_dir: work_dir(data, None)?,
        },
    };
    let config = crate::SqliteRunConfig {
        database,
        page_cache: request.page_cache,
        session_cache_bytes: crate::DEFAULT_SESSION_CACHE_BYTES,
        page_bytes: None,
        replace: data.replace,
        driver: request.driver,
        setup_only: request.setup_only,
        record: request.record,
        command: request.command,
    };
    crate::check_config(&config)?;
    Ok(crate::SqliteEngine(config))
}
