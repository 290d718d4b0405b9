//! SLOB sessions against a throwaway cluster: read-only and update runs,
//! batch mode, stopping, losing the server, and many thinking sessions.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::slob::{client, load, number, start_server};
use strata_postgres::sessions::Driver;
use strata_slob::session::{AccessDistribution, Hotspot, Progress, RunOutcome, StopAfter};
use strata_testkit::slob::{driver_options, plan, read_only_workload, timed};
use tokio::time::Instant;

async fn run(driver: Driver) -> (RunOutcome, Arc<Progress>) {
    let progress = Arc::new(Progress::default());
    let stop = Arc::new(AtomicBool::new(false));
    let outcome = driver
        .run(Instant::now(), stop, Arc::clone(&progress))
        .await;
    (outcome, progress)
}

fn assert_no_failures(outcome: &RunOutcome) {
    assert_eq!(outcome.sessions_failed, 0, "{:?}", outcome.failures);
    assert!(outcome.failures.is_empty());
}

/// A server counter once the sessions' backends have reported theirs
/// (backends flush statistics at exit, at most once a second while busy).
async fn counter_after(db: &tokio_postgres::Client, sql: &str, before: i64) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let now = number(db, sql).await;
        if now > before || Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

const BLKS_READ: &str = "SELECT blks_read FROM pg_stat_database WHERE datname = current_database()";
const DEADLOCKS: &str = "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()";
const WAL_SYNCS: &str = "SELECT wal_sync FROM pg_stat_wal";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_run_reads_blocks_from_outside_shared_buffers() {
    let server = start_server(16 << 20, &[]);
    let plan = plan(2, 4096);
    load(&server.config, &plan, 2).await;
    let db = client(&server.config).await;
    let blocks_read_before = number(&db, BLKS_READ).await;
    let options = driver_options(plan, read_only_workload(64), 2, timed(1000, 2000));
    let driver = Driver::connect(&server.config, options).await.unwrap();
    assert_eq!(driver.session_count(), 4);
    let (outcome, progress) = run(driver).await;
    assert_no_failures(&outcome);
    assert!(outcome.loops > 0);
    assert_eq!(outcome.sessions_alive_through_window, 4);
    assert_eq!(outcome.select.count(), outcome.loops);
    assert_eq!(outcome.rows_selected, outcome.loops * 64);
    assert_eq!(outcome.per_second.len(), 2);
    assert_eq!(
        outcome
            .per_second
            .iter()
            .map(|second| second.loops)
            .sum::<u64>(),
        outcome.loops
    );
    assert_eq!(
        outcome.window_end - outcome.window_start,
        Duration::from_secs(2)
    );
    assert!(
        progress.loops.load(Ordering::Relaxed) > outcome.loops,
        "warm-up loops are not counted"
    );
    assert!(!outcome.interrupted);
    let blocks_read = counter_after(&db, BLKS_READ, blocks_read_before).await - blocks_read_before;
    assert!(blocks_read > 0, "pg_stat_database.blks_read did not grow");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_run_commits_without_deadlocks() {
    let server = start_server(32 << 20, &[]);
    let plan = plan(1, 2048);
    load(&server.config, &plan, 1).await;
    let db = client(&server.config).await;
    let deadlocks_before = number(&db, DEADLOCKS).await;
    let wal_syncs_before = number(&db, WAL_SYNCS).await;
    let mut workload = read_only_workload(32);
    workload.update_pct = 50.0;
    workload.update_work_unit = 64;
    let options = driver_options(plan.clone(), workload, 4, timed(500, 2500));
    let driver = Driver::connect(&server.config, options).await.unwrap();
    let (outcome, _) = run(driver).await;
    assert_no_failures(&outcome);
    assert_eq!(outcome.sessions_alive_through_window, 4);
    let hot_share = number(
        &db,
        "SELECT (n_tup_hot_upd * 100 / greatest(n_tup_upd, 1))::bigint FROM pg_stat_user_tables WHERE relname = 'slob'",
    )
    .await;
    assert!(
        hot_share >= 50,
        "only {hot_share}% of the updates were HOT (in place)"
    );
    assert!(outcome.commit.count() > 0 && outcome.update.count() > 0);
    assert_eq!(
        outcome.select.count() + outcome.commit.count(),
        outcome.loops
    );
    assert!(outcome.rows_updated >= outcome.update.count() * 64);
    let wal_syncs = counter_after(&db, WAL_SYNCS, wal_syncs_before).await;
    assert!(
        wal_syncs > wal_syncs_before,
        "pg_stat_wal.wal_sync did not grow"
    );
    assert_eq!(
        number(&db, DEADLOCKS).await,
        deadlocks_before,
        "deadlocks happened"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_loops_end_by_themselves_and_stop_ends_a_run() {
    let server = start_server(32 << 20, &[]);
    let mut plan = plan(1, 512);
    plan.single_schema = true;
    load(&server.config, &plan, 1).await;
    let mut options = driver_options(plan, read_only_workload(16), 1, StopAfter::WorkLoops(5));
    options.sessions = Some(3);
    let driver = Driver::connect(&server.config, options.clone())
        .await
        .unwrap();
    assert_eq!(driver.session_count(), 3);
    let (outcome, progress) = run(driver).await;
    assert_no_failures(&outcome);
    assert_eq!(outcome.loops, 15);
    assert_eq!(progress.loops.load(Ordering::Relaxed), 15);
    assert_eq!(outcome.sessions_alive_through_window, 3);

    options.stop_after = StopAfter::WorkLoops(u64::MAX);
    let driver = Driver::connect(&server.config, options).await.unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stopper = {
        let stop = Arc::clone(&stop);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            stop.store(true, Ordering::Relaxed);
        })
    };
    let began = Instant::now();
    let outcome = driver.run(began, stop, Arc::new(Progress::default())).await;
    stopper.await.unwrap();
    assert!(
        began.elapsed() < Duration::from_millis(1500),
        "took {:?}",
        began.elapsed()
    );
    assert!(outcome.interrupted && outcome.loops > 0);
    assert_no_failures(&outcome);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_the_server_fails_the_sessions_with_a_clear_error() {
    let server = start_server(32 << 20, &[]);
    let plan = plan(1, 256);
    load(&server.config, &plan, 1).await;
    let options = driver_options(plan, read_only_workload(16), 4, timed(0, 30_000));
    let driver = Driver::connect(&server.config, options).await.unwrap();
    let began = Instant::now();
    let kill = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        server.cluster.kill_postmaster();
    };
    let progress = Arc::new(Progress::default());
    let (outcome, ()) = tokio::join!(
        driver.run(began, Arc::new(AtomicBool::new(false)), progress),
        kill
    );
    let took = began.elapsed();
    eprintln!(
        "run ended {took:?} after start; first failure: {:?}",
        outcome.failures.first()
    );
    assert!(
        took < Duration::from_secs(8),
        "the run took {took:?} after the server died"
    );
    assert_eq!(outcome.sessions_failed, 4, "{:?}", outcome.failures);
    assert_eq!(outcome.sessions_alive_through_window, 0);
    for failure in &outcome.failures {
        assert!(failure.error.contains("lost the server"), "{failure:?}");
        assert!(failure.seconds_from_start > 1.0, "{failure:?}");
    }
    assert!(outcome.loops > 0 && !outcome.interrupted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_thinking_sessions_run_from_one_process() {
    let server = start_server(32 << 20, &[("max_connections", "250")]);
    let plan = plan(1, 1024);
    load(&server.config, &plan, 1).await;
    let mut workload = read_only_workload(8);
    workload.think_time = Some((Duration::from_millis(50), Duration::from_millis(100)));
    let options = driver_options(plan, workload, 200, timed(500, 2500));
    let driver = Driver::connect(&server.config, options).await.unwrap();
    assert_eq!(driver.session_count(), 200);
    let (outcome, _) = run(driver).await;
    assert_no_failures(&outcome);
    assert_eq!(outcome.sessions_started, 200);
    assert_eq!(outcome.sessions_alive_through_window, 200);
    let loops_per_second = outcome.loops as f64 / 2.5;
    eprintln!(
        "200 thinking sessions: {loops_per_second:.0} loops/s, select p99 {} us",
        outcome.select.percentile_ns(99.0) / 1000
    );
    assert!(
        loops_per_second > 1000.0,
        "{loops_per_second} loops/s from 200 sessions thinking 75 ms"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_whose_backends_are_terminated_reconnect_and_go_on() {
    let server = start_server(32 << 20, &[]);
    let plan = plan(1, 256);
    load(&server.config, &plan, 1).await;
    let options = driver_options(plan, read_only_workload(16), 3, timed(0, 2000));
    let driver = Driver::connect(&server.config, options).await.unwrap();
    let db = client(&server.config).await;
    let terminate = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        number(
            &db,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'strata slob'",
        )
        .await
    };
    let progress = Arc::new(Progress::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (outcome, terminated) = tokio::join!(driver.run(Instant::now(), stop, progress), terminate);
    assert_eq!(terminated, 3);
    assert_no_failures(&outcome);
    assert_eq!(outcome.reconnects, 3);
    assert_eq!(
        outcome.sessions_alive_through_window, 0,
        "they were offline inside the window"
    );
    let late_loops: u64 = outcome.per_second[1].loops;
    assert!(
        late_loops > 0,
        "no loops after reconnecting: {:?}",
        outcome.per_second
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_workload_scans_updates_and_favours_the_hot_schema() {
    let server = start_server(32 << 20, &[]);
    let mut plan = plan(2, 512);
    plan.scan_table_blocks = 32;
    load(&server.config, &plan, 2).await;
    let mut workload = read_only_workload(16);
    workload.update_pct = 20.0;
    workload.scan_pct = 10.0;
    workload.hotspot = Some(Hotspot {
        offset_blocks: 100,
        size_blocks: 50,
        every: 4,
    });
    workload.hot_schema_every = Some(2);
    workload.distribution = AccessDistribution::Zipf { theta: 0.99 };
    let options = driver_options(plan, workload, 2, StopAfter::WorkLoops(40));
    let driver = Driver::connect(&server.config, options).await.unwrap();
    let (outcome, _) = run(driver).await;
    assert_no_failures(&outcome);
    assert_eq!(outcome.loops, 160);
    assert!(outcome.scan.count() > 0 && outcome.update.count() > 0);
    let loops_counted = outcome.select.count() + outcome.commit.count() + outcome.scan.count();
    assert_eq!(loops_counted, 160);
    assert_eq!(
        outcome.sql_statements,
        outcome.select.count() + outcome.scan.count() + 3 * outcome.update.count()
    );

    let db = client(&server.config).await;
    let index_scans = |schema: &str| {
        format!("SELECT coalesce(sum(idx_scan), 0)::bigint FROM pg_stat_user_tables WHERE schemaname = '{schema}'")
    };
    let expected_index_scans = (outcome.select.count() + outcome.update.count()) as i64;
    let deadline = Instant::now() + Duration::from_secs(3);
    let (hot, other) = loop {
        let hot = number(&db, &index_scans("strata_slob_1")).await;
        let other = number(&db, &index_scans("strata_slob_2")).await;
        if hot + other >= expected_index_scans || Instant::now() > deadline {
            break (hot, other);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        hot > 2 * other,
        "schema 1 had {hot} index scans, schema 2 {other}"
    );
}
