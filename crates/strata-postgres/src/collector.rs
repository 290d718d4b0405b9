//! The `postgres` layer: a PostgreSQL server's raw counters and where its
//! active sessions spend their time.
//!
//! Each collection returns, all as counters:
//!
//! - every key of [`counters::snapshot`] with `.` turned into `_`
//!   (`database_blks_read`, `wal_sync`, `database_blk_read_time_ms`, …);
//! - `samples`: how many times the background sampler has looked at
//!   `pg_stat_activity` (10 Hz, every 100 ms, from its own connection);
//! - `active_session_samples`: one per active client session
//!   (`backend_type = 'client backend'`, `state = 'active'`, not the
//!   collector's own two connections) per sample;
//! - `wait_event_samples{wait_event_type, wait_event}`: the same samples
//!   split by what the session was waiting for. An active session with no
//!   wait event is labelled `wait_event_type="CPU"`,
//!   `wait_event="CPU or run queue"`: PostgreSQL cannot tell a session on a
//!   CPU from one waiting in the run queue for a CPU (the OS can:
//!   `/proc/PID/schedstat`). A series appears the first time its event is
//!   seen, counting from the collector's start (so a missing earlier value
//!   means 0).
//!
//! and one gauge, `wait_sampling_sees_all_sessions`: 1 when the role is a
//! superuser or a member of `pg_read_all_stats`, 0 when sessions of other
//! roles are invisible to the sampler (their `state` reads NULL), so the
//! wait figures cover only this role's sessions.
//!
//! From two collections the sampler derives:
//!
//! - "% of active time" per wait event =
//!   Δ`wait_event_samples{…}` / Δ`active_session_samples` × 100;
//! - average active sessions = Δ`active_session_samples` / Δ`samples`.
//!
//! Not for: per-statement figures, or telling CPU from run-queue time.

use crate::connect::{connect, describe_error, ConnectionTarget};
use crate::counters::{self, server_version_num};
use anyhow::{anyhow, Context, Result};
use std::collections::BTreeMap;
use std::sync::{mpsc as std_mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use strata_core::metrics::{Collected, Collector, Metric};
use tokio::sync::mpsc;
use tokio_postgres::Client;

/// How often the background task samples `pg_stat_activity`.
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(100);
/// The longest one reading of the statistics views may take.
const COLLECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The label of an active session with no wait event.
const CPU_TYPE: &str = "CPU";
const CPU_EVENT: &str = "CPU or run queue";

type Reply = std_mpsc::SyncSender<Result<Collected>>;

/// Reads a PostgreSQL server from a background thread with its own
/// current-thread tokio runtime and two connections (counters, wait-event
/// sampling). `collect` may be called from any thread, async or not.
/// Dropping it stops the sampler and closes both connections.
pub struct PostgresCollector {
    endpoint: String,
    requests: Option<mpsc::UnboundedSender<Reply>>,
    worker: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for PostgresCollector {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "PostgresCollector({})", self.endpoint)
    }
}

/// What the sampler has counted since the collector started.
#[derive(Default)]
struct WaitCounts {
    samples: u64,
    active_session_samples: u64,
    by_event: BTreeMap<(String, String), u64>,
    /// Why sampling stopped (the connection was lost).
    error: Option<String>,
}

/// What the worker needs once both connections are up.
struct Connected {
    counters: Client,
    sampler: Client,
    version_num: u32,
    own_pids: [i32; 2],
    sees_all_sessions: bool,
}

impl PostgresCollector {
    /// Connects twice (5 s timeout each) and starts sampling wait events.
    pub fn start(target: &ConnectionTarget) -> Result<PostgresCollector> {
        let endpoint = target.endpoint();
        let (ready_sender, ready) = std_mpsc::sync_channel::<Result<()>>(1);
        let (requests, request_receiver) = mpsc::unbounded_channel::<Reply>();
        let worker_target = target.clone();
        let worker_endpoint = endpoint.clone();
        let worker = std::thread::Builder::new()
            .name("strata-pg-collector".to_string())
            .spawn(move || {
                run_worker(
                    worker_target,
                    worker_endpoint,
                    ready_sender,
                    request_receiver,
                )
            })
            .context("starting the PostgreSQL collector thread")?;
        let started = ready.recv().unwrap_or_else(|_| {
            Err(anyhow!(
                "the PostgreSQL collector thread for {endpoint} stopped while starting"
            ))
        });
        if let Err(error) = started {
            let _ = worker.join();
            return Err(error);
        }
        Ok(PostgresCollector {
            endpoint,
            requests: Some(requests),
            worker: Some(worker),
        })
    }
}

