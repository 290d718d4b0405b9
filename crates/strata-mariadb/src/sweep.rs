//! `strata run --engine mariadb --sweep-sessions`: one measured window per
//! session count on one loaded data set and one server; with `--predict`,
//! first one session on a cached data set (the CPU per block) and one
//! reading from the device (the CPU per device read), then the prediction.
//! InnoDB reads each page when a statement needs it: no prefetch.
//!
//! Not for: one window's accounting (`run`) or the curve's and the model's
//! arithmetic (strata-run's `sweep`).

use crate::window::{MariaDbWindow, Windows};
use anyhow::{Context, Result};
use std::sync::atomic::AtomicBool;
use strata_recording::record::SweepPoint;
use strata_recording::sweep::{PredictedPoint, SweepSummary};
use strata_run::outcome::RunObserver;
use strata_run::recorder::histograms;
use strata_run::sweep::{self, DatabaseWork, Storage, SweepRequest, WindowBlocks};
use strata_slob::session::DriverOptions;

/// performance_schema's event for InnoDB's data files.
const DATA_FILE_EVENT: &str = "wait/io/file/innodb/innodb_data_file";

/// The sweep's windows, the last of them, and the curve. Ctrl-C, or a
/// point that failed, ends it with the points done.
pub(crate) fn run_sweep(
    windows: &mut Windows<'_>,
    driver: &DriverOptions,
    request: &SweepRequest,
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> Result<(MariaDbWindow, Vec<SweepPoint>, SweepSummary)> {
    let (measured, prediction) = match (request.storage.as_ref(), request.predict) {
        (Some(storage), true) => {
            let (measured, prediction) =
                predict_the_sweep(windows, driver, (request, storage), interrupt, observer)?;
            (Some(measured), prediction)
        }
        _ => (None, Vec::new()),
    };
    let (mut so_far, mut last) = (sweep::PointsSoFar::of(request), None);
    for &sessions in &request.sessions {
        let Some(options) = so_far.next_point(driver, sessions, interrupt, observer) else {
            break;
        };
        let window = windows.window(&options, interrupt, observer)?;
        let kept = so_far.keep(
            (sessions, window.start_unix_s),
            (&window.figures.run, &innodb_blocks(&window)),
            histograms(&window.outcome),
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

/// One session on a cached data set (an eighth of the buffer pool); past
/// the CPUs, the windows of as many sessions as CPUs and of more (the
/// contended window); and one session reading from the
/// device, last, next to the sweep's first point (a VM's disk moves within
/// a minute); then the model's prediction of every point, said before the
/// sweep runs.
fn predict_the_sweep(
    windows: &mut Windows<'_>,
    driver: &DriverOptions,
    (request, storage): (&SweepRequest, &Storage),
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> Result<(DatabaseWork, Vec<PredictedPoint>)> {
    let page_bytes = u64::from(windows.page_bytes);
    let options = sweep::cached_window(
        driver,
        (windows.buffer_pool.cache_bytes, page_bytes),
        observer,
    );
    let cached = windows.window(&options, interrupt, observer)?;
    let cpu = sweep::database_cpu(&cached.figures.run, &innodb_blocks(&cached))?;
    let cpus = cached.figures.run.cpu.cpus as u32;
    let mut contended = Vec::new();
    for count in sweep::contended_counts(cpus, &request.sessions) {
        let options = sweep::contended_window(count, driver, observer);
        let window = windows.window(&options, interrupt, observer)?;
        contended.push((count, window.figures.run));
    }
    let options = sweep::reading_window(driver, observer);
    let reading = windows.window(&options, interrupt, observer)?;
    sweep::predict_the_sweep(
        (cpu, cpus),
        contended,
        (&reading.figures.run, false),
        (driver, request, storage),
        observer,
    )
}

/// InnoDB's count of the pages its buffer pool missed, over the edges'
/// interval as the devices' requests are (not the sessions' window: under
/// load the end edge comes late), and performance_schema's wait per read of
/// its data files when it is on.
fn innodb_blocks(window: &MariaDbWindow) -> WindowBlocks {
    let Some(innodb) = &window.figures.innodb else {
        return WindowBlocks::default();
    };
    let block_read_latency_us = innodb
        .files
        .iter()
        .find(|file| file.event == DATA_FILE_EVENT && file.reads > 0.0)
        .map(|file| file.read_us_per_read);
    WindowBlocks {
        blocks_read: innodb.buffer_pool_reads,
        blocks_read_per_s: innodb.buffer_pool_reads_per_s,
        block_read_latency_us,
        buffer_hit_pct: innodb.buffer_pool_hit_pct,
    }
}
