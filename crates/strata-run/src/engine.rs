//! The database-engine plug-in point: what `strata run` and `strata setup`
//! need from a database. An engine provisions its database or connects to
//! the user's, loads the SLOB data set, runs the sessions over the measured
//! window, accounts for it across the layers and writes the Recording; the
//! binary only chooses the engine and prints the [`SlobOutcome`].
//!
//! Each engine lives in a crate of its own (strata-postgres, strata-sqlite,
//! strata-mariadb), which depends on this one.
//!
//! Not for: the method's arithmetic (shared by every engine through
//! `accounting` and strata-slob's sessions) or printing (`output`).

pub use crate::outcome::{Capability, EngineFigures, EngineKind};
use crate::outcome::{RunObserver, SlobOutcome};
use std::sync::atomic::AtomicBool;

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
