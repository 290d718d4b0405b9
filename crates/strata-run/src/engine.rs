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
pub use crate::sweep::windows::{EngineWindows, Measured, MeasuredWindow, WindowPurpose};

use crate::outcome::{RunObserver, SlobOutcome};
use crate::recorder::{RunEnd, RunRecorder};
use crate::sweep::SweepRequest;
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use strata_core::metrics::Collector;
use strata_observe::background::{BackgroundSampler, SampleClock};
use strata_slob::load::LoadReport;
use strata_slob::session::DriverOptions;

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

/// The measured part of every engine's run, once the data set is loaded
/// and the environment known: what the run asks of it.
pub struct MeasuredPart<'a> {
    /// The run's Recording, open since before any work.
    pub record: Option<&'a RunRecorder>,
    pub driver: &'a DriverOptions,
    pub sweep: Option<&'a SweepRequest>,
}

/// How often the layers are sampled for the Recording.
pub const SAMPLE_EVERY: Duration = Duration::from_secs(1);

impl MeasuredPart<'_> {
    /// In order: the Recording's environment and load, the layers
    /// (`collectors`) sampled each second beside the windows, the engine's
    /// `windows` (on the sampler's clock) run as one window or the sweep,
    /// and the sampler stopped, also when a window failed.
    pub fn measure<E: EngineWindows>(
        &self,
        (environment, load): (&impl Serialize, Option<&LoadReport>),
        collectors: impl FnOnce() -> Vec<Box<dyn Collector>>,
        windows: impl FnOnce(Option<SampleClock>) -> anyhow::Result<E>,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<Measured<E::Window>> {
        let sampler = match self.record {
            Some(recorder) => {
                recorder.begin(environment, load)?;
                let each = recorder.sample_writer();
                Some(BackgroundSampler::start_writing(
                    collectors(),
                    SAMPLE_EVERY,
                    each,
                ))
            }
            None => None,
        };
        let measured =
            windows(sampler.as_ref().map(BackgroundSampler::clock)).and_then(|mut windows| {
                crate::sweep::windows::measure(
                    &mut windows,
                    self.driver,
                    self.sweep,
                    interrupt,
                    observer,
                )
            });
        sampler.map(BackgroundSampler::finish);
        measured
    }
}

impl<W: MeasuredWindow> Measured<W> {
    /// The end of the run's Recording, in the shape every engine writes:
    /// the environment as it stands at the end, the window of the run's
    /// result with the engine's own figures, and a sweep's points and curve.
    pub fn record(
        &self,
        recorder: Option<&RunRecorder>,
        environment: &impl Serialize,
    ) -> anyhow::Result<()> {
        let Some(recorder) = recorder else {
            return Ok(());
        };
        let window = &self.window;
        recorder.finish(&RunEnd {
            environment: serde_json::to_value(environment)?,
            database_counters: window.database_counters(),
            engine_figures: window.engine_figures(),
            figures: window.figures(),
            outcome: window.outcome(),
            sweep: self
                .sweep
                .as_ref()
                .map(|(points, summary)| (points.as_slice(), summary)),
        })
    }
}
