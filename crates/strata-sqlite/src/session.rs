//! One SLOB session on SQLite: an OS thread with its own connection that,
//! once every session is connected, runs loops of selects (the work unit's
//! keys through the index, one random page per key), updates (BEGIN
//! IMMEDIATE, the keys through the index in key order, COMMIT with a WAL
//! sync) and scans, until its loops are done, the window ends or the run is
//! stopped. SQLite takes one writer at a time: an update waits for the
//! write lock inside its BEGIN IMMEDIATE, and that wait is part of the
//! update's latency.
//!
//! Not for: choosing keys (`strata_slob`'s `AccessPlan`), counting
//! (`SharedTally`) or starting the threads (`measure`).

use crate::connection::open_for_session;
use crate::schema::SessionSql;
use rusqlite::{Connection, InterruptHandle};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Barrier, OnceLock};
use std::time::Duration;
use strata_core::random::FastRng;
use strata_slob::session::access::{AccessPlan, LoopChoice, Operation};
use strata_slob::session::tally::{Event, SharedTally, Window};
use strata_slob::session::{Progress, SessionEnd, SessionSpec};
use tokio::time::Instant;

const THINK_SLICE: Duration = Duration::from_millis(50);

/// The run's window, the loops each session does, and its tally.
pub(crate) struct Timeline {
    pub window: Window,
    pub loops_target: Option<u64>,
    pub tally: SharedTally,
}

/// What every session thread shares with the thread that started it.
pub(crate) struct Shared<'a> {
    pub path: &'a Path,
    pub cache_kib: u64,
    pub access: AccessPlan,
    pub think_time: Option<(Duration, Duration)>,
    pub think_every: u32,
    pub seed: u64,
    /// Every session and the starting thread meet here once connected.
    pub go: Barrier,
    /// Set before `go` when a session could not connect: nobody runs.
    pub abort: AtomicBool,
    pub stop: AtomicBool,
    pub timeline: OnceLock<Timeline>,
    pub progress: Progress,
}

/// Runs one session: connects, says so on `ready` (its interrupt handle,
/// or why it could not connect), waits for every session, then works.
pub(crate) fn session_thread(
    shared: &Shared<'_>,
    spec: &SessionSpec,
    ready: Sender<Result<InterruptHandle, String>>,
) -> SessionEnd {
    let opened = open_for_session(shared.path, shared.cache_kib);
    let _ = ready.send(match &opened {
        Ok(connection) => Ok(connection.get_interrupt_handle()),
        Err(error) => Err(format!(
            "session {} ({}): {error:#}",
            spec.index + 1,
            spec.schema
        )),
    });
    shared.go.wait();
    let mut end = SessionEnd {
        index: spec.index,
        schema: spec.schema.clone(),
        ended_at: Instant::now(),
        failure: None,
        offline: Vec::new(),
        reconnects: 0,
    };
    let (Ok(connection), Some(timeline)) = (opened, shared.timeline.get()) else {
        return end;
    };
    if shared.abort.load(Ordering::Relaxed) {
        return end;
    }
    let mut session = Session {
        shared,
        timeline,
        connection,
        own: SessionSql::of(&spec.schema),
        hot: spec.hot_schema.as_deref().map(SessionSql::of),
        index: spec.index as usize,
        rng: FastRng::seeded(
            shared.seed ^ u64::from(spec.index).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        ),
    };
    shared
        .progress
        .sessions_alive
        .fetch_add(1, Ordering::Relaxed);
    if let Err(error) = session.work() {
        if !shared.stop.load(Ordering::Relaxed) {
            shared.progress.failures.fetch_add(1, Ordering::Relaxed);
            end.failure = Some((Instant::now(), error.to_string()));
        }
    }
    shared
        .progress
        .sessions_alive
        .fetch_sub(1, Ordering::Relaxed);
    end.ended_at = Instant::now();
    end
}

struct Session<'a> {
    shared: &'a Shared<'a>,
    timeline: &'a Timeline,
    connection: Connection,
    own: SessionSql,
    hot: Option<SessionSql>,
    index: usize,
    rng: FastRng,
}

impl Session<'_> {
    fn over(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
            || self
                .timeline
                .window
                .end
                .is_some_and(|end| Instant::now() >= end)
    }

    fn work(&mut self) -> rusqlite::Result<()> {
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

    fn one_loop(&self, choice: &LoopChoice) -> rusqlite::Result<Instant> {
        let sql = match (choice.hot_schema, &self.hot) {
            (true, Some(hot)) => hot,
            _ => &self.own,
        };
        let keys = [choice.first_key, choice.last_key];
        match choice.operation {
            Operation::Scan => self.scan(&sql.scan),
            Operation::Update => self.update(&sql.update, keys),
            Operation::Select => self.select(&sql.select, keys),
        }
    }

    fn select(&self, sql: &str, keys: [i64; 2]) -> rusqlite::Result<Instant> {
        let began = Instant::now();
        let rows: i64 = self
            .connection
            .prepare_cached(sql)?
            .query_row(keys, |row| row.get(1))?;
        let done = Instant::now();
        let latency = done - began;
        self.record(
            done,
            Event::Select {
                latency,
                rows: rows as u64,
            },
        );
        self.shared.progress.selects.fetch_add(1, Ordering::Relaxed);
        Ok(done)
    }

    fn scan(&self, sql: &str) -> rusqlite::Result<Instant> {
        let began = Instant::now();
        self.connection
            .prepare_cached(sql)?
            .query_row([], |row| row.get::<_, i64>(0))?;
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

    /// One ranged UPDATE in its own transaction; the BEGIN IMMEDIATE (the
    /// wait for the write lock) and UPDATE timed together, the COMMIT (the
    /// WAL write and sync) apart. Returns when the commit finished.
    fn update(&self, sql: &str, keys: [i64; 2]) -> rusqlite::Result<Instant> {
        let began = Instant::now();
        self.connection.execute_batch("BEGIN IMMEDIATE")?;
        self.record(began, Event::Begin);
        let changed = self.connection.prepare_cached(sql)?.execute(keys);
        let rows = match changed {
            Ok(rows) => rows as u64,
            Err(error) => {
                let _ = self.connection.execute_batch("ROLLBACK");
                return Err(error);
            }
        };
        let updated = Instant::now();
        self.record(
            updated,
            Event::Update {
                latency: updated - began,
                rows,
            },
        );
        self.connection.execute_batch("COMMIT")?;
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