impl Collector for PostgresCollector {
    fn layer(&self) -> &'static str {
        "postgres"
    }

    fn collect(&mut self) -> Result<Collected> {
        let stopped = || anyhow!("the PostgreSQL collector for {} has stopped", self.endpoint);
        let (reply, answer) = std_mpsc::sync_channel(1);
        let requests = self.requests.as_ref().ok_or_else(stopped)?;
        requests.send(reply).map_err(|_| stopped())?;
        answer.recv().map_err(|_| stopped())?
    }
}

impl Drop for PostgresCollector {
    fn drop(&mut self) {
        // Closing the request channel ends the worker's loop, which stops the
        // sampler task and drops the runtime with both connections.
        self.requests.take();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

fn run_worker(
    target: ConnectionTarget,
    endpoint: String,
    ready: std_mpsc::SyncSender<Result<()>>,
    mut requests: mpsc::UnboundedReceiver<Reply>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = ready.send(Err(anyhow!(
                "cannot build a tokio runtime for the PostgreSQL collector: {error}"
            )));
            return;
        }
    };
    runtime.block_on(async move {
        let connected = match connect_both(&target).await {
            Ok(connected) => connected,
            Err(error) => {
                let _ = ready.send(Err(error));
                return;
            }
        };
        let counts = Arc::new(Mutex::new(WaitCounts::default()));
        let sampler = tokio::spawn(sample_wait_events(
            connected.sampler,
            connected.own_pids,
            counts.clone(),
        ));
        let _ = ready.send(Ok(()));
        while let Some(reply) = requests.recv().await {
            let result = collect_once(
                &connected.counters,
                connected.version_num,
                connected.sees_all_sessions,
                &counts,
                &endpoint,
            )
            .await;
            let _ = reply.send(result);
        }
        sampler.abort();
        let _ = sampler.await;
    });
}

async fn connect_both(target: &ConnectionTarget) -> Result<Connected> {
    let counters = connect(target).await?;
    let sampler = connect(target).await?;
    let version_num = server_version_num(&counters).await?;
    let mut own_pids = [0; 2];
    for (slot, client) in own_pids.iter_mut().zip([&counters, &sampler]) {
        let row = client
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .map_err(|error| anyhow!("reading pg_backend_pid(): {}", describe_error(&error)))?;
        *slot = row.get(0);
    }
    let row = counters
        .query_one(
            "SELECT rolsuper OR pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER') \
             FROM pg_roles WHERE rolname = current_user",
            &[],
        )
        .await
        .map_err(|error| anyhow!("reading the role's privileges: {}", describe_error(&error)))?;
    Ok(Connected {
        counters,
        sampler,
        version_num,
        own_pids,
        sees_all_sessions: row.get(0),
    })
}

/// `(wait_event_type, wait_event, sessions)` of active client sessions other
/// than `own_pids`, with "no wait event" spelled as CPU.
fn activity_query(own_pids: [i32; 2]) -> String {
    format!(
        "SELECT CASE WHEN wait_event IS NULL THEN '{CPU_TYPE}' ELSE wait_event_type END, \
                coalesce(wait_event, '{CPU_EVENT}'), count(*) \
         FROM pg_stat_activity \
         WHERE state = 'active' AND backend_type = 'client backend' \
           AND pid NOT IN ({}, {}) \
         GROUP BY 1, 2",
        own_pids[0], own_pids[1]
    )
}

/// Samples until aborted or until the connection fails; a failure is kept
/// in `counts.error` for the next collection to report.
async fn sample_wait_events(client: Client, own_pids: [i32; 2], counts: Arc<Mutex<WaitCounts>>) {
    let record_error = |error: &tokio_postgres::Error| {
        lock(&counts).error = Some(describe_error(error));
    };
    let statement = match client.prepare(&activity_query(own_pids)).await {
        Ok(statement) => statement,
        Err(error) => return record_error(&error),
    };
    let mut ticker = tokio::time::interval(SAMPLE_INTERVAL);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let rows = match client.query(&statement, &[]).await {
            Ok(rows) => rows,
            Err(error) => return record_error(&error),
        };
        let mut counts = lock(&counts);
        counts.samples += 1;
        for row in rows {
            let wait_type: String = row.get(0);
            let wait_event: String = row.get(1);
            let sessions = row.get::<_, i64>(2).max(0) as u64;
            counts.active_session_samples += sessions;
            *counts.by_event.entry((wait_type, wait_event)).or_default() += sessions;
        }
    }
}

