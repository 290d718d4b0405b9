//! PostgreSQL behind strata's database-engine plug-in point.
//!
//! Not for: the run itself (`run`).

use crate::run::{run_slob, SlobConfig};
use std::sync::atomic::AtomicBool;
use strata_run::engine::{DatabaseEngine, EngineKind};
use strata_run::outcome::{RunObserver, SlobOutcome};

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
