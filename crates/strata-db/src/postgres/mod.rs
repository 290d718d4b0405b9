//! PostgreSQL: a throwaway cluster, connections, and the counters strata reads.
//!
//! Not for: load generation or schema creation (`strata-slob`).

pub mod cluster;
pub mod connect;
pub mod counters;
pub mod read_path;
