//! `strata run --sweep-sessions`: the database's own capacity curve, one
//! measured window per session count on one data set and one server, and
//! with `--calibration`/`--predict` the storage's curve beside it and the
//! prediction checked against it. Whatever the engine: the engine runs the
//! windows, this module turns their figures into the curve, the knee, the
//! latency-target answer, the CPU per block and the prediction.
//!
//! Not for: running windows (each engine's crate), the queueing arithmetic
//! (strata-model's `predict`) or the rest of a run's text (`output`).

use anyhow::{bail, Context};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use strata_core::verdict::Verdict;
use strata_model::predict::{self, BlockWork, ContendedReads, Predicted, Statement, Updates};
use strata_recording::device::IostatFigures;
use strata_recording::record::{RunHistograms, SweepPoint};
use strata_recording::run::{RunFigures, ABSORBED_WARNING_PCT, CPU_BOUND_IDLE_PCT};
use strata_recording::sweep::{
    error_pct, quarters_text, CurvePoint, DatabaseContention, DatabaseCpu, DatabaseReads,
    ErrorSources, PointUpdates, PredictedPoint, ReadingUpdates, StorageCurve, StorageLevel,
    SweepSummary,
};
use strata_recording::Recording;
use strata_slob::session::{DriverOptions, Hotspot, RunObserver, StopAfter, WorkloadOptions};

/// The sweep asked for.
#[derive(Clone, Debug)]
pub struct SweepRequest {
    /// Session counts, rising.
    pub sessions: Vec<u32>,
    /// For statement p99.
    pub latency_target: Duration,
    /// `--predict`'s or `--calibration`'s curve, read before any work: drawn
    /// beside the database's, and with `predict` the sweep predicted from it.
    pub storage: Option<Storage>,
    /// `--predict`: the sweep is predicted before it runs and scored after.
    pub predict: bool,
}

/// The default `--latency-target` of a sweep: statement p99.
pub const DEFAULT_LATENCY_TARGET: Duration = Duration::from_millis(100);

/// How long the one-session window on a cached data set warms up and
/// measures.
const CPU_WARMUP: Duration = Duration::from_secs(2);
const CPU_WINDOW: Duration = Duration::from_secs(3);

/// How long the windows reading from the device warm up (the page cache
/// settling at its limit) and measure, at least: each measures twice as
/// long as a sweep's point where that is longer. Every point's prediction
/// rests on them, a point's own window only on itself, and a longer window
/// samples more of the storage's and the host's slow spells (measured
/// here: one psync reader's read requests/s over 20 s windows of five
/// minutes spread by 5.1% of their mean, over 40 s windows by 3.4%).
const READ_WARMUP: Duration = Duration::from_secs(3);
const READ_WINDOW: Duration = Duration::from_secs(5);

/// CPU pressure (`some`, percent of the window) past which, with the CPUs
/// also idle, a point says its waking tasks waited for idle CPUs.
const IDLE_WAIT_PCT: f64 = 25.0;

/// CPU pressure (`some`, percent of the window) from which the contended
/// window's shortfall is the CPUs', so that the model's CPUs are fitted to
/// it; below it the model keeps every CPU.
const CPU_WAIT_FIT_PCT: f64 = 20.0;

/// `--sweep-sessions`: a rising list (`1,2,4,8`) or a range that doubles
/// from its start (`1-32`: 1, 2, 4, 8, 16, 32; the end is always in).
pub fn parse_session_counts(text: &str) -> Result<Vec<u32>, String> {
    let accepted = "give rising session counts (1,2,4,8) or a doubling range (1-32)";
    let count = |part: &str| match part.trim().parse::<u32>() {
        Ok(n) if (1..=10_000).contains(&n) => Ok(n),
        _ => Err(format!("'{text}': '{part}' is not 1 to 10000; {accepted}")),
    };
    let counts = match text.split_once('-') {
        Some((from, to)) => {
            let (from, to) = (count(from)?, count(to)?);
            if to < from {
                return Err(format!("'{text}': the range must rise; {accepted}"));
            }
            let mut counts: Vec<u32> = std::iter::successors(Some(from), |n| Some(n * 2))
                .take_while(|n| *n < to)
                .collect();
            counts.push(to);
            counts
        }
        None => text.split(',').map(count).collect::<Result<_, _>>()?,
    };
    if counts.windows(2).any(|pair| pair[0] >= pair[1]) {
        return Err(format!("'{text}': the counts must rise; {accepted}"));
    }
    Ok(counts)
}

impl SweepRequest {
    /// Refuses what a sweep (`predict`: with `--predict`) cannot be, before
    /// any work.
    pub fn check(predict: bool, driver: &DriverOptions) -> anyhow::Result<()> {
        if !matches!(driver.stop_after, StopAfter::Duration { .. }) {
            bail!(
                "--sweep-sessions measures one timed window per point; --work-loops does not apply"
            );
        }
        if driver.shard.is_some() {
            bail!("--sweep-sessions is one driver's; --shard does not apply");
        }
        if predict && driver.workload.scan_pct > 0.0 {
            bail!("--predict models single-block reads and updates, not scans: give --scan-pct 0");
        }
        Ok(())
    }

    /// The sessions' options for the point of `sessions`.
    pub fn point_options(driver: &DriverOptions, sessions: u32) -> DriverOptions {
        DriverOptions {
            sessions: Some(sessions),
            ..driver.clone()
        }
    }
}

/// The cached window's blocks: an eighth of the database's cache of
/// `cache_bytes`. Measured: MariaDB 10.11's throwaway pool of 16 MiB (1014
/// pages) kept about 240 pages of data; a hot set of 256 pages and their
/// index missed on every row, one of 128 hit on every one.
fn cached_blocks(cache_bytes: u64, block_bytes: u64) -> u64 {
    cache_bytes / block_bytes.max(1) / 8
}

/// One session reading `cached_blocks` over and over (the first blocks of
/// the first schema): a data set that stays in the database's buffers, so
/// that the window measures CPU per block and nothing of the storage; no
/// updates, whose COMMITs would wait for the WAL's flush. One
/// schema, so that a small cache holds it whatever the schema count; a
/// statement of at most `cached_blocks` (the per-statement cost is then
/// spread over fewer blocks: a round trip over 128 blocks, not 256).
fn cached_options(driver: &DriverOptions, cached_blocks: u64) -> DriverOptions {
    let work_unit = driver.workload.work_unit.min(cached_blocks.max(1) as u32);
    let size_blocks = cached_blocks
        .min(driver.plan.blocks_per_schema)
        .max(u64::from(work_unit));
    let mut plan = driver.plan.clone();
    if !plan.single_schema {
        plan.schemas = 1;
    }
    DriverOptions {
        sessions: Some(1),
        plan,
        workload: WorkloadOptions {
            hotspot: Some(Hotspot {
                offset_blocks: 0,
                size_blocks,
                every: 1,
            }),
            work_unit,
            update_pct: 0.0,
            think_time: None,
            hot_schema_every: None,
            ..driver.workload.clone()
        },
        stop_after: StopAfter::Duration {
            warmup: CPU_WARMUP,
            duration: CPU_WINDOW,
        },
        ..driver.clone()
    }
}

/// One session reading the data set from the device as the sweep's
/// points do, for the CPU per device read (the read path's CPU), over a
/// window twice as long as each point's ([`READ_WINDOW`]).
fn read_options(driver: &DriverOptions) -> DriverOptions {
    let (warmup, duration) = match driver.stop_after {
        StopAfter::Duration { warmup, duration } => {
            (warmup.max(READ_WARMUP), (2 * duration).max(READ_WINDOW))
        }
        StopAfter::WorkLoops(_) => (READ_WARMUP, READ_WINDOW),
    };
    DriverOptions {
        sessions: Some(1),
        stop_after: StopAfter::Duration { warmup, duration },
        ..driver.clone()
    }
}

/// The windows of several sessions reading from the device a sweep of
/// `sessions` on `cpus` measures before it, fewest sessions first: where
/// the sweep goes past the CPUs, as many sessions as CPUs (where that is
/// more than one and fewer than the next), then more sessions than CPUs,
/// for the wait for a CPU past the CPUs' queue: three times the CPUs (a
/// count no doubling sweep has), at most the sweep's most. None when the
/// sweep never has more sessions than CPUs.
pub fn contended_counts(cpus: u32, sessions: &[u32]) -> Vec<u32> {
    let Some(most) = sessions.iter().copied().max().filter(|&most| most > cpus) else {
        return Vec::new();
    };
    let contended = (3 * cpus.max(1)).min(most);
    let at_cpus = (cpus > 1 && cpus < contended).then_some(cpus);
    at_cpus.into_iter().chain([contended]).collect()
}

/// The options of the window of `count` sessions reading the data set
/// from the device as the sweep's points do, as long as the one-session
/// reading window, said as its phase.
pub fn contended_window(
    count: u32,
    driver: &DriverOptions,
    observer: &mut dyn RunObserver,
) -> DriverOptions {
    observer.phase(&format!(
        "measuring the wait for a CPU: {count} sessions reading the data set"
    ));
    DriverOptions {
        sessions: Some(count),
        ..read_options(driver)
    }
}

/// The cached window's options for a database whose cache holds
/// `cache_bytes` of `block_bytes` blocks, said as its phase.
pub fn cached_window(
    driver: &DriverOptions,
    (cache_bytes, block_bytes): (u64, u64),
    observer: &mut dyn RunObserver,
) -> DriverOptions {
    observer.phase("measuring the database's CPU per block: one session on a cached data set");
    cached_options(driver, cached_blocks(cache_bytes, block_bytes))
}

