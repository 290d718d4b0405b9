//! The SLOB sessions: many tokio tasks, one connection each, that start
//! together and read random single blocks through the index (with optional
//! updates, scans, think time, hot spots and skew), and what they did inside
//! the measurement window.
//!
//! Not for: loading the schemas (`load`), reading OS or server counters
//! around the run, or printing; the caller does those.

pub mod access;
pub mod tally;
mod worker;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, ensure};
use futures_util::StreamExt as _;
use serde::Serialize;
use strata_core::histogram::LatencyHistogram;
use strata_core::random::FastRng;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_postgres::Config;

use crate::load::LoadProgress;
use crate::pg;
use crate::schema::{schema_names, validate_plan, SchemaPlan, META_SCHEMA};
use access::AccessPlan;
use tally::{SharedTally, Window};
pub use tally::{StatementOutlier, DEFAULT_OUTLIER_FLOOR};
use worker::{open_session, Interrupt, Session, SessionConnection};
pub use worker::{SessionEnd, SessionSpec};

/// How start keys are drawn.
#[derive(Clone, Debug, Serialize)]
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

#[derive(Clone, Debug, Serialize)]
pub struct WorkloadOptions {
    /// Keys (so blocks) one select reads.
    pub work_unit: u32,
    /// Share of loops that update, in percent of all loops.
    pub update_pct: f64,
    /// Keys one update changes.
    pub update_work_unit: u32,
    /// Share of loops that scan the `scan` table, in percent of all loops.
    pub scan_pct: f64,
    /// Pause drawn uniformly from this range after every `think_every` loops.
    pub think_time: Option<(Duration, Duration)>,
    pub think_every: u32,
    pub hotspot: Option<Hotspot>,
    /// Every Nth loop works on schema 1 instead of the session's own.
    pub hot_schema_every: Option<u32>,
    pub distribution: AccessDistribution,
}

#[derive(Clone, Debug, Serialize)]
pub enum StopAfter {
    /// Run `warmup` then measure for `duration`.
    Duration {
        warmup: Duration,
        duration: Duration,
    },
    /// Every session does exactly this many loops; the elapsed time is the
    /// result.
    WorkLoops(u64),
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

/// What completed in one second of the window (`second` 0 is the first).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SecondCounts {
    pub second: u64,
    pub loops: u64,
    pub selects: u64,
    pub updates: u64,
    pub scans: u64,
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
}

/// Connected sessions, ready to start together.
pub struct Driver {
    config: Arc<Config>,
    options: DriverOptions,
    sessions: Vec<(SessionSpec, SessionConnection)>,
}

/// Connections opened at once while connecting sessions.
const CONNECT_CONCURRENCY: usize = 16;
const STOP_POLL: Duration = Duration::from_millis(50);

