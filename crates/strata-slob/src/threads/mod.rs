//! SLOB sessions as OS threads with one blocking connection each, for
//! engines whose client is synchronous (SQLite, MariaDB): starts a thread
//! per session, releases them together once all are connected, runs each
//! session's loops (`session`), takes the engine's edge exactly when the
//! warm-up ends and again when the window ends (or when the last session
//! finished its loops), reports progress, passes a stop on, and builds the
//! run's outcome with the window and tally rules of `crate::session`.
//! Threads suit tens of sessions, not thousands.
//!
//! Not for: the SQL, connections or edges of an engine (each engine's crate
//! implements [`BlockingSession`], [`Opener`] and [`Watcher`]), turning
//! edges into figures, or PostgreSQL's async sessions (`crate::session`).

mod session;
mod watch;

use crate::schema::schema_names;
use crate::session::access::{AccessPlan, LoopChoice};
use crate::session::tally::SharedTally;
use crate::session::tally::Window;
use crate::session::{
    session_specs, DriverOptions, Progress, RunObserver, RunOutcome, SessionEnd, SessionSpec,
};
use anyhow::bail;
use std::fmt::Display;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Barrier, OnceLock};
use std::thread::ScopedJoinHandle;
use std::time::Duration;
use tokio::time::Instant;

/// One session's connection, as the session loop drives it; the loop times
/// every call and records what it did.
pub trait BlockingSession {
    type Error: Display;
    /// Reads the choice's keys through the index; rows read.
    fn select(&mut self, choice: &LoopChoice) -> Result<u64, Self::Error>;
    /// Reads the scan table of the choice's schema whole.
    fn scan(&mut self, choice: &LoopChoice) -> Result<(), Self::Error>;
    /// Starts an update's transaction.
    fn begin(&mut self) -> Result<(), Self::Error>;
    /// Updates the choice's keys in key order; rows changed. Rolls the
    /// transaction back when it fails.
    fn update(&mut self, choice: &LoopChoice) -> Result<u64, Self::Error>;
    fn commit(&mut self) -> Result<(), Self::Error>;
    /// The server's thread (Linux task id) serving the connection, where
    /// the engine can say.
    fn server_thread(&self) -> Option<u32> {
        None
    }
}

/// How an engine opens a session; called on the session's own thread.
pub trait Opener: Sync {
    type Session: BlockingSession;
    /// What the starting thread needs to stop the session's statement in
    /// flight (an interrupt handle, a connection id).
    type Stopper: Send;
    /// What a session that failed here could not do, as the run's error
    /// says it: "3 of 8 sessions could not {FAILED_TO}; …".
    const FAILED_TO: &'static str;
    fn open(&self, spec: &SessionSpec) -> anyhow::Result<(Self::Session, Self::Stopper)>;
    /// The text a session's failure is reported with.
    fn failure_text(&self, error: &<Self::Session as BlockingSession>::Error) -> String {
        error.to_string()
    }
}

/// What the starting thread does besides waiting: take an edge, and stop
/// the sessions' statements in flight when the run is interrupted.
pub trait Watcher<Stopper> {
    type Edge;
    fn take_edge(&mut self) -> Self::Edge;
    fn stop_statements(&mut self, stoppers: &[Stopper]);
}

/// The sessions' outcome and the edges around its window.
pub struct Measured<Edge> {
    pub outcome: RunOutcome,
    pub start: Edge,
    pub end: Edge,
}

/// The run's window, the loops each session does, and its tally.
struct Timeline {
    window: Window,
    loops_target: Option<u64>,
    tally: SharedTally,
}

/// What every session thread shares with the thread that started it.
struct Shared<'a, O> {
    opener: &'a O,
    access: AccessPlan,
    think_time: Option<(Duration, Duration)>,
    think_every: u32,
    seed: u64,
    /// Every session and the starting thread meet here once connected.
    go: Barrier,
    /// Set before `go` when a session could not connect: nobody runs.
    abort: AtomicBool,
    stop: AtomicBool,
    timeline: OnceLock<Timeline>,
    progress: Progress,
}

/// Runs the sessions of `driver`, opened by `opener`, between two edges
/// taken by `watcher`; `interrupt` stops them.
pub fn measure<O: Opener, W: Watcher<O::Stopper>>(
    opener: &O,
    driver: &DriverOptions,
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
    watcher: &mut W,
) -> anyhow::Result<Measured<W::Edge>> {
    let specs = session_specs(driver, &schema_names(&driver.plan));
    let shared = Shared {
        opener,
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
                scope.spawn(move || session::session_thread(shared, spec, ready_sender))
            })
            .collect();
        drop(ready_sender);
        observer.phase("connecting the sessions");
        let stoppers = match connected::<O>(&ready, specs.len()) {
            Ok(stoppers) => stoppers,
            Err(error) => {
                shared.abort.store(true, Ordering::Relaxed);
                shared.go.wait();
                join(threads);
                return Err(error);
            }
        };
        let watch = watch::Watch {
            shared: &shared,
            stoppers,
            interrupt,
        };
        Ok(watch.run(driver, threads, observer, watcher))
    })
}

/// Every session's stopper, or the first reason one could not connect.
fn connected<O: Opener>(
    ready: &mpsc::Receiver<Result<O::Stopper, String>>,
    sessions: usize,
) -> anyhow::Result<Vec<O::Stopper>> {
    let mut stoppers = Vec::with_capacity(sessions);
    let mut errors = Vec::new();
    for message in ready.iter().take(sessions) {
        match message {
            Ok(stopper) => stoppers.push(stopper),
            Err(error) => errors.push(error),
        }
    }
    if let Some(first) = errors.first() {
        bail!(
            "{} of {sessions} sessions could not {}; {first}",
            errors.len(),
            O::FAILED_TO
        );
    }
    Ok(stoppers)
}

fn join(threads: Vec<ScopedJoinHandle<'_, SessionEnd>>) -> Vec<SessionEnd> {
    threads
        .into_iter()
        .enumerate()
        .map(|(index, thread)| {
            thread.join().unwrap_or_else(|_| SessionEnd {
                failure: Some((Instant::now(), "session thread panicked".into())),
                ..SessionEnd::new(index as u32, String::new(), Instant::now())
            })
        })
        .collect()
}
