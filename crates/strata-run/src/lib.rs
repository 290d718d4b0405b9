//! strata-run: the SLOB method end to end, behind the database-engine
//! plug-in point (`engine`); PostgreSQL's engine is here. Provisions a
//! throwaway cluster (or connects to the user's server), loads the schemas,
//! runs the sessions, snapshots every layer at the edges of the measured
//! window (database counters, block devices under the data and WAL
//! directories, CPU of the host, the server and strata) and accounts for
//! every I/O across those layers.
//!
//! Not for: the SQL of the method (`strata-slob`), server provisioning
//! mechanics (`strata-db`), or printing to a terminal (the binary).

pub mod accounting;
pub mod edge;
pub mod engine;
pub mod outliers;
pub mod output;
pub mod processes;
pub mod read_path;
pub mod session_run;
pub mod tenants;
pub mod verdict;
