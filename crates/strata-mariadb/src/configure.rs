//! MariaDB's engine from a run's request: `--db mysql://…` or a throwaway
//! `mariadbd`, after every check that needs no work.
//!
//! Not for: running it (`run`).

use crate::kind::KIND;
use crate::options::MariaDbOptions;
use crate::MariaDbEngine;
use anyhow::bail;
use strata_run::options::DataRequest;
use strata_run::registry::{EngineEntry, ObservedServer};
use strata_run::request::{work_dir, EngineDefaults, EngineRequest};

/// MariaDB in the registry: `--db mysql://…` (or `mariadb://`), never the
/// embedded default.
pub const ENGINE: EngineEntry = EngineEntry {
    kind: KIND,
    claims_db: |db| db.starts_with("mysql://") || db.starts_with("mariadb://"),
    embedded_here: |_| bail!("MariaDB runs when asked: --engine mariadb"),
    defaults: |_| defaults(),
    shown_db: |db| Ok(crate::collector::redact(db)),
    configure: |data, request| Ok(Box::new(configure(data, request)?)),
    observe: Some(|url| {
        Ok(ObservedServer {
            collector: Box::new(crate::collector::MariaDbCollector::connect(url)?),
            local_pids: Vec::new(),
            recorded_as: ("mariadb", serde_json::Value::Bool(true)),
        })
    }),
};

/// InnoDB's page and its cache: the throwaway server's buffer pool.
pub fn defaults() -> EngineDefaults {
    EngineDefaults {
        block_bytes: crate::schema::DEFAULT_PAGE_BYTES,
        cache: "the throwaway mariadbd's innodb_buffer_pool_size",
        cache_bytes: crate::DEFAULT_BUFFER_POOL_BYTES,
        ways_out: "or a server of your own with --db",
    }
}

/// MariaDB's engine: `--db mysql://…` or a throwaway `mariadbd`, once its own checks
/// pass.
pub fn configure(data: &DataRequest, request: EngineRequest) -> anyhow::Result<MariaDbEngine> {
    let options: MariaDbOptions = data.engine_options.get()?;
    if options.performance_schema && data.db.is_some() {
        bail!(
            "--performance-schema starts strata's throwaway mariadbd with it; a server given with \
             --db must be started with performance_schema=ON itself (strata reads it when it is on)"
        );
    }
    // A sweep's points show InnoDB's own time per read, as PostgreSQL's
    // track_io_timing does for its throwaway cluster.
    let sweep_on_the_throwaway = request.sweep.is_some();
    let server = match &data.db {
        Some(_) if data.work_dir.is_some() => {
            bail!("--work-dir applies to the throwaway mariadbd, not to --db")
        }
        Some(url) => crate::MariaDbServer::External(crate::MariaDbTarget::from_url(url)?),
        None => crate::MariaDbServer::Throwaway(crate::ServerOptions {
            work_dir: work_dir(data, crate::server_os_account())?,
            buffer_pool_bytes: crate::DEFAULT_BUFFER_POOL_BYTES,
            performance_schema: options.performance_schema || sweep_on_the_throwaway,
        }),
    };
    let config = crate::MariaDbRunConfig {
        server,
        replace: data.replace,
        driver: request.driver,
        setup_only: request.setup_only,
        record: request.record,
        command: request.command,
        agent: strata_run::request::server_host_agent(data),
        other_agents: strata_run::request::other_host_agents(data),
        sweep: request.sweep,
    };
    crate::check_config(&config)?;
    Ok(crate::MariaDbEngine(config))
}
