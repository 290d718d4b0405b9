//! Reports built from real recordings (`tests/fixtures`, see its README):
//! each finding fires on a recording that shows it and stays silent on one
//! that does not; windows, thresholds and compare.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use strata_output::document::{Report, Window};
use strata_report::recording::{compare, report_from_recording, report_with, ReportOptions};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn report(name: &str) -> Report {
    report_from_recording(&fixture(name), None).unwrap()
}

/// The fixture's lines with `edit` applied, reported on with `options`.
fn edited(name: &str, options: ReportOptions, edit: impl FnOnce(&mut Vec<Value>)) -> Report {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    edit(&mut lines);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let body: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&path, body.join("\n") + "\n").unwrap();
    report_with(&path, &options).unwrap()
}

fn ids(report: &Report) -> Vec<&str> {
    report
        .findings
        .iter()
        .map(|finding| finding.id.as_str())
        .collect()
}

fn fires(report: &Report, id: &str) -> bool {
    ids(report).contains(&id)
}

fn with_window(from_s: f64, to_s: f64) -> ReportOptions {
    ReportOptions {
        window: Some(Window { from_s, to_s }),
        outlier_threshold_ms: None,
    }
}

/// Makes `device` an md RAID-0 of `disks` members with `chunk_bytes` chunks.
fn striped(lines: &mut [Value], device: &str, chunk_bytes: u64, disks: u32) {
    for details in lines[0]["environment"]["device_details"]
        .as_array_mut()
        .unwrap()
    {
        if details["name"] == device {
            details["kind"] = json!({"kind": "md", "level": "raid0", "chunk_bytes": chunk_bytes, "raid_disks": disks});
        }
    }
}

#[test]
fn commit_waits_decomposed_needs_commits() {
    assert!(fires(
        &report("run-update.strata"),
        "commit_waits_decomposed"
    ));
    assert!(!fires(
        &report("run-page-cache.strata"),
        "commit_waits_decomposed"
    ));
}

#[test]
fn blocks_not_requests_on_scans() {
    assert!(fires(&report("run-scan.strata"), "blocks_not_requests"));
    assert!(!fires(&report("run-update.strata"), "blocks_not_requests"));
}

#[test]
fn buffered_not_physical_when_the_page_cache_is_unlimited() {
    assert!(fires(
        &report("run-page-cache.strata"),
        "buffered_not_physical"
    ));
    assert!(!fires(
        &report("run-update.strata"),
        "buffered_not_physical"
    ));
}

#[test]
fn cpu_bound_when_the_host_has_no_idle() {
    assert!(fires(&report("run-page-cache.strata"), "cpu_bound"));
    assert!(!fires(&report("run-update.strata"), "cpu_bound"));
}

#[test]
fn slow_ios_from_outlier_events_and_device_awaits() {
    assert!(!fires(&report("calibrate-sweep.strata"), "slow_ios"));
    let outlier = edited(
        "calibrate-sweep.strata",
        ReportOptions::default(),
        |lines| {
            let summary = lines.len() - 1;
            assert_eq!(lines[summary]["type"], "summary");
            lines.insert(
                summary,
                json!({"type": "event", "event": "io_outlier", "point": "small=8 large=0",
            "outlier": {"t_s": 0.4, "group": "small", "operation": "read",
                        "offset_bytes": 81920, "size_bytes": 8192, "lat_us": 812000.0}}),
            );
        },
    );
    assert!(fires(&outlier, "slow_ios"));
    let table = outlier
        .section("outliers")
        .unwrap()
        .tables()
        .next()
        .unwrap();
    assert_eq!(table.rows.len(), 1);
    let low_threshold = ReportOptions {
        window: None,
        outlier_threshold_ms: Some(0.05),
    };
    let run = report_with(&fixture("run-update.strata"), &low_threshold).unwrap();
    assert!(fires(&run, "slow_ios"), "{:?}", ids(&run));
    assert!(!fires(&report("run-update.strata"), "slow_ios"));
}

