//! Running the sessions and taking the two edges of the measured window:
//! starts one thread per session, releases them together once all are
//! connected, takes an OS edge (`/proc/diskstats`, host CPU, strata's own
//! CPU) exactly when the warm-up ends and again when the window ends (or
//! when the last session finished its loops), reports progress, passes a
//! stop on (interrupting the statements in flight), and builds the run's
//! outcome with strata-slob's window and tally rules.
//!
//! Not for: turning the edges into figures (`figures`).

use crate::figures::SqliteEdge;
use crate::session::{session_thread, Shared, Timeline};
use anyhow::bail;
use rusqlite::InterruptHandle;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Barrier, OnceLock};
use std::thread::ScopedJoinHandle;
use std::time::Duration;
use strata_run::session_run::RunObserver;
use strata_slob::schema::schema_names;
use strata_slob::session::access::AccessPlan;
use strata_slob::session::tally::{SharedTally, Window};
use strata_slob::session::{
    outcome, session_specs, window_of, DriverOptions, Progress, RunOutcome, SessionEnd, StopAfter,
};
use tokio::time::Instant;

const TICK: Duration = Duration::from_millis(50);
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// The sessions' outcome and the OS edges around its window.
pub(crate) struct Measured {
    pub outcome: RunOutcome,
    pub start: SqliteEdge,
    pub end: SqliteEdge,
}

/// Runs the sessions of `driver` on the file at `path`; `take_edge`
/// snapshots the OS.
pub(crate) fn measure(
    path: &Path,
    driver: &DriverOptions,
    cache_kib: u64,
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
    take_edge: &dyn Fn() -> SqliteEdge,
) -> anyhow::Result<Measured> {
    let specs = session_specs(driver, &schema_names(&driver.plan));
    let shared = Shared {
        path,
        cache_kib,
        access: AccessPlan::new(driver.plan.blocks_per_schema, &driver.workload),
        think_time: driver.workload.think_time,
        think_every: driver.workload.think_every,
        seed: driver.seed,
        go: Barrier::new(specs.len() + 1),
        abort: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        timeline: OnceLock::new(),
        progress: Progress::default(),
    };
    std::thread::scope(|scope| {
        let (ready_sender, ready) = mpsc::channel();
        let threads: Vec<_> = specs
            .iter()
            .map(|spec| {
                let (shared, ready_sender) = (&shared, ready_sender.clone());
                scope.spawn(move || session_thread(shared, spec, ready_sender))
            })
            .collect();
        drop(ready_sender);
        observer.phase("connecting the sessions");
        let handles = match connected(&ready, specs.len()) {
            Ok(handles) => handles,
            Err(error) => {
                shared.abort.store(true, Ordering::Relaxed);
                shared.go.wait();
                join(threads);
                return Err(error);
            }
        };
        let watch = Watch {
            shared: &shared,
            handles,
            interrupt,
            take_edge,
        };
        Ok(watch.run(driver, threads, observer))
    })
}

/// Every session's interrupt handle, or the first reason one could not connect.
fn connected(
    ready: &mpsc::Receiver<Result<InterruptHandle, String>>,
    sessions: usize,
) -> anyhow::Result<Vec<InterruptHandle>> {
    let mut handles = Vec::with_capacity(sessions);
    let mut errors = Vec::new();
    for message in ready.iter().take(sessions) {
        match message {
            Ok(handle) => handles.push(handle),
            Err(error) => errors.push(error),
        }
    }
    if let Some(first) = errors.first() {
        bail!(
            "{} of {sessions} sessions could not open the file; {first}",
            errors.len()
        );
    }
    Ok(handles)
}

