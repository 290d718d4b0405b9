//! A `RunObserver` that ignores everything: for tests that call an engine's
//! `run` directly and check its outcome, not what it reported on the way.
//!
//! Not for tests of the reporting itself (phases, progress, interrupting a
//! run from the observer): those write an observer of their own.

use std::time::Duration;
use strata_slob::load::LoadProgress;
use strata_slob::session::RunObserver;

/// Hears a run's phases, load progress and session progress, and drops
/// them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Quiet;

impl RunObserver for Quiet {
    fn phase(&mut self, _message: &str) {}
    fn loading(&mut self, _progress: &LoadProgress) {}
    fn running(
        &mut self,
        _elapsed: Duration,
        _expected: Option<Duration>,
        _loops: u64,
        _sessions_alive: u64,
    ) {
    }
}