fn lock(counts: &Mutex<WaitCounts>) -> std::sync::MutexGuard<'_, WaitCounts> {
    counts
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

async fn collect_once(
    client: &Client,
    version_num: u32,
    sees_all_sessions: bool,
    counts: &Mutex<WaitCounts>,
    endpoint: &str,
) -> Result<Collected> {
    if client.is_closed() {
        anyhow::bail!("the connection to PostgreSQL at {endpoint} was lost");
    }
    if let Some(error) = &lock(counts).error {
        anyhow::bail!(
            "wait-event sampling of PostgreSQL at {endpoint} stopped (connection lost?): {error}"
        );
    }
    let snapshot = match tokio::time::timeout(
        COLLECT_TIMEOUT,
        counters::snapshot(client, version_num),
    )
    .await
    {
        Ok(result) => result.map_err(|error| {
            let lost = if client.is_closed() {
                " (connection lost)"
            } else {
                ""
            };
            anyhow!("reading counters from PostgreSQL at {endpoint}{lost}: {error:#}")
        })?,
        Err(_) => anyhow::bail!(
            "reading counters from PostgreSQL at {endpoint}: no answer within {} s",
            COLLECT_TIMEOUT.as_secs()
        ),
    };
    let mut metrics: Vec<Metric> = snapshot
        .values
        .iter()
        .map(|(key, value)| Metric::counter(&metric_name(key), *value))
        .collect();
    let counts = lock(counts);
    metrics.push(Metric::counter("samples", counts.samples as f64));
    metrics.push(Metric::counter(
        "active_session_samples",
        counts.active_session_samples as f64,
    ));
    for ((wait_type, wait_event), samples) in &counts.by_event {
        metrics.push(
            Metric::counter("wait_event_samples", *samples as f64)
                .with_label("wait_event_type", wait_type)
                .with_label("wait_event", wait_event),
        );
    }
    metrics.push(Metric::gauge(
        "wait_sampling_sees_all_sessions",
        if sees_all_sessions { 1.0 } else { 0.0 },
    ));
    Ok(Collected::Metrics { metrics })
}

/// `database.blks_read` → `database_blks_read`.
fn metric_name(key: &str) -> String {
    key.replace('.', "_")
}

/// The PostgreSQL server's processes present now, when the server is
/// proved to run on this machine (`crate::locality`): the postmaster's
/// children that pg_stat_activity lists. Their run-queue delay and I/O
/// join the process layer; backends that start later are not followed. A
/// server not on this machine has none here, whatever pids it lists.
pub fn local_backend_pids(target: &crate::connect::ConnectionTarget) -> anyhow::Result<Vec<u32>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (locality, pids) = runtime.block_on(async {
        let client = crate::connect::connect(target).await?;
        let locality = crate::locality::locate(&client).await;
        let rows = client
            .query(
                "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
                &[],
            )
            .await?;
        let pids: Vec<u32> = rows.iter().map(|row| row.get::<_, i32>(0) as u32).collect();
        anyhow::Ok((locality, pids))
    })?;
    let crate::locality::Locality::Local { postmaster_pid, .. } = locality else {
        return Ok(Vec::new());
    };
    let is_the_server_s = |pid: &u32| {
        strata_probe::cpu::process_start(*pid)
            .is_some_and(|process| process.parent == postmaster_pid)
    };
    Ok(pids.into_iter().filter(is_the_server_s).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_metric_names() {
        assert_eq!(metric_name("database.blks_read"), "database_blks_read");
        assert_eq!(metric_name("wal.sync_time_ms"), "wal_sync_time_ms");
        assert_eq!(
            metric_name("io.client_backend.reads"),
            "io_client_backend_reads"
        );
    }

    #[test]
    fn activity_query_excludes_own_sessions() {
        let sql = activity_query([12, 34]);
        assert!(sql.contains("pid NOT IN (12, 34)"), "{sql}");
        assert!(sql.contains("'CPU or run queue'"), "{sql}");
    }
}
