//! `compare_recordings` on real recordings (`tests/fixtures`, see its
//! README): the settings that differ come first, per-operation
//! percentiles for each run, findings that explain the change, shared
//! charts; calibrations point by point; mixed kinds refused.

use std::path::{Path, PathBuf};
use strata_output::document::{Block, Report};
use strata_report::recording::{compare_recordings, ReportOptions};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn compared(names: &[&str]) -> anyhow::Result<Report> {
    let paths: Vec<PathBuf> = names.iter().map(|name| fixture(name)).collect();
    compare_recordings(&paths, &ReportOptions::default())
}

fn section_ids(report: &Report) -> Vec<&str> {
    report
        .sections
        .iter()
        .map(|section| section.id.as_str())
        .collect()
}

#[test]
fn two_runs_name_their_differences_before_their_figures() {
    let report = compared(&["run-update.strata", "run-page-cache.strata"]).unwrap();
    assert_eq!(
        section_ids(&report)[..3],
        ["settings", "operations", "load_profile"]
    );
    let settings = report.section("settings").unwrap();
    let table = settings.tables().next().unwrap();
    for differs in ["update %", "page-cache limit", "window"] {
        assert!(table.row(differs).is_some(), "{differs}: {table:?}");
    }
    let same = settings.blocks.iter().any(|block| {
        matches!(block, Block::Note { text } if text.contains("The same in every Recording")
            && text.contains("sessions"))
    });
    assert!(same, "{settings:?}");
    let latency = report
        .section("operations")
        .unwrap()
        .tables()
        .next()
        .unwrap();
    let p99 = latency.row("select p99").unwrap();
    assert!(p99[3].value.is_some() && p99[4].value.is_some(), "{p99:?}");
    let ids: Vec<&str> = report.findings.iter().map(|f| f.id.as_str()).collect();
    assert!(ids.contains(&"compare_window_differs"), "{ids:?}");
    let scopes: Vec<_> = report
        .figures
        .iter()
        .filter(|figure| figure.name == "select_lat_p99_ms")
        .map(|figure| figure.scope.clone().unwrap())
        .collect();
    assert_eq!(scopes, ["A", "B"]);
    let histogram = report
        .charts()
        .find(|chart| chart.id == "compare_select_latency_histogram")
        .unwrap();
    assert_eq!(histogram.series.len(), 2);
}

#[test]
fn a_run_and_a_calibration_are_refused_naming_each_kind() {
    let error = compared(&["run-update.strata", "calibrate-sweep.strata"]).unwrap_err();
    let error = format!("{error:#}");
    assert!(
        error.contains("A ") && error.contains("is a run Recording"),
        "{error}"
    );
    assert!(error.contains("is a calibrate Recording"), "{error}");
}

#[test]
fn calibrations_compare_point_by_point() {
    let report = compared(&["calibrate-sweep.strata", "calibrate-sweep.strata"]).unwrap();
    let points = report.section("points").unwrap();
    let table = points.tables().next().unwrap();
    assert!(!table.rows.is_empty());
    let same = table.rows.iter().all(|row| {
        row[3].value == row[4].value && row[5].value.map_or(true, |change| change == 0.0)
    });
    assert!(same, "{table:?}");
}

/// The fixture with its run result's device read await multiplied by
/// `factor` (this disk's await does not move on its own), written to `dir`.
fn slower_device(name: &str, factor: f64, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let mut lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let result = lines.last_mut().unwrap();
    for device in result["result"]["devices"].as_array_mut().unwrap() {
        let r_await = device["r_await_ms"].as_f64().unwrap();
        device["r_await_ms"] = serde_json::json!(r_await * factor);
    }
    let body: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
    let path = dir.join(name);
    std::fs::write(&path, body.join("\n") + "\n").unwrap();
    path
}

#[test]
fn an_await_that_doubled_at_the_same_rate_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let slower = slower_device("run-update.strata", 2.2, dir.path());
    let paths = [fixture("run-update.strata"), slower];
    let report = compare_recordings(&paths, &ReportOptions::default()).unwrap();
    let finding = report
        .findings
        .iter()
        .find(|finding| finding.id == "compare_device_await_changed")
        .unwrap_or_else(|| panic!("{:#?}", report.findings));
    assert!(
        finding.title.contains("doubled at the same r/s"),
        "{finding:?}"
    );
    let ids: Vec<&str> = report.findings.iter().map(|f| f.id.as_str()).collect();
    assert!(!ids.contains(&"compare_window_differs"), "{ids:?}");
    assert!(!ids.contains(&"compare_sessions_differ"), "{ids:?}");
    let same = compared(&["run-update.strata", "run-update.strata"]).unwrap();
    let table = same.section("settings").unwrap().tables().next();
    assert!(table.is_none(), "nothing differs: {table:?}");
}

