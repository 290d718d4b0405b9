//! strata-sqlite: the SLOB method on SQLite, through the bundled SQLite
//! library (no server). One file holds a table per schema of the plan,
//! one row per page, shuffled keys and an index on them, in WAL mode;
//! sessions are OS threads with a connection each that read random single
//! pages through the index (plus optional updates and scans), and the run
//! is accounted from the OS alone, since SQLite has no I/O counters.
//!
//! Its results are strata-run's types (`SlobOutcome`, `RunFigures`), so the
//! binary prints and serializes them as it does PostgreSQL's.
//!
//! Not for: parsing options, printing, or PostgreSQL.

pub mod cache;
pub mod configure;
pub mod connection;
pub mod environment;
pub mod figures;
pub mod kind;
pub mod layout;
pub mod run;
pub mod schema;
pub mod setup;

mod session;
mod window;

pub use configure::ENGINE;
pub use layout::{check_layout, PageLayout};
pub use run::{
    check_config, run, SqliteDatabase, SqliteRunConfig, DEFAULT_SESSION_CACHE_BYTES,
    TEMPORARY_FILE_NAME,
};
pub use setup::{setup, SetupOptions};

/// SQLite behind strata-run's database-engine plug-in point.
pub struct SqliteEngine(pub SqliteRunConfig);

impl strata_run::engine::DatabaseEngine for SqliteEngine {
    fn kind(&self) -> strata_run::engine::EngineKind {
        kind::KIND
    }

    fn run(
        self: Box<Self>,
        interrupt: &std::sync::atomic::AtomicBool,
        observer: &mut dyn strata_run::outcome::RunObserver,
    ) -> anyhow::Result<strata_run::outcome::SlobOutcome> {
        run(&self.0, observer, interrupt)
    }
}
