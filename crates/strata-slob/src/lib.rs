//! strata-slob: the SLOB method for PostgreSQL. It lays out schemas whose
//! tables hold exactly one row per 8 KiB block with incompressible data, then
//! runs many sessions that each read random single blocks through an index
//! (plus optional updates and full scans), so that with a small cache every
//! logical read is a physical read of a distinct block. The session loop,
//! window and tally rules serve the other engines too: `threads` runs them
//! on OS threads over an engine's blocking connections (SQLite, MariaDB).
//!
//! Not for: reading OS or device counters, printing, or deciding exit codes;
//! the binary does those around what this crate returns.

pub mod load;
pub mod pgio_conf;
pub mod schema;
pub mod session;
pub mod threads;

mod pg;
