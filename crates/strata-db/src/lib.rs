//! strata-db: the databases strata measures storage through.
//!
//! For: provisioning a throwaway PostgreSQL cluster on the storage under test,
//! keeping the OS page cache from holding its data set, connecting to a
//! PostgreSQL server (throwaway or the user's own) and reading its raw
//! monotonic I/O counters; the `postgres` and `mariadb` collectors the
//! sampler polls.
//!
//! Not for: turning counters into rates or findings (`strata-probe` and the
//! reporting crates do that), or generating load (`strata-slob`).

pub mod collectors;
pub mod pagecache;
pub mod postgres;
pub mod secrets;
pub mod workdir;
