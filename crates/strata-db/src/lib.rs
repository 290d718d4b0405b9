//! strata-db: what every database engine's throwaway server and run share.
//!
//! For: the OS account and cgroup a throwaway server's programs run as
//! (`account`), keeping the OS page cache from holding a data set
//! (`pagecache`), where a throwaway server's files live (`workdir`), what
//! a killed strata left behind (`leftovers`), a server's shared memory
//! charged before a window (`shared_memory`), and masking passwords in
//! connection strings that did not parse (`secrets`).
//!
//! Not for: any one engine (strata-postgres, strata-sqlite, strata-mariadb),
//! turning counters into rates or findings, or generating load.

pub mod account;
pub mod leftovers;
pub mod pagecache;
pub mod secrets;
pub mod shared_memory;
pub mod workdir;
