//! One session's thread: opens its connection, says so on the ready
//! channel, waits for every session, then runs loops of selects, updates
//! (begin, update, commit, the commit timed apart) and scans, recording
//! each in the tally, until its loops are done, the window ends or the run
//! is stopped. A session that loses its connection fails; it does not
//! reconnect.
//!
//! Not for: choosing keys (`AccessPlan`) or the SQL (the engine's
//! `BlockingSession`).

use super::{BlockingSession, Opener, Shared, Timeline};
use crate::session::access::{LoopChoice, Operation};
use crate::session::tally::Event;
use crate::session::{SessionEnd, SessionSpec};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::time::Duration;
use strata_core::random::FastRng;
use tokio::time::Instant;

const THINK_SLICE: Duration = Duration::from_millis(50);

type Failure<O> = <<O as Opener>::Session as BlockingSession>::Error;

/// Runs one session: connects, says so on `ready` (its stopper, or why it
/// could not connect), waits for every session, then works.
pub(super) fn session_thread<O: Opener>(
    shared: &Shared<'_, O>,
    spec: &SessionSpec,
    ready: Sender<Result<O::Stopper, String>>,
) -> SessionEnd {
    let opened = match shared.opener.open(spec) {
        Ok((connection, stopper)) => {
            let _ = ready.send(Ok(stopper));
            Ok(connection)
        }
        Err(error) => {
            let _ = ready.send(Err(format!(
                "session {} ({}): {error:#}",
                spec.index + 1,
                spec.schema
            )));
            Err(())
        }
    };
    shared.go.wait();
    let mut end = SessionEnd::new(spec.index, spec.schema.clone(), Instant::now());
    let (Ok(connection), Some(timeline)) = (opened, shared.timeline.get()) else {
        return end;
    };
    end.server_threads.extend(connection.server_thread());
    if shared.abort.load(Ordering::Relaxed) {
        return end;
    }
    let session = Session {
        shared,
        timeline,
        connection,
        index: spec.index as usize,
        rng: FastRng::seeded(
            shared.seed ^ u64::from(spec.index).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        ),
    };
    session.run(&mut end);
    end
}

struct Session<'a, O: Opener> {
    shared: &'a Shared<'a, O>,
    timeline: &'a Timeline,
    connection: O::Session,
    index: usize,
    rng: FastRng,
}

impl<O: Opener> Session<'_, O> {
    /// Works while counted alive; a failure that is not the run's stop
    /// goes into `end`.
    fn run(mut self, end: &mut SessionEnd) {
        let progress = &self.shared.progress;
        progress.sessions_alive.fetch_add(1, Ordering::Relaxed);
        if let Err(error) = self.work() {
            if !self.shared.stop.load(Ordering::Relaxed) {
                progress.failures.fetch_add(1, Ordering::Relaxed);
                let text = self.shared.opener.failure_text(&error);
                end.failure = Some((Instant::now(), text));
            }
        }
        progress.sessions_alive.fetch_sub(1, Ordering::Relaxed);
        end.ended_at = Instant::now();
    }

    fn over(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
            || self
                .timeline
                .window
                .end
                .is_some_and(|end| Instant::now() >= end)
    }

    fn work(&mut self) -> Result<(), Failure<O>> {
        let mut loops_done = 0u64;
        while !self.over()
            && self
                .timeline
                .loops_target
                .is_none_or(|target| loops_done < target)
        {
            let choice = self.shared.access.choose(&mut self.rng, loops_done + 1);
            let finished = self.one_loop(&choice)?;
            self.record(finished, Event::LoopDone);
            loops_done += 1;
            self.shared.progress.loops.fetch_add(1, Ordering::Relaxed);
            self.think(loops_done);
        }
        Ok(())
    }

    fn record(&self, finished_at: Instant, event: Event) {
        self.timeline.tally.record(self.index, finished_at, event);
    }

    /// Think time after every `think_every` loops, cut short by the end.
    fn think(&mut self, loops_done: u64) {
        let Some((shortest, longest)) = self.shared.think_time else {
            return;
        };
        if !loops_done.is_multiple_of(u64::from(self.shared.think_every.max(1))) {
            return;
        }
        let pause = shortest
            + longest
                .saturating_sub(shortest)
                .mul_f64(self.rng.unit_f64());
        let until = Instant::now() + pause;
        while !self.over() && Instant::now() < until {
            std::thread::sleep(THINK_SLICE.min(until - Instant::now()));
        }
    }

    /// Returns when the loop's last statement finished.
    fn one_loop(&mut self, choice: &LoopChoice) -> Result<Instant, Failure<O>> {
        match choice.operation {
            Operation::Scan => self.scan(choice),
            Operation::Update => self.update(choice),
            Operation::Select => self.select(choice),
        }
    }

    fn select(&mut self, choice: &LoopChoice) -> Result<Instant, Failure<O>> {
        let began = Instant::now();
        let rows = self.connection.select(choice)?;
        let done = Instant::now();
        self.record(
            done,
            Event::Select {
                latency: done - began,
                rows,
            },
        );
        self.shared.progress.selects.fetch_add(1, Ordering::Relaxed);
        Ok(done)
    }

    fn scan(&mut self, choice: &LoopChoice) -> Result<Instant, Failure<O>> {
        let began = Instant::now();
        self.connection.scan(choice)?;
        let done = Instant::now();
        self.record(
            done,
            Event::Scan {
                latency: done - began,
            },
        );
        self.shared.progress.scans.fetch_add(1, Ordering::Relaxed);
        Ok(done)
    }

    /// The begin (with any wait for a write lock) and the update timed
    /// together, the commit (the log's write and sync) apart.
    fn update(&mut self, choice: &LoopChoice) -> Result<Instant, Failure<O>> {
        let began = Instant::now();
        self.connection.begin()?;
        self.record(began, Event::Begin);
        let rows = self.connection.update(choice)?;
        let updated = Instant::now();
        self.record(
            updated,
            Event::Update {
                latency: updated - began,
                rows,
            },
        );
        self.connection.commit()?;
        let committed = Instant::now();
        self.record(
            committed,
            Event::Commit {
                latency: committed - updated,
            },
        );
        self.shared.progress.updates.fetch_add(1, Ordering::Relaxed);
        Ok(committed)
    }
}