#[test]
fn device_saturation_in_the_points_with_a_large_stream() {
    let busy = report_with(&fixture("calibrate-sweep.strata"), &with_window(5.0, 9.0)).unwrap();
    assert!(fires(&busy, "device_saturation"), "{:?}", ids(&busy));
    assert!(!fires(&report("run-update.strata"), "device_saturation"));
}

#[test]
fn storage_on_network_when_nfs_carries_the_reads() {
    assert!(!fires(
        &report("run-page-cache.strata"),
        "storage_on_network"
    ));
    let nfs = edited("run-page-cache.strata", ReportOptions::default(), |lines| {
        for line in lines.iter_mut().filter(|line| line["layer"] == "nfs") {
            let first = line["interval_s"] == 0.0;
            let metric = json!({"name": "bytes_received", "kind": "counter", "value": 0.0,
                "labels": {"mount": "/data", "op": "READ", "server": "filer", "export": "/vol"}});
            let ops = json!({"name": "ops", "kind": "counter", "value": 0.0,
                "labels": {"mount": "/data", "op": "READ", "server": "filer", "export": "/vol"}});
            let rates = if first {
                json!({})
            } else {
                json!({"bytes_received{export=/vol,mount=/data,op=READ,server=filer}": 4.0e9,
                       "ops{export=/vol,mount=/data,op=READ,server=filer}": 4.0e9 / 8192.0})
            };
            line["data"] = json!({"status": "values", "metrics": [metric, ops], "rates": rates});
        }
    });
    assert!(fires(&nfs, "storage_on_network"), "{:?}", ids(&nfs));
    let network = nfs.section("io_by_layer").unwrap();
    assert!(network.tables().any(|table| table.row("NFS").is_some()));
}

#[test]
fn small_sync_writes_on_a_striped_wal_device() {
    assert!(!fires(
        &report("run-update.strata"),
        "small_sync_writes_on_stripe"
    ));
    let md = edited("run-update.strata", ReportOptions::default(), |lines| {
        striped(lines, "vda", 512 * 1024, 4)
    });
    assert!(fires(&md, "small_sync_writes_on_stripe"), "{:?}", ids(&md));
}

#[test]
fn requests_smaller_than_a_full_stripe() {
    assert!(!fires(
        &report("run-scan.strata"),
        "request_smaller_than_stripe"
    ));
    let md = edited("run-scan.strata", ReportOptions::default(), |lines| {
        striped(lines, "vda", 512 * 1024, 4)
    });
    assert!(fires(&md, "request_smaller_than_stripe"), "{:?}", ids(&md));
}

#[test]
fn temp_spills_from_the_database_counters() {
    assert!(!fires(&report("run-update.strata"), "temp_spills"));
    let spilled = edited("run-update.strata", ReportOptions::default(), |lines| {
        let result = lines
            .iter_mut()
            .find(|line| line["type"] == "result")
            .unwrap();
        let counters = &mut result["result"]["database"]["counters"];
        counters["database.temp_files"] = json!(3.0);
        counters["database.temp_bytes"] = json!(96.0 * 1024.0 * 1024.0);
    });
    assert!(fires(&spilled, "temp_spills"), "{:?}", ids(&spilled));
}

#[test]
fn not_steady_when_the_edges_of_the_window_differ() {
    assert!(!fires(&report("run-update.strata"), "not_steady"));
    let ramp = edited("run-update.strata", ReportOptions::default(), |lines| {
        for line in lines.iter_mut().filter(|line| line["layer"] == "workload") {
            if line["sample"]["second"] == 0 || line["sample"]["second"] == 9 {
                line["sample"]["loops"] = json!(60);
            }
        }
    });
    assert!(fires(&ramp, "not_steady"), "{:?}", ids(&ramp));
}

