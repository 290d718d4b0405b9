//! The SLOB sessions, whatever the engine: what they are asked to do (read
//! random single blocks through the index, with optional updates, scans,
//! think time, hot spots and skew), who each one is, how each ended, and
//! what they did inside the measurement window.
//!
//! Not for: talking to a database (each engine's crate runs its sessions:
//! PostgreSQL's as tokio tasks, the others on `threads`), reading OS or
//! server counters around the run, or printing.

pub mod access;
pub mod tally;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use anyhow::ensure;
use serde::Serialize;
use strata_core::histogram::LatencyHistogram;
use strata_core::units::{serialize_seconds, serialize_seconds_range};
pub use strata_recording::run::SecondCounts;
use tokio::time::Instant;

use crate::load::LoadProgress;
use crate::schema::{validate_plan, SchemaPlan};
use tally::{SharedTally, Window};
pub use tally::{StatementOutlier, DEFAULT_OUTLIER_FLOOR};

/// How start keys are drawn: `"uniform"` or `{"zipf": {"theta": …}}`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessDistribution {
    Uniform,
    /// P(key k) ∝ k^-theta: key 1 hottest.
    Zipf {
        theta: f64,
    },
}

/// A range of keys that every `every`th loop goes to.
#[derive(Clone, Debug, Serialize)]
pub struct Hotspot {
    pub offset_blocks: u64,
    pub size_blocks: u64,
    pub every: u32,
}

/// Blocks one select reads when nothing says otherwise (`--work-unit`).
pub const DEFAULT_WORK_UNIT: u32 = 256;
/// Rows one update changes when nothing says otherwise
/// (`--update-work-unit`).
pub const DEFAULT_UPDATE_WORK_UNIT: u32 = 8;

#[derive(Clone, Debug, Serialize)]
pub struct WorkloadOptions {
    /// Keys (so blocks) one select reads.
    pub work_unit: u32,
    /// Share of loops that update, in percent of all loops.
    pub update_pct: f64,
    /// Keys one update changes.
    pub update_work_unit: u32,
    /// Bytes of each updated row's pad rewritten with new random bytes,
    /// besides its counter (0: the counter alone); PostgreSQL only.
    pub update_pad_bytes: u32,
    /// Share of loops that scan the `scan` table, in percent of all loops.
    pub scan_pct: f64,
    /// Pause drawn uniformly from this range after every `think_every` loops.
    #[serde(rename = "think_time_s", serialize_with = "serialize_seconds_range")]
    pub think_time: Option<(Duration, Duration)>,
    pub think_every: u32,
    pub hotspot: Option<Hotspot>,
    /// Every Nth loop works on schema 1 instead of the session's own.
    pub hot_schema_every: Option<u32>,
    pub distribution: AccessDistribution,
}

/// `{"duration": {"warmup_s": …, "duration_s": …}}` or `{"work_loops": …}`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopAfter {
    /// Run `warmup` then measure for `duration`.
    Duration {
        #[serde(rename = "warmup_s", serialize_with = "serialize_seconds")]
        warmup: Duration,
        #[serde(rename = "duration_s", serialize_with = "serialize_seconds")]
        duration: Duration,
    },
    /// Every session does exactly this many loops; the elapsed time is the
    /// result.
    WorkLoops(u64),
}

impl StopAfter {
    /// The time the sessions run before the measured window (none in batch
    /// mode).
    pub fn warmup(&self) -> Duration {
        match self {
            StopAfter::Duration { warmup, .. } => *warmup,
            StopAfter::WorkLoops(_) => Duration::ZERO,
        }
    }
}

#[derive(Clone, Debug)]
pub struct DriverOptions {
    pub plan: SchemaPlan,
    pub workload: WorkloadOptions,
    pub threads_per_schema: u32,
    /// Sessions of the single-schema model (default: `threads_per_schema`).
    pub sessions: Option<u32>,
    pub stop_after: StopAfter,
    pub seed: u64,
    /// `--tolerate-failures`: failed sessions do not fail the run.
    pub tolerate_failures: bool,
    /// `--outlier-threshold`: statements this slow are kept one by one
    /// (default: ten times the window's p99, at least 100 ms).
    pub outlier_threshold: Option<Duration>,
    /// `--shard I/N`: this driver runs shard I's part of the sessions.
    pub shard: Option<Shard>,
}

