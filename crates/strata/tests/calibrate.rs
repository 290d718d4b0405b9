//! `strata calibrate` end to end: the real binary on real files with
//! O_DIRECT, real loop devices, real /proc/diskstats.

mod common;

use common::*;
use std::time::{Duration, Instant};

fn first_group(document: &serde_json::Value) -> &serde_json::Value {
    &document["points"][0]["groups"][0]
}

#[test]
fn fixed_count_job_completes_exactly_that_many_requests() {
    let dir = scratch();
    for engine in ["io_uring", "psync"] {
        let document = run_json(
            &[
                "calibrate",
                "--size",
                "64MiB",
                "--workload",
                "small-random-read",
                "--bs",
                "4k",
                "--qd",
                "4",
                "--ios",
                "1000",
                "--engine",
                engine,
            ],
            dir.path(),
        );
        let group = first_group(&document);
        assert_eq!(group["all"]["requests"], 1000, "{engine}");
        assert_eq!(group["all"]["bytes"], 1000 * 4096, "{engine}");
        assert_eq!(
            group["all"]["count"], 1000,
            "{engine}: every request is in the histogram"
        );
        assert_eq!(document["schema"], "strata.calibrate");
        assert_eq!(document["schema_version"], 1);
    }
    assert!(
        leftovers(dir.path()).is_empty(),
        "the temporary target is removed"
    );
}

