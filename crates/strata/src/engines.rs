//! Dispatch to the database engines: which engine a run uses, what each
//! brings to the request's resolution, and each engine's configuration
//! from the request. Also the command line as the Recording keeps it, with
//! every connection string's password removed.
//!
//! Not for: configuring or running an engine (each engine's crate) or
//! resolving the workload (`strata_run::request`).

use anyhow::bail;
use strata_observe::watch::is_mariadb_url;
use strata_postgres::connect::ConnectionTarget;
use strata_run::engine::{DatabaseEngine, EngineKind};
use strata_run::options::DataRequest;
use strata_run::request::{EngineDefaults, EngineRequest};

/// The engine asked for, or PostgreSQL, or SQLite when no PostgreSQL server
/// binaries are here and no --db names a server: the embedded default
/// still runs, and says which engine it is.
pub fn engine_kind(data: &DataRequest) -> EngineKind {
    if let Some(kind) = data.engine {
        return kind;
    }
    match &data.db {
        Some(url) if is_mariadb_url(url) => return EngineKind::Mariadb,
        Some(_) => return EngineKind::Postgresql,
        None => {}
    }
    match strata_postgres::cluster::binaries_version_num(data.pg_bin.as_deref()) {
        Ok(_) => EngineKind::Postgresql,
        Err(_) if data.pg_bin.is_some() => EngineKind::Postgresql,
        Err(error) => {
            crate::note!(
                "strata: no PostgreSQL server binaries ({error:#}): running the embedded \
                 default on SQLite instead (--engine sqlite)"
            );
            EngineKind::Sqlite
        }
    }
}

/// The database as the options and the Recording show it: without its
/// password; a SQLite file as it is; none for a throwaway server.
pub fn shown_db(kind: EngineKind, data: &DataRequest) -> anyhow::Result<Option<String>> {
    Ok(match (&data.db, kind) {
        (None, _) => None,
        (Some(text), EngineKind::Postgresql) => Some(ConnectionTarget::parse(text)?.redacted()),
        (Some(text), _) => Some(redact_unless_file(text)),
    })
}

/// The block (one row) and the cache of `kind`'s throwaway server or file.
pub fn defaults(kind: EngineKind, data: &DataRequest) -> EngineDefaults {
    match kind {
        EngineKind::Postgresql => strata_postgres::engine::defaults(data),
        EngineKind::Mariadb => strata_mariadb::configure::defaults(),
        EngineKind::Sqlite => strata_sqlite::configure::defaults(),
    }
}

/// The configured engine, after every check that needs no work.
pub fn build(
    kind: EngineKind,
    data: &DataRequest,
    request: EngineRequest,
) -> anyhow::Result<Box<dyn DatabaseEngine>> {
    if data.performance_schema && kind != EngineKind::Mariadb {
        bail!(
            "--performance-schema does not apply to --engine {} (it starts MariaDB's throwaway \
             server with performance_schema on)",
            kind.name()
        );
    }
    Ok(match kind {
        EngineKind::Sqlite => Box::new(strata_sqlite::configure::configure(data, request)?),
        EngineKind::Mariadb => Box::new(strata_mariadb::configure::configure(data, request)?),
        EngineKind::Postgresql => Box::new(strata_postgres::engine::configure(data, request)?),
    })
}

/// Options whose values are connection strings or URLs that may hold a
/// password.
const SECRET_OPTIONS: [&str; 4] = ["--db", "--mariadb", "--agent", "--prometheus"];

/// A connection string with its password replaced, or `***` when it does
/// not parse; an agent's or Prometheus's URL with its password `***`.
fn redact(option: &str, value: &str) -> String {
    if matches!(option, "--agent" | "--prometheus") {
        return strata_agent::endpoint::masked(value);
    }
    if is_mariadb_url(value) {
        return strata_mariadb::collector::redact(value);
    }
    ConnectionTarget::parse(value).map_or("***".into(), |target| target.redacted())
}

/// A MariaDB URL without its password; a SQLite file name as it is.
fn redact_unless_file(value: &str) -> String {
    match is_mariadb_url(value) {
        true => strata_mariadb::collector::redact(value),
        false => value.to_string(),
    }
}

/// The command line with the values of `--db`, `--mariadb`, `--agent`
/// and `--prometheus` redacted.
pub fn redacted_command_line() -> Vec<String> {
    let mut redact_next: Option<String> = None;
    std::env::args()
        .map(|argument| {
            if let Some(option) = redact_next.take() {
                return redact(&option, &argument);
            }
            if SECRET_OPTIONS.contains(&argument.as_str()) {
                redact_next = Some(argument.clone());
                return argument;
            }
            match argument.split_once('=') {
                Some((option, value)) if SECRET_OPTIONS.contains(&option) => {
                    format!("{option}={}", redact(option, value))
                }
                _ => argument,
            }
        })
        .collect()
}
