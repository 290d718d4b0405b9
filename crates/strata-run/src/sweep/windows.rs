//! The measured part of every engine's run: one window, or a sweep's
//! windows (with `--predict`, the cached, contended and reading windows
//! first) in the order the method needs them. The engine runs each window
//! through [`EngineWindows`]; this runs the loop, so a new engine sweeps
//! by implementing one method.
//!
//! Not for: what a window does (each engine's crate) or the curve's
//! arithmetic (the rest of `sweep`).

use super::{
    cached_window, contended_counts, contended_window, database_cpu, reading_window, DatabaseWork,
    PointsSoFar, Storage, SweepRequest, WindowBlocks,
};
use crate::recorder::histograms;
use anyhow::Context;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use strata_recording::record::SweepPoint;
use strata_recording::run::RunFigures;
use strata_recording::sweep::{PredictedPoint, SweepSummary};
use strata_slob::session::{DriverOptions, RunObserver, RunOutcome};

/// One measured window as every engine's has it.
pub trait MeasuredWindow {
    fn figures(&self) -> &RunFigures;
    /// The database's own count of the blocks it read in the window.
    fn blocks(&self) -> WindowBlocks;
    fn outcome(&self) -> &RunOutcome;
    /// When the window began, Unix seconds.
    fn start_unix_s(&self) -> f64;

    /// Every database counter's change over the window, for the
    /// Recording; none for an engine without counters.
    fn database_counters(&self) -> Option<BTreeMap<String, f64>> {
        None
    }

    /// What only this engine counts, as the Recording keeps it.
    fn engine_figures(&self) -> Option<serde_json::Value> {
        None
    }
}

/// What the window is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowPurpose {
    /// Measured as the run asks (its page cache kept out as asked).
    Measured,
    /// The data set in the database's cache on purpose (`--predict`'s CPU
    /// per block): no page-cache limit.
    Cached,
}

/// An engine's windows on one loaded data set and one server.
pub trait EngineWindows {
    type Window: MeasuredWindow;

    /// Runs `driver`'s sessions between two edges, accounts the window and
    /// judges it.
    fn window(
        &mut self,
        driver: DriverOptions,
        purpose: WindowPurpose,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<Self::Window>;

    /// The database's cache and its block, in bytes.
    fn cache_and_block_bytes(&self) -> (u64, u64);

    /// Whether the server reads ahead of what its statements ask.
    fn prefetches(&mut self) -> bool;
}

/// The window of the run's result, and a sweep's points and curve.
pub struct Measured<W> {
    pub window: W,
    pub sweep: Option<(Vec<SweepPoint>, SweepSummary)>,
}

/// One window of `driver`, or the sweep `sweep` asks for.
pub fn measure<E: EngineWindows>(
    windows: &mut E,
    driver: &DriverOptions,
    sweep: Option<&SweepRequest>,
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<Measured<E::Window>> {
    let Some(request) = sweep else {
        let window =
            windows.window(driver.clone(), WindowPurpose::Measured, interrupt, observer)?;
        return Ok(Measured {
            window,
            sweep: None,
        });
    };
    let (window, points, summary) = run_sweep(windows, driver, request, interrupt, observer)?;
    Ok(Measured {
        window,
        sweep: Some((points, summary)),
    })
}

/// With `--predict`, the database's own work and the prediction first;
/// then one window per session count. Ctrl-C, or a point that failed (the
/// server died, sessions failed), ends it with the points done.
fn run_sweep<E: EngineWindows>(
    windows: &mut E,
    driver: &DriverOptions,
    request: &SweepRequest,
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<(E::Window, Vec<SweepPoint>, SweepSummary)> {
    let (measured, prediction) = match (request.storage.as_ref(), request.predict) {
        (Some(storage), true) => {
            let (measured, prediction) =
                predict(windows, driver, (request, storage), interrupt, observer)?;
            (Some(measured), prediction)
        }
        _ => (None, Vec::new()),
    };
    let (mut so_far, mut last) = (PointsSoFar::of(request), None);
    for &sessions in &request.sessions {
        let Some(options) = so_far.next_point(driver, sessions, interrupt, observer) else {
            break;
        };
        let window = windows.window(options, WindowPurpose::Measured, interrupt, observer)?;
        let kept = so_far.keep(
            (sessions, window.start_unix_s()),
            (window.figures(), &window.blocks()),
            histograms(window.outcome()),
            observer,
        );
        last = Some(window);
        if !kept {
            break;
        }
    }
    let last = last.context("the sweep was stopped before its first point")?;
    let (points, summary) = so_far.finish(measured, prediction);
    Ok((last, points, summary))
}

/// One session on a cached data set (an eighth of the database's cache),
/// for the CPU per block; past the CPUs, the windows of as many sessions as
/// CPUs and of more (the contended window); and one session reading from
/// the device, for the CPU per device read, last, next to the sweep's
/// first point (a VM's disk moves within a minute); then the model's
/// prediction of every point, said before the sweep runs.
fn predict<E: EngineWindows>(
    windows: &mut E,
    driver: &DriverOptions,
    (request, storage): (&SweepRequest, &Storage),
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<(DatabaseWork, Vec<PredictedPoint>)> {
    let options = cached_window(driver, windows.cache_and_block_bytes(), observer);
    let cached = windows.window(options, WindowPurpose::Cached, interrupt, observer)?;
    let cpu = database_cpu(cached.figures(), &cached.blocks())?;
    let cpus = cached.figures().cpu.cpus as u32;
    let mut contended = Vec::new();
    for count in contended_counts(cpus, &request.sessions) {
        let options = contended_window(count, driver, observer);
        let window = windows.window(options, WindowPurpose::Measured, interrupt, observer)?;
        contended.push((count, window.figures().clone()));
    }
    let options = reading_window(driver, observer);
    let reading = windows.window(options, WindowPurpose::Measured, interrupt, observer)?;
    let prefetch = windows.prefetches();
    super::predict_the_sweep(
        (cpu, cpus),
        contended,
        (reading.figures(), prefetch),
        (driver, request, storage),
        observer,
    )
}