/// One of N drivers of one run (`--shard I/N`, 1-based). The run's
/// sessions are numbered as one driver would number them (dealt
/// round-robin over the schemas); session `i` (from 0) is shard
/// `i mod N + 1`'s, with the seed and schema it would have had in one
/// driver, so the shards together run the workload one driver would have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Whether the run's session `session_index` (from 0) is this shard's.
    pub fn owns(self, session_index: u32) -> bool {
        session_index % self.count == self.index - 1
    }
}

/// What a run tells the one who started it: its phases, the load's
/// progress, and the sessions' progress while they run.
pub trait RunObserver: Send {
    fn phase(&mut self, message: &str);
    fn loading(&mut self, progress: &LoadProgress);
    fn running(
        &mut self,
        elapsed: Duration,
        expected: Option<Duration>,
        loops: u64,
        sessions_alive: u64,
    );
    /// Something the user should read before the work goes on (a sweep's
    /// prediction), line by line.
    fn said(&mut self, _text: &str) {}
}

/// Live counters for a progress display; they include warm-up.
#[derive(Debug, Default)]
pub struct Progress {
    pub loops: AtomicU64,
    pub sessions_alive: AtomicU64,
    pub selects: AtomicU64,
    pub updates: AtomicU64,
    pub scans: AtomicU64,
    pub failures: AtomicU64,
    pub reconnects: AtomicU64,
}

/// Who a session is: its number, and the schemas it works on.
#[derive(Clone, Debug)]
pub struct SessionSpec {
    pub index: u32,
    pub schema: String,
    pub hot_schema: Option<String>,
    /// With fewer sessions than schemas (a sweep's first points): the
    /// other schemas this session works on, in turn with its own, one loop
    /// each — so that every session count reads the whole data set.
    pub also: Vec<String>,
    pub with_scan: bool,
    /// [`WorkloadOptions::update_pad_bytes`].
    pub update_pad_bytes: u32,
}

/// How a session ended.
#[derive(Debug)]
pub struct SessionEnd {
    pub index: u32,
    pub schema: String,
    pub ended_at: Instant,
    /// When it failed, and why.
    pub failure: Option<(Instant, String)>,
    /// Spans without a connection, from losing the server to reconnecting.
    pub offline: Vec<(Instant, Instant)>,
    /// Why the server went away the first time (as the server said it).
    pub first_lost: Option<String>,
    pub reconnects: u64,
    /// The server's thread (Linux task id) that served each of its
    /// connections: a PostgreSQL backend's process (its only thread), a
    /// MariaDB connection's thread (PROCESSLIST's `TID`); empty where the
    /// engine cannot say (SQLite runs in strata's own process).
    pub server_threads: Vec<u32>,
}

