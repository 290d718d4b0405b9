//! One SLOB session: a tokio task with one connection that runs loops of
//! selects, updates and scans until its loops are done, the window ends or
//! the run is stopped; it reconnects when the server goes away and gives up
//! (failed, with the error) when it cannot.
//!
//! Not for: choosing keys (`access`) or adding up results (`tally`).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use strata_core::random::FastRng;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_postgres::{Client, Config, Statement};

use strata_slob::session::access::{AccessPlan, LoopChoice, Operation};
use strata_slob::session::tally::{Event, SharedTally};
use strata_slob::session::{Progress, SessionEnd, SessionSpec};

use crate::pg;
use crate::schema::{qualified, PAD_BYTES};

/// How long a session keeps trying to reconnect after losing the server.
pub(crate) const RECONNECT_LIMIT: Duration = Duration::from_secs(5);
const RECONNECT_PAUSE: Duration = Duration::from_millis(200);

/// Settings of every session: the keys are read through the index as a
/// bitmap heap scan — every key a distinct random block, read in block order
/// with PostgreSQL's own prefetch (`effective_io_concurrency`), the plan
/// pgio's query gets too — never a sequential scan, and no parallel workers
/// (one session, one backend).
const SESSION_SETTINGS: &str = "SET enable_seqscan = off; SET enable_indexscan = off; \
     SET max_parallel_workers_per_gather = 0; SET statement_timeout = 0";

/// An update transaction reads its rows with a plain index scan, so every
/// session locks them in key order and no two sessions deadlock (a bitmap
/// heap scan would lock them in block order).
const BEGIN_UPDATE: &str =
    "BEGIN; SET LOCAL enable_indexscan = on; SET LOCAL enable_bitmapscan = off";

struct SchemaStatements {
    select: Statement,
    /// With `update_pad_bytes`, its third parameter is the new bytes.
    update: Statement,
    scan: Option<Statement>,
}

pub(crate) struct SessionConnection {
    client: Client,
    /// `pg_backend_pid()`: the server process serving the connection.
    backend_pid: u32,
    end: pg::ConnectionEnd,
    own: SchemaStatements,
    hot: Option<SchemaStatements>,
    /// [`SessionSpec::also`]'s statements.
    also: Vec<SchemaStatements>,
}

impl SessionConnection {
    pub(crate) fn backend_pid(&self) -> u32 {
        self.backend_pid
    }
}

/// Connects, applies the session settings and prepares the statements.
pub(crate) async fn open_session(
    config: &Config,
    spec: &SessionSpec,
) -> Result<SessionConnection, String> {
    let (client, end) = pg::connect_watched(config).await?;
    client
        .batch_execute(SESSION_SETTINGS)
        .await
        .map_err(|error| format!("setting up the session: {}", pg::describe(&error)))?;
    let backend_pid = client
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .and_then(|row| row.try_get::<_, i32>(0))
        .map_err(|error| format!("reading pg_backend_pid(): {}", pg::describe(&error)))?
        as u32;
    let own = prepare(&client, &spec.schema, spec).await?;
    let hot = match &spec.hot_schema {
        Some(schema) => Some(prepare(&client, schema, spec).await?),
        None => None,
    };
    let mut also = Vec::with_capacity(spec.also.len());
    for schema in &spec.also {
        also.push(prepare(&client, schema, spec).await?);
    }
    Ok(SessionConnection {
        client,
        backend_pid,
        end,
        own,
        hot,
        also,
    })
}

/// `schema`'s statements for the session `spec`: a scan with `with_scan`,
/// an update that also rewrites the pad's first bytes with
/// `update_pad_bytes`.
async fn prepare(
    client: &Client,
    schema: &str,
    spec: &SessionSpec,
) -> Result<SchemaStatements, String> {
    let slob = qualified(schema, "slob");
    let prepare_one = |sql: String| async move {
        client
            .prepare(&sql)
            .await
            .map_err(|error| format!("preparing {sql}: {}", pg::describe(&error)))
    };
    let select = prepare_one(format!(
        "SELECT coalesce(sum(n), 0)::bigint, count(*) FROM {slob} WHERE key BETWEEN $1 AND $2"
    ))
    .await?;
    let pad = match spec.update_pad_bytes {
        0 => "",
        _ => ", pad = overlay(pad placing $3 from 1)",
    };
    let update = prepare_one(format!(
        "UPDATE {slob} SET n = n + 1{pad} WHERE key BETWEEN $1 AND $2"
    ))
    .await?;
    let scan = match spec.with_scan {
        true => Some(
            prepare_one(format!(
                "SELECT count(*) FROM {}",
                qualified(schema, "scan")
            ))
            .await?,
        ),
        false => None,
    };
    Ok(SchemaStatements {
        select,
        update,
        scan,
    })
}