impl Driver {
    /// Checks that the plan's schemas are loaded, then opens every session's
    /// connection and prepares its statements. Any session that cannot
    /// connect is an error naming it.
    pub async fn connect(config: &Config, options: DriverOptions) -> anyhow::Result<Driver> {
        validate_options(&options)?;
        let names = schema_names(&options.plan);
        verify_loaded(config, &options, &names).await?;
        let specs = session_specs(&options, &names);
        let session_total = specs.len();
        let config = Arc::new(config.clone());
        let opened: Vec<_> = futures_util::stream::iter(&specs)
            .map(|spec| open_session(&config, spec))
            .buffered(CONNECT_CONCURRENCY)
            .collect()
            .await;
        let mut sessions = Vec::with_capacity(session_total);
        for (spec, connection) in specs.iter().zip(opened) {
            match connection {
                Ok(connection) => sessions.push((spec.clone(), connection)),
                Err(error) => bail!(
                    "opening session {} of {session_total} (schema {}): {error}",
                    spec.index + 1,
                    spec.schema
                ),
            }
        }
        Ok(Driver {
            config,
            options,
            sessions,
        })
    }

    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// Starts every session at `start` and returns when all have ended:
    /// their loops done, the window over, failed, or `stop` set.
    pub async fn run(
        self,
        start: Instant,
        stop: Arc<AtomicBool>,
        progress: Arc<Progress>,
    ) -> RunOutcome {
        let (window, loops_target) = window_of(&self.options.stop_after, start);
        let tally = Arc::new(SharedTally::new(window, self.options.outlier_threshold));
        let access = Arc::new(AccessPlan::new(
            self.options.plan.blocks_per_schema,
            &self.options.workload,
        ));
        let (stop_sender, stop_receiver) = watch::channel(false);
        let sessions_started = self.sessions.len() as u32;
        let mut handles = Vec::with_capacity(self.sessions.len());
        for (spec, connection) in self.sessions {
            let session = Session {
                rng: FastRng::seeded(
                    self.options.seed ^ u64::from(spec.index).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                ),
                spec,
                connection,
                config: Arc::clone(&self.config),
                access: Arc::clone(&access),
                tally: Arc::clone(&tally),
                progress: Arc::clone(&progress),
                start,
                loops_target,
                think_time: self.options.workload.think_time,
                think_every: self.options.workload.think_every,
            };
            let interrupt = Interrupt {
                stop: stop_receiver.clone(),
                deadline: window.end,
            };
            handles.push(tokio::spawn(session.run(interrupt)));
        }
        let (ends, interrupted) = wait_for_sessions(handles, &stop, &stop_sender).await;
        outcome(window, start, sessions_started, &ends, &tally, interrupted)
    }
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

/// Waits for every session, passing `stop` on to them; returns how each
/// ended and whether the run was stopped.
async fn wait_for_sessions(
    handles: Vec<tokio::task::JoinHandle<SessionEnd>>,
    stop: &AtomicBool,
    stop_sender: &watch::Sender<bool>,
) -> (Vec<SessionEnd>, bool) {
    let indexes: Vec<u32> = (0..handles.len() as u32).collect();
    let all_ended = futures_util::future::join_all(handles);
    futures_util::pin_mut!(all_ended);
    let mut interrupted = false;
    let results = loop {
        tokio::select! {
            results = &mut all_ended => break results,
            _ = tokio::time::sleep(STOP_POLL) => {
                if !interrupted && stop.load(Ordering::Relaxed) {
                    interrupted = true;
                    stop_sender.send_replace(true);
                }
            }
        }
    };
    let ends = results
        .into_iter()
        .zip(indexes)
        .map(|(result, index)| {
            result.unwrap_or_else(|panic| SessionEnd {
                index,
                schema: String::new(),
                ended_at: Instant::now(),
                failure: Some((
                    Instant::now(),
                    format!("session task ended abnormally: {panic}"),
                )),
                offline: Vec::new(),
                first_lost: None,
                reconnects: 0,
            })
        })
        .collect();
    (ends, interrupted)
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
    if options.plan.single_schema {
        u64::from(options.sessions.unwrap_or(options.threads_per_schema))
    } else {
        u64::from(options.plan.schemas) * u64::from(options.threads_per_schema)
    }
}

/// Sessions are dealt round-robin over the schemas, so the first few
/// sessions already cover every schema.
pub fn session_specs(options: &DriverOptions, names: &[String]) -> Vec<SessionSpec> {
    let with_scan = options.workload.scan_pct > 0.0;
    (0..session_total(options) as u32)
        .map(|index| {
            let schema_index = index as usize % names.len();
            let hot_schema = (options.workload.hot_schema_every.is_some() && schema_index != 0)
                .then(|| names[0].clone());
            SessionSpec {
                index,
                schema: names[schema_index].clone(),
                hot_schema,
                with_scan,
            }
        })
        .collect()
}

/// The plan's schemas must be strata's, complete, and of the plan's size.
async fn verify_loaded(
    config: &Config,
    options: &DriverOptions,
    names: &[String],
) -> anyhow::Result<()> {
    let (client, meta_exists) = crate::load::connect_for_checks(config).await?;
    let meta_table = format!("{META_SCHEMA}.loads");
    ensure!(
        meta_exists,
        "no SLOB schemas are loaded in this database ({meta_table} is missing); run setup first"
    );
    let sql = format!("SELECT blocks, scan_blocks, completed_at IS NOT NULL FROM {meta_table} WHERE schema_name = $1");
    for name in names {
        let row = client
            .query_opt(&sql, &[name])
            .await
            .map_err(pg::context(format!("checking schema {name}")))?;
        let Some(row) = row else {
            bail!("schema {name} is not loaded; run setup with the same plan first");
        };
        let (blocks, scan_blocks, complete): (Option<i64>, Option<i64>, bool) =
            (row.get(0), row.get(1), row.get(2));
        ensure!(
            complete,
            "schema {name}'s load did not complete; run setup again to reload it"
        );
        let plan = &options.plan;
        ensure!(
            blocks == Some(plan.blocks_per_schema as i64),
            "schema {name} holds {} blocks but the plan says {}; run setup with this plan (--replace)",
            blocks.unwrap_or(0),
            plan.blocks_per_schema
        );
        ensure!(
            options.workload.scan_pct == 0.0 || scan_blocks.unwrap_or(0) > 0,
            "schema {name} has no scan table but scan_pct is {}",
            options.workload.scan_pct
        );
    }
    Ok(())
}
