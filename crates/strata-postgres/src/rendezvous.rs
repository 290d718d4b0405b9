//! Where the shards of one run meet: the server under test itself. Each
//! shard checks in to a table strata creates in its own schema
//! (`strata_control.rendezvous`: run, shard, shards, host, pid, when, on
//! the server's clock); once all N have, each reads the same rows and so
//! the same start, one second after the last check-in, and sleeps until
//! that instant as its own clock sees it (its offset from the server's
//! clock measured from the round trip of `clock_timestamp()`). A shard
//! whose fellows do not check in within the timeout fails, naming them.
//!
//! Not for: dividing the sessions (strata-slob's `Shard`) or merging the
//! shards' Recordings (strata-report).

use crate::connect::{connect, ConnectionTarget};
use anyhow::{bail, Context};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use strata_recording::environment::ShardRecord;
use strata_run::request::ShardRequest;
use tokio::time::Instant;
use tokio_postgres::Client;

/// How long after the last check-in the run starts: time for every shard
/// to read the rows and sleep.
const LEAD_S: f64 = 1.0;

/// How often a waiting shard looks for the others.
const POLL: Duration = Duration::from_millis(50);

const CREATE: [&str; 2] = [
    "CREATE SCHEMA IF NOT EXISTS strata_control",
    "CREATE TABLE IF NOT EXISTS strata_control.rendezvous (run_id text NOT NULL, \
     shard integer NOT NULL, shards integer NOT NULL, host text NOT NULL, pid integer NOT NULL, \
     checked_in_at timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (run_id, shard))",
];

/// A shard that met the others: the start every shard agreed on, as this
/// machine's clock sees it, and the watch for its own window's start.
pub struct Joined {
    pub start: Instant,
    record: ShardRecord,
    window_start: tokio::task::JoinHandle<Option<f64>>,
}

impl Joined {
    /// What the Recording keeps of the meeting, once the window has begun:
    /// with the server's clock at this shard's window start.
    pub async fn record(self) -> ShardRecord {
        ShardRecord {
            window_start_server_unix_s: self.window_start.await.ok().flatten(),
            ..self.record
        }
    }
}

/// Joins the run `request` names as one of its shards: meets the others
/// on the rendezvous server (the first `--db` when there are several,
/// else `own`, the server this shard drives through `client`), and watches
/// for its window's start, `warmup` after the agreed start.
pub async fn join(
    client: &Client,
    own: &ConnectionTarget,
    request: &ShardRequest,
    warmup: Duration,
    interrupt: &AtomicBool,
) -> anyhow::Result<Joined> {
    let rendezvous = match &request.rendezvous_db {
        Some(text) => ConnectionTarget::parse(text)?,
        None => own.clone(),
    };
    let meeting_client = match &request.rendezvous_db {
        Some(_) => Some(connect(&rendezvous).await?),
        None => None,
    };
    let at = meeting_client.as_ref().unwrap_or(client);
    let (start, record) = meet(at, client, request, &own.redacted(), interrupt).await?;
    let window_start = watch_window_start(&rendezvous.config(), start + warmup).await?;
    Ok(Joined {
        start,
        record,
        window_start,
    })
}

