//! Runs on throwaway `mariadbd` servers made by the tests (each in its own
//! directory under cargo's scratch space): one row per page from InnoDB's
//! own counts, physical reads that the devices and InnoDB agree on, redo
//! writes and syncs from updates, and nothing left behind — also after an
//! error.

mod common;

use common::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use strata_mariadb::{run, MariaDbServer, ThrowawayServer};
use strata_recording::{Kind, Record, Recording};
use strata_run::outcome::RunObserver;
use strata_slob::load::LoadProgress;
use strata_testkit::observer::Quiet;
use strata_testkit::slob::plan;

/// One throwaway server at a time, so one test's loading does not show in
/// another's device counts.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_read_run_on_a_throwaway_server_reads_one_page_per_key_from_the_device() {
    let _alone = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let parent = parent_dir().join("read");
    std::fs::create_dir_all(&parent).unwrap();
    let recording = tempfile::NamedTempFile::new_in(&parent).unwrap();
    let mut config = config(
        MariaDbServer::Throwaway(server_options(&parent)),
        driver(plan(2, 2048), 0.0, 1),
    );
    config.record = Some(
        strata_run::recorder::RunRecorder::create(
            recording.path(),
            &config.command,
            &serde_json::json!({}),
            strata_recording::Existing::Replace,
        )
        .unwrap(),
    );
    let outcome = run(&config, &mut Quiet, &AtomicBool::new(false)).expect("the run");

    let setup = outcome.setup.as_ref().unwrap();
    assert_eq!(setup.page_bytes, 16384);
    for table in &setup.layout {
        assert!(table.one_row_per_page, "{table:?}");
        assert_eq!(
            table.leaf_pages_from,
            "mysql.innodb_index_stats n_leaf_pages"
        );
        assert!((2048..=2050).contains(&table.leaf_pages), "{table:?}");
    }
    let environment = &outcome.environment;
    assert_eq!(environment.flush_method, "O_DIRECT");
    assert!(
        environment.page_cache.starts_with("bypassed"),
        "{}",
        environment.page_cache
    );
    assert_eq!(environment.buffer_pool_bytes, 16 << 20);
    assert!(
        !environment.devices.data.is_empty(),
        "{:?}",
        environment.device_note
    );

    let figures = outcome.figures.as_ref().unwrap();
    let innodb = figures.innodb.as_ref().expect("InnoDB counters");
    let reads = figures.reads.as_ref().unwrap();
    let selects = figures.run.workload.operations["select"].latency.count;
    eprintln!(
        "selects {selects}, rows {}, pages read {}, InnoDB read requests {}, device read requests {}, bytes InnoDB {} device {}",
        figures.run.workload.rows_selected, innodb.pages_read, innodb.read_requests,
        reads.device_read_requests, innodb.read_bytes, reads.device_read_bytes
    );
    assert!(
        selects > 0 && figures.run.sessions.failed == 0,
        "{:?}",
        figures.run.sessions
    );
    assert!(innodb.read_requests > 100.0, "{innodb:?}");
    // One page per request (no read-ahead on random reads); a read in
    // flight at an edge is counted as a request on one side and as a page
    // on the other, so they may differ by the sessions' number, and
    // InnoDB's own background reads (statistics, purge) add a few: seen
    // here, 5 more requests than pages over 29,514.
    assert!(
        innodb.pages_read + 2.0 + 0.001 * innodb.read_requests >= innodb.read_requests,
        "{innodb:?}"
    );
    assert!(
        innodb.pages_read <= 1.05 * innodb.read_requests + 2.0,
        "{innodb:?}"
    );
    // The buffer pool holds a quarter of the 64 MiB data set: most rows
    // read are pages read from the device.
    assert!(
        innodb.pages_read >= 0.5 * figures.run.workload.rows_selected as f64,
        "{innodb:?}"
    );
    eprintln!("{reads:?}");
    let ratio = reads.device_requests_per_innodb_request;
    assert!(
        (0.5..=1.5).contains(&ratio),
        "device {} vs InnoDB {}",
        reads.device_read_requests,
        innodb.read_requests
    );
    let server_ratio = reads
        .server_bytes_per_innodb_byte
        .expect("mariadbd's own reads");
    assert!((0.9..=1.1).contains(&server_ratio), "{reads:?}");

    assert!(leftovers(&parent).is_empty(), "{:?}", leftovers(&parent));
    let pid = environment.throwaway.as_ref().unwrap().pid;
    assert!(!mariadbd_alive(pid), "mariadbd {pid} still runs");
    check_recording(recording.path());
}

