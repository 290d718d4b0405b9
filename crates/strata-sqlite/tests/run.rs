//! Runs on real SQLite files in temporary directories, measured from the
//! real `/proc/diskstats` of the devices under them.

mod common;

use common::config;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use strata_run::outcome::PageCacheChoice;
use strata_slob::session::StopAfter;
use strata_sqlite::{run, setup, SetupOptions, SqliteDatabase};
use strata_testkit::files::entries;
use strata_testkit::observer::Quiet;
use strata_testkit::slob::{plan, timed};

fn temporary_in(dir: &tempfile::TempDir) -> SqliteDatabase {
    SqliteDatabase::Temporary {
        work_dir: strata_db::workdir::WorkDir {
            path: dir.path().to_path_buf(),
            reason: "the test's directory".into(),
        },
    }
}

#[test]
fn updates_write_and_sync_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slob.sqlite");
    let options = SetupOptions {
        path: path.clone(),
        plan: plan(2, 1024),
        replace: false,
        page_bytes: None,
    };
    setup(&options, &mut |_| {}, &AtomicBool::new(false)).unwrap();
    let wal = dir.path().join("slob.sqlite-wal");
    let wal_before = std::fs::metadata(&wal).map_or(0, |meta| meta.len());
    let keeps_the_wal = rusqlite::Connection::open(&path).unwrap();
    keeps_the_wal
        .query_row("SELECT count(*) FROM sqlite_schema", [], |row| {
            row.get::<_, i64>(0)
        })
        .unwrap();
    let config = config(
        SqliteDatabase::File(path.clone()),
        plan(2, 1024),
        100.0,
        timed(200, 1000),
    );
    let figures = run(&config, &mut Quiet, &AtomicBool::new(false))
        .unwrap()
        .figures
        .unwrap();
    let wal_after = std::fs::metadata(&wal).unwrap().len();
    let commits = figures.workload.operations["commit"].latency.count;
    let writes: u64 = figures
        .devices
        .iter()
        .map(|device| device.write_requests)
        .sum();
    let flushes: u64 = figures
        .devices
        .iter()
        .map(|device| device.flush_requests)
        .sum();
    eprintln!("commits {commits}, device write requests {writes}, flushes {flushes}, WAL {wal_before} -> {wal_after} bytes");
    // An update that ends just before the window opens has its COMMIT
    // counted inside it: at most one such commit per session.
    let sessions = u64::from(figures.sessions.started);
    assert!(
        commits > 0 && figures.workload.rows_updated >= commits.saturating_sub(sessions) * 8,
        "{} rows updated for {commits} commits",
        figures.workload.rows_updated
    );
    assert!(
        writes > 0 && flushes > 0,
        "writes {writes}, flushes {flushes}"
    );
    assert!(wal_after > wal_before, "WAL {wal_before} -> {wal_after}");
    drop(keeps_the_wal);
}

#[test]
fn work_loops_are_exact_and_every_session_does_them() {
    let parent = tempfile::tempdir().unwrap();
    let mut config = config(
        temporary_in(&parent),
        plan(2, 512),
        25.0,
        StopAfter::WorkLoops(7),
    );
    config.driver.threads_per_schema = 2;
    let figures = run(&config, &mut Quiet, &AtomicBool::new(false))
        .unwrap()
        .figures
        .unwrap();
    assert_eq!(figures.workload.loops, 28);
    let operations = &figures.workload.operations;
    assert_eq!(
        operations["select"].latency.count + operations["update"].latency.count,
        28
    );
    assert_eq!(
        operations["update"].latency.count,
        operations["commit"].latency.count
    );
    assert_eq!(figures.sessions.started, 4);
    assert_eq!(figures.sessions.failed, 0);
    assert!(entries(parent.path()).is_empty());
}

#[test]
fn bad_options_are_refused_before_any_file_is_made() {
    let parent = tempfile::tempdir().unwrap();
    let mut limited = config(temporary_in(&parent), plan(1, 64), 0.0, timed(0, 100));
    limited.page_cache = PageCacheChoice::Limit(1 << 20);
    let mut setup_only = config(temporary_in(&parent), plan(1, 64), 0.0, timed(0, 100));
    setup_only.setup_only = true;
    let too_many_updates = config(temporary_in(&parent), plan(1, 64), 150.0, timed(0, 100));
    let mut scan_without_table = config(temporary_in(&parent), plan(1, 64), 0.0, timed(0, 100));
    scan_without_table.driver.workload.scan_pct = 10.0;
    let mut odd_page = config(temporary_in(&parent), plan(1, 64), 0.0, timed(0, 100));
    odd_page.page_bytes = Some(5000);
    for (bad, says) in [
        (limited, "cgroup"),
        (setup_only, "--db"),
        (too_many_updates, "update_pct"),
        (scan_without_table, "scan table"),
        (odd_page, "power of two"),
    ] {
        let Err(error) = run(&bad, &mut Quiet, &AtomicBool::new(false)) else {
            panic!("{says}: accepted");
        };
        assert!(format!("{error:#}").contains(says), "{error:#}");
    }
    assert!(entries(parent.path()).is_empty());
}

#[test]
fn an_interrupt_ends_the_run_early_and_still_removes_the_file() {
    let parent = tempfile::tempdir().unwrap();
    let mut config = config(temporary_in(&parent), plan(2, 512), 0.0, timed(100, 60_000));
    config.record = Some(
        strata_run::recorder::RunRecorder::create(
            &parent.path().join("run.strata"),
            &config.command,
            &serde_json::json!({}),
            strata_recording::Existing::Refuse,
        )
        .unwrap(),
    );
    let interrupt = AtomicBool::new(false);
    let began = std::time::Instant::now();
    let outcome = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(1500));
            interrupt.store(true, Ordering::Relaxed);
        });
        run(&config, &mut Quiet, &interrupt).unwrap()
    });
    assert!(began.elapsed() < Duration::from_secs(20));
    let figures = outcome.figures.unwrap();
    assert!(figures.interrupted && figures.workload.loops > 0);
    let left: Vec<_> = entries(parent.path());
    assert_eq!(
        left,
        vec![parent.path().join("run.strata")],
        "only the Recording stays"
    );
    let recording = strata_recording::Recording::read(&parent.path().join("run.strata")).unwrap();
    assert_eq!(recording.header.kind, strata_recording::Kind::Run);
    assert_eq!(
        recording.header.environment.engine.as_deref(),
        Some("sqlite")
    );
    assert_eq!(
        recording.header.environment.server.as_deref(),
        Some("database file")
    );
}