/// The sweep with `edit` applied to each point's result, written to `dir`
/// as `name`.
fn each_point(dir: &Path, name: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let text = std::fs::read_to_string(fixture("calibrate-sweep.strata")).unwrap();
    let mut lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    for line in lines.iter_mut().filter(|line| line["type"] == "result") {
        edit(&mut line["point"]);
    }
    let body: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
    let path = dir.join(name);
    std::fs::write(&path, body.join("\n") + "\n").unwrap();
    path
}

/// Direct NFS's bake-off in one report: the same points through strata's
/// own client (each point's `nfs`) and through a kernel mount (its
/// `kernel_nfs`, READ and GETATTR calls) compare call for call: calls/s,
/// calls per I/O and the round trip, side by side.
#[test]
fn strata_s_client_and_the_kernel_s_compare_call_for_call() {
    let dir = tempfile::tempdir().unwrap();
    let direct = each_point(dir.path(), "direct.strata", |point| {
        point["nfs"] = serde_json::json!({
            "server": "filer1", "durable_writes": "file_sync", "connections": 1,
            "transfer_bytes": 32768, "calls": 2000, "replies": 2000, "calls_per_s": 2000.0,
            "calls_per_io": 1.0, "round_trip_mean_us": 400.0, "bytes_sent": 0,
            "bytes_received": 0, "data_bytes": 0, "protocol_overhead_pct": 0.7,
            "filer": {
                "host": "filer1", "agent": "http://filer1:9477",
                "server": [
                    {"server": "nfs-ganesha", "protocol": "NFSv3", "op": "READ", "calls": 3000,
                     "errors": 0, "bytes": 0, "server_mean_us": 100.0},
                    {"server": "nfs-ganesha", "protocol": "NFSv3", "op": "WRITE", "calls": 1000,
                     "errors": 0, "bytes": 0, "server_mean_us": 500.0}
                ]
            }
        });
    });
    let kernel = each_point(dir.path(), "kernel.strata", |point| {
        let op = |name: &str, ops: u64, rtt_ms: f64| {
            serde_json::json!({
                "op": name, "ops": ops, "ops_per_s": ops as f64, "bytes_sent": 0,
                "bytes_received": 0, "retransmissions": 0, "timeouts": 0, "queue_ms": 0.0,
                "rtt_ms": rtt_ms, "execute_ms": rtt_ms
            })
        };
        point["window_s"] = serde_json::json!(2.0);
        point["kernel_nfs"] = serde_json::json!({
            "mount": "/mnt/filer1", "server": "filer1", "export": "/export",
            "ops": [op("READ", 3000, 0.6), op("GETATTR", 1000, 0.2)]
        });
    });
    let report = compare_recordings(&[direct, kernel], &ReportOptions::default()).unwrap();
    let table = report.section("points").unwrap().tables().next().unwrap();
    let key = "randread bs=8KiB qd=1 jobs=1 sync=none";
    let values = |metric: &str| {
        let row = table
            .row(&format!("{key}: {metric}"))
            .unwrap_or_else(|| panic!("no {metric}: {table:?}"));
        (row[3].value.unwrap(), row[4].value.unwrap())
    };
    assert_eq!(
        values("NFS calls"),
        (2000.0, 2000.0),
        "4,000 calls over 2 s"
    );
    assert_eq!(
        values("NFS round trip"),
        (0.4, 0.5),
        "READs and GETATTRs weighted"
    );
    let server = table.row(&format!("{key}: NFS server time")).unwrap();
    assert_eq!(
        (server[3].value, server[4].value),
        (Some(0.2), None),
        "nfs-ganesha's own time, its READs and WRITEs weighted; none where no agent counted it"
    );
    let (direct_per_io, kernel_per_io) = values("NFS calls per I/O");
    assert_eq!(direct_per_io, 1.0);
    assert!(
        kernel_per_io > 0.0,
        "the kernel's calls over the point's own I/Os"
    );
    let plain = compared(&["calibrate-sweep.strata", "calibrate-sweep.strata"]).unwrap();
    let plain = plain.section("points").unwrap().tables().next().unwrap();
    assert!(
        plain.row(&format!("{key}: NFS calls")).is_none(),
        "no NFS, no NFS rows"
    );
}
