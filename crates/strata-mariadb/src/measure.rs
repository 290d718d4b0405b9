//! Running the sessions and taking the two edges of the measured window:
//! starts one thread per session, releases them together once all are
//! connected, takes an edge (InnoDB's counters first, then the OS) exactly
//! when the warm-up ends and again when the window ends (or when the last
//! session finished its loops), reports progress, passes a stop on (with
//! KILL QUERY for the statements in flight), and builds the run's outcome
//! with strata-slob's window and tally rules.
//!
//! Not for: turning the edges into figures (`figures`).

use anyhow::bail;
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

use crate::figures::WindowEdge;
use crate::session::{session_thread, Shared, Timeline};
use crate::target::MariaDbTarget;

const TICK: Duration = Duration::from_millis(50);
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// The sessions' outcome and the edges around its window.
pub(crate) struct Measured {
    pub outcome: RunOutcome,
    pub start: WindowEdge,
    pub end: WindowEdge,
}

/// What the starting thread does besides waiting: take an edge, and stop
/// the statements of the given connections.
pub(crate) trait Edges {
    fn take(&mut self) -> WindowEdge;
    fn kill_queries(&mut self, connection_ids: &[u32]);
}

/// Runs the sessions of `driver` against `target`.
pub(crate) fn measure(
    target: &MariaDbTarget,
    driver: &DriverOptions,
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
    edges: &mut dyn Edges,
) -> anyhow::Result<Measured> {
    let specs = session_specs(driver, &schema_names(&driver.plan));
    let shared = Shared {
        target,
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
        let connection_ids = match connected(&ready, specs.len()) {
            Ok(ids) => ids,
            Err(error) => {
                shared.abort.store(true, Ordering::Relaxed);
                shared.go.wait();
                join(threads);
                return Err(error);
            }
        };
        let watch = Watch {
            shared: &shared,
            connection_ids,
            interrupt,
        };
        Ok(watch.run(driver, threads, observer, edges))
    })
}

/// Every session's connection id, or the first reason one could not connect.
fn connected(
    ready: &mpsc::Receiver<Result<u32, String>>,
    sessions: usize,
) -> anyhow::Result<Vec<u32>> {
    let mut ids = Vec::with_capacity(sessions);
    let mut errors = Vec::new();
    for message in ready.iter().take(sessions) {
        match message {
            Ok(id) => ids.push(id),
            Err(error) => errors.push(error),
        }
    }
    if let Some(first) = errors.first() {
        bail!(
            "{} of {sessions} sessions could not connect; {first}",
            errors.len()
        );
    }
    Ok(ids)
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
    connection_ids: Vec<u32>,
    interrupt: &'a AtomicBool,
}

impl Watch<'_> {
    fn run(
        self,
        driver: &DriverOptions,
        threads: Vec<ScopedJoinHandle<'_, SessionEnd>>,
        observer: &mut dyn RunObserver,
        edges: &mut dyn Edges,
    ) -> Measured {
        let start = Instant::now();
        let (window, loops_target) = window_of(&driver.stop_after, start);
        let mut taken = Taken {
            start: loops_target.map(|_| edges.take()),
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
            std::thread::sleep(taken.pause(&window));
            taken.take_due(&window, edges);
            self.pass_on_interrupt(edges);
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
            start: taken.start.unwrap_or_else(|| edges.take()),
            end: taken.end.unwrap_or_else(|| edges.take()),
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
    /// statements in flight are killed.
    fn pass_on_interrupt(&self, edges: &mut dyn Edges) {
        if self.interrupt.load(Ordering::Relaxed) && !self.shared.stop.swap(true, Ordering::Relaxed)
        {
            edges.kill_queries(&self.connection_ids);
        }
    }
}

/// The edges taken so far.
struct Taken {
    start: Option<WindowEdge>,
    end: Option<WindowEdge>,
}

impl Taken {
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

    fn take_due(&mut self, window: &Window, edges: &mut dyn Edges) {
        let now = Instant::now();
        if self.start.is_none() && now >= window.start {
            self.start = Some(edges.take());
        }
        if self.end.is_none() && window.end.is_some_and(|end| now >= end) {
            self.end = Some(edges.take());
        }
    }
}
