//! PostgreSQL behind strata's database-engine plug-in point: its block
//! and cache for the request's checks, and its configuration from the
//! request.
//!
//! Not for: the run itself (`run`).

use crate::connect::ConnectionTarget;
use crate::kind::KIND;
use crate::options::PostgresOptions;
use crate::run::{run_slob, Database, SlobConfig};
use anyhow::bail;
use std::sync::atomic::AtomicBool;
use strata_run::engine::{DatabaseEngine, EngineKind};
use strata_run::options::DataRequest;
use strata_run::outcome::{RunObserver, SlobOutcome};
use strata_run::registry::{EngineEntry, ObservedServer};
use strata_run::request::{EngineDefaults, EngineRequest};

/// PostgreSQL in the registry: the first engine, so the embedded default
/// and any `--db` no other engine claims.
pub const ENGINE: EngineEntry = EngineEntry {
    kind: KIND,
    claims_db: |db| db.starts_with("postgres://") || db.starts_with("postgresql://"),
    embedded_here,
    defaults,
    shown_db: |db| Ok(ConnectionTarget::parse(db)?.redacted()),
    configure: |data, request| Ok(Box::new(configure(data, request)?)),
    observe: Some(observe),
};

/// The server `strata observe --db` follows: its counters and wait
/// events, and its backends where they run on this machine.
fn observe(url: &str) -> anyhow::Result<ObservedServer> {
    let target = ConnectionTarget::parse(url)?;
    let local_pids = crate::collector::local_backend_pids(&target)?;
    let collector = crate::collector::PostgresCollector::start(&target)?;
    Ok(ObservedServer {
        collector: Box::new(collector),
        local_pids,
        recorded_as: ("postgres", serde_json::Value::String(target.redacted())),
    })
}

/// Where PostgreSQL's server binaries are (or `--pg-bin` names where they
/// should be, which the run checks).
fn embedded_here(data: &DataRequest) -> anyhow::Result<()> {
    let pg_bin = data.engine_options.get::<PostgresOptions>()?.pg_bin;
    match crate::cluster::binaries_version_num(pg_bin.as_deref()) {
        Err(error) if pg_bin.is_none() => {
            bail!("no PostgreSQL server binaries ({error:#})")
        }
        _ => Ok(()),
    }
}

/// PostgreSQL: a throwaway cluster or the user's server.
pub struct PostgresEngine(pub SlobConfig);

impl DatabaseEngine for PostgresEngine {
    fn kind(&self) -> EngineKind {
        KIND
    }

    fn run(
        self: Box<Self>,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<SlobOutcome> {
        run_slob(self.0, interrupt, observer)
    }
}

/// PostgreSQL's block and its cache: shared_buffers, `--shared-buffers`
/// when given.
pub fn defaults(data: &DataRequest) -> EngineDefaults {
    EngineDefaults {
        block_bytes: strata_slob::schema::BLOCK_BYTES as u32,
        cache: "the throwaway cluster's shared_buffers",
        cache_bytes: own_options(data).unwrap_or_default().shared_buffers_bytes(),
        ways_out: "a smaller --shared-buffers, or --page-cache-limit none to measure the \
                   cache on purpose",
    }
}

/// PostgreSQL's engine for `data` (`--db`, else a throwaway cluster),
/// after every check that needs no work.
pub fn configure(data: &DataRequest, request: EngineRequest) -> anyhow::Result<PostgresEngine> {
    let options = own_options(data)?;
    options.check()?;
    Ok(PostgresEngine(SlobConfig {
        database: database(data, options)?,
        page_cache: request.page_cache,
        load_parallel: data.load_parallel.unwrap_or(2),
        replace: data.replace,
        driver: request.driver,
        read_path: request.read_path,
        setup_only: request.setup_only,
        record: request.record,
        command: request.command,
        agent: strata_run::request::server_host_agent(data),
        other_agents: strata_run::request::other_host_agents(data),
        shard: request.shard,
        sweep: request.sweep,
    }))
}

/// PostgreSQL's own options as the command line gave them.
fn own_options(data: &DataRequest) -> anyhow::Result<PostgresOptions> {
    data.engine_options.get()
}

/// PostgreSQL's server: the user's (`--db`), or a throwaway cluster.
fn database(data: &DataRequest, options: PostgresOptions) -> anyhow::Result<Database> {
    let Some(text) = &data.db else {
        let account = crate::cluster::server_account(options.os_user.as_deref())?;
        return Ok(Database::Embedded(crate::run::Embedded {
            work_dir: strata_run::request::work_dir(data, account)?,
            shared_buffers_bytes: options.shared_buffers_bytes(),
            os_user: options.os_user,
            keep: options.keep,
            bin_dir: options.pg_bin,
        }));
    };
    for (flag, given) in [
        ("--keep", options.keep),
        ("--shared-buffers", options.shared_buffers.is_some()),
        ("--os-user", options.os_user.is_some()),
        ("--pg-bin", options.pg_bin.is_some()),
        ("--work-dir", data.work_dir.is_some()),
    ] {
        if given {
            bail!("{flag} applies to the throwaway cluster, not to --db");
        }
    }
    Ok(Database::External {
        target: Box::new(ConnectionTarget::parse(text)?),
    })
}
