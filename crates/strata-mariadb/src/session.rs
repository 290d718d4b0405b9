//! One SLOB session on MariaDB: an OS thread with its own connection (the
//! `mysql` crate is synchronous; threads suit tens of sessions, not
//! thousands) that, once every session is connected, runs loops of selects
//! (the work unit's keys through the secondary index, one clustered leaf
//! page per key), updates (START TRANSACTION, the keys' rows in key order,
//! COMMIT timed apart) and scans, until its loops are done, the window ends
//! or the run is stopped. A session that loses its connection fails; it
//! does not reconnect.
//!
//! Not for: choosing keys (`strata_slob`'s `AccessPlan`), counting
//! (`SharedTally`) or starting the threads (`measure`).

use mysql::prelude::Queryable;
use mysql::{Conn, Statement};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Barrier, OnceLock};
use std::time::Duration;
use strata_core::random::FastRng;
use strata_slob::session::access::{AccessPlan, LoopChoice, Operation};
use strata_slob::session::tally::{Event, SharedTally, Window};
use strata_slob::session::{Progress, SessionEnd, SessionSpec};
use tokio::time::Instant;

use crate::schema::{quote_ident, scan_table, slob_table, KEY_INDEX};
use crate::target::MariaDbTarget;

const THINK_SLICE: Duration = Duration::from_millis(50);

/// The run's window, the loops each session does, and its tally.
pub(crate) struct Timeline {
    pub window: Window,
    pub loops_target: Option<u64>,
    pub tally: SharedTally,
}

/// What every session thread shares with the thread that started it.
pub(crate) struct Shared<'a> {
    pub target: &'a MariaDbTarget,
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

/// A schema's prepared statements.
struct SchemaStatements {
    select: Statement,
    update: Statement,
    scan: Option<Statement>,
}

fn prepare(conn: &mut Conn, schema: &str, with_scan: bool) -> mysql::Result<SchemaStatements> {
    let slob = quote_ident(&slob_table(schema));
    let index = quote_ident(KEY_INDEX);
    let select = conn.prep(format!(
        "SELECT COUNT(*), CAST(COALESCE(SUM(n), 0) AS SIGNED) FROM {slob} FORCE INDEX ({index}) \
         WHERE `key` BETWEEN ? AND ?"
    ))?;
    let update = conn.prep(format!(
        "UPDATE {slob} FORCE INDEX ({index}) SET n = n + 1 WHERE `key` BETWEEN ? AND ? ORDER BY `key`"
    ))?;
    let scan = match with_scan {
        true => Some(conn.prep(format!(
            "SELECT COUNT(*), CAST(COALESCE(SUM(n), 0) AS SIGNED) FROM {}",
            quote_ident(&scan_table(schema))
        ))?),
        false => None,
    };
    Ok(SchemaStatements {
        select,
        update,
        scan,
    })
}

/// The session's connection with its statements prepared.
fn open(
    target: &MariaDbTarget,
    spec: &SessionSpec,
) -> anyhow::Result<(Conn, SchemaStatements, Option<SchemaStatements>)> {
    let mut conn = target.connect_session()?;
    let own = prepare(&mut conn, &spec.schema, spec.with_scan)
        .map_err(|error| target.error("preparing the statements on", error))?;
    let hot = match &spec.hot_schema {
        Some(schema) => Some(
            prepare(&mut conn, schema, spec.with_scan)
                .map_err(|error| target.error("preparing the statements on", error))?,
        ),
        None => None,
    };
    Ok((conn, own, hot))
}

/// Runs one session: connects, says so on `ready` (its connection id, or
/// why it could not connect), waits for every session, then works.
pub(crate) fn session_thread(
    shared: &Shared<'_>,
    spec: &SessionSpec,
    ready: Sender<Result<u32, String>>,
) -> SessionEnd {
    let opened = open(shared.target, spec);
    let _ = ready.send(match &opened {
        Ok((conn, _, _)) => Ok(conn.connection_id()),
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
    let (Ok((conn, own, hot)), Some(timeline)) = (opened, shared.timeline.get()) else {
        return end;
    };
    if shared.abort.load(Ordering::Relaxed) {
        return end;
    }
    let mut session = Session {
        shared,
        timeline,
        conn,
        own,
        hot,
        index: spec.index as usize,
        rng: FastRng::seeded(
            shared.seed ^ u64::from(spec.index).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        ),
    };
    let alive = &shared.progress.sessions_alive;
    alive.fetch_add(1, Ordering::Relaxed);
    if let Err(error) = session.work() {
        if !shared.stop.load(Ordering::Relaxed) {
            shared.progress.failures.fetch_add(1, Ordering::Relaxed);
            let text = shared.target.scrub(error.to_string());
            end.failure = Some((Instant::now(), text));
        }
    }
    alive.fetch_sub(1, Ordering::Relaxed);
    end.ended_at = Instant::now();
    end
}

struct Session<'a> {
    shared: &'a Shared<'a>,
    timeline: &'a Timeline,
    conn: Conn,
    own: SchemaStatements,
    hot: Option<SchemaStatements>,
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

    fn work(&mut self) -> mysql::Result<()> {
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

    fn one_loop(&mut self, choice: &LoopChoice) -> mysql::Result<Instant> {
        let statements = match (choice.hot_schema, &self.hot) {
            (true, Some(hot)) => hot,
            _ => &self.own,
        };
        let keys = (choice.first_key, choice.last_key);
        match choice.operation {
            Operation::Scan => {
                let scan = statements.scan.clone().expect("prepared when scanning");
                self.scan(&scan)
            }
            Operation::Update => {
                let update = statements.update.clone();
                self.update(&update, keys)
            }
            Operation::Select => {
                let select = statements.select.clone();
                self.select(&select, keys)
            }
        }
    }

    fn select(&mut self, statement: &Statement, keys: (i64, i64)) -> mysql::Result<Instant> {
        let began = Instant::now();
        let row: Option<(i64, i64)> = self.conn.exec_first(statement, keys)?;
        let done = Instant::now();
        let rows = row.map_or(0, |(count, _)| count.max(0) as u64);
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

    fn scan(&mut self, statement: &Statement) -> mysql::Result<Instant> {
        let began = Instant::now();
        let _: Option<(i64, i64)> = self.conn.exec_first(statement, ())?;
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

    /// START TRANSACTION and the UPDATE timed together, the COMMIT (the redo
    /// write and sync) apart. Returns when the commit finished.
    fn update(&mut self, statement: &Statement, keys: (i64, i64)) -> mysql::Result<Instant> {
        let began = Instant::now();
        self.conn.query_drop("START TRANSACTION")?;
        self.record(began, Event::Begin);
        if let Err(error) = self.conn.exec_drop(statement, keys) {
            let _ = self.conn.query_drop("ROLLBACK");
            return Err(error);
        }
        let rows = self.conn.affected_rows();
        let updated = Instant::now();
        self.record(
            updated,
            Event::Update {
                latency: updated - began,
                rows,
            },
        );
        self.conn.query_drop("COMMIT")?;
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