impl SessionEnd {
    /// A session that ended at `ended_at` having done nothing yet.
    pub fn new(index: u32, schema: String, ended_at: Instant) -> SessionEnd {
        SessionEnd {
            index,
            schema,
            ended_at,
            failure: None,
            offline: Vec::new(),
            first_lost: None,
            reconnects: 0,
            server_threads: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct SessionFailure {
    pub session: u32,
    pub schema: String,
    /// What failed, as the server or driver said it; never a password.
    pub error: String,
    pub seconds_from_start: f64,
}

/// What the sessions completed inside `[window_start, window_end]`.
#[derive(Debug)]
pub struct RunOutcome {
    pub window_start: Instant,
    pub window_end: Instant,
    pub select: LatencyHistogram,
    pub update: LatencyHistogram,
    pub commit: LatencyHistogram,
    pub scan: LatencyHistogram,
    pub loops: u64,
    pub sql_statements: u64,
    pub rows_selected: u64,
    pub rows_updated: u64,
    pub per_second: Vec<SecondCounts>,
    pub sessions_started: u32,
    pub sessions_failed: u32,
    /// Sessions that neither failed nor were reconnecting at any moment of
    /// the window.
    pub sessions_alive_through_window: u32,
    pub failures: Vec<SessionFailure>,
    pub reconnects: u64,
    /// When the first session lost the server (seconds from the start),
    /// and why, as the server said it.
    pub first_connection_lost: Option<(f64, String)>,
    /// The run was stopped from outside before it was over.
    pub interrupted: bool,
    /// Every statement in the window at or over `outlier_floor`, in the
    /// order they finished.
    pub outliers: Vec<StatementOutlier>,
    /// Outliers counted but not kept (past 2,000 per tally shard).
    pub outliers_dropped: u64,
    pub outlier_floor: Duration,
    /// `--outlier-threshold`, when given.
    pub outlier_threshold: Option<Duration>,
    /// Each server thread that served a session (`server_threads`), and
    /// the session's index.
    pub session_of_server_thread: BTreeMap<u32, u32>,
}

/// The measurement window of a run starting at `start`, and the loops each
/// session does in batch mode.
pub fn window_of(stop_after: &StopAfter, start: Instant) -> (Window, Option<u64>) {
    match *stop_after {
        StopAfter::Duration { warmup, duration } => {
            let window_start = start + warmup;
            let end = Some(window_start + duration);
            (
                Window {
                    start: window_start,
                    end,
                },
                None,
            )
        }
        StopAfter::WorkLoops(loops) => (Window { start, end: None }, Some(loops)),
    }
}

/// The outcome of a run from its sessions' ends and tally.
pub fn outcome(
    window: Window,
    start: Instant,
    sessions_started: u32,
    ends: &[SessionEnd],
    tally: &SharedTally,
    interrupted: bool,
) -> RunOutcome {
    let last_end = ends.iter().map(|end| end.ended_at).max().unwrap_or(start);
    let window_end = match window.end {
        Some(planned_end) => planned_end.min(last_end),
        None => last_end,
    }
    .max(window.start);
    let window_seconds = window_end.duration_since(window.start).as_secs_f64().ceil() as usize;
    let total = tally.total(window_seconds);
    let alive_through = |end: &SessionEnd| {
        let failed_inside = end.failure.as_ref().is_some_and(|(at, _)| *at < window_end);
        let offline_inside = end
            .offline
            .iter()
            .any(|(lost, back)| *lost < window_end && *back > window.start);
        !failed_inside && !offline_inside
    };
    let failures = failures_of(ends, start);
    let mut outliers = total.outliers;
    for outlier in &mut outliers {
        if let Some(end) = ends.iter().find(|end| end.index == outlier.session) {
            outlier.schema.clone_from(&end.schema);
        }
    }
    outliers.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    RunOutcome {
        window_start: window.start,
        window_end,
        select: total.select,
        update: total.update,
        commit: total.commit,
        scan: total.scan,
        loops: total.loops,
        sql_statements: total.sql_statements,
        rows_selected: total.rows_selected,
        rows_updated: total.rows_updated,
        per_second: total.per_second,
        sessions_started,
        sessions_failed: failures.len() as u32,
        sessions_alive_through_window: ends.iter().filter(|end| alive_through(end)).count() as u32,
        failures,
        reconnects: ends.iter().map(|end| end.reconnects).sum(),
        first_connection_lost: first_connection_lost(ends, start),
        interrupted,
        outliers,
        outliers_dropped: total.outliers_dropped,
        outlier_floor: tally.outlier_floor,
        outlier_threshold: tally.outlier_threshold,
        session_of_server_thread: ends
            .iter()
            .flat_map(|end| end.server_threads.iter().map(|thread| (*thread, end.index)))
            .collect(),
    }
}

fn first_connection_lost(ends: &[SessionEnd], start: Instant) -> Option<(f64, String)> {
    ends.iter()
        .filter_map(|end| Some((end.offline.first()?.0, end.first_lost.clone()?)))
        .min_by_key(|(lost, _)| *lost)
        .map(|(lost, why)| (lost.saturating_duration_since(start).as_secs_f64(), why))
}

fn failures_of(ends: &[SessionEnd], start: Instant) -> Vec<SessionFailure> {
    let mut failures: Vec<SessionFailure> = ends
        .iter()
        .filter_map(|end| {
            end.failure.as_ref().map(|(at, error)| SessionFailure {
                session: end.index,
                schema: end.schema.clone(),
                error: error.clone(),
                seconds_from_start: at.saturating_duration_since(start).as_secs_f64(),
            })
        })
        .collect();
    failures.sort_by_key(|failure| failure.session);
    failures
}

/// Refuses options no engine could run, before any work.
pub fn validate_options(options: &DriverOptions) -> anyhow::Result<()> {
    validate_plan(&options.plan)?;
    ensure!(
        session_total(options) >= 1,
        "the run has no sessions: ask for at least one thread or session"
    );
    let scan_pct = options.workload.scan_pct;
    ensure!(
        scan_pct == 0.0 || options.plan.scan_table_blocks > 0,
        "scan_pct is {scan_pct} but the plan has no scan table (scan_table_blocks = 0)"
    );
    validate_mix(&options.workload)?;
    validate_pattern(&options.workload)
}

/// The operations: percentages and work units.
fn validate_mix(workload: &WorkloadOptions) -> anyhow::Result<()> {
    let (update_pct, scan_pct) = (workload.update_pct, workload.scan_pct);
    let percent = 0.0..=100.0;
    ensure!(
        percent.contains(&update_pct),
        "update_pct {update_pct} is not 0–100"
    );
    ensure!(
        percent.contains(&scan_pct),
        "scan_pct {scan_pct} is not 0–100"
    );
    ensure!(
        update_pct + scan_pct <= 100.0,
        "update_pct {update_pct} + scan_pct {scan_pct} is more than 100"
    );
    ensure!(workload.work_unit >= 1, "work_unit must be at least 1 key");
    ensure!(
        update_pct == 0.0 || workload.update_work_unit >= 1,
        "update_work_unit must be at least 1 key"
    );
    Ok(())
}

/// Where and when: think time, hot spots, skew.
fn validate_pattern(workload: &WorkloadOptions) -> anyhow::Result<()> {
    if let Some((shortest, longest)) = workload.think_time {
        ensure!(
            shortest <= longest,
            "think time {shortest:?} to {longest:?} is not a range"
        );
    }
    if let Some(hotspot) = &workload.hotspot {
        ensure!(
            hotspot.size_blocks >= 1 && hotspot.every >= 1,
            "the hot spot needs size_blocks and every of at least 1"
        );
    }
    ensure!(
        workload.hot_schema_every != Some(0),
        "hot_schema_every must be at least 1"
    );
    if let AccessDistribution::Zipf { theta } = workload.distribution {
        ensure!(
            theta > 0.0 && theta.is_finite(),
            "Zipf theta {theta} must be above 0"
        );
    }
    Ok(())
}

/// Sessions the options ask for.
pub fn session_total(options: &DriverOptions) -> u64 {
    let plan = &options.plan;
    strata_recording::environment::session_total(
        options.sessions,
        (plan.schemas, plan.single_schema),
        options.threads_per_schema,
    )
}

/// Sessions are dealt round-robin over the schemas, so the first few
/// sessions already cover every schema; with fewer sessions than schemas,
/// session i also takes schemas i + N, i + 2N… in turn.
pub fn session_specs(options: &DriverOptions, names: &[String]) -> Vec<SessionSpec> {
    let with_scan = options.workload.scan_pct > 0.0;
    let total = session_total(options) as usize;
    (0..total as u32)
        .filter(|index| options.shard.is_none_or(|shard| shard.owns(*index)))
        .map(|index| {
            let schema_index = index as usize % names.len();
            let hot_schema = (options.workload.hot_schema_every.is_some() && schema_index != 0)
                .then(|| names[0].clone());
            SessionSpec {
                index,
                schema: names[schema_index].clone(),
                hot_schema,
                also: names
                    .iter()
                    .skip(schema_index + total)
                    .step_by(total)
                    .cloned()
                    .collect(),
                with_scan,
                update_pad_bytes: options.workload.update_pad_bytes,
            }
        })
        .collect()
}