/// Ends a session's waits when the run is stopped or the window is over.
pub(crate) struct Interrupt {
    pub stop: watch::Receiver<bool>,
    pub deadline: Option<Instant>,
}

impl Interrupt {
    /// `work`'s result, or None if the run stopped or the deadline passed
    /// first (then `work` is abandoned).
    async fn guard<F: std::future::Future>(&mut self, work: F) -> Option<F::Output> {
        let deadline = self.deadline;
        let past_deadline = async move {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = self.stop.wait_for(|stopped| *stopped) => None,
            _ = past_deadline => None,
            output = work => Some(output),
        }
    }
}

/// Everything a running session owns.
pub(crate) struct Session {
    pub spec: SessionSpec,
    pub connection: SessionConnection,
    pub config: Arc<Config>,
    pub access: Arc<AccessPlan>,
    pub tally: Arc<SharedTally>,
    pub progress: Arc<Progress>,
    pub rng: FastRng,
    pub start: Instant,
    pub loops_target: Option<u64>,
    pub think_time: Option<(Duration, Duration)>,
    pub think_every: u32,
}

enum Reconnect {
    Done,
    Interrupted,
    Failed(String),
}

impl Session {
    pub(crate) async fn run(mut self, mut interrupt: Interrupt) -> SessionEnd {
        let mut end = SessionEnd::new(self.spec.index, self.spec.schema.clone(), self.start);
        end.server_threads.push(self.connection.backend_pid);
        if interrupt
            .guard(tokio::time::sleep_until(self.start))
            .await
            .is_some()
        {
            self.progress.sessions_alive.fetch_add(1, Ordering::Relaxed);
            self.work(&mut interrupt, &mut end).await;
            self.progress.sessions_alive.fetch_sub(1, Ordering::Relaxed);
        }
        end.ended_at = Instant::now();
        end
    }

    async fn work(&mut self, interrupt: &mut Interrupt, end: &mut SessionEnd) {
        let mut loops_done = 0u64;
        while self.loops_target.is_none_or(|target| loops_done < target) {
            let choice = self.access.choose(&mut self.rng, loops_done + 1);
            let error = match interrupt.guard(self.one_loop(&choice)).await {
                None => return,
                Some(Ok(())) => {
                    loops_done += 1;
                    self.progress.loops.fetch_add(1, Ordering::Relaxed);
                    if !self.think(interrupt, loops_done).await {
                        return;
                    }
                    continue;
                }
                Some(Err(error)) => error,
            };
            if !self.recover(interrupt, end, &error).await {
                return;
            }
        }
    }

    /// After a failed statement: true if the session can go on.
    async fn recover(
        &mut self,
        interrupt: &mut Interrupt,
        end: &mut SessionEnd,
        error: &tokio_postgres::Error,
    ) -> bool {
        let lost_at = Instant::now();
        if !pg::server_went_away(error) {
            self.fail(end, lost_at, pg::describe(error));
            return false;
        }
        let lost = pg::describe_lost(error, &self.connection.end).await;
        end.first_lost.get_or_insert_with(|| lost.clone());
        let outcome = self.reconnect(interrupt).await;
        end.offline.push((lost_at, Instant::now()));
        match outcome {
            Reconnect::Done => {
                end.reconnects += 1;
                end.server_threads.push(self.connection.backend_pid);
                self.progress.reconnects.fetch_add(1, Ordering::Relaxed);
                true
            }
            Reconnect::Interrupted => false,
            Reconnect::Failed(last_error) => {
                let text = format!(
                    "lost the server ({lost}) and could not reconnect within {} s: {last_error}",
                    RECONNECT_LIMIT.as_secs()
                );
                self.fail(end, Instant::now(), text);
                false
            }
        }
    }

    fn fail(&self, end: &mut SessionEnd, at: Instant, text: String) {
        self.progress.failures.fetch_add(1, Ordering::Relaxed);
        end.failure = Some((at, text));
    }

    async fn reconnect(&mut self, interrupt: &mut Interrupt) -> Reconnect {
        let give_up_at = Instant::now() + RECONNECT_LIMIT;
        let mut last_error = String::from("connecting timed out");
        loop {
            let attempt =
                tokio::time::timeout_at(give_up_at, open_session(&self.config, &self.spec));
            match interrupt.guard(attempt).await {
                None => return Reconnect::Interrupted,
                Some(Ok(Ok(connection))) => {
                    self.connection = connection;
                    return Reconnect::Done;
                }
                Some(Ok(Err(error))) => last_error = error,
                Some(Err(_elapsed)) => return Reconnect::Failed(last_error),
            }
            if Instant::now() + RECONNECT_PAUSE >= give_up_at {
                return Reconnect::Failed(last_error);
            }
            if interrupt
                .guard(tokio::time::sleep(RECONNECT_PAUSE))
                .await
                .is_none()
            {
                return Reconnect::Interrupted;
            }
        }
    }

