//! The database-engine plug-in point: what `strata run` and `strata setup`
//! need from a database. An engine provisions its database or connects to
//! the user's, loads the SLOB data set, runs the sessions over the measured
//! window, accounts for it across the layers and writes the Recording; the
//! binary only chooses the engine and prints the [`SlobOutcome`].
//!
//! PostgreSQL's engine is [`PostgresEngine`] (this crate); SQLite's and
//! MariaDB's live in their own crates, which depend on this one.
//!
//! Not for: the method's arithmetic (shared by every engine through
//! `accounting` and strata-slob's sessions) or printing (`output`).

use crate::session_run::{run_slob, RunObserver, SlobConfig, SlobOutcome};
use serde::Serialize;
use std::sync::atomic::AtomicBool;

/// Which database a run drives: the value of `--engine`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Postgresql,
    Sqlite,
    Mariadb,
}

impl EngineKind {
    /// The accepted values of `--engine`.
    pub const NAMES: [&'static str; 3] = ["postgresql", "sqlite", "mariadb"];

    pub fn parse(name: &str) -> Option<EngineKind> {
        match name {
            "postgresql" | "postgres" | "pg" => Some(EngineKind::Postgresql),
            "sqlite" => Some(EngineKind::Sqlite),
            "mariadb" | "mysql" => Some(EngineKind::Mariadb),
            _ => None,
        }
    }

    /// The value of `--engine` that chooses it.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Postgresql => "postgresql",
            EngineKind::Sqlite => "sqlite",
            EngineKind::Mariadb => "mariadb",
        }
    }

    /// The product's name as its users write it.
    pub fn label(self) -> &'static str {
        match self {
            EngineKind::Postgresql => "PostgreSQL",
            EngineKind::Sqlite => "SQLite",
            EngineKind::Mariadb => "MariaDB",
        }
    }

    /// Whether the database runs as server processes of its own (SQLite
    /// runs inside strata's session threads).
    pub fn has_server(self) -> bool {
        self != EngineKind::Sqlite
    }
}

/// Figures only one engine has (InnoDB's page reads vs read requests, its
/// redo writes), printed after the database layer and kept whole in the
/// JSON document's `engine_figures`.
#[derive(Clone, Debug, Serialize)]
pub struct EngineFigures {
    /// The section's title with its sources: `InnoDB (SHOW GLOBAL STATUS)`.
    pub title: String,
    /// Lines for the text output, each labelled with its unit.
    pub lines: Vec<String>,
    /// The figures as the engine serializes them.
    pub figures: serde_json::Value,
}

/// One database engine, configured for one `strata run` or `strata setup`.
pub trait DatabaseEngine {
    fn kind(&self) -> EngineKind;

    /// Loads what is missing and, unless the configuration says setup only,
    /// runs and measures the workload. Stops early, with a partial result
    /// where there is one, when `interrupt` is set; leaves no server or file
    /// behind that it started or made, unless asked to keep them.
    fn run(
        self: Box<Self>,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<SlobOutcome>;
}

/// PostgreSQL: a throwaway cluster or the user's server.
pub struct PostgresEngine(pub SlobConfig);

impl DatabaseEngine for PostgresEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Postgresql
    }

    fn run(
        self: Box<Self>,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<SlobOutcome> {
        run_slob(self.0, interrupt, observer)
    }
}
