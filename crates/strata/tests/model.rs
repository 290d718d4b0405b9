//! `strata model` through the real binary: JSON checked against values
//! computed by hand, `--explain` showing the numbers, bad input naming the flag.

use std::process::{Command, Output};

fn strata(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg("model")
        .args(args)
        .output()
        .expect("running strata")
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let output = strata(&all);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON document")
}

fn stdout(args: &[&str]) -> String {
    let output = strata(args);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn refused(args: &[&str], fragments: &[&str]) {
    let output = strata(args);
    assert!(
        !output.status.success(),
        "strata model {args:?} should fail"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    for fragment in fragments {
        assert!(
            stderr.contains(fragment),
            "'{fragment}' missing from: {stderr}"
        );
    }
}

fn near(value: &serde_json::Value, expected: f64, tolerance: f64) {
    let actual = value.as_f64().expect("a number");
    assert!(
        (actual - expected).abs() <= tolerance,
        "{actual} is not {expected}"
    );
}

#[test]
fn raid5_ten_columns_is_160_per_disk() {
    let rows = json(&[
        "raid",
        "--iops",
        "1000",
        "--read-pct",
        "80",
        "--raid",
        "5",
        "--disks",
        "10",
    ]);
    near(&rows[0]["back_end_iops_per_disk"], 160.0, 1e-9);
    assert_eq!(rows[0]["over_ceiling"], true);
    let explained = stdout(&[
        "raid",
        "--iops",
        "1000",
        "--read-pct",
        "80",
        "--raid",
        "5",
        "--disks",
        "10",
        "--explain",
    ]);
    assert!(
        explained.contains("(800 + 4 × 200) / 10 = 160.0 IOPS"),
        "{explained}"
    );
}

#[test]
fn raid_min_disks_from_service_time() {
    let rows = json(&[
        "raid",
        "--iops",
        "1000-2000:1000",
        "--read-pct",
        "80",
        "--raid",
        "5",
        "--service-time",
        "6ms",
        "--min-disks",
    ]);
    assert_eq!(rows[0]["min_disks"], 10);
    assert_eq!(rows[1]["min_disks"], 20);
}

#[test]
fn replication_fifty_km() {
    let report = json(&[
        "replication",
        "--distance-km",
        "50",
        "--overhead",
        "600us",
        "--per-kib",
        "27us",
        "--size",
        "2k",
        "--fibre-channel",
    ]);
    near(&report["sync"]["total_s"], 1.154e-3, 1e-12);
    near(&report["sync"]["writes_per_s"], 866.55, 0.01);
    near(&report["asynchronous"]["frame_km"], 2.048, 1e-9);
    assert_eq!(report["asynchronous"]["outstanding_writes"], 49);
    let explained = stdout(&[
        "replication",
        "--distance-km",
        "50",
        "--per-kib",
        "27us",
        "--explain",
    ]);
    assert!(
        explained.contains("1 × 2 × 50 km × 5 µs = 1.1540 ms"),
        "{explained}"
    );
}

#[test]
fn replication_calibrated_from_two_local_writes() {
    let report = json(&[
        "replication",
        "--distance-km",
        "50",
        "--calibrate-from",
        "2k=654us,64k=2328us",
    ]);
    near(&report["calibration"]["overhead_s"], 0.6e-3, 1e-9);
    near(&report["sync"]["total_s"], 1.154e-3, 1e-9);
}

#[test]
fn queue_open_and_closed() {
    let mm1 = json(&["queue", "--service-time", "10ms", "--utilization", "50"]);
    near(&mm1["rows"][0]["response_time_s"], 0.020, 1e-12);
    near(&mm1["rows"][0]["in_system"], 1.0, 1e-12);
    let md1 = json(&[
        "queue",
        "--model",
        "md1",
        "--service-time",
        "10ms",
        "--arrival-rate",
        "50",
    ]);
    near(&md1["rows"][0]["response_time_s"], 0.015, 1e-12);
    let mva = json(&["queue", "--centres", "cpu=20ms,disk=30ms", "--users", "3"]);
    near(&mva["steps"][1]["response_time_s"], 0.076, 1e-12);
    near(&mva["steps"][2]["throughput"], 29.2308, 1e-3);
    assert_eq!(mva["bottleneck"], "disk");
}

#[test]
fn disk_fifteen_k_ranges() {
    let qd1 = json(&["disk", "--rpm", "15000", "--qd", "1"]);
    let iops = qd1[0]["iops"].as_f64().unwrap();
    assert!((150.0..=200.0).contains(&iops), "{iops}");
    let deep = json(&["disk", "--rpm", "15000", "--span", "50", "--qd", "32"]);
    let iops = deep[0]["iops"].as_f64().unwrap();
    assert!((300.0..=450.0).contains(&iops), "{iops}");
}

#[test]
fn flash_cache_and_commit() {
    let cache = json(&[
        "flash-cache",
        "--buffer-cache",
        "1g",
        "--data",
        "100g",
        "--flash",
        "10g,100g",
    ]);
    near(&cache["rows"][0]["flash_hit"], 0.10, 1e-9);
    assert_eq!(cache["rows"][1]["metadata_bytes"], 1_310_720_000u64);
    let commit = json(&[
        "commit",
        "--commit-wait",
        "101ms",
        "--log-write-io",
        "37ms",
        "--log-writer-cpu",
        "2.3ms",
    ]);
    near(&commit["remainder_s"], 0.0617, 1e-9);
}

#[test]
fn cluster_two_groups_from_csv() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("demands.csv");
    std::fs::write(
        &csv,
        "cpu,disk\n0.010,0.020\n0.011,0.021\n0.500,0.900\n0.012,0.019\n0.510,0.880\n",
    )
    .unwrap();
    let path = csv.to_str().unwrap();
    let result = json(&["cluster", path, "--clusters", "2"]);
    assert_eq!(
        result["clusters"][0]["members"],
        serde_json::json!([0, 1, 3])
    );
    assert_eq!(result["clusters"][1]["members"], serde_json::json!([2, 4]));
    refused(
        &["cluster", path, "--clusters", "9"],
        &["--clusters", "more clusters than points"],
    );
}

#[test]
fn bad_inputs_name_the_flag() {
    refused(
        &[
            "raid",
            "--iops",
            "1000",
            "--read-pct",
            "120",
            "--raid",
            "5",
            "--disks",
            "10",
        ],
        &["--read-pct"],
    );
    refused(
        &[
            "raid",
            "--iops",
            "1000",
            "--read-pct",
            "80",
            "--raid",
            "5",
            "--disks",
            "0",
        ],
        &["--disks"],
    );
    refused(
        &["replication", "--distance-km", "-5"],
        &["--distance-km", "negative"],
    );
    refused(
        &["queue", "--service-time", "10ms", "--arrival-rate", "100"],
        &["--arrival-rate", "the queue is unstable"],
    );
    refused(
        &["queue", "--service-time", "10ms", "--utilization", "100"],
        &["--utilization", "unstable"],
    );
    refused(
        &["commit", "--commit-wait", "10ms", "--log-write-io", "37ms"],
        &["--commit-wait"],
    );
}

/// Non-finite inputs once came back as "NaN must not be negative".
#[test]
fn non_finite_numbers_are_refused_without_nan_in_the_message() {
    let cases: [&[&str]; 4] = [
        &["replication", "--distance-km", "nan"],
        &["replication", "--distance-km", "inf"],
        &["queue", "--service-time", "1ms", "--arrival-rate", "NaN"],
        &[
            "flash-cache",
            "--buffer-cache",
            "1g",
            "--data",
            "10g",
            "--skew",
            "zipf:nan",
        ],
    ];
    for args in cases {
        let output = strata(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let message = stderr.lines().next().unwrap_or_default();
        assert!(message.contains("finite number"), "{args:?}: {stderr}");
        assert!(
            !message.contains(" NaN ") && !message.contains("inf must"),
            "{stderr}"
        );
    }
}

fn report_fixture(name: &str) -> String {
    format!(
        "{}/../strata-report/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn commit_and_raid_take_their_inputs_from_a_recording() {
    // run-update.strata's result: COMMIT mean 614.772 us; pg_stat_wal write
    // 10.675 ms + sync 166.507 ms over 381 syncs = 0.46504 ms per sync.
    let run = report_fixture("run-update.strata");
    let commit = json(&["commit", "--from", &run]);
    near(&commit["commit_wait_s"], 614.772e-6, 1e-9);
    near(
        &commit["log_write_io_s"],
        (10.675 + 166.507) / 381.0 / 1e3,
        1e-8,
    );
    near(&commit["remainder_s"], 614.772e-6 - 0.465_045e-3, 1e-8);
    // Its window: vda 286,687 read and 5,403 write requests in 10.0 s.
    let raid = json(&["raid", "--from", &run, "--raid", "10", "--disks", "4"]);
    near(&raid[0]["front_end_iops"], 29_209.0, 1e-6);
    near(&raid[0]["back_end_iops"], 28_668.7 + 2.0 * 540.3, 1e-6);
    let flags_win = json(&[
        "raid", "--from", &run, "--iops", "1000", "--raid", "5", "--disks", "10",
    ]);
    near(&flags_win[0]["front_end_iops"], 1000.0, 1e-9);
}

#[test]
fn commit_takes_its_inputs_from_an_awr_report() {
    // 11.2.0.3-single-html-sarthi2020.html: log file sync 291,628 waits,
    // 3,475 s (Top 5 Timed Foreground Events); log file parallel write
    // 263,324 waits, 1,159 s (Background Wait Events). Oracle prints 12 and
    // 4 ms; the averages are time ÷ waits.
    let awr = format!(
        "{}/../../../shared/fixtures/awr/11.2.0.3-single-html-sarthi2020.html",
        env!("CARGO_MANIFEST_DIR")
    );
    let commit = json(&["commit", "--from", &awr]);
    near(&commit["commit_wait_s"], 3475.0 / 291_628.0, 1e-9);
    near(&commit["log_write_io_s"], 1159.0 / 263_324.0, 1e-9);
    let text = stdout(&["commit", "--from", &awr]);
    assert!(text.contains("log file sync (average) 11.916 ms"), "{text}");
}

#[test]
fn commit_refuses_an_awr_report_whose_sessions_never_waited_on_log_file_sync() {
    // 19c-single-html-lucky29011.html: log file sync is in the Background
    // Wait Events only; no user session committed through it.
    let awr = format!(
        "{}/../../../shared/fixtures/awr/19c-single-html-lucky29011.html",
        env!("CARGO_MANIFEST_DIR")
    );
    refused(
        &["commit", "--from", &awr],
        &["--from", "no commit figures"],
    );
}

#[test]
fn from_a_source_without_the_figures_names_what_is_missing() {
    let calibrate = report_fixture("calibrate-sweep.strata");
    refused(
        &["commit", "--from", &calibrate],
        &["--from", "no commit figures"],
    );
    refused(
        &["commit", "--from", "/nonexistent.strata"],
        &["--from", "/nonexistent.strata"],
    );
    let awr = format!(
        "{}/../../../shared/fixtures/awr/19c-single-html-lucky29011.html",
        env!("CARGO_MANIFEST_DIR")
    );
    refused(
        &["raid", "--from", &awr, "--raid", "5", "--disks", "8"],
        &["--from", "no device requests", "--iops"],
    );
}

#[test]
fn queue_takes_a_measured_device_and_shows_its_await() {
    // run-update.strata's window: vda did 286,687 reads (r_await 0.0901 ms)
    // and 5,403 writes (w_await 0.7083 ms) in 10.0 s at 77.35 % utilization.
    let run = report_fixture("run-update.strata");
    let queue = json(&["queue", "--from", &run]);
    let measured = &queue["measured"];
    assert_eq!(measured["device"], "vda");
    near(&measured["requests_per_s"], 29_209.0, 1e-6);
    let await_ms = (0.090_070 * 286_687.0 + 0.708_310 * 5_403.0) / 292_090.0;
    near(&measured["await_ms"], await_ms, 1e-4);
    // Utilization law: U = X × S, within the 1 % the sampled busy time allows.
    let service_ms = measured["service_time_ms"].as_f64().unwrap();
    let utilization = 29_209.0 * service_ms / 1e3;
    assert!((utilization - 0.7735).abs() < 0.01, "U = {utilization}");
    near(&queue["rows"][0]["arrival_rate"], 29_209.0, 1e-6);
    let table = json(&["queue", "--from", &run, "--utilization", "50"]);
    near(&table["rows"][0]["utilization"], 0.5, 1e-9);
    refused(
        &["queue", "--from", &run, "--device", "sdz"],
        &["--device sdz", "vda"],
    );
}

#[test]
fn raid_prints_its_rows_as_csv() {
    let csv = stdout(&[
        "raid",
        "--raid",
        "5",
        "--disks",
        "10",
        "--iops",
        "1000",
        "--read-pct",
        "80",
        "--format",
        "csv",
    ]);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    assert!(header.contains(&"disks"), "{csv}");
    let per_disk = header
        .iter()
        .position(|name| *name == "IOPS per disk")
        .expect("an IOPS per disk column");
    let row: Vec<&str> = lines.next().expect("one row").split(',').collect();
    assert_eq!(row[per_disk], "160", "{csv}");
    assert_eq!(lines.next(), None, "{csv}");
}

#[test]
fn raid_writes_an_html_page() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("raid.html");
    let printed = stdout(&[
        "raid",
        "--raid",
        "5",
        "--disks",
        "10",
        "--iops",
        "1000",
        "--read-pct",
        "80",
        "--explain",
        "--format",
        "html",
        "--output",
        page.to_str().unwrap(),
    ]);
    assert_eq!(printed, "", "the page goes to the file, not stdout");
    let html = std::fs::read_to_string(&page).expect("the page was written");
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<table"), "{html}");
    assert!(html.contains("(800 + 4 × 200) / 10 = 160.0 IOPS"), "{html}");
}

/// 1 MiB reads at a 32 KiB transfer: 32 calls per I/O; one I/O in flight
/// on one connection is held to that connection's 10,000 calls/s, four on
/// two connections to 20,000, and a 1 Gb/s link to 3,815 calls of 32 KiB.
#[test]
fn nfs_throughput_is_the_least_of_round_trip_connections_and_link() {
    let nfs = [
        "nfs",
        "--round-trip",
        "500us",
        "--transfer",
        "32k",
        "--io-size",
        "1m",
        "--connections",
        "2",
        "--connection-calls",
        "10000",
        "--outstanding",
        "1,4",
    ];
    let rows = json(&nfs);
    let one = &rows[0]["model"];
    assert_eq!(
        (&one["calls_per_io"], &one["bound"]),
        (&32.0.into(), &"connections".into())
    );
    near(&one["calls_per_s"], 10_000.0, 1e-6);
    near(&one["round_trip_s"], 0.0032, 1e-12);
    near(&one["mb_per_s"], 10_000.0 / 32.0 * 1.048576, 1e-6);
    near(&rows[1]["model"]["calls_per_s"], 20_000.0, 1e-6);
    let linked = json(&[&nfs[..], &["--link-gbit", "1"]].concat());
    assert_eq!(linked[1]["model"]["bound"], "link");
    near(
        &linked[1]["model"]["calls_per_s"],
        1e9 / 8.0 / 32768.0,
        1e-6,
    );
    let explained = stdout(&[&nfs[..], &["--explain"]].concat());
    assert!(
        explained.contains("calls/s = min(in flight ÷ round trip = 32 ÷ 500.0 µs"),
        "{explained}"
    );
    refused(&["nfs", "--transfer", "32k"], &["--round-trip"]);
    refused(
        &["nfs", "--round-trip", "1ms", "--connections", "0"],
        &["--connections"],
    );
}
