//! Where PostgreSQL 18's server binaries are on a test machine.
//!
//! Only locates binaries: it starts nothing and knows no strata-postgres
//! type. A test server built from strata-postgres types (cluster options,
//! throwaway clusters, clients) stays in that crate's tests.

use std::path::PathBuf;

/// Where scripts/install-test-deps puts PostgreSQL 18's server binaries
/// (`$STRATA_PG18_BIN` overrides it); panics, naming the way to install
/// them, when `postgres` or `initdb` is missing there.
pub fn pg18_bin_dir() -> PathBuf {
    let dir = std::env::var_os("STRATA_PG18_BIN").map_or_else(
        || PathBuf::from("/opt/strata/postgresql-18/bin"),
        PathBuf::from,
    );
    assert!(
        dir.join("postgres").is_file() && dir.join("initdb").is_file(),
        "PostgreSQL 18 server binaries are not in {}: run scripts/install-test-deps as root",
        dir.display()
    );
    dir
}
