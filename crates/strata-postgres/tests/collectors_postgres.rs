//! The `postgres` collector against a throwaway cluster: every counter is
//! there under its metric name, commits move `database_xact_commit`, and the
//! 10 Hz wait-event sampler sees sleeping and CPU-bound sessions for what
//! they are.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use strata_core::metrics::{Collected, Collector, Metric, MetricKind};
use strata_postgres::cluster::ThrowawayCluster;
use strata_postgres::collector::PostgresCollector;
use strata_postgres::connect::ConnectionTarget;
use strata_postgres::counters::snapshot;
use strata_recording::names::postgres;
use tokio::runtime::Runtime;

/// `series_key` → metric, of one collection.
fn collect(collector: &mut PostgresCollector) -> BTreeMap<String, Metric> {
    match collector.collect().expect("collecting") {
        Collected::Metrics { metrics } => metrics
            .into_iter()
            .map(|metric| (metric.series_key(), metric))
            .collect(),
        Collected::Absent { reason } => panic!("postgres layer absent: {reason}"),
        Collected::Partial { unreadable, .. } => panic!("postgres gave no numbers: {unreadable:?}"),
    }
}

fn value(metrics: &BTreeMap<String, Metric>, key: &str) -> f64 {
    metrics.get(key).map_or(0.0, |metric| metric.value)
}

fn wait_key(wait_type: &str, wait_event: &str) -> String {
    format!("wait_event_samples{{wait_event={wait_event},wait_event_type={wait_type}}}")
}

fn growth(before: &BTreeMap<String, Metric>, after: &BTreeMap<String, Metric>, key: &str) -> f64 {
    value(after, key) - value(before, key)
}

fn start(cluster: &ThrowawayCluster) -> PostgresCollector {
    let target = ConnectionTarget::parse(&cluster.connection_string()).unwrap();
    PostgresCollector::start(&target).expect("starting the collector")
}