#[test]
fn sweep_runs_the_documented_matrix_and_writes_orion_csv() {
    let dir = scratch();
    let csv = dir.path().join("csv");
    let document = run_json(
        &[
            "calibrate",
            "--size",
            "64MiB",
            "--sweep",
            "--max-qd",
            "2",
            "--max-streams",
            "1",
            "--ios",
            "200",
            "--csv",
            csv.to_str().unwrap(),
        ],
        dir.path(),
    );
    let cells: Vec<(u64, u64)> = document["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["cell"]["large_streams"].as_u64().unwrap(),
                p["cell"]["small_outstanding"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(cells, vec![(0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]);
    let iops = std::fs::read_to_string(csv.join("iops.csv")).unwrap();
    let lines: Vec<&str> = iops.lines().collect();
    assert_eq!(lines[1], "large_streams\\small_outstanding,0,1,2");
    assert!(
        lines[2].starts_with("0,,"),
        "no small I/O at (0,0): {}",
        lines[2]
    );
    assert_eq!(lines.len(), 4);
    for name in ["mbps.csv", "lat.csv", "points.csv"] {
        assert!(csv.join(name).exists(), "{name}");
    }
    let summary = &document["summary"];
    assert!(summary["max_iops"]["value"].as_f64().unwrap() > 0.0);
    assert!(summary["max_mb_per_s"]["value"].as_f64().unwrap() > 0.0);
    assert!(summary["knee"]["point"]
        .as_str()
        .unwrap()
        .ends_with("large=0"));
}

#[test]
fn recording_holds_header_results_and_lossless_histograms() {
    let dir = scratch();
    let record = dir.path().join("run.strata");
    run_json(
        &[
            "calibrate",
            "--size",
            "64MiB",
            "--workload",
            "mixed",
            "--qd",
            "2",
            "--ios",
            "500",
            "--record",
            record.to_str().unwrap(),
        ],
        dir.path(),
    );
    let recording = strata_recording::Recording::read(&record).unwrap();
    assert_eq!(recording.header.kind, strata_recording::Kind::Calibrate);
    // As written: the typed part strata reads lacks the count of I/Os.
    let options = serde_json::to_value(&recording.header.options).unwrap();
    assert_eq!(options["stop_rule"]["ios"], 500);
    assert_eq!(recording.header.options.outlier_us, Some(500_000.0));
    assert_eq!(
        recording.header.options.outlier_floor_us,
        Some(100_000.0),
        "I/Os from 100 ms on are kept whatever --outlier is"
    );
    let report = run(
        &[
            "report",
            record.to_str().unwrap(),
            "--outlier-threshold",
            "50ms",
        ],
        dir.path(),
    );
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        text.contains("kept I/Os one by one only from 100 ms on"),
        "{text}"
    );
    let results: Vec<_> = recording.point_results().collect();
    assert_eq!(results.len(), 1);
    let histograms = &results[0].histograms["small"];
    let reads =
        strata_core::histogram::LatencyHistogram::from_base64(&histograms.read_lat_ns_hdr).unwrap();
    let writes =
        strata_core::histogram::LatencyHistogram::from_base64(&histograms.write_lat_ns_hdr)
            .unwrap();
    assert_eq!(reads.count() + writes.count(), 500);
    assert!(
        reads.count() > 250 && writes.count() > 50,
        "70% reads: {} / {}",
        reads.count(),
        writes.count()
    );
    assert!(recording.summary().is_some());
    assert!(recording.window_devices().next().is_some());
    assert!(
        recording
            .layers()
            .any(|sample| sample.values("cpu").is_some()),
        "every layer is sampled while the points run"
    );
}

#[test]
fn open_loop_rate_is_held_and_latency_counts_from_the_schedule() {
    let dir = scratch();
    let document = run_json(
        &[
            "calibrate",
            "--size",
            "64MiB",
            "--workload",
            "small-random-read",
            "--rate-iops",
            "400",
            "--qd",
            "4",
            "--duration",
            "2s",
            "--ramp",
            "500ms",
        ],
        dir.path(),
    );
    let iops = first_group(&document)["all"]["iops"].as_f64().unwrap();
    assert!(
        (360.0..=440.0).contains(&iops),
        "asked for 400 requests/s, got {iops}"
    );
    let per_second = document["points"][0]["per_second"].as_array().unwrap();
    assert!(per_second.len() >= 2);
}

#[test]
fn slow_requests_are_named_as_outliers() {
    let dir = scratch();
    let document = run_json(
        &[
            "calibrate",
            "--size",
            "64MiB",
            "--workload",
            "small-random-read",
            "--ios",
            "50",
            "--outlier",
            "1us",
        ],
        dir.path(),
    );
    let outliers = document["points"][0]["outliers"].as_array().unwrap();
    assert_eq!(outliers.len(), 50, "every request is slower than 1 us");
    let first = &outliers[0];
    assert_eq!(first["operation"], "read");
    assert_eq!(first["size_bytes"], 8192);
    assert!(first["lat_us"].as_f64().unwrap() >= 1.0);
    assert!(first["offset_bytes"].as_u64().unwrap().is_multiple_of(8192));
}

/// As root, calibrate's workers are traced under the role of their group
/// (`calibrate` and its label), so a mixed point's device time is told
/// apart by group, as a run's by backend type.
#[test]
fn each_groups_requests_are_traced_under_its_role() {
    let dir = scratch();
    let document = run_json(
        &[
            "calibrate",
            "--size",
            "64MiB",
            "--workload",
            "small-random-read",
            "--ios",
            "2000",
        ],
        dir.path(),
    );
    let point = &document["points"][0];
    let label = point["groups"][0]["label"].as_str().unwrap();
    let role = format!("calibrate {label}");
    let traced = &point["block_trace"];
    let requests: u64 = traced["devices"]
        .as_array()
        .unwrap_or_else(|| panic!("no device traced: {traced}"))
        .iter()
        .filter_map(|device| device["by_role"].as_array())
        .flatten()
        .filter(|traced| traced["role"] == role.as_str() && traced["operation"] == "read")
        .filter_map(|traced| traced["requests"].as_u64())
        .sum();
    // Every read issued by the workers, but for the ends BPF misses now
    // and then (docs/tracing.md): those are counted on the device, not
    // under a role. And a few reads were seen in neither count (CI,
    // 2026-12-04: 1,982 under the role, none missed, 18 of the device's
    // 3,000 reads in diskstats and not traced; the cause is not yet
    // found). A run's window allows 0.5% + 2 unaccounted (run.rs); a
    // point's, 1% of the device's reads.
    let reads = |field: &str| -> u64 {
        traced["devices"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|device| device["operations"].as_array())
            .flatten()
            .filter(|operation| operation["operation"] == "read")
            .filter_map(|operation| operation[field].as_u64())
            .sum()
    };
    let (ends_missed, device_reads) = (reads("ends_missed"), reads("diskstats_requests"));
    let slack = device_reads / 100;
    assert!(
        requests <= 2000 && requests + ends_missed + slack >= 2000 && ends_missed < 100,
        "{requests} reads under the role {role:?}, {ends_missed} ends missed: {traced}"
    );
}

#[test]
fn log_writes_are_durable_and_reach_the_device() {
    let dir = scratch();
    let document = run_json(
        &[
            "calibrate",
            "--size",
            "64MiB",
            "--workload",
            "log-write",
            "--bs",
            "4k",
            "--ios",
            "300",
        ],
        dir.path(),
    );
    assert_eq!(
        document["options"]["engine"], "psync",
        "pwrite then fdatasync, as a database's log writer does"
    );
    let group = first_group(&document);
    assert_eq!(group["sync"], "fdatasync");
    assert_eq!(group["rw"], "write");
    assert_eq!(group["writes"]["requests"], 300);
    let verification = &document["points"][0]["verification"];
    assert!(
        verification["device_write_requests"].as_u64().unwrap() >= 300,
        "{verification}"
    );
}

#[test]
fn interrupt_stops_within_a_second_and_keeps_the_partial_result() {
    let dir = scratch();
    let record = dir.path().join("partial.strata");
    let child = strata()
        .args([
            "calibrate",
            "--size",
            "64MiB",
            "--workload",
            "small-random-read",
            "--duration",
            "60s",
            "--ramp",
            "0s",
            "--json",
            "--record",
        ])
        .arg(&record)
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let sent = Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "stopped in {:?}",
        sent.elapsed()
    );
    assert_eq!(output.status.code(), Some(130), "{}", stderr_of(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["interrupted"], true);
    assert!(
        document["points"][0]["groups"][0]["all"]["requests"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "temporary target removed: {:?}",
        leftovers(dir.path())
    );
    let recording = strata_recording::Recording::read(&record).unwrap();
    assert_eq!(recording.point_results().count(), 1);
}