fn join(threads: Vec<ScopedJoinHandle<'_, SessionEnd>>) -> Vec<SessionEnd> {
    threads
        .into_iter()
        .enumerate()
        .map(|(index, thread)| {
            thread.join().unwrap_or_else(|_| SessionEnd {
                index: index as u32,
                schema: String::new(),
                ended_at: Instant::now(),
                failure: Some((Instant::now(), "session thread panicked".into())),
                offline: Vec::new(),
                reconnects: 0,
            })
        })
        .collect()
}

/// The starting thread's side of a run.
struct Watch<'a> {
    shared: &'a Shared<'a>,
    handles: Vec<InterruptHandle>,
    interrupt: &'a AtomicBool,
    take_edge: &'a dyn Fn() -> SqliteEdge,
}

impl Watch<'_> {
    fn run(
        self,
        driver: &DriverOptions,
        threads: Vec<ScopedJoinHandle<'_, SessionEnd>>,
        observer: &mut dyn RunObserver,
    ) -> Measured {
        let start = Instant::now();
        let (window, loops_target) = window_of(&driver.stop_after, start);
        let mut edges = Edges {
            start: loops_target.map(|_| (self.take_edge)()),
            end: None,
        };
        let _ = self.shared.timeline.set(Timeline {
            window,
            loops_target,
            tally: SharedTally::new(window),
        });
        observer.phase("running");
        self.shared.go.wait();
        let expected = match driver.stop_after {
            StopAfter::Duration { warmup, duration } => Some(warmup + duration),
            StopAfter::WorkLoops(_) => None,
        };
        let mut next_progress = Instant::now();
        while threads.iter().any(|thread| !thread.is_finished()) {
            std::thread::sleep(edges.pause(&window));
            edges.take_due(&window, self.take_edge);
            self.pass_on_interrupt();
            if Instant::now() >= next_progress {
                next_progress = Instant::now() + PROGRESS_EVERY;
                self.show_progress(observer, start, expected);
            }
        }
        let ends = join(threads);
        let interrupted = self.shared.stop.load(Ordering::Relaxed);
        let tally = &self
            .shared
            .timeline
            .get()
            .expect("set before the start")
            .tally;
        let outcome = outcome(window, start, ends.len() as u32, &ends, tally, interrupted);
        Measured {
            outcome,
            start: edges.start.unwrap_or_else(|| (self.take_edge)()),
            end: edges.end.unwrap_or_else(|| (self.take_edge)()),
        }
    }

    fn show_progress(
        &self,
        observer: &mut dyn RunObserver,
        start: Instant,
        expected: Option<Duration>,
    ) {
        let progress = &self.shared.progress;
        observer.running(
            start.elapsed(),
            expected,
            progress.loops.load(Ordering::Relaxed),
            progress.sessions_alive.load(Ordering::Relaxed),
        );
    }

    /// On an interrupt: every session stops after its statement, and the
    /// statements in flight are interrupted.
    fn pass_on_interrupt(&self) {
        if self.interrupt.load(Ordering::Relaxed) && !self.shared.stop.swap(true, Ordering::Relaxed)
        {
            for handle in &self.handles {
                handle.interrupt();
            }
        }
    }
}

/// The edges taken so far.
struct Edges {
    start: Option<SqliteEdge>,
    end: Option<SqliteEdge>,
}

impl Edges {
    /// How long to sleep: a tick, or less when an edge falls due sooner.
    fn pause(&self, window: &Window) -> Duration {
        let start_due = self.start.is_none().then_some(window.start);
        let end_due = window.end.filter(|_| self.end.is_none());
        let now = Instant::now();
        start_due
            .into_iter()
            .chain(end_due)
            .map(|due| due.saturating_duration_since(now))
            .fold(TICK, Duration::min)
    }

    fn take_due(&mut self, window: &Window, take_edge: &dyn Fn() -> SqliteEdge) {
        let now = Instant::now();
        if self.start.is_none() && now >= window.start {
            self.start = Some(take_edge());
        }
        if self.end.is_none() && window.end.is_some_and(|end| now >= end) {
            self.end = Some(take_edge());
        }
    }
}
