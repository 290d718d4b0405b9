//! The starting thread's side of a run: sets the window, releases the
//! sessions, sleeps to the window's edges and takes them on time, reports
//! progress and passes an interrupt on until every session has ended.
//!
//! Not for: what an edge holds (the engine's `Watcher`).

use super::{join, Measured, Opener, Shared, Timeline, Watcher};
use crate::session::tally::{SharedTally, Window};
use crate::session::{outcome, window_of, DriverOptions, RunObserver, SessionEnd, StopAfter};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::ScopedJoinHandle;
use std::time::Duration;
use tokio::time::Instant;

const TICK: Duration = Duration::from_millis(50);
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

pub(super) struct Watch<'a, O: Opener> {
    pub shared: &'a Shared<'a, O>,
    pub stoppers: Vec<O::Stopper>,
    pub interrupt: &'a AtomicBool,
}

impl<O: Opener> Watch<'_, O> {
    pub fn run<W: Watcher<O::Stopper>>(
        self,
        driver: &DriverOptions,
        threads: Vec<ScopedJoinHandle<'_, SessionEnd>>,
        observer: &mut dyn RunObserver,
        watcher: &mut W,
    ) -> Measured<W::Edge> {
        let start = Instant::now();
        let (window, loops_target) = window_of(&driver.stop_after, start);
        let mut taken = Taken {
            start: loops_target.map(|_| watcher.take_edge()),
            end: None,
        };
        let _ = self.shared.timeline.set(Timeline {
            window,
            loops_target,
            tally: SharedTally::new(window, driver.outlier_threshold),
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
            taken.take_due(&window, watcher);
            self.pass_on_interrupt(watcher);
            if Instant::now() >= next_progress {
                next_progress = Instant::now() + PROGRESS_EVERY;
                self.show_progress(observer, start, expected);
            }
        }
        self.finish(window, start, threads, taken, watcher)
    }

    fn finish<W: Watcher<O::Stopper>>(
        &self,
        window: Window,
        start: Instant,
        threads: Vec<ScopedJoinHandle<'_, SessionEnd>>,
        taken: Taken<W::Edge>,
        watcher: &mut W,
    ) -> Measured<W::Edge> {
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
            start: taken.start.unwrap_or_else(|| watcher.take_edge()),
            end: taken.end.unwrap_or_else(|| watcher.take_edge()),
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
    /// statements in flight are stopped.
    fn pass_on_interrupt<W: Watcher<O::Stopper>>(&self, watcher: &mut W) {
        if self.interrupt.load(Ordering::Relaxed) && !self.shared.stop.swap(true, Ordering::Relaxed)
        {
            watcher.stop_statements(&self.stoppers);
        }
    }
}

/// The edges taken so far.
struct Taken<Edge> {
    start: Option<Edge>,
    end: Option<Edge>,
}

impl<Edge> Taken<Edge> {
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

    fn take_due<S>(&mut self, window: &Window, watcher: &mut impl Watcher<S, Edge = Edge>) {
        let now = Instant::now();
        if self.start.is_none() && now >= window.start {
            self.start = Some(watcher.take_edge());
        }
        if self.end.is_none() && window.end.is_some_and(|end| now >= end) {
            self.end = Some(watcher.take_edge());
        }
    }
}