/// The reading window's options (one session as the points read, twice
/// as long as a point's window), said as its phase.
pub fn reading_window(driver: &DriverOptions, observer: &mut dyn RunObserver) -> DriverOptions {
    observer
        .phase("measuring the database's CPU per device read: one session reading the data set");
    read_options(driver)
}

/// The prediction from the windows before the sweep: the CPU per block
/// measured (`cpu`, on the host's `cpus`), the contended window's figures,
/// the reading window's and whether the server reads ahead; said before
/// the sweep runs.
pub fn predict_the_sweep(
    (cpu, cpus): (DatabaseCpu, u32),
    contended: Vec<(u32, RunFigures)>,
    (reading, prefetch): (&RunFigures, bool),
    (driver, request, storage): (&DriverOptions, &SweepRequest, &Storage),
    observer: &mut dyn RunObserver,
) -> anyhow::Result<(DatabaseWork, Vec<PredictedPoint>)> {
    let reads = database_reads(reading, storage, (prefetch, &driver.workload))?;
    let (measured, prediction, text) = predict_from(
        (cpu, reads),
        contended,
        &driver.workload,
        cpus,
        (storage, &request.sessions),
    )?;
    observer.said(&text);
    Ok((measured, prediction))
}

/// The sweep's points as their windows end: what the Recording keeps of
/// each and the curve the conclusions are drawn from. Each engine runs the
/// windows; this keeps, says and judges them the same way for all.
pub struct PointsSoFar<'a> {
    request: &'a SweepRequest,
    points: Vec<SweepPoint>,
    curve: Vec<CurvePoint>,
}