    /// Think time after every `think_every` loops; false if interrupted.
    async fn think(&mut self, interrupt: &mut Interrupt, loops_done: u64) -> bool {
        let Some((shortest, longest)) = self.think_time else {
            return true;
        };
        if !loops_done.is_multiple_of(u64::from(self.think_every.max(1))) {
            return true;
        }
        let pause = shortest + (longest.saturating_sub(shortest)).mul_f64(self.rng.unit_f64());
        interrupt.guard(tokio::time::sleep(pause)).await.is_some()
    }

    async fn one_loop(&self, choice: &LoopChoice) -> Result<(), tokio_postgres::Error> {
        let connection = &self.connection;
        let statements =
            choice.schema_of(&connection.own, connection.hot.as_ref(), &connection.also);
        let keys = [choice.first_key, choice.last_key];
        let finished = match (choice.operation, &statements.scan) {
            (Operation::Scan, Some(scan)) => self.scan(scan).await?,
            (Operation::Update, _) => {
                let pad = self.new_pad_bytes(choice.first_key);
                self.update(&statements.update, keys, pad).await?
            }
            _ => self.select(&statements.select, keys).await?,
        };
        self.record(finished, Event::LoopDone);
        Ok(())
    }

    fn record(&self, finished_at: Instant, event: Event) {
        self.tally
            .record(self.spec.index as usize, finished_at, event);
    }

    /// A full scan of the `scan` table; returns when it finished.
    async fn scan(&self, scan: &Statement) -> Result<Instant, tokio_postgres::Error> {
        let began = Instant::now();
        self.connection.client.query_one(scan, &[]).await?;
        let done = Instant::now();
        self.record(
            done,
            Event::Scan {
                latency: done - began,
            },
        );
        self.progress.scans.fetch_add(1, Ordering::Relaxed);
        Ok(done)
    }

    /// The keys' sum through the index; returns when it finished.
    async fn select(
        &self,
        select: &Statement,
        keys: [i64; 2],
    ) -> Result<Instant, tokio_postgres::Error> {
        let began = Instant::now();
        let row = self
            .connection
            .client
            .query_one(select, &[&keys[0], &keys[1]])
            .await?;
        let done = Instant::now();
        let rows = row.get::<_, i64>(1) as u64;
        self.record(
            done,
            Event::Select {
                latency: done - began,
                rows,
            },
        );
        self.progress.selects.fetch_add(1, Ordering::Relaxed);
        Ok(done)
    }

    /// `update_pad_bytes` bytes no update of these rows wrote before (the
    /// pad a COPY loaded is a repeated pattern): WAL carries every one.
    fn new_pad_bytes(&self, first_key: i64) -> Option<Vec<u8>> {
        let length = (self.spec.update_pad_bytes as usize).min(PAD_BYTES);
        if length == 0 {
            return None;
        }
        let mut rng = FastRng::seeded(
            self.progress.updates.load(Ordering::Relaxed)
                ^ (first_key as u64).rotate_left(32)
                ^ u64::from(self.spec.index),
        );
        let mut bytes = vec![0; length];
        rng.fill(&mut bytes);
        Some(bytes)
    }

    /// One ranged UPDATE in its own transaction, the UPDATE and the COMMIT
    /// timed apart; returns when the commit finished.
    async fn update(
        &self,
        update: &Statement,
        keys: [i64; 2],
        pad: Option<Vec<u8>>,
    ) -> Result<Instant, tokio_postgres::Error> {
        let client = &self.connection.client;
        client.batch_execute(BEGIN_UPDATE).await?;
        let began = Instant::now();
        self.record(began, Event::Begin);
        let rows = match &pad {
            Some(pad) => client.execute(update, &[&keys[0], &keys[1], pad]).await?,
            None => client.execute(update, &[&keys[0], &keys[1]]).await?,
        };
        let updated = Instant::now();
        self.record(
            updated,
            Event::Update {
                latency: updated - began,
                rows,
            },
        );
        client.batch_execute("COMMIT").await?;
        let committed = Instant::now();
        self.record(
            committed,
            Event::Commit {
                latency: committed - updated,
            },
        );
        self.progress.updates.fetch_add(1, Ordering::Relaxed);
        Ok(committed)
    }
}