#[test]
fn postgres_collector_reports_every_counter_and_commits_grow() {
    let runtime = Runtime::new().unwrap();
    let cluster = ThrowawayCluster::start(&cluster_options()).expect("starting cluster");
    let version_num = cluster.version_num();
    let mut collector = start(&cluster);
    assert_eq!(collector.layer(), "postgres");
    let worker = runtime.block_on(client_for(&cluster.connection_string()));

    let keys = runtime
        .block_on(snapshot(&worker, version_num))
        .unwrap()
        .values
        .into_keys();
    let first = collect(&mut collector);
    for key in keys {
        let name = key.replace('.', "_");
        let metric = first
            .get(&format!("{name}{{}}"))
            .unwrap_or_else(|| panic!("no {name} for {key}; have {:?}", first.keys()));
        assert_eq!(metric.kind, MetricKind::Counter, "{name}");
    }
    let read_by_the_report = [
        postgres::BLOCKS_READ,
        postgres::BLOCKS_HIT,
        postgres::COMMITS,
        postgres::TEMP_FILES,
        postgres::TEMP_BYTES,
        postgres::BLOCK_READ_TIME_MS,
        postgres::WAL_BYTES,
        postgres::WAL_WRITES,
        postgres::WAL_SYNCS,
        postgres::WAL_WRITE_TIME_MS,
        postgres::WAL_SYNC_TIME_MS,
        postgres::SAMPLES,
        postgres::ACTIVE_SESSION_SAMPLES,
    ];
    for name in read_by_the_report {
        assert!(
            first.contains_key(&format!("{name}{{}}")),
            "the report reads {name}, which the collector does not write"
        );
    }
    assert_eq!(value(&first, "wait_sampling_sees_all_sessions{}"), 1.0);

    const COMMITS: usize = 50;
    runtime.block_on(async {
        worker
            .batch_execute("CREATE TABLE t (n int)")
            .await
            .unwrap();
        for n in 0..COMMITS {
            worker
                .simple_query(&format!("INSERT INTO t VALUES ({n})"))
                .await
                .unwrap();
        }
        if version_num >= 150000 {
            worker
                .simple_query("SELECT pg_stat_force_next_flush()")
                .await
                .unwrap();
        }
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let now = collect(&mut collector);
        let commits = growth(&first, &now, "database_xact_commit{}");
        if commits >= COMMITS as f64 {
            assert!(growth(&first, &now, "wal_bytes{}") > 0.0);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "database_xact_commit grew by {commits}, expected ≥ {COMMITS}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn postgres_wait_events_count_two_sleeping_sessions() {
    let runtime = Runtime::new().unwrap();
    let cluster = ThrowawayCluster::start(&cluster_options()).expect("starting cluster");
    let mut collector = start(&cluster);
    let sleepers: Vec<_> = (0..2)
        .map(|_| runtime.block_on(client_for(&cluster.connection_string())))
        .collect();

    let before = collect(&mut collector);
    let started = Instant::now();
    let tasks: Vec<_> = sleepers
        .into_iter()
        .map(|client| {
            runtime.spawn(async move {
                client.simple_query("SELECT pg_sleep(1.5)").await.unwrap();
            })
        })
        .collect();
    for task in tasks {
        runtime.block_on(task).unwrap();
    }
    let after = collect(&mut collector);
    let elapsed = started.elapsed();

    let pg_sleep = growth(&before, &after, &wait_key("Timeout", "PgSleep"));
    let active = growth(&before, &after, "active_session_samples{}");
    let samples = growth(&before, &after, "samples{}");
    let report = format!(
        "over {elapsed:?}: PgSleep {pg_sleep}, active {active}, samples {samples}; after {:?}",
        after.keys().collect::<Vec<_>>()
    );
    assert!(pg_sleep >= 10.0, "{report}");
    assert!(active >= 10.0, "{report}");
    assert!(samples >= 8.0, "10 Hz over 1.5 s: {report}");
    assert!(
        pg_sleep / active >= 0.8,
        "sleepers mostly in PgSleep: {report}"
    );
    // Two sessions at most per sample: the collector's own are not counted.
    assert!(active <= 2.0 * samples, "{report}");
}

#[test]
fn postgres_cpu_bound_session_counts_as_cpu_or_run_queue() {
    let runtime = Runtime::new().unwrap();
    let cluster = ThrowawayCluster::start(&cluster_options()).expect("starting cluster");
    let mut collector = start(&cluster);
    let spinner = runtime.block_on(client_for(&cluster.connection_string()));

    let before = collect(&mut collector);
    let started = Instant::now();
    runtime
        .block_on(spinner.simple_query("SELECT count(*) FROM generate_series(1, 30000000)"))
        .unwrap();
    let elapsed = started.elapsed();
    let after = collect(&mut collector);

    let cpu = growth(&before, &after, &wait_key("CPU", "CPU or run queue"));
    let active = growth(&before, &after, "active_session_samples{}");
    let report = format!(
        "over {elapsed:?}: CPU {cpu}, active {active}; after {:?}",
        after
            .iter()
            .filter(|(key, _)| key.starts_with("wait_event_samples"))
            .map(|(key, metric)| format!("{key}={}", metric.value))
            .collect::<Vec<_>>()
    );
    assert!(cpu >= 5.0, "{report}");
    assert!(
        cpu / active >= 0.5,
        "a spinning session is mostly on CPU: {report}"
    );
}

#[test]
fn postgres_collector_reports_a_lost_connection_without_the_password() {
    let runtime = Runtime::new().unwrap();
    let cluster = ThrowawayCluster::start(&cluster_options()).expect("starting cluster");
    let conninfo = format!("{} password=strata-secret-pw", cluster.connection_string());
    let target = ConnectionTarget::parse(&conninfo).unwrap();
    let mut collector = PostgresCollector::start(&target).expect("starting the collector");
    collect(&mut collector);

    let killer = runtime.block_on(client_for(&cluster.connection_string()));
    runtime
        .block_on(killer.simple_query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
        ))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let error = loop {
        match collector.collect() {
            Err(error) => break error,
            Ok(_) => assert!(Instant::now() < deadline, "collect() kept succeeding"),
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let text = format!("{error:#} {error:?}");
    assert!(text.contains("PostgreSQL at host="), "{text}");
    assert!(!text.contains("strata-secret-pw"), "{text}");
    drop(collector);
}

#[test]
fn postgres_collector_fails_fast_for_an_unreachable_server() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let target = ConnectionTarget::parse(&format!(
        "host=127.0.0.1 port={port} user=nobody password=strata-secret-pw"
    ))
    .unwrap();
    let started = Instant::now();
    let error = PostgresCollector::start(&target).unwrap_err();
    let text = format!("{error:#}");
    assert!(started.elapsed() < Duration::from_secs(6), "{text}");
    assert!(text.contains(&format!("port={port}")), "{text}");
    assert!(!text.contains("strata-secret-pw"), "{text}");
}