/// Watches, on a connection of its own, for the moment this shard's
/// window begins (`window_start`, this machine's clock) and reads the
/// server's clock then: when the window really began, as the server saw
/// it, lateness of this process included.
async fn watch_window_start(
    config: &tokio_postgres::Config,
    window_start: Instant,
) -> anyhow::Result<tokio::task::JoinHandle<Option<f64>>> {
    let (probe, connection) = config.connect(tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    Ok(tokio::spawn(async move {
        tokio::time::sleep_until(window_start).await;
        let sent = strata_core::time::unix_now_s();
        let row = probe
            .query_one("SELECT extract(epoch FROM clock_timestamp())::float8", &[])
            .await
            .ok()?;
        let round_trip_s = strata_core::time::unix_now_s() - sent;
        Some(row.get::<_, f64>(0) - round_trip_s / 2.0)
    }))
}

/// Checks in as `request`'s shard at `rendezvous` (the server every shard
/// meets on, whose clock is the run's) and waits for the others; `server`
/// is the one this shard drives. The agreed start on this machine's
/// clock, and the shard's record.
async fn meet(
    rendezvous: &Client,
    server: &Client,
    request: &ShardRequest,
    endpoint: &str,
    interrupt: &AtomicBool,
) -> anyhow::Result<(Instant, ShardRecord)> {
    create_table(rendezvous).await?;
    check_in(rendezvous, request).await?;
    let start_server_unix_s = wait_for_all(rendezvous, request, interrupt).await?;
    let clock_offset_s = clock_offset_s(rendezvous).await?;
    let until_s = start_server_unix_s - clock_offset_s - strata_core::time::unix_now_s();
    let start = Instant::now() + Duration::from_secs_f64(until_s.max(0.0));
    let record = ShardRecord {
        run_id: request.run_id.clone(),
        shard: request.shard.index,
        shards: request.shard.count,
        host: strata_recording::HostInfo::current().hostname,
        pid: std::process::id(),
        server: server_identity(server, endpoint).await,
        start_server_unix_s,
        window_start_server_unix_s: None,
        clock_offset_ms: clock_offset_s * 1e3,
    };
    Ok((start, record))
}

/// The table, made by whichever shard comes first (two making it at once
/// collide in the catalog: the loser tries again).
async fn create_table(client: &Client) -> anyhow::Result<()> {
    for attempt in 0..5 {
        let mut made = Ok(());
        for statement in CREATE {
            made = client.batch_execute(statement).await;
            if made.is_err() {
                break;
            }
        }
        match made {
            Ok(()) => return Ok(()),
            Err(error) if attempt < 4 && is_a_collision(&error) => {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Err(error) => {
                return Err(error)
                    .context("creating the rendezvous table strata_control.rendezvous")
            }
        }
    }
    Ok(())
}

fn is_a_collision(error: &tokio_postgres::Error) -> bool {
    error.code().is_some_and(|code| {
        [
            tokio_postgres::error::SqlState::UNIQUE_VIOLATION,
            tokio_postgres::error::SqlState::DUPLICATE_OBJECT,
            tokio_postgres::error::SqlState::DUPLICATE_SCHEMA,
            tokio_postgres::error::SqlState::DUPLICATE_TABLE,
        ]
        .contains(code)
    })
}

async fn check_in(client: &Client, request: &ShardRequest) -> anyhow::Result<()> {
    let (index, count) = (request.shard.index as i32, request.shard.count as i32);
    let others: Vec<i32> = client
        .query(
            "SELECT DISTINCT shards FROM strata_control.rendezvous WHERE run_id = $1",
            &[&request.run_id],
        )
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect();
    if let Some(other) = others.iter().find(|shards| **shards != count) {
        bail!(
            "--shard {index}/{count}: run {} has shards that count {other} shards: a shard of \
             another run (give each run its own --run-id)",
            request.run_id
        );
    }
    let host = strata_recording::HostInfo::current().hostname;
    let pid = std::process::id() as i32;
    client
        .execute(
            "INSERT INTO strata_control.rendezvous (run_id, shard, shards, host, pid) \
             VALUES ($1, $2, $3, $4, $5)",
            &[&request.run_id, &index, &count, &host, &pid],
        )
        .await
        .map_err(|error| match is_a_collision(&error) {
            true => anyhow::anyhow!(
                "--shard {index}/{count}: shard {index} of run {} has already checked in (a \
                 shard started twice, or a run id used again: give another --run-id)",
                request.run_id
            ),
            false => anyhow::Error::new(error).context("checking in at the rendezvous"),
        })?;
    Ok(())
}

/// Waits until every shard has checked in; the start they agree on, Unix
/// seconds on the server's clock.
async fn wait_for_all(
    client: &Client,
    request: &ShardRequest,
    interrupt: &AtomicBool,
) -> anyhow::Result<f64> {
    let deadline = Instant::now() + request.rendezvous_timeout;
    loop {
        let rows = client
            .query(
                "SELECT shard, extract(epoch FROM checked_in_at)::float8 \
                 FROM strata_control.rendezvous WHERE run_id = $1",
                &[&request.run_id],
            )
            .await?;
        let arrived: Vec<u32> = rows.iter().map(|row| row.get::<_, i32>(0) as u32).collect();
        if arrived.len() as u32 >= request.shard.count {
            let last = rows
                .iter()
                .map(|row| row.get::<_, f64>(1))
                .fold(0.0, f64::max);
            return Ok(last + LEAD_S);
        }
        if interrupt.load(Ordering::Relaxed) {
            bail!("interrupted at the rendezvous");
        }
        if Instant::now() >= deadline {
            let missing: Vec<String> = (1..=request.shard.count)
                .filter(|shard| !arrived.contains(shard))
                .map(|shard| shard.to_string())
                .collect();
            bail!(
                "--rendezvous-timeout {:?}: shards {} of {} of run {} did not check in",
                request.rendezvous_timeout,
                missing.join(", "),
                request.shard.count,
                request.run_id
            );
        }
        tokio::time::sleep(POLL).await;
    }
}

/// What tells this server from another: its system identifier where the
/// role may read it, else `endpoint`.
async fn server_identity(client: &Client, endpoint: &str) -> String {
    match client
        .query_one(
            "SELECT system_identifier::text FROM pg_control_system()",
            &[],
        )
        .await
    {
        Ok(row) => format!("system_identifier {}", row.get::<_, String>(0)),
        Err(_) => format!("endpoint {endpoint}"),
    }
}

/// The server's clock less this machine's: its `clock_timestamp()`
/// against the middle of the round trip, from the quickest of five.
async fn clock_offset_s(client: &Client) -> anyhow::Result<f64> {
    let mut best: Option<(f64, f64)> = None;
    for _ in 0..5 {
        let sent = strata_core::time::unix_now_s();
        let row = client
            .query_one("SELECT extract(epoch FROM clock_timestamp())::float8", &[])
            .await?;
        let came_back = strata_core::time::unix_now_s();
        let server: f64 = row.get(0);
        let round_trip = came_back - sent;
        if best.is_none_or(|(quickest, _)| round_trip < quickest) {
            best = Some((round_trip, server - (sent + came_back) / 2.0));
        }
    }
    Ok(best.map_or(0.0, |(_, offset)| offset))
}