#[test]
fn a_run_report_has_every_section_with_layers_named() {
    let report = report("run-update.strata");
    for id in [
        "load_profile",
        "top_waits",
        "io_by_layer",
        "latency",
        "time_series",
        "outliers",
    ] {
        assert!(report.section(id).is_some(), "no section {id}");
    }
    let profile = report
        .section("load_profile")
        .unwrap()
        .tables()
        .next()
        .unwrap();
    let layer = profile
        .columns
        .iter()
        .position(|column| column.name == "layer")
        .unwrap();
    for row in &profile.rows {
        assert!(
            ["workload", "database", "device", "page cache", "NFS", "NIC"]
                .contains(&row[layer].text.as_str())
        );
    }
    let blocks = profile.row("blocks read (8 KiB)").unwrap();
    assert!(
        (blocks[3].value.unwrap() - 29_759.1).abs() < 1.0,
        "{blocks:?}"
    );
    let waits = report
        .section("top_waits")
        .unwrap()
        .tables()
        .next()
        .unwrap();
    assert_eq!(waits.rows[0][0].text, "DataFileRead");
    let commit = report
        .charts()
        .find(|chart| chart.id == "commit_latency_histogram")
        .unwrap();
    let commits: f64 = commit.series[0].points.iter().map(|point| point[1]).sum();
    assert_eq!(commits, 352.0);
    assert!(report
        .charts()
        .any(|chart| chart.id == "workload_loops_over_time"));
}

#[test]
fn a_calibrate_report_marks_the_knee_and_has_orion_matrices() {
    let report = report("calibrate-sweep.strata");
    let knee = report
        .charts()
        .find(|chart| chart.id == "latency_vs_iops")
        .unwrap();
    assert_eq!(knee.marks.len(), 1);
    assert!(knee.marks[0].label.contains("small=4 large=0"));
    let calibrate = report.section("calibrate").unwrap();
    let iops = calibrate.tables().next().unwrap();
    assert_eq!(iops.rows.len(), 2, "large streams 0 and 1");
    assert!(report
        .charts()
        .any(|chart| chart.id == "calibrate_latency_over_time"));
}

#[test]
fn an_observe_report_reads_every_layer() {
    let report = report("observe-db.strata");
    assert_eq!(report.source.kind, "observe");
    let profile = report
        .section("load_profile")
        .unwrap()
        .tables()
        .next()
        .unwrap();
    assert!(profile.row("blocks read (8 KiB)").is_some());
    assert!(profile.row("read requests (IOPS)").is_some());
}

#[test]
fn a_window_of_a_run_comes_from_its_samples() {
    let whole = report("run-update.strata");
    assert_eq!(
        whole.source.window,
        Some(Window {
            from_s: 2.0,
            to_s: 12.0
        })
    );
    let part = report_with(&fixture("run-update.strata"), &with_window(4.0, 8.0)).unwrap();
    assert_eq!(
        part.source.window,
        Some(Window {
            from_s: 4.0,
            to_s: 8.0
        })
    );
    let profile = part
        .section("load_profile")
        .unwrap()
        .tables()
        .next()
        .unwrap();
    let loops = profile.row("loops").unwrap()[3].value.unwrap();
    assert!((120.0..220.0).contains(&loops), "{loops}");
    assert!(
        !fires(&part, "commit_waits_decomposed"),
        "no commit latency per second"
    );
}

#[test]
fn bad_windows_name_the_option_and_the_range() {
    let path = fixture("run-update.strata");
    for (from_s, to_s, option) in [
        (8.0, 4.0, "--from"),
        (2.0, 99.0, "--to"),
        (-1.0, 4.0, "--from"),
    ] {
        let error = report_with(&path, &with_window(from_s, to_s))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(option) && error.contains("12.3 s"),
            "{error}"
        );
    }
}

#[test]
fn a_file_that_is_not_a_recording_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "{\"hello\": 1}\n").unwrap();
    let error = format!("{:#}", report_from_recording(&path, None).unwrap_err());
    assert!(error.contains("not a strata recording"), "{error}");
}