fn check_recording(path: &std::path::Path) {
    let recording = Recording::read(path).unwrap();
    assert_eq!(recording.header.kind, Kind::Run);
    assert_eq!(
        recording.header.environment.engine.as_deref(),
        Some("mariadb")
    );
    let types: Vec<&str> = recording.records().map(Record::type_name).collect();
    for record in ["run_second", "window_device", "window_database", "layers"] {
        assert!(types.contains(&record), "no {record} record: {types:?}");
    }
    assert!(recording
        .layers()
        .any(|sample| sample.values("mariadb").is_some()));
    let result = recording.run_result().expect("a run_result record");
    let engine = result.engine_figures.as_ref().expect("InnoDB's figures");
    assert!(engine["innodb"]["read_requests"].as_f64().unwrap() > 0.0);
    assert!(!result.histograms.select_lat_ns_hdr.is_empty());
}

#[test]
fn updates_write_and_sync_the_redo_log_scans_run_and_the_server_goes_away() {
    let _alone = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let parent = parent_dir().join("update");
    std::fs::create_dir_all(&parent).unwrap();
    let server = ThrowawayServer::start(&server_options(&parent), &AtomicBool::new(false)).unwrap();
    let dir = server.info().directory.clone();
    let mut driver = driver(plan(1, 512), 90.0, 2);
    driver.plan.scan_table_blocks = 256;
    driver.workload.scan_pct = 10.0;
    let config = config(
        MariaDbServer::External(server.target("strata_slob")),
        driver,
    );
    let outcome = run(&config, &mut Quiet, &AtomicBool::new(false)).expect("the run");
    let setup = outcome.setup.as_ref().unwrap();
    let scan_table = setup
        .layout
        .iter()
        .find(|table| table.table == "strata_slob_1_scan");
    assert!(
        scan_table.is_some_and(|table| table.one_row_per_page),
        "{:?}",
        setup.layout
    );
    let figures = outcome.figures.unwrap();
    assert!(figures.run.workload.operations["scan"].latency.count > 0);
    let innodb = figures.innodb.unwrap();
    eprintln!(
        "commits {}, log writes {}, log bytes {}, data fsyncs {}, log fsyncs {:?}",
        innodb.commits,
        innodb.log_writes,
        innodb.log_written_bytes,
        innodb.data_fsyncs,
        innodb.log_fsyncs
    );
    let commits = figures.run.workload.operations["commit"].latency.count as f64;
    assert!(commits > 10.0, "{commits}");
    // The start edge reads InnoDB's counters after the window began: the
    // commits the sessions finished in between, and the one each session
    // had in flight, count for the sessions only.
    let run = &figures.run;
    let before_the_edge =
        (commits / run.window_s * run.start_edge_late_s).ceil() + f64::from(run.sessions.started);
    assert!(
        innodb.commits >= commits - before_the_edge,
        "{} vs {commits}, start edge {:.3} s late",
        innodb.commits,
        run.start_edge_late_s
    );
    assert!(
        innodb.log_writes > 0.0 && innodb.log_written_bytes > 0.0,
        "{innodb:?}"
    );
    let syncs = innodb.log_fsyncs.unwrap_or(innodb.data_fsyncs);
    assert!(syncs > 0.0, "{innodb:?}");
    assert_eq!(
        figures.run.workload.rows_updated,
        4 * figures.run.workload.operations["update"].latency.count
    );

    drop(server);
    assert!(!dir.exists(), "{} is still there", dir.display());
    assert!(servers_in(&dir).is_empty(), "{:?}", servers_in(&dir));
}

/// Sets the interrupt as soon as loading begins.
struct InterruptWhileLoading(Arc<AtomicBool>);

