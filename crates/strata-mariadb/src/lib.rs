//! strata-mariadb: the SLOB method on MariaDB (and MySQL) with InnoDB. A
//! throwaway `mariadbd` (private socket, small buffer pool, O_DIRECT data
//! files) or the user's server; one live row per InnoDB page with shuffled
//! keys and a secondary index on them; sessions as OS threads with a
//! connection each; and the measured window accounted from InnoDB's status
//! counters, performance_schema's file summaries when on, the devices
//! under the data directory and the CPU of host, server and strata.
//!
//! Its [`ENGINE`] is the binary's registry entry: strata-run configures
//! it and runs it; [`run()`] gives the [`MariaDbOutcome`], whose figures are
//! strata-run's `RunFigures` with InnoDB's beside them, and the engine hands
//! strata-run the one outcome every engine returns.
//!
//! Its own options (`--performance-schema`) are `options`.
//!
//! Not for: the options every engine takes, printing, or PostgreSQL.

pub mod collector;
pub mod configure;
pub mod engine;
pub mod environment;
pub mod figures;
pub mod kind;
pub mod locality;
pub mod options;
mod outlier_queries;
pub mod record;
pub mod roles;
pub mod run;
pub mod schema;
pub mod server;
pub mod setup;
pub mod target;
mod window;

mod session;

pub use configure::ENGINE;
pub use engine::MariaDbEngine;
pub use environment::MariaDbEnvironment;
pub use figures::{InnoDbFigures, MariaDbFigures, ReadReconciliation};
pub use run::{check_config, run, MariaDbOutcome, MariaDbRunConfig, MariaDbServer};
pub use server::{server_os_account, ServerOptions, ThrowawayServer, DEFAULT_BUFFER_POOL_BYTES};
pub use setup::{remove, setup, Removed, SetupOptions, SetupReport, TableLayout};
pub use target::MariaDbTarget;