#[test]
fn compare_puts_a_and_b_side_by_side() {
    let a = report("run-update.strata");
    let b = report("run-page-cache.strata");
    let both = compare(&a, &b);
    assert_eq!(both.source.kind, "compare");
    let table = both
        .section("load_profile")
        .unwrap()
        .tables()
        .next()
        .unwrap();
    let names: Vec<&str> = table
        .columns
        .iter()
        .map(|column| column.name.as_str())
        .collect();
    assert_eq!(names, ["metric", "layer", "unit", "A", "B", "B vs A"]);
    let blocks = table.row("blocks read (8 KiB) (blocks/s)").unwrap();
    assert!(blocks[5].value.unwrap() > 100.0, "{blocks:?}");
    assert!(both
        .findings
        .iter()
        .any(|finding| finding.title.starts_with("A: ")));
    assert!(both
        .findings
        .iter()
        .any(|finding| finding.title.starts_with("B: ")));
}

/// The sweep as if it had gone to a filer: every point's calls through
/// strata's client at a transfer size of 32 KiB (the 1 MiB stream's I/Os
/// are 32 calls each), and the stream's one connection busy 95% of the
/// window. Each NFS finding fires with its figures; on the local sweep,
/// neither does.
#[test]
fn a_calibration_of_a_filer_names_its_calls_per_io_the_busy_connections_and_the_round_trip_split() {
    let local = report("calibrate-sweep.strata");
    let nfs_findings = [
        "nfs_calls_per_io",
        "nfs_connections_cap_throughput",
        "nfs_round_trip_split",
    ];
    assert!(nfs_findings.iter().all(|id| !fires(&local, id)));
    let filer = edited(
        "calibrate-sweep.strata",
        ReportOptions::default(),
        |lines| {
            for line in lines.iter_mut().filter(|line| line["type"] == "result") {
                let point = &mut line["point"];
                let large = point["name"] == "small=0 large=1";
                let calls_per_io = if large { 32.0 } else { 1.0 };
                point["nfs"] = json!({
                    "server": "filer1", "durable_writes": "file_sync", "connections": 1,
                    "transfer_bytes": 32768, "calls": 1000, "replies": 1000,
                    "calls_per_s": 1000.0 * calls_per_io, "calls_per_io": calls_per_io,
                    "round_trip_mean_us": 900.0, "bytes_sent": 0, "bytes_received": 0,
                    "data_bytes": 0, "protocol_overhead_pct": 0.7,
                    "filer": {
                        "host": "filer1", "agent": "http://filer1:9477",
                        "server": [{
                            "server": "nfs-ganesha", "protocol": "NFSv3", "op": "READ",
                            "calls": if large { 32000 } else { 1000 }, "errors": 0,
                            "bytes": 0, "server_mean_us": 100.0,
                            "round_trip_mean_us": 900.0, "outside_server_us": 800.0
                        }]
                    }
                });
                let window_s = point["window_s"].as_f64().unwrap();
                let busy = if large { 0.95 } else { 0.2 };
                point["cpu"]["user_s"] = json!(busy * window_s);
                point["cpu"]["system_s"] = json!(0.0);
            }
        },
    );
    let finding = |id: &str| {
        filer
            .findings
            .iter()
            .find(|finding| finding.id == id)
            .unwrap_or_else(|| panic!("no {id}: {:?}", ids(&filer)))
    };
    let split = finding("nfs_calls_per_io");
    assert!(
        split
            .title
            .contains("1 MiB took 32.0 NFS calls each at a transfer size of 32 KiB"),
        "{}",
        split.title
    );
    let busy = finding("nfs_connections_cap_throughput");
    assert!(
        busy.title.contains("at small=0 large=1") && busy.title.contains("busy 95%"),
        "{}",
        busy.title
    );
    assert_eq!(busy.evidence[0].value, 1.0);
    let round_trip = finding("nfs_round_trip_split");
    assert!(
        round_trip.title.contains(
            "NFSv3 READ calls at small=0 large=1: 900.0 µs round trip, 100.0 µs of it \
             nfs-ganesha's own time and 800.0 µs (89%) outside the server: the network"
        ),
        "{}",
        round_trip.title
    );
}