impl RunObserver for InterruptWhileLoading {
    fn phase(&mut self, _message: &str) {}
    fn loading(&mut self, _progress: &LoadProgress) {
        self.0.store(true, Ordering::Relaxed);
    }
    fn running(&mut self, _: Duration, _: Option<Duration>, _: u64, _: u64) {}
}

#[test]
fn an_interrupted_load_stops_and_removes_the_throwaway_server() {
    let _alone = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let parent = parent_dir().join("interrupted");
    std::fs::create_dir_all(&parent).unwrap();
    let interrupt = Arc::new(AtomicBool::new(false));
    let config = config(
        MariaDbServer::Throwaway(server_options(&parent)),
        driver(plan(1, 4096), 0.0, 1),
    );
    let error = run(
        &config,
        &mut InterruptWhileLoading(interrupt.clone()),
        &interrupt,
    )
    .unwrap_err();
    assert!(format!("{error:#}").contains("interrupted"), "{error:#}");
    assert!(leftovers(&parent).is_empty(), "{:?}", leftovers(&parent));
    assert!(servers_in(&parent).is_empty(), "{:?}", servers_in(&parent));
}

/// Restarts the server whose pid it holds a few seconds into the window,
/// as `systemctl restart` would: SIGTERM, then the same command line again.
struct RestartInTheWindow {
    pid: u32,
    restarted: Arc<std::sync::Mutex<Option<std::process::Child>>>,
}

impl RunObserver for RestartInTheWindow {
    fn phase(&mut self, message: &str) {
        if message != "running" {
            return;
        }
        let (pid, restarted) = (self.pid, self.restarted.clone());
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(3));
            let command_line = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
            let argv: Vec<String> = command_line
                .split(|byte| *byte == 0)
                .filter(|arg| !arg.is_empty())
                .map(|arg| String::from_utf8_lossy(arg).into_owned())
                .collect();
            unsafe { libc::kill(pid as i32, libc::SIGTERM) };
            while mariadbd_alive(pid) && !is_zombie(pid) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let child = std::process::Command::new(&argv[0])
                .args(&argv[1..])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            *restarted.lock().unwrap() = Some(child);
        });
    }
    fn loading(&mut self, _progress: &LoadProgress) {}
    fn running(&mut self, _: Duration, _: Option<Duration>, _: u64, _: u64) {}
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    })
}

/// MariaDB's `Uptime` going back between the edges fails the run, and
/// InnoDB's counters from both sides of the restart are not subtracted.
#[test]
fn a_server_restarted_in_the_window_fails_the_run_by_its_uptime() {
    let _alone = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let parent = parent_dir().join("restart");
    std::fs::create_dir_all(&parent).unwrap();
    let server = ThrowawayServer::start(&server_options(&parent), &AtomicBool::new(false)).unwrap();
    let mut driver = driver(plan(1, 2048), 0.0, 1);
    driver.stop_after = strata_slob::session::StopAfter::Duration {
        warmup: Duration::from_millis(500),
        duration: Duration::from_secs(15),
    };
    driver.tolerate_failures = true;
    let config = config(
        MariaDbServer::External(server.target("strata_slob")),
        driver,
    );
    let mut observer = RestartInTheWindow {
        pid: server.info().pid,
        restarted: Default::default(),
    };
    let outcome = run(&config, &mut observer, &AtomicBool::new(false));
    let restarted = observer.restarted.lock().unwrap().take();
    if let Some(mut child) = restarted {
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let _ = child.wait();
    }
    drop(server);
    let figures = outcome.expect("the run").figures.unwrap();
    let verdict = serde_json::to_string(&figures.run.verdict).unwrap();
    eprintln!("{verdict}");
    assert!(verdict.contains("\"failed\""), "{verdict}");
    assert!(
        verdict.contains("the server restarted inside the window")
            && verdict.contains("by MariaDB's Uptime"),
        "{verdict}"
    );
    assert!(figures.innodb.is_none(), "InnoDB figures across a restart");
    assert!(leftovers(&parent).is_empty(), "{:?}", leftovers(&parent));
}