impl<'a> PointsSoFar<'a> {
    /// None yet of `request`'s points.
    pub fn of(request: &'a SweepRequest) -> PointsSoFar<'a> {
        PointsSoFar {
            request,
            points: Vec::new(),
            curve: Vec::new(),
        }
    }

    /// The options of the point of `sessions`, said as its phase; none once
    /// Ctrl-C came.
    pub fn next_point(
        &self,
        driver: &DriverOptions,
        sessions: u32,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> Option<DriverOptions> {
        if interrupt.load(Ordering::Relaxed) {
            return None;
        }
        let (done, total) = (self.points.len() + 1, self.request.sessions.len());
        observer.phase(&format!("sweep point {done}/{total}: {sessions} sessions"));
        Some(SweepRequest::point_options(driver, sessions))
    }

    /// Keeps one point's window (its session count and start, its figures
    /// and the database's blocks, its latencies) and says it; false when it
    /// failed, so that the sweep stops there (said).
    pub fn keep(
        &mut self,
        started: (u32, f64),
        (figures, blocks): (&RunFigures, &WindowBlocks),
        histograms: RunHistograms,
        observer: &mut dyn RunObserver,
    ) -> bool {
        let sessions = started.0;
        let storage = self.request.storage.as_ref();
        let point = curve_point(started, (figures, blocks), storage);
        observer.said(&point_line(&point));
        self.points.push(SweepPoint {
            sessions,
            figures: figures.clone(),
            histograms,
        });
        self.curve.push(point);
        let failed = matches!(figures.verdict, Verdict::Failed { .. });
        if failed {
            observer.phase(&format!(
                "the sweep stops: its {sessions}-session point failed: {}",
                figures.verdict.details().join("; ")
            ));
        }
        !failed
    }

    /// The points kept and the sweep's conclusions from them.
    pub fn finish(
        self,
        database_work: Option<DatabaseWork>,
        prediction: Vec<PredictedPoint>,
    ) -> (Vec<SweepPoint>, SweepSummary) {
        let (request, storage) = (self.request, self.request.storage.as_ref());
        let summary = summarize(self.curve, request, database_work, storage, prediction);
        (self.points, summary)
    }
}

/// What the database measured of itself before the sweep: CPU per block
/// cached, per device read, and more sessions than it has CPUs reading
/// from the device (`contention`), and as many as it has CPUs
/// (`at_cpus`).
#[derive(Clone, Debug)]
pub struct DatabaseWork {
    pub cpu: DatabaseCpu,
    pub reads: DatabaseReads,
    pub contention: Option<DatabaseContention>,
    pub at_cpus: Option<DatabaseContention>,
}

/// Why a window before the sweep lacks a figure the prediction needs: when
/// it failed (the server died or restarted, a memory cgroup's OOM kill),
/// its causes, since a restart leaves the device reads out and they would
/// read as none; else `otherwise`, what it measured. A failed window whose
/// figures are all there (a start edge taken late on a busy host) still
/// predicts: its figures are ratios over the same edges.
fn lacking(verdict: &Verdict, otherwise: String) -> String {
    match verdict {
        Verdict::Failed { causes } => format!("the window failed: {}", causes.join("; ")),
        _ => otherwise,
    }
}

/// The CPU per device read of the reading window (the server's and the
/// driver's CPU seconds over the device's read requests), and how much of
/// it ran while the device read, against calibrate's latency at 1
/// outstanding.
fn database_reads(
    figures: &RunFigures,
    storage: &Storage,
    (prefetch, workload): (bool, &WorkloadOptions),
) -> anyhow::Result<DatabaseReads> {
    let device_read_requests = figures
        .absorption
        .as_ref()
        .map_or(0, |absorption| absorption.device_read_requests);
    let cpu_s = figures.cpu.server_and_driver_cpu_s();
    let Some(cpu_per_device_read_us) = cpu_per_device_read_us(figures) else {
        let measured = format!(
            "the one-session window read {device_read_requests} requests from the device with \
             {cpu_s:.3} s of CPU (the data set must be larger than the caches, the server's \
             processes on this machine)"
        );
        bail!(
            "measuring the database's CPU per device read: {}",
            lacking(&figures.verdict, measured)
        );
    };
    let reads = device_read_requests as f64;
    let devices = device_reads(&figures.devices);
    let device_reads_in_flight = devices.map_or(1.0, |d| d.in_flight);
    let (statement_mean_ms, statement_p99_ms) = statement_ms(figures);
    let mut measured = DatabaseReads {
        window_s: figures.window_s,
        device_read_requests,
        cpu_s,
        cpu_per_device_read_us,
        elapsed_per_device_read_us: figures.window_s / reads * 1e6,
        storage_latency_us: storage.time_per_read_us(device_reads_in_flight),
        overlap_per_device_read_us: 0.0,
        device_slowdown: 1.0,
        prefetch,
        blocks: figures.workload.rows_selected as f64,
        device_reads_per_block: device_reads_per_block(figures).unwrap_or(1.0),
        device_reads_in_flight,
        device_read_latency_us: devices.map(|d| d.latency_us),
        statement_mean_ms,
        statement_p99_ms,
        updates: reading_updates(figures, workload),
        quarter_spread_pct: figures.quarter_spread_pct(),
    };
    (
        measured.overlap_per_device_read_us,
        measured.device_slowdown,
    ) = storage.one_session_anchor(&measured);
    Ok(measured)
}

/// The reading window's updates, where its workload updates and it
/// committed.
fn reading_updates(figures: &RunFigures, workload: &WorkloadOptions) -> Option<ReadingUpdates> {
    let commit = figures.workload.commits()?;
    if workload.update_pct <= 0.0 {
        return None;
    }
    Some(ReadingUpdates {
        share: workload.update_pct / 100.0,
        rows_per_update: f64::from(workload.update_work_unit),
        commits: commit.latency.count,
        commit_mean_us: commit.latency.lat_mean_us,
        rows_updated: figures.workload.rows_updated,
        device_write_requests: data_write_requests(&figures.devices),
    })
}

/// The write requests of the data devices (every one not only the
/// WAL's): changed blocks written back, and the WAL's where it shares
/// their device.
pub fn data_write_requests(devices: &[IostatFigures]) -> u64 {
    let data = devices.iter().filter(|device| device.role != "wal");
    data.map(|device| device.write_requests).sum()
}

/// A window's statements' mean and p99 latency, ms; none where it ran
/// none.
fn statement_ms(figures: &RunFigures) -> (Option<f64>, Option<f64>) {
    let select = figures.workload.operations.get("select");
    (
        select.map(|s| s.latency.lat_mean_us / 1e3),
        select.map(|s| s.latency.lat_p99_us / 1e3),
    )
}

/// A window's device read requests over the table blocks its statements
/// touched (rows selected or updated, one per block); none where it read
/// or touched nothing.
fn device_reads_per_block(figures: &RunFigures) -> Option<f64> {
    let reads = figures.absorption.as_ref()?.device_read_requests as f64;
    let blocks = (figures.workload.rows_selected + figures.workload.rows_updated) as f64;
    (reads > 0.0 && blocks > 0.0).then(|| reads / blocks)
}

/// A window's data devices' write requests per read request, where its
/// sessions updated; none where they did not or nothing was read.
fn device_writes_per_read(figures: &RunFigures) -> Option<f64> {
    if figures.workload.rows_updated == 0 {
        return None;
    }
    let data = figures.devices.iter().filter(|device| device.role != "wal");
    let reads: u64 = data.map(|device| device.read_requests).sum();
    let writes = data_write_requests(&figures.devices);
    (reads > 0).then(|| writes as f64 / reads as f64)
}

/// A window's server and driver CPU over its device read requests, µs;
/// none where it read nothing or the server's CPU was not measured.
fn cpu_per_device_read_us(figures: &RunFigures) -> Option<f64> {
    let reads = figures.absorption.as_ref()?.device_read_requests as f64;
    (reads > 0.0 && figures.cpu.server_cpu_s > 0.0)
        .then(|| figures.cpu.server_and_driver_cpu_s() / reads * 1e6)
}

/// What the database counted of its own block reads in one window: each
/// engine's counters in one shape (PostgreSQL's blks_read and
/// blk_read_time, InnoDB's buffer pool reads and performance_schema's
/// waits on its data files).
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowBlocks {
    /// Blocks (pages) the database's cache missed and it read.
    pub blocks_read: f64,
    pub blocks_read_per_s: f64,
    /// The database's own time per block read, where it keeps one.
    pub block_read_latency_us: Option<f64>,
    pub buffer_hit_pct: f64,
}

impl WindowBlocks {
    /// PostgreSQL's: pg_stat_database's blks_read, blk_read_time, hits.
    pub fn of_postgresql(figures: &RunFigures) -> WindowBlocks {
        figures
            .database
            .as_ref()
            .map_or(WindowBlocks::default(), |database| WindowBlocks {
                blocks_read: database.blocks_read,
                blocks_read_per_s: database.blocks_read_per_s,
                block_read_latency_us: Some(database.block_read_time_us_per_block),
                buffer_hit_pct: database.buffer_hit_pct,
            })
    }
}

/// The CPU per block of the cached window: the server's and the driver's
/// CPU seconds over the table blocks the statements touched.
pub fn database_cpu(figures: &RunFigures, database: &WindowBlocks) -> anyhow::Result<DatabaseCpu> {
    let blocks = figures.workload.rows_selected as f64;
    let cpu_s = figures.cpu.server_and_driver_cpu_s();
    if blocks <= 0.0 || figures.cpu.server_cpu_s <= 0.0 {
        let measured = format!(
            "the one-session window touched {blocks} blocks with {cpu_s:.3} s of CPU (the \
             server's processes must be on this machine)"
        );
        bail!(
            "measuring the database's CPU per block: {}",
            lacking(&figures.verdict, measured)
        );
    }
    Ok(DatabaseCpu {
        window_s: figures.window_s,
        blocks,
        buffer_hit_pct: database.buffer_hit_pct,
        cpu_s,
        cpu_per_block_us: cpu_s / blocks * 1e6,
        elapsed_per_block_us: figures.window_s / blocks * 1e6,
    })
}

/// The storage's curve of a calibrate Recording, for the model and for
/// the Recording of the sweep.
#[derive(Clone, Debug)]
pub struct Storage {
    pub curve: predict::StorageCurve,
    pub record: StorageCurve,
}

impl Storage {
    /// The curve of `path`'s reads of `block_bytes`, the database's block.
    pub fn read(path: &Path, block_bytes: u64) -> anyhow::Result<Storage> {
        let recording = Recording::read_without_layers(path)
            .with_context(|| format!("--calibration {}", path.display()))?;
        let curve = predict::curve_of(&recording, block_bytes)?;
        let levels = curve
            .points()
            .iter()
            .map(|point| StorageLevel {
                outstanding: point.outstanding,
                iops: point.iops,
                mean_latency_us: point.mean_latency_s * 1e6,
                p99_latency_us: point.p99_latency_s * 1e6,
            })
            .collect();
        Ok(Storage {
            curve,
            record: StorageCurve {
                calibration: path.display().to_string(),
                levels,
            },
        })
    }

    /// calibrate's read requests/s at `outstanding`, interpolated.
    pub fn iops_at(&self, outstanding: u32) -> f64 {
        self.curve.rate(outstanding)
    }

    /// calibrate's time per read with `in_flight` reads at the device (at
    /// least 1: the mean latency at 1 outstanding), in µs.
    pub fn time_per_read_us(&self, in_flight: f64) -> f64 {
        self.curve.rate_at(in_flight).recip() * 1e6
    }

    /// What makes the model's cycle for one session the reading window's
    /// own time per read, in this curve's terms: the overlap, the CPU per
    /// read that ran while the device read (its CPU per read + the
    /// storage's time per read at its reads in flight − its own time per
    /// read, at least 0 and at most the CPU per read), in µs; and how many
    /// times the storage's time per read the model's device takes, for
    /// what the overlap cannot take of that offset from calibrate: its
    /// time per read over calibrate's where even all its CPU hidden behind
    /// the device leaves it faster (a read stream's many reads in flight
    /// on a device faster than at calibrate's), its time less its CPU over
    /// calibrate's where even none hidden leaves it slower; else 1. With
    /// updates, the window's time in COMMIT is not a read's, and the
    /// storage's time per read holds the device's writes per read, as the
    /// model's device does.
    pub fn one_session_anchor(&self, reads: &DatabaseReads) -> (f64, f64) {
        let cpu_per_read_us = reads.cpu_per_device_read_us;
        let calibrate_us = self.time_per_read_us(reads.device_reads_in_flight)
            * (1.0 + reads.device_writes_per_read());
        let elapsed_per_read_us =
            reads.elapsed_per_device_read_us - reads.commit_per_device_read_us();
        let unhidden = cpu_per_read_us + calibrate_us - elapsed_per_read_us;
        let overlap_us = unhidden.clamp(0.0, cpu_per_read_us.max(0.0));
        let slowdown = 1.0 - (unhidden - overlap_us) / calibrate_us;
        match slowdown.is_finite() && slowdown > 0.0 {
            true => (overlap_us, slowdown),
            false => (overlap_us, 1.0),
        }
    }
}

/// The model's updates as a reading window measured them.
pub fn model_updates(measured: ReadingUpdates) -> Updates {
    Updates {
        share: measured.share,
        rows: measured.rows_per_update,
        commit_s: measured.commit_mean_us * 1e-6,
        device_writes_per_row: measured.device_writes_per_row(),
    }
}

/// The workload's statement as the model takes it: `--work-unit` blocks,
/// and the mean of `--think-time` over the statements it follows.
pub fn statement(workload: &WorkloadOptions) -> Statement {
    let blocks = f64::from(workload.work_unit);
    let think_per_loop_s = workload.think_time.map_or(0.0, |(min, max)| {
        (min + max).as_secs_f64() / 2.0 / f64::from(workload.think_every.max(1))
    });
    Statement {
        blocks,
        think_per_block_s: think_per_loop_s / blocks,
        updates: None,
    }
}

impl DatabaseWork {
    /// The CPU per device read beyond its share of a cached block's (the
    /// read path's), in seconds.
    pub fn read_path_cpu_s(&self) -> f64 {
        predict::read_path_cpu_s(
            self.reads.cpu_per_device_read_us * 1e-6,
            self.cpu.cpu_per_block_us * 1e-6,
            self.reads.device_reads_per_block,
        )
    }

    /// What the model needs of the run: the CPU per block measured on the
    /// database (cached, and the rest of a device read's, the read path),
    /// the statement, the host's CPUs, and the contended window's figures
    /// with the wait for a CPU that makes the model reach its rate; the
    /// overlap and the wait taken against `storage` (the sweep's own
    /// calibration, or another of the same storage).
    pub fn block_work(
        &self,
        storage: &Storage,
        statement: Statement,
        cpus: u32,
    ) -> anyhow::Result<BlockWork> {
        let DatabaseWork {
            cpu,
            reads,
            contention,
            at_cpus,
        } = self;
        let (overlap_per_read_us, slowdown) = storage.one_session_anchor(reads);
        let cpus = cpus.max(1);
        let work = BlockWork {
            delay_per_block_s: cpu.delay_per_block_us() * 1e-6,
            overlap_per_block_s: overlap_per_read_us * reads.device_reads_per_block * 1e-6,
            device_reads_per_block: reads.device_reads_per_block,
            session_reads_in_flight: reads.session_reads_in_flight(),
            one_session_device_slowdown: slowdown,
            contended_reads: contention
                .as_ref()
                .and_then(|contention| contended_reads(contention, storage)),
            at_cpus_reads: at_cpus
                .as_ref()
                .and_then(|window| contended_reads(window, storage)),
            statement_p99_over_mean: reads.statement_p99_over_mean(),
            ..BlockWork::of_cpu(
                cpu.cpu_per_block_us * 1e-6,
                self.read_path_cpu_s(),
                statement,
                cpus,
            )
        };
        // Past the CPUs, the window at their count is on the way there.
        let past_cpus = contention.as_ref().is_some_and(|window| window.fitted);
        let windows = [at_cpus, contention].into_iter().flatten();
        windows
            .filter(|window| window.fitted || past_cpus)
            .try_fold(work, |work, window| with_wait(storage, work, window))
    }

    /// What a sweep's Recording kept of its windows before its points;
    /// none without both one-session windows.
    pub fn of_sweep(sweep: &SweepSummary) -> Option<DatabaseWork> {
        Some(DatabaseWork {
            cpu: sweep.database_cpu.clone()?,
            reads: sweep.database_reads.clone()?,
            contention: sweep.database_contention.clone(),
            at_cpus: sweep.database_contention_at_cpus.clone(),
        })
    }
}

/// The prediction from what the database measured of itself: its work
/// per block (the cached window's and the reading window's) on `cpus`,
/// the `contended` window's figures (its session count and figures) and
/// the wait for a CPU fitted to them when there was one, the model at
/// every session count, and the text said before the sweep.
fn predict_from(
    (cpu, reads): (DatabaseCpu, DatabaseReads),
    contended: Vec<(u32, RunFigures)>,
    workload: &WorkloadOptions,
    cpus: u32,
    (storage, sessions): (&Storage, &[u32]),
) -> anyhow::Result<(DatabaseWork, Vec<PredictedPoint>, String)> {
    let mut measured = DatabaseWork {
        cpu,
        reads,
        contention: None,
        at_cpus: None,
    };
    let statement = Statement {
        updates: measured.reads.updates.map(model_updates),
        ..statement(workload)
    };
    let mut windows = contended.into_iter().rev();
    if let Some((count, figures)) = windows.next() {
        let every_cpu = measured.block_work(storage, statement, cpus)?;
        measured.contention = Some(database_contention(storage, &every_cpu, count, &figures)?);
    }
    if let Some((count, figures)) = windows.next() {
        let every_cpu = measured.block_work(storage, statement, cpus)?;
        measured.at_cpus = Some(database_contention(storage, &every_cpu, count, &figures)?);
    }
    let work = measured.block_work(storage, statement, cpus)?;
    let fitted = [
        (measured.at_cpus.as_mut(), work.at_cpus_reads),
        (measured.contention.as_mut(), work.contended_reads),
    ];
    for (window, reads) in fitted {
        if let Some(window) = window {
            window.wait_per_device_read_us =
                reads.and_then(|reads| reads.wait_per_device_read_s.map(|wait_s| wait_s * 1e6));
        }
    }
    let predicted = prediction(storage, &work, sessions)?;
    let text = prediction_text(&measured, &work, storage, &predicted);
    Ok((measured, predicted, text))
}

/// The contended window's figures and device read requests/s against the
/// model's without a wait for the CPUs, and whether tasks waited for CPUs
/// enough that the wait is fitted ([`DatabaseWork::block_work`] fits it;
/// when they hardly did, the CPUs were not what held the window back).
fn database_contention(
    storage: &Storage,
    every_cpu: &BlockWork,
    sessions: u32,
    figures: &RunFigures,
) -> anyhow::Result<DatabaseContention> {
    let Some(DeviceReads {
        per_s: measured_per_s,
        in_flight,
        ..
    }) = device_reads(&figures.devices)
    else {
        let measured = "their window read nothing from the device".to_string();
        bail!(
            "measuring the wait for a CPU of {sessions} sessions: {}",
            lacking(&figures.verdict, measured)
        );
    };
    let cpu_pressure_pct = figures.cpu.host_cpu_pressure_pct;
    let (statement_mean_ms, statement_p99_ms) = statement_ms(figures);
    let mut contention = DatabaseContention {
        sessions,
        window_s: figures.window_s,
        device_read_requests_per_s: measured_per_s,
        predicted_with_every_cpu_per_s: 0.0,
        cpus: every_cpu.cpus,
        wait_per_device_read_us: None,
        fitted: cpu_pressure_pct.is_none_or(|pct| pct >= CPU_WAIT_FIT_PCT),
        device_reads_in_flight: Some(in_flight),
        device_reads_per_block: device_reads_per_block(figures),
        cpu_per_device_read_us: cpu_per_device_read_us(figures),
        device_writes_per_read: device_writes_per_read(figures),
        host_cpu_busy_pct: figures.cpu.host_idle_pct.map(|idle| 100.0 - idle),
        cpu_pressure_pct,
        statement_mean_ms,
        statement_p99_ms,
        quarter_spread_pct: figures.quarter_spread_pct(),
    };
    let curve = &storage.curve;
    let every_cpu = BlockWork {
        contended_reads: contended_reads(&contention, storage),
        ..every_cpu.clone()
    }
    .with_wait(sessions, 0.0);
    let predicted = predict::predict(curve, &every_cpu, &[sessions])?;
    contention.predicted_with_every_cpu_per_s = predicted[0].device_read_requests_per_s;
    Ok(contention)
}

/// `work` with the wait per device read that makes the model reach the
/// window's rate at its count; as it is where the window kept no reads in
/// flight.
fn with_wait(
    storage: &Storage,
    work: BlockWork,
    window: &DatabaseContention,
) -> anyhow::Result<BlockWork> {
    if window.device_reads_in_flight.is_none() {
        return Ok(work);
    }
    let wait_s = predict::fit_wait_per_device_read(
        &storage.curve,
        &work,
        window.sessions,
        window.device_read_requests_per_s,
    )?;
    Ok(work.with_wait(window.sessions, wait_s))
}

/// The contended window's device reads: in flight per session (at least
/// 1), per block, its statements' p99 over their mean, and how much
/// slower than `storage`'s curve the device served them.
fn contended_reads(contention: &DatabaseContention, storage: &Storage) -> Option<ContendedReads> {
    let in_flight = contention.device_reads_in_flight?;
    Some(ContendedReads {
        sessions: contention.sessions,
        per_session: (in_flight / f64::from(contention.sessions.max(1))).max(1.0),
        device_reads_per_block: contention.device_reads_per_block,
        statement_p99_over_mean: contention.statement_p99_over_mean(),
        device_slowdown: device_slowdown(storage, contention),
        cpu_per_device_read_s: contention.cpu_per_device_read_us.map(|us| us * 1e-6),
        wait_per_device_read_s: None,
    })
}

/// The contended window's device latency (in flight over r/s) over
/// calibrate's at its depth: how much slower the device served reads
/// while other sessions' CPU work ran (a VM's virtual disk answers later
/// when its vCPUs are busy: fio at 1 and 2 outstanding beside two busy
/// CPUs here, 1.4–1.5 × its time alone); with updates, over calibrate's ×
/// (1 + the window's writes per read), as the model's device takes them.
/// None where the window measured no device latency.
fn device_slowdown(storage: &Storage, contention: &DatabaseContention) -> Option<f64> {
    let in_flight = contention.device_reads_in_flight?;
    let latency_s = in_flight / contention.device_read_requests_per_s;
    let writes_per_read = contention.device_writes_per_read.unwrap_or(0.0);
    let slowdown = latency_s / (storage.curve.latency_at(in_flight) * (1.0 + writes_per_read));
    (slowdown.is_finite() && slowdown > 0.0).then_some(slowdown)
}

/// The prediction at each of `sessions`, in the Recording's shape.
pub fn prediction(
    storage: &Storage,
    work: &BlockWork,
    sessions: &[u32],
) -> anyhow::Result<Vec<PredictedPoint>> {
    let predicted = predict::predict(&storage.curve, work, sessions)?;
    Ok(predicted.iter().map(predicted_point).collect())
}

fn predicted_point(predicted: &Predicted) -> PredictedPoint {
    PredictedPoint {
        sessions: predicted.sessions,
        device_read_requests_per_s: predicted.device_read_requests_per_s,
        device_outstanding: predicted.device_outstanding,
        block_read_latency_us: predicted.block_read_latency_s * 1e6,
        device_read_latency_us: Some(predicted.device_read_latency_s * 1e6),
        cpu_per_device_read_us: Some(predicted.cpu_per_device_read_s * 1e6),
        device_reads_per_block: Some(predicted.device_reads_per_block),
        cpu_busy_pct: predicted.cpu_utilization * 100.0,
        statement_mean_ms: predicted.statement_latency_mean_s * 1e3,
        statement_p99_ms: predicted.statement_latency_p99_s * 1e3,
        device_error_pct: None,
        statement_p99_error_pct: None,
        error_sources: None,
    }
}

/// `predicted` scored against its measured `point`: the errors and what
/// they are made of.
fn score(predicted: &mut PredictedPoint, point: &CurvePoint) {
    predicted.device_error_pct = point
        .device_read_requests_per_s
        .map(|measured| error_pct(measured, predicted.device_read_requests_per_s));
    predicted.statement_p99_error_pct = Some(error_pct(
        point.statement_p99_ms,
        predicted.statement_p99_ms,
    ));
    predicted.error_sources = error_sources(predicted, point);
}

/// [`ErrorSources`] of a point whose devices were measured, against a
/// model that kept its time per device read, CPU per device read and
/// device reads per block; none otherwise, or where a factor is not
/// finite (a mean of zero).
fn error_sources(predicted: &PredictedPoint, point: &CurvePoint) -> Option<ErrorSources> {
    let finite =
        |measured: f64, model: f64| Some(error_pct(measured, model)).filter(|e| e.is_finite());
    let spread = |p99_ms: f64, mean_ms: f64| p99_ms / mean_ms;
    Some(ErrorSources {
        device_reads_in_flight_pct: finite(
            point.device_reads_in_flight?,
            predicted.device_outstanding,
        )?,
        device_read_latency_pct: finite(
            point.device_read_latency_us?,
            predicted.device_read_latency_us?,
        )?,
        cpu_per_device_read_pct: finite(
            point.cpu_per_device_read_us?,
            predicted.cpu_per_device_read_us?,
        )?,
        device_reads_per_block_pct: finite(
            point.device_reads_per_block?,
            predicted.device_reads_per_block?,
        )?,
        statement_mean_pct: finite(point.statement_mean_ms, predicted.statement_mean_ms)?,
        statement_p99_over_mean_pct: finite(
            spread(point.statement_p99_ms, point.statement_mean_ms),
            spread(predicted.statement_p99_ms, predicted.statement_mean_ms),
        )?,
    })
}

/// The database-level figures of one point's window.
fn curve_point(
    (sessions, window_start_unix_s): (u32, f64),
    (figures, blocks): (&RunFigures, &WindowBlocks),
    storage: Option<&Storage>,
) -> CurvePoint {
    let select = figures.workload.operations.get("select");
    let ms = |us: f64| us / 1e3;
    let blocks_read = blocks.blocks_read;
    let device_reads = device_reads(&figures.devices);
    let device_read_requests_per_s = device_reads.map(|reads| reads.per_s).or_else(|| {
        let absorption = figures.absorption.as_ref()?;
        Some(absorption.device_read_requests as f64 / figures.window_s)
    });
    let cpu_s = figures.cpu.server_and_driver_cpu_s();
    let mut point = CurvePoint {
        sessions,
        window_start_unix_s,
        window_s: figures.window_s,
        device_read_requests_per_s,
        database_blocks_read_per_s: blocks.blocks_read_per_s,
        statement_mean_ms: select.map_or(0.0, |s| ms(s.latency.lat_mean_us)),
        statement_p50_ms: select.map_or(0.0, |s| ms(s.latency.lat_p50_us)),
        statement_p99_ms: select.map_or(0.0, |s| ms(s.latency.lat_p99_us)),
        block_read_latency_us: blocks.block_read_latency_us,
        host_cpu_busy_pct: figures.cpu.host_idle_pct.map(|idle| 100.0 - idle),
        cpu_per_block_us: if blocks_read > 0.0 {
            cpu_s / blocks_read * 1e6
        } else {
            0.0
        },
        cpu_per_device_read_us: cpu_per_device_read_us(figures),
        device_reads_per_block: device_reads_per_block(figures),
        absorbed_pct: figures.absorption.as_ref().map(|a| a.absorbed_pct),
        device_reads_in_flight: device_reads.map(|reads| reads.in_flight),
        device_read_latency_us: device_reads.map(|reads| reads.latency_us),
        storage_latency_us: None,
        cpu_pressure_pct: figures.cpu.host_cpu_pressure_pct,
        storage_iops: None,
        storage_share_pct: None,
        shortfall: None,
        updates: point_updates(sessions, figures),
        quarter_spread_pct: figures.quarter_spread_pct(),
        verdict: figures.verdict.clone(),
    };
    if let (Some(storage), Some(measured)) = (storage, device_read_requests_per_s) {
        let capacity = storage.iops_at(sessions);
        point.storage_iops = Some(capacity);
        point.storage_share_pct = Some(measured * 100.0 / capacity);
        point.storage_latency_us = point
            .device_reads_in_flight
            .map(|in_flight| storage.curve.latency_at(in_flight) * 1e6);
        point.shortfall = Some(shortfall(&point));
    }
    point
}

/// The data devices' (every one not only the WAL's) reads over the
/// window's edges: read requests per second (over the span between the
/// edges, which the counters cover), in flight by Little's law from
/// iostat's r/s and r_await, and their mean latency.
#[derive(Clone, Copy, Debug, PartialEq)]
struct DeviceReads {
    per_s: f64,
    in_flight: f64,
    latency_us: f64,
}

/// A window's [`DeviceReads`]; `None` when its data devices read nothing.
fn device_reads(devices: &[IostatFigures]) -> Option<DeviceReads> {
    let data = || devices.iter().filter(|device| device.role != "wal");
    let per_s: f64 = data().map(|device| device.r_per_s).sum();
    let in_flight: f64 = data()
        .map(|device| device.r_per_s * device.r_await_ms / 1e3)
        .sum();
    (per_s > 0.0).then(|| DeviceReads {
        per_s,
        in_flight,
        latency_us: in_flight / per_s * 1e6,
    })
}

/// What a window's updates did: their rows and COMMITs per second, the
/// COMMITs' mean and the share of `sessions`' time in them, and the data
/// devices' write requests per second; none where it updated nothing.
fn point_updates(sessions: u32, figures: &RunFigures) -> Option<PointUpdates> {
    let window_s = figures.window_s;
    let commit = figures.workload.commits()?;
    if figures.workload.rows_updated == 0 || window_s <= 0.0 {
        return None;
    }
    let commits = commit.latency.count as f64;
    let data = figures.devices.iter().filter(|device| device.role != "wal");
    let committing_s = commits * commit.latency.lat_mean_us * 1e-6;
    Some(PointUpdates {
        rows_updated_per_s: figures.workload.rows_updated as f64 / window_s,
        commits_per_s: commits / window_s,
        commit_mean_ms: commit.latency.lat_mean_us / 1e3,
        commit_time_pct: committing_s * 100.0 / (f64::from(sessions.max(1)) * window_s),
        device_write_requests_per_s: data.map(|device| device.w_per_s).sum(),
    })
}

/// A point's updates as its shortfall names them.
fn updates_text(updates: &PointUpdates) -> String {
    format!(
        "updates: {:.1} COMMITs/s of {:.2} ms each (the WAL's flush), {:.1}% of the sessions' \
         time; {:.0} device write requests/s beside the reads",
        updates.commits_per_s,
        updates.commit_mean_ms,
        updates.commit_time_pct,
        updates.device_write_requests_per_s
    )
}

/// Where a point's unused share of the storage went, by what the window
/// measured: the page cache, else how many of its sessions' reads the
/// devices held and how long each took beside calibrate's at that depth,
/// the CPU per block, and how long tasks waited for a CPU; and its
/// updates' COMMITs and writes, where it updated.
fn shortfall(point: &CurvePoint) -> String {
    let absorbed = point.absorbed_pct.unwrap_or(0.0);
    let updates = point.updates.as_ref().map(updates_text);
    if absorbed > ABSORBED_WARNING_PCT {
        let cache = format!("the page cache absorbed {absorbed:.1}% of the database's block reads");
        return std::iter::once(cache)
            .chain(updates)
            .collect::<Vec<_>>()
            .join("; ");
    }
    let mut parts = Vec::new();
    if let (Some(in_flight), Some(latency_us)) =
        (point.device_reads_in_flight, point.device_read_latency_us)
    {
        let calibrate = point.storage_latency_us.map_or(String::new(), |us| {
            format!(" (calibrate: {us:.0} µs at that depth)")
        });
        parts.push(format!(
            "{in_flight:.1} reads in flight at the devices, not {}, {latency_us:.0} µs \
             each{calibrate}",
            point.sessions
        ));
    }
    let beside = point.block_read_latency_us.map_or(String::new(), |us| {
        format!(" beside the database's {us:.1} µs per block read")
    });
    let cpu = format!(
        "{:.1} µs of CPU per block (server and driver){beside}",
        point.cpu_per_block_us
    );
    parts.push(match point.host_cpu_busy_pct {
        Some(busy) if 100.0 - busy < CPU_BOUND_IDLE_PCT => {
            format!("CPU: the host's CPUs were {busy:.0}% busy; {cpu}")
        }
        Some(busy) => format!("time between reads: {cpu}; CPUs {busy:.0}% busy"),
        None => format!("time between reads: {cpu}; the host's CPUs not observed"),
    });
    if let (Some(waited), Some(busy)) = (point.cpu_pressure_pct, point.host_cpu_busy_pct) {
        parts.push(cpu_wait(waited, 100.0 - busy));
    }
    parts.extend(updates);
    parts.join("; ")
}

/// Some task waited for a CPU `waited_pct` of the window; with the CPUs
/// idle `idle_pct` of it too, waking tasks waited for CPUs that sat idle.
fn cpu_wait(waited_pct: f64, idle_pct: f64) -> String {
    let waited = format!("some task waited for a CPU {waited_pct:.0}% of the window");
    match waited_pct >= IDLE_WAIT_PCT && idle_pct >= CPU_BOUND_IDLE_PCT {
        true => format!(
            "{waited} while the CPUs were {idle_pct:.0}% idle (waking tasks waited for CPUs \
             that sat idle: vCPUs the hypervisor runs late, or tasks packed onto fewer CPUs)"
        ),
        false => waited,
    }
}

/// The sweep's conclusions from its points.
fn summarize(
    points: Vec<CurvePoint>,
    request: &SweepRequest,
    database_work: Option<DatabaseWork>,
    storage: Option<&Storage>,
    mut prediction: Vec<PredictedPoint>,
) -> SweepSummary {
    let target_ms = request.latency_target.as_secs_f64() * 1e3;
    let device = |point: &CurvePoint| point.device_read_requests_per_s.unwrap_or(0.0);
    let most = |candidates: Vec<&CurvePoint>, figure: &dyn Fn(&CurvePoint) -> f64| {
        candidates
            .into_iter()
            .max_by(|a, b| figure(a).total_cmp(&figure(b)))
            .map(|point| point.sessions)
    };
    let measured: Vec<&CurvePoint> = points.iter().filter(|p| device(p) > 0.0).collect();
    let under: Vec<&CurvePoint> = measured
        .iter()
        .copied()
        .filter(|p| p.statement_p99_ms <= target_ms)
        .collect();
    let power = |p: &CurvePoint| device(p) / p.statement_mean_ms.max(f64::MIN_POSITIVE);
    let best_under_target = most(under, &device);
    let knee = most(measured, &power);
    for predicted in &mut prediction {
        if let Some(point) = points.iter().find(|p| p.sessions == predicted.sessions) {
            score(predicted, point);
        }
    }
    let not_run = request
        .sessions
        .iter()
        .copied()
        .filter(|n| points.iter().all(|p| p.sessions != *n))
        .collect();
    SweepSummary {
        points,
        latency_target_ms: target_ms,
        best_under_target,
        knee,
        database_cpu: database_work.as_ref().map(|work| work.cpu.clone()),
        database_contention: database_work
            .as_ref()
            .and_then(|work| work.contention.clone()),
        database_contention_at_cpus: database_work.as_ref().and_then(|work| work.at_cpus.clone()),
        database_reads: database_work.map(|work| work.reads),
        storage: storage.map(|storage| storage.record.clone()),
        prediction,
        not_run,
    }
}

/// One point as its progress line says it.
fn point_line(point: &CurvePoint) -> String {
    let device = point
        .device_read_requests_per_s
        .map_or("no device measured".to_string(), |r| {
            format!("{r:.0} device read requests/s")
        });
    let share = point.storage_share_pct.map_or(String::new(), |share| {
        format!(", {share:.0}% of the storage's rate")
    });
    let statements = match (point.statement_mean_ms > 0.0, point.updates) {
        (false, Some(updates)) => format!(
            "no selects, {:.1} COMMITs/s of {:.2} ms",
            updates.commits_per_s, updates.commit_mean_ms
        ),
        _ => format!(
            "statement p50 {:.2} ms p99 {:.2} ms",
            point.statement_p50_ms, point.statement_p99_ms
        ),
    };
    format!(
        "{} sessions: {device}, {:.0} database blocks read/s, {statements}, {} µs per block \
         read{share}; {}",
        point.sessions,
        point.database_blocks_read_per_s,
        or_dash(point.block_read_latency_us, 1),
        point.verdict.name()
    )
}

/// The prediction as it is said before the sweep: the measured inputs,
/// then one line per point.
pub fn prediction_text(
    measured: &DatabaseWork,
    work: &BlockWork,
    storage: &Storage,
    points: &[PredictedPoint],
) -> String {
    let DatabaseWork {
        cpu,
        reads,
        contention,
        at_cpus,
    } = measured;
    let prefetch = match reads.prefetch {
        true => "prefetch (the server reads ahead of the block it works on)",
        false => "no prefetch (the server reads each block when it needs it)",
    };
    let ahead = match work.session_reads_in_flight > 1.0 {
        true => format!(
            ", {:.2} device reads in flight per session: the model's device serves sessions × \
             that many",
            work.session_reads_in_flight
        ),
        false => String::new(),
    };
    let slowdowns = per_window(work, |c| Some(format!("{:.2}", c.device_slowdown?)));
    let slowdown = match slowdowns.is_empty() {
        true => String::new(),
        false => format!(
            "; the device's latency for several sessions' reads over calibrate's at their depth \
             (their CPU work runs while reads are in flight): {slowdowns}; the model's device \
             takes that many times calibrate's time there, linear from one session's {:.2} \
             through them",
            work.one_session_device_slowdown
        ),
    };
    let cpus_per_read = per_window(work, |c| {
        c.cpu_per_device_read_s?;
        Some(format!("{:.2} µs", work.read_path_cpu_at(c.sessions) * 1e6))
    });
    let read_path_cpu = match cpus_per_read.is_empty() {
        true => String::new(),
        false => format!(
            "; the read path's CPU per device read {cpus_per_read}: the model's runs linearly \
             from one session's through it"
        ),
    };
    let one_device = match work.one_session_device_slowdown == 1.0 {
        true => String::new(),
        false => format!(
            "; what that cannot take of the session's time per read against calibrate's goes to \
             the device: the model's device takes {:.2} × calibrate's time for one session",
            work.one_session_device_slowdown
        ),
    };
    let p99_source = match (work.statement_p99_over_mean, storage.curve.has_batches()) {
        (Some(ratio), _) => format!(
            "the database's own statements at one session (p99 {ratio:.2} × their mean{}), \
             times the predicted mean",
            work.spread_text()
        ),
        (None, true) => {
            "calibrate's batches timed whole, p99 over mean at the predicted depth".to_string()
        }
        (None, false) => "independent reads (the calibration timed no batches)".to_string(),
    };
    let updates = reads.updates.map_or(String::new(), |measured| {
        format!(
            "; {:.1}% of statements update {} rows and COMMIT: one session's COMMITs took \
             {:.3} ms ({} of them, {:.2} µs per device read), its data devices wrote {:.2} \
             requests per row updated, each taken as a read's time at the device; the \
             statement latency is the selects'",
            measured.share * 100.0,
            measured.rows_per_update,
            measured.commit_mean_us / 1e3,
            measured.commits,
            reads.commit_per_device_read_us(),
            measured.device_writes_per_row()
        )
    });
    let mut text = format!(
        "prediction (closed MVA): CPU per block {:.2} µs measured on the database (one session, \
         {:.0} cached blocks in {:.1} s, {:.1}% buffer hits) + {:.2} µs the read path's per \
         device read (one session reading from the device: {:.2} µs of CPU per device read, \
         {} reads in {:.1} s{}, {:.2} µs per read, {:.3} reads per block, {:.2} reads in flight at \
         the device) on {}; {prefetch}{ahead}{slowdown}{read_path_cpu}; {:.2} µs of the CPU per \
         read ran while the device read (CPU + calibrate's {:.2} µs per read at {:.2} \
         outstanding − time per read){one_device}; {:.2} µs per block neither CPU nor device; \
         think {:.2} µs per block; {} blocks per statement{updates}; statement p99 from \
         {p99_source}\n",
        cpu.cpu_per_block_us,
        cpu.blocks,
        cpu.window_s,
        cpu.buffer_hit_pct,
        work.cpu_per_io_s * 1e6,
        reads.cpu_per_device_read_us,
        reads.device_read_requests,
        reads.window_s,
        quarters_text(reads.quarter_spread_pct),
        reads.elapsed_per_device_read_us,
        reads.device_reads_per_block,
        reads.device_reads_in_flight,
        cpus_text(work.cpus, at_cpus.as_ref(), contention.as_ref()),
        reads.overlap_per_device_read_us,
        reads.storage_latency_us,
        work.session_reads_in_flight,
        work.delay_per_block_s * 1e6,
        work.think_per_block_s * 1e6,
        work.blocks_per_statement
    );
    for point in points {
        text.push_str(&format!(
            "  {:>5} sessions: {:>10.0} device read requests/s, {:>8.1} µs per block read, \
             statement mean {:.2} ms p99 {:.2} ms, CPU {:.0}% busy\n",
            point.sessions,
            point.device_read_requests_per_s,
            point.block_read_latency_us,
            point.statement_mean_ms,
            point.statement_p99_ms,
            point.cpu_busy_pct
        ));
    }
    text
}

/// The CPUs the model takes, and how the windows of several sessions
/// measured them.
fn cpus_text(
    cpus: u32,
    at_cpus: Option<&DatabaseContention>,
    contention: Option<&DatabaseContention>,
) -> String {
    let windows: Vec<&DatabaseContention> = at_cpus.into_iter().chain(contention).collect();
    DatabaseContention::windows_text(&windows).unwrap_or(format!("{cpus} CPUs"))
}

/// A figure of each window of several sessions that has it, "at N
/// sessions" each, joined.
fn per_window(work: &BlockWork, figure: impl Fn(&ContendedReads) -> Option<String>) -> String {
    let each: Vec<String> = (work.windows())
        .filter_map(|window| {
            Some(format!(
                "{} at {} sessions",
                figure(window)?,
                window.sessions
            ))
        })
        .collect();
    each.join(", ")
}

/// The sweep's text: the curve, the knee, the latency-target answer, the
/// storage's share and the prediction against the measurement.
pub fn text(summary: &SweepSummary) -> String {
    let sessions: Vec<String> = summary
        .points
        .iter()
        .map(|p| p.sessions.to_string())
        .collect();
    let mut out = format!(
        "Sweep: {} points, one measured window each ({} sessions)\n",
        summary.points.len(),
        sessions.join(", ")
    );
    out += &format!(
        "{:>8} {:>12} {:>12} {:>9} {:>9} {:>10} {:>9} {:>10} {:>8} {:>10} {:>9} {:>12} {:>7}  verdict\n",
        "sessions",
        "device r/s",
        "db blocks/s",
        "p50 ms",
        "p99 ms",
        "µs/block",
        "in flight",
        "r_await µs",
        "CPU %",
        "CPU wait%",
        "absorbed%",
        "storage r/s",
        "share%"
    );
    for point in &summary.points {
        out += &format!(
            "{:>8} {:>12} {:>12.0} {:>9.2} {:>9.2} {:>10} {:>9} {:>10} {:>8} {:>10} {:>9} {:>12} {:>7}  {}\n",
            point.sessions,
            or_dash(point.device_read_requests_per_s, 0),
            point.database_blocks_read_per_s,
            point.statement_p50_ms,
            point.statement_p99_ms,
            or_dash(point.block_read_latency_us, 1),
            or_dash(point.device_reads_in_flight, 2),
            or_dash(point.device_read_latency_us, 1),
            or_dash(point.host_cpu_busy_pct, 0),
            or_dash(point.cpu_pressure_pct, 0),
            or_dash(point.absorbed_pct, 1),
            or_dash(point.storage_iops, 0),
            or_dash(point.storage_share_pct, 0),
            point.verdict.name()
        );
    }
    out += &conclusions_text(summary);
    out += &storage_text(summary);
    out += &prediction_table(summary);
    out += &error_sources_text(summary);
    out
}

fn conclusions_text(summary: &SweepSummary) -> String {
    let device = |sessions: u32| {
        summary
            .point(sessions)
            .and_then(|p| p.device_read_requests_per_s)
            .unwrap_or(0.0)
    };
    let mut out = match summary.knee {
        Some(knee) => format!(
            "Knee: {knee} sessions ({:.0} device read requests/s): the most reads per ms of mean \
             statement latency; past it, sessions buy latency\n",
            device(knee)
        ),
        None => "Knee: none (no point measured device reads)\n".to_string(),
    };
    let target = summary.latency_target_ms;
    out += &match summary.best_under_target {
        Some(best) => format!(
            "Under the latency target (statement p99 ≤ {target:.1} ms): {:.0} device read \
             requests/s at {best} sessions (p99 {:.2} ms)\n",
            device(best),
            summary.point(best).map_or(0.0, |p| p.statement_p99_ms)
        ),
        None => {
            format!("Under the latency target (statement p99 ≤ {target:.1} ms): no point met it\n")
        }
    };
    if !summary.not_run.is_empty() {
        let not_run: Vec<String> = summary.not_run.iter().map(u32::to_string).collect();
        out += &format!("Not run (stopped): {} sessions\n", not_run.join(", "));
    }
    out
}

fn storage_text(summary: &SweepSummary) -> String {
    let Some(storage) = &summary.storage else {
        return String::new();
    };
    let mut out = format!(
        "Storage (calibrate {}), at as many outstanding requests as sessions:\n",
        storage.calibration
    );
    for point in &summary.points {
        if let (Some(share), Some(capacity), Some(why)) = (
            point.storage_share_pct,
            point.storage_iops,
            &point.shortfall,
        ) {
            out += &format!(
                "  {:>5} sessions: {share:.0}% of the storage's {capacity:.0} read requests/s; the \
                 rest: {why}\n",
                point.sessions
            );
        }
    }
    out
}

fn prediction_table(summary: &SweepSummary) -> String {
    if summary.prediction.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "Predicted vs measured (spread%: the measured window's loops/s over its quarters, \
         highest less lowest over their mean):\n{:>8} {:>14} {:>14} {:>8} {:>14} {:>14} {:>8} \
         {:>8}\n",
        "sessions",
        "pred. dev r/s",
        "meas. dev r/s",
        "error%",
        "pred. p99 ms",
        "meas. p99 ms",
        "error%",
        "spread%"
    );
    for predicted in &summary.prediction {
        let measured = summary.point(predicted.sessions);
        out += &format!(
            "{:>8} {:>14.0} {:>14} {:>8} {:>14.2} {:>14} {:>8} {:>8}\n",
            predicted.sessions,
            predicted.device_read_requests_per_s,
            measured
                .and_then(|p| p.device_read_requests_per_s)
                .map_or("-".to_string(), |v| format!("{v:.0}")),
            signed(predicted.device_error_pct),
            predicted.statement_p99_ms,
            measured.map_or("-".to_string(), |p| format!("{:.2}", p.statement_p99_ms)),
            signed(predicted.statement_p99_error_pct),
            (measured.and_then(|p| p.quarter_spread_pct))
                .map_or("-".to_string(), |pct| format!("{pct:.1}")),
        );
    }
    out
}

/// Each scored point's errors taken apart, with the measured figure and
/// the model's beside each factor.
fn error_sources_text(summary: &SweepSummary) -> String {
    let lines: Vec<String> = summary
        .prediction
        .iter()
        .filter_map(|predicted| {
            let point = summary.point(predicted.sessions)?;
            Some(error_sources_line(
                predicted,
                point,
                &predicted.error_sources?,
            ))
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "What the errors are made of (measured against the model, %; device r/s = reads in \
         flight at the devices ÷ each read's time there, iostat's aqu-sz ÷ r_await; p99 = mean \
         × p99/mean):\n{}{}",
        lines.concat(),
        summary
            .anchor_text()
            .map_or(String::new(), |anchor| format!("  {anchor}\n"))
    )
}

/// One point's factors, each with the point's figure and the model's.
fn error_sources_line(
    predicted: &PredictedPoint,
    point: &CurvePoint,
    sources: &ErrorSources,
) -> String {
    let beside = |measured: Option<f64>, model: Option<f64>, decimals: usize, unit: &str| {
        format!(
            "{}{unit}, the model's {}{unit}",
            or_dash(measured, decimals),
            or_dash(model, decimals)
        )
    };
    let in_flight = sources.device_reads_in_flight_pct;
    let latency = sources.device_read_latency_pct;
    format!(
        "  {:>5} sessions: r/s {} = in flight {in_flight:+.1} ({}) ÷ time per read {latency:+.1} \
         ({}); CPU per device read {:+.1} ({}), device reads per block {:+.1}; p99 {} = mean \
         {:+.1} × p99/mean {:+.1}\n",
        predicted.sessions,
        signed(predicted.device_error_pct),
        beside(
            point.device_reads_in_flight,
            Some(predicted.device_outstanding),
            2,
            ""
        ),
        beside(
            point.device_read_latency_us,
            predicted.device_read_latency_us,
            0,
            " µs"
        ),
        sources.cpu_per_device_read_pct,
        beside(
            point.cpu_per_device_read_us,
            predicted.cpu_per_device_read_us,
            1,
            " µs"
        ),
        sources.device_reads_per_block_pct,
        signed(predicted.statement_p99_error_pct),
        sources.statement_mean_pct,
        sources.statement_p99_over_mean_pct,
    )
}

/// A figure with `decimals`, or `-` where there is none.
fn or_dash(value: Option<f64>, decimals: usize) -> String {
    value.map_or("-".to_string(), |v| format!("{v:.decimals$}"))
}

/// A signed error in percent, or `-`.
fn signed(value: Option<f64>) -> String {
    value.map_or("-".to_string(), |v| format!("{v:+.1}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_slob::schema::SchemaPlan;

    fn timed(warmup_s: u64, duration_s: u64) -> DriverOptions {
        let plan = SchemaPlan {
            schemas: 4,
            single_schema: false,
            blocks_per_schema: 1024,
            scan_table_blocks: 0,
            random_data: false,
        };
        DriverOptions {
            stop_after: StopAfter::Duration {
                warmup: Duration::from_secs(warmup_s),
                duration: Duration::from_secs(duration_s),
            },
            ..crate::request::setup_driver_options(plan)
        }
    }

    /// calibrate's reads at 1 and 8 outstanding: 50 and 200 µs, 20,000
    /// and 40,000 per second.
    fn calibrated() -> Storage {
        let level = |outstanding: u32, mean_us: f64| predict::StoragePoint {
            outstanding,
            iops: f64::from(outstanding) / (mean_us * 1e-6),
            mean_latency_s: mean_us * 1e-6,
            sd_latency_s: 0.0,
            p99_latency_s: mean_us * 1e-6,
            cpu_per_io_s: 0.0,
            batch: None,
        };
        let Ok(curve) = predict::StorageCurve::new(vec![level(1, 50.0), level(8, 200.0)]) else {
            panic!("a curve of two levels");
        };
        let record = StorageCurve {
            calibration: "cal.strata".into(),
            levels: Vec::new(),
        };
        Storage { curve, record }
    }

    /// One session of a read stream: 8 reads in flight, `elapsed_us` per
    /// read, 10 µs of CPU per read (1 µs of it a cached block's).
    fn read_stream(storage: &Storage, elapsed_us: f64) -> DatabaseWork {
        let cpu = DatabaseCpu {
            window_s: 1.0,
            blocks: 1e6,
            buffer_hit_pct: 100.0,
            cpu_s: 1.0,
            cpu_per_block_us: 1.0,
            elapsed_per_block_us: 1.0,
        };
        let device_read_requests = (10e6 / elapsed_us) as u64;
        let mut reads = DatabaseReads {
            window_s: 10.0,
            device_read_requests,
            cpu_s: device_read_requests as f64 * 10e-6,
            cpu_per_device_read_us: 10.0,
            elapsed_per_device_read_us: elapsed_us,
            storage_latency_us: storage.time_per_read_us(8.0),
            overlap_per_device_read_us: 0.0,
            device_slowdown: 1.0,
            prefetch: true,
            blocks: device_read_requests as f64,
            device_reads_per_block: 1.0,
            device_reads_in_flight: 8.0,
            device_read_latency_us: None,
            statement_mean_ms: None,
            statement_p99_ms: None,
            updates: None,
            quarter_spread_pct: None,
        };
        (reads.overlap_per_device_read_us, reads.device_slowdown) =
            storage.one_session_anchor(&reads);
        DatabaseWork {
            cpu,
            reads,
            contention: None,
            at_cpus: None,
        }
    }

    #[test]
    fn the_model_s_one_session_is_its_reading_window_even_where_its_cpu_hides_behind_the_device() {
        let storage = calibrated();
        let statement = Statement {
            blocks: 256.0,
            think_per_block_s: 0.0,
            updates: None,
        };
        let one_session = |elapsed_us: f64| {
            let measured = read_stream(&storage, elapsed_us);
            let Ok(work) = measured.block_work(&storage, statement, 2) else {
                panic!("the work of a read stream");
            };
            let Ok(predicted) = predict::predict(&storage.curve, &work, &[1]) else {
                panic!("the model at one session");
            };
            let slowdown = measured.reads.device_slowdown;
            assert_eq!(work.one_session_device_slowdown, slowdown);
            (slowdown, predicted[0].device_read_requests_per_s)
        };
        // calibrate's 25 µs per read at 8 outstanding (40,000/s). 20 µs per
        // read is faster even with all 10 µs of CPU hidden behind the
        // device: the device takes 0.8 × calibrate's time, and the model
        // reaches the window's 50,000 reads/s, not calibrate's 40,000.
        // 30 µs: 5 µs hidden, calibrate's device. 40 µs: slower even with
        // none hidden: the device takes (40 − 10) / 25 = 1.2 × calibrate's.
        for (elapsed_us, expected_slowdown) in [(20.0, 0.8), (30.0, 1.0), (40.0, 1.2)] {
            let (slowdown, per_s) = one_session(elapsed_us);
            assert!(
                (slowdown - expected_slowdown).abs() < 1e-12,
                "{elapsed_us}: {slowdown}"
            );
            let window_per_s = 1e6 / elapsed_us;
            assert!(
                (per_s - window_per_s).abs() < 1e-6 * window_per_s,
                "{elapsed_us}: {per_s}"
            );
        }
    }

    #[test]
    fn a_failed_window_lacking_a_figure_is_named_by_its_causes() {
        let failed = Verdict::Failed {
            causes: vec!["the memory cgroup's OOM killer killed a server process".into()],
        };
        let read_none = || "the window read 0 requests".to_string();
        assert_eq!(
            lacking(&failed, read_none()),
            "the window failed: the memory cgroup's OOM killer killed a server process"
        );
        assert_eq!(lacking(&Verdict::Valid, read_none()), read_none());
        let not_storage = Verdict::NotAStorageResult { reasons: vec![] };
        assert_eq!(lacking(&not_storage, read_none()), read_none());
    }

    #[test]
    fn the_reading_window_is_twice_a_point_and_never_shorter_than_its_own() {
        let window = |driver: &DriverOptions| match read_options(driver).stop_after {
            StopAfter::Duration { warmup, duration } => (warmup.as_secs(), duration.as_secs()),
            StopAfter::WorkLoops(_) => (0, 0),
        };
        assert_eq!(window(&timed(1, 2)), (3, 5));
        assert_eq!(window(&timed(1, 3)), (3, 6));
        assert_eq!(window(&timed(5, 20)), (5, 40));
        assert_eq!(read_options(&timed(5, 20)).sessions, Some(1));
    }

    #[test]
    fn session_counts_are_a_list_or_a_doubling_range() {
        assert_eq!(parse_session_counts("1,2,4").unwrap(), [1, 2, 4]);
        assert_eq!(parse_session_counts("1-32").unwrap(), [1, 2, 4, 8, 16, 32]);
        assert_eq!(parse_session_counts("3-20").unwrap(), [3, 6, 12, 20]);
        assert_eq!(parse_session_counts("4-4").unwrap(), [4]);
        for bad in ["", "0,1", "4,2", "2,2", "1-0", "8-2", "a", "1-99999"] {
            let error = parse_session_counts(bad).unwrap_err();
            assert!(
                error.contains("give rising session counts"),
                "{bad}: {error}"
            );
        }
    }

    fn device(role: &str, r_per_s: f64, r_await_ms: f64) -> IostatFigures {
        IostatFigures {
            device: "vda".into(),
            role: role.into(),
            read_requests: (r_per_s * 10.0) as u64,
            r_per_s,
            rareq_sz_kib: 8.0,
            r_await_ms,
            ..IostatFigures::default()
        }
    }

    #[test]
    fn the_data_devices_reads_in_flight_are_little_s_law_without_the_wal_s() {
        let devices = [
            device("data", 20_000.0, 0.25),
            device("data", 10_000.0, 0.1),
            device("wal", 50_000.0, 1.0),
        ];
        let reads = device_reads(&devices).unwrap();
        assert_eq!(reads.per_s, 30_000.0);
        assert!((reads.in_flight - 6.0).abs() < 1e-9, "{reads:?}");
        assert!((reads.latency_us - 200.0).abs() < 1e-9, "{reads:?}");
        assert_eq!(device_reads(&[device("wal", 100.0, 1.0)]), None);
    }

    fn point(cpu_pressure_pct: Option<f64>, host_cpu_busy_pct: f64) -> CurvePoint {
        CurvePoint {
            sessions: 16,
            window_start_unix_s: 0.0,
            window_s: 10.0,
            device_read_requests_per_s: Some(30_000.0),
            database_blocks_read_per_s: 31_000.0,
            statement_mean_ms: 115.0,
            statement_p50_ms: 116.0,
            statement_p99_ms: 182.0,
            block_read_latency_us: Some(457.0),
            host_cpu_busy_pct: Some(host_cpu_busy_pct),
            cpu_per_block_us: 39.8,
            cpu_per_device_read_us: Some(39.8 * 31_000.0 / 30_000.0),
            device_reads_per_block: Some(30.0 / 31.0),
            absorbed_pct: Some(4.5),
            device_reads_in_flight: Some(7.5),
            device_read_latency_us: Some(250.0),
            storage_latency_us: Some(178.0),
            cpu_pressure_pct,
            storage_iops: Some(49_000.0),
            storage_share_pct: Some(61.0),
            shortfall: None,
            updates: None,
            quarter_spread_pct: None,
            verdict: strata_core::verdict::Verdict::not_recorded(),
        }
    }

    /// The model's 16 sessions beside [`point`]'s: 33,000 device read
    /// requests/s from 8 in flight.
    fn predicted_16() -> PredictedPoint {
        PredictedPoint {
            sessions: 16,
            device_read_requests_per_s: 33_000.0,
            device_outstanding: 8.0,
            block_read_latency_us: 240.0,
            device_read_latency_us: Some(8.0 / 33_000.0 * 1e6),
            cpu_per_device_read_us: Some(38.0),
            device_reads_per_block: Some(1.0),
            cpu_busy_pct: 90.0,
            statement_mean_ms: 100.0,
            statement_p99_ms: 160.0,
            device_error_pct: None,
            statement_p99_error_pct: None,
            error_sources: None,
        }
    }

    #[test]
    fn a_score_takes_its_errors_apart_into_factors_that_multiply_back() {
        let measured = point(None, 90.0);
        let mut predicted = predicted_16();
        score(&mut predicted, &measured);
        let (Some(device_error), Some(p99_error), Some(sources)) = (
            predicted.device_error_pct,
            predicted.statement_p99_error_pct,
            predicted.error_sources,
        ) else {
            panic!("scored without its errors: {predicted:?}");
        };
        assert!((device_error - (30_000.0 - 33_000.0) * 100.0 / 33_000.0).abs() < 1e-9);
        // 7.5 against 8 in flight; 250 µs against 8 / 33,000 s per read.
        assert!(
            (sources.device_reads_in_flight_pct + 6.25).abs() < 1e-9,
            "{sources:?}"
        );
        assert!(
            (sources.device_read_latency_pct - 3.125).abs() < 1e-9,
            "{sources:?}"
        );
        let factor = |pct: f64| 1.0 + pct / 100.0;
        let product =
            factor(sources.device_reads_in_flight_pct) / factor(sources.device_read_latency_pct);
        assert!((product - factor(device_error)).abs() < 1e-12);
        let p99 = factor(sources.statement_mean_pct) * factor(sources.statement_p99_over_mean_pct);
        assert!((p99 - factor(p99_error)).abs() < 1e-12);
        assert!(
            (sources.cpu_per_device_read_pct - (41.126_666 - 38.0) * 100.0 / 38.0).abs() < 1e-3
        );
        assert!((sources.device_reads_per_block_pct - (30.0 / 31.0 - 1.0) * 100.0).abs() < 1e-9);
        let text = error_sources_line(&predicted, &measured, &sources);
        for part in [
            "16 sessions: r/s -9.1 = in flight -6.2 (7.50, the model's 8.00) ÷ time per read +3.1 \
             (250 µs, the model's 242 µs);",
            "CPU per device read +8.2 (41.1 µs, the model's 38.0 µs)",
            "p99 +13.8 = mean +15.0 × p99/mean -1.1",
        ] {
            assert!(text.contains(part), "no {part:?} in {text}");
        }
    }

    #[test]
    fn a_score_without_the_devices_or_the_model_s_figures_has_no_sources() {
        let mut predicted = predicted_16();
        let unmeasured = CurvePoint {
            device_reads_in_flight: None,
            device_read_latency_us: None,
            ..point(None, 90.0)
        };
        score(&mut predicted, &unmeasured);
        assert!(predicted.device_error_pct.is_some());
        assert_eq!(predicted.error_sources, None);
        let mut from_before = PredictedPoint {
            device_read_latency_us: None,
            ..predicted_16()
        };
        score(&mut from_before, &point(None, 90.0));
        assert_eq!(from_before.error_sources, None);
    }

    #[test]
    fn a_shortfall_names_the_device_s_queue_and_the_wait_for_idle_cpus() {
        let text = shortfall(&point(Some(80.0), 75.0));
        for part in [
            "7.5 reads in flight at the devices, not 16, 250 µs each (calibrate: 178 µs at that \
             depth)",
            "time between reads: 39.8 µs of CPU per block",
            "some task waited for a CPU 80% of the window while the CPUs were 25% idle",
        ] {
            assert!(text.contains(part), "no {part:?} in {text}");
        }
        let busy = shortfall(&point(Some(80.0), 95.0));
        assert!(
            busy.contains("CPU: the host's CPUs were 95% busy"),
            "{busy}"
        );
        assert!(!busy.contains("sat idle"), "{busy}");
        assert!(!shortfall(&point(None, 75.0)).contains("waited for a CPU"));
        let updating = CurvePoint {
            updates: Some(PointUpdates {
                rows_updated_per_s: 560.0,
                commits_per_s: 70.0,
                commit_mean_ms: 1.25,
                commit_time_pct: 0.6,
                device_write_requests_per_s: 812.0,
            }),
            ..point(None, 75.0)
        };
        let text = shortfall(&updating);
        let part = "updates: 70.0 COMMITs/s of 1.25 ms each (the WAL's flush), 0.6% of the \
                    sessions' time; 812 device write requests/s beside the reads";
        assert!(text.contains(part), "no {part:?} in {text}");
    }
}
