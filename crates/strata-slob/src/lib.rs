//! strata-slob: the SLOB method, whatever the engine. A data set of
//! schemas whose tables hold exactly one row per block, read by many
//! sessions that each read random single blocks through an index (plus
//! optional updates and full scans), so that with a small cache every
//! logical read is a physical read of a distinct block. Here: the plan
//! (`schema`), what a load reports (`load`), pgio.conf (`pgio_conf`) and
//! SLOB's slob.conf (`slob_conf`) as defaults (`conf_file`; which file,
//! `config`), the sessions'
//! options, loop rules, window and tally (`session`), and the
//! session loop on OS threads over an engine's blocking connections
//! (`threads`: SQLite, MariaDB).
//!
//! Not for: any engine's SQL or connections (strata-postgres, strata-sqlite,
//! strata-mariadb), reading OS or device counters, printing, or deciding
//! exit codes.

pub mod conf_file;
pub mod config;
pub mod load;
pub mod pgio_conf;
pub mod schema;
pub mod session;
pub mod slob_conf;
pub mod threads;
