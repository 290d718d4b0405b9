//! `strata run --sweep-sessions`: the database's own capacity curve, one
//! measured window per session count on one data set and one server, and
//! with `--calibration`/`--predict` the storage's curve beside it and the
//! prediction checked against it. Whatever the engine: the engine runs the
//! windows, this module turns their figures into the curve, the knee, the
//! latency-target answer, the CPU per block and the prediction. Here: the
//! request and the windows' options; the points and the summary in
//! `curve`, the prediction and its scoring in `prediction`, the words in
//! `text`, the order the windows run in `windows`.
//!
//! Not for: running one window (each engine's crate), the queueing arithmetic
//! (strata-model's `predict`) or the rest of a run's text (`output`).

mod curve;
mod prediction;
mod text;
pub mod windows;

pub use curve::*;
pub use prediction::*;
pub use text::*;

use anyhow::bail;
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
pub(crate) fn contended_counts(cpus: u32, sessions: &[u32]) -> Vec<u32> {
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
pub(crate) fn contended_window(
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
pub(crate) fn cached_window(
    driver: &DriverOptions,
    (cache_bytes, block_bytes): (u64, u64),
    observer: &mut dyn RunObserver,
) -> DriverOptions {
    observer.phase("measuring the database's CPU per block: one session on a cached data set");
    cached_options(driver, cached_blocks(cache_bytes, block_bytes))
}

/// The reading window's options (one session as the points read, twice
/// as long as a point's window), said as its phase.
pub(crate) fn reading_window(
    driver: &DriverOptions,
    observer: &mut dyn RunObserver,
) -> DriverOptions {
    observer
        .phase("measuring the database's CPU per device read: one session reading the data set");
    read_options(driver)
}

/// The prediction from the windows before the sweep: the CPU per block
/// measured (`cpu`, on the host's `cpus`), the contended window's figures,
/// the reading window's and whether the server reads ahead; said before
/// the sweep runs.
pub(crate) fn predict_the_sweep(
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
