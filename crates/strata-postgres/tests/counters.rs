//! Raw counters from a real server: every documented key is there for the
//! server's version, and each grows with the work that should move it.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use strata_postgres::cluster::{ClusterOptions, ThrowawayCluster};
use strata_postgres::counters::{snapshot, DatabaseCounters};
use tokio_postgres::Client;

const COMMITS: usize = 200;

/// The keys the crate documents, written out per version family.
fn expected_keys(version_num: u32) -> Vec<String> {
    let mut keys: Vec<&str> = vec![
        "database.blks_read",
        "database.blks_hit",
        "database.xact_commit",
        "database.xact_rollback",
        "database.blk_read_time_ms",
        "database.blk_write_time_ms",
        "database.temp_files",
        "database.temp_bytes",
        "database.tup_returned",
        "database.tup_fetched",
        "database.tup_updated",
        "database.deadlocks",
        "wal.records",
        "wal.fpi",
        "wal.bytes",
        "wal.buffers_full",
        "wal.write",
        "wal.sync",
        "wal.write_time_ms",
        "wal.sync_time_ms",
        "checkpoint.timed",
        "checkpoint.requested",
        "checkpoint.write_time_ms",
        "checkpoint.sync_time_ms",
        "checkpoint.buffers_written",
        "bgwriter.buffers_clean",
    ];
    if version_num < 170000 {
        keys.extend(["bgwriter.buffers_backend", "bgwriter.buffers_backend_fsync"]);
    }
    if version_num >= 160000 {
        keys.extend([
            "io.client_backend.reads",
            "io.client_backend.writes",
            "io.client_backend.extends",
            "io.client_backend.fsyncs",
            "io.client_backend.read_time_ms",
            "io.client_backend.write_time_ms",
        ]);
    }
    if version_num >= 180000 {
        keys.extend([
            "io.client_backend.read_bytes",
            "io.client_backend.write_bytes",
            "io.client_backend.extend_bytes",
            "io.io_worker.reads",
        ]);
    }
    keys.into_iter().map(String::from).collect()
}

/// Makes the worker's pending statistics visible to other sessions now: from
/// 15 a session flushes at most once a second, and when idle only after 10 s.
async fn flush_statistics(worker: &Client, version_num: u32) {
    if version_num >= 150000 {
        worker
            .simple_query("SELECT pg_stat_force_next_flush()")
            .await
            .unwrap();
    }
}

/// Polls the observer's snapshots until `grown` holds for the delta since
/// `before`. Each poll commits a few transactions of its own.
async fn wait_for_growth(
    observer: &Client,
    version_num: u32,
    before: &DatabaseCounters,
    grown: impl Fn(&BTreeMap<String, f64>) -> bool,
) -> BTreeMap<String, f64> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let delta = snapshot(observer, version_num).await.unwrap().delta(before);
        if grown(&delta) {
            return delta;
        }
        assert!(
            Instant::now() < deadline,
            "counters did not grow as expected: {delta:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test]
async fn snapshot_has_every_documented_key_for_postgresql_15() {
    has_every_documented_key(cluster_options(), 150000).await;
}

#[tokio::test]
async fn snapshot_has_every_documented_key_for_postgresql_18() {
    has_every_documented_key(pg18_cluster_options(), 180000).await;
}

async fn has_every_documented_key(options: ClusterOptions, major: u32) {
    let cluster = ThrowawayCluster::start(&options).expect("starting cluster");
    assert_eq!(cluster.version_num() / 10_000, major / 10_000);
    let client = client_for(&cluster.connection_string()).await;
    let version_num = strata_postgres::counters::server_version_num(&client)
        .await
        .unwrap();
    assert_eq!(version_num, cluster.version_num());
    let values = snapshot(&client, version_num).await.unwrap().values;
    let missing: Vec<String> = expected_keys(version_num)
        .into_iter()
        .filter(|key| !values.contains_key(key))
        .collect();
    assert!(
        missing.is_empty(),
        "missing for {version_num}: {missing:?}; have {:?}",
        values.keys()
    );
}

#[tokio::test]
async fn counters_grow_with_uncached_reads_and_committed_inserts_on_postgresql_15() {
    counters_grow_with_uncached_reads_and_committed_inserts(cluster_options()).await;
}

/// 18 counts read requests and their bytes in pg_stat_io, and WAL writes
/// and syncs there instead of pg_stat_wal.
#[tokio::test]
async fn counters_grow_with_uncached_reads_and_committed_inserts_on_postgresql_18() {
    let delta =
        counters_grow_with_uncached_reads_and_committed_inserts(pg18_cluster_options()).await;
    let reads = delta["io.client_backend.reads"] + delta["io.io_worker.reads"];
    let read_bytes = delta["io.client_backend.read_bytes"] + delta["io.io_worker.read_bytes"];
    assert!(reads > 0.0, "{delta:?}");
    assert!(
        read_bytes >= reads * 8192.0 && read_bytes <= delta["database.blks_read"] * 8192.0,
        "{delta:?}"
    );
}

/// The delta over the scan.
async fn counters_grow_with_uncached_reads_and_committed_inserts(
    mut options: ClusterOptions,
) -> BTreeMap<String, f64> {
    options.shared_buffers_bytes = 16 << 20;
    let cluster = ThrowawayCluster::start(&options).expect("starting cluster");
    let version_num = cluster.version_num();
    let worker = client_for(&cluster.connection_string()).await;
    let observer = client_for(&cluster.connection_string()).await;
    worker
        .batch_execute(
            "CREATE TABLE scanned AS SELECT g, repeat('x', 500) AS filler \
             FROM generate_series(1, 80000) g; CREATE TABLE inserted (n int)",
        )
        .await
        .unwrap();
    let table_blocks: i64 = worker
        .query_one("SELECT pg_relation_size('scanned') / 8192", &[])
        .await
        .unwrap()
        .get(0);
    assert!(
        table_blocks * 8192 > 2 * (16 << 20),
        "the table must not fit in shared_buffers"
    );

    let before = snapshot(&observer, version_num).await.unwrap();
    worker
        .simple_query("SELECT count(*) FROM scanned")
        .await
        .unwrap();
    flush_statistics(&worker, version_num).await;
    let scan = wait_for_growth(&observer, version_num, &before, |delta| {
        delta["database.blks_read"] >= table_blocks as f64 / 2.0
    })
    .await;
    assert!(scan["database.blk_read_time_ms"] > 0.0, "{scan:?}");

    let before = snapshot(&observer, version_num).await.unwrap();
    worker
        .simple_query("SET synchronous_commit = on")
        .await
        .unwrap();
    for n in 0..COMMITS {
        worker
            .simple_query(&format!("INSERT INTO inserted VALUES ({n})"))
            .await
            .unwrap();
    }
    flush_statistics(&worker, version_num).await;
    let commits = COMMITS as f64;
    wait_for_growth(&observer, version_num, &before, |delta| {
        delta["database.xact_commit"] >= commits
            && delta["wal.bytes"] >= commits * 50.0
            && delta["wal.sync"] >= commits / 2.0
            && delta["wal.write"] >= commits / 2.0
    })
    .await;
    scan
}
