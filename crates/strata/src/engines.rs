//! The database engines built into strata: the registry, one line per
//! engine, in the order the embedded default prefers them.
//!
//! Not for: choosing, configuring or running an engine (strata-run's
//! `registry` and `job` ask the entries; its skeleton, `engine`, and each
//! engine's crate run it).

use strata_run::registry::Registry;

pub const REGISTRY: Registry = Registry(&[
    strata_postgres::ENGINE,
    strata_sqlite::ENGINE,
    strata_mariadb::ENGINE,
]);

/// The command line with every secret in it redacted.
pub fn redacted_command_line() -> Vec<String> {
    strata_run::job::redacted_command_line(REGISTRY)
}
