//! `strata report` end to end: a real short run with the page cache
//! unlimited reports `buffered_not_physical`; text fits 100 columns, JSON
//! parses back into the document, --html writes SVG charts, bad windows are
//! refused, and --compare names what differs before the figures, compares
//! calibrations point by point and refuses Recordings of two kinds.

mod common;

use common::*;
use std::path::Path;
use strata_output::document::Report;

fn report_json(args: &[&str], dir: &Path) -> Report {
    let mut all = vec!["report"];
    all.extend(args);
    serde_json::from_value(run_json(&all, dir)).expect("--json is a strata_report Report")
}

#[test]
fn an_unlimited_page_cache_run_is_buffered_not_physical() {
    let dir = scratch();
    let record = dir.path().join("run.strata");
    let record = record.to_str().unwrap();
    let output = run(
        &[
            "run",
            "--page-cache-limit",
            "none",
            "--duration",
            "3s",
            "--warmup",
            "1s",
            "--record",
            record,
        ],
        dir.path(),
    );
    assert!(output.status.success(), "{}", stderr_of(&output));
    let report = report_json(&[record], dir.path());
    let ids: Vec<&str> = report
        .findings
        .iter()
        .map(|finding| finding.id.as_str())
        .collect();
    assert!(ids.contains(&"buffered_not_physical"), "{ids:?}");
}

#[test]
fn text_fits_100_columns() {
    let dir = scratch();
    for name in [
        "run-update.strata",
        "calibrate-sweep.strata",
        "observe-db.strata",
    ] {
        let output = run(&["report", &recording_fixture(name)], dir.path());
        assert!(output.status.success(), "{}", stderr_of(&output));
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(text.lines().count() > 10, "{text}");
        for line in text.lines() {
            assert!(
                line.chars().count() <= 100,
                "{name}: {} columns: {line}",
                line.chars().count()
            );
        }
    }
}

#[test]
fn json_and_html() {
    let dir = scratch();
    let path = recording_fixture("calibrate-sweep.strata");
    let report = report_json(&[&path], dir.path());
    assert_eq!(report.source.kind, "calibrate");
    let html = dir.path().join("r.html");
    let output = run(
        &["report", &path, "--html", html.to_str().unwrap()],
        dir.path(),
    );
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
}

#[test]
fn bad_windows_and_files_are_refused() {
    let dir = scratch();
    let path = recording_fixture("run-update.strata");
    let path = path.as_str();
    for (from, to, option) in [("8", "4", "--from"), ("1", "60", "--to")] {
        let output = run(&["report", path, "--from", from, "--to", to], dir.path());
        assert_eq!(output.status.code(), Some(2));
        let error = stderr_of(&output);
        assert!(
            error.contains(option) && error.contains("0 to 12.3 s"),
            "{error}"
        );
    }
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "hello\n").unwrap();
    let output = run(&["report", notes.to_str().unwrap()], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr_of(&output).contains("line 1"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn a_window_and_a_comparison() {
    let dir = scratch();
    let a = recording_fixture("run-update.strata");
    let b = recording_fixture("run-page-cache.strata");
    let window = report_json(&[&a, "--from", "4", "--to", "8"], dir.path());
    assert_eq!(window.source.window.unwrap().from_s, 4.0);
    let both = report_json(&["--compare", &a, &b], dir.path());
    assert_eq!(both.source.kind, "compare");
    assert_eq!(both.source.files.len(), 2);
    let output = run(&["report", "--compare", &a, &b], dir.path());
    assert!(output.status.success(), "{}", stderr_of(&output));
}

#[test]
fn two_recordings_joined_with_cat_are_refused_naming_the_line() {
    let dir = scratch();
    let one = std::fs::read_to_string(recording_fixture("run-scan.strata")).unwrap();
    let lines = one.lines().count();
    let joined = dir.path().join("joined.strata");
    std::fs::write(&joined, format!("{one}{one}")).unwrap();
    let output = run(&["report", joined.to_str().unwrap()], dir.path());
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let named = format!("line {}: a second header", lines + 1);
    assert!(stderr.contains(&named), "{stderr}");
    assert!(!stderr.contains("not steady"), "{stderr}");
}

/// A short run (20% updates) on the throwaway cluster, recorded at
/// `record`; `plan` is its data set and caches.
fn recorded_run(record: &Path, plan: &[&str], dir: &Path) {
    let mut args = vec![
        "run",
        "--duration",
        "2s",
        "--warmup",
        "1s",
        "--update-pct",
        "20",
    ];
    args.extend(plan);
    args.extend(["--record", record.to_str().unwrap()]);
    let output = run(&args, dir);
    assert!(output.status.success(), "{}", stderr_of(&output));
}

/// A one-second calibration recorded at `record`.
fn recorded_calibration(record: &Path, points: &[&str], dir: &Path) {
    let mut args = vec![
        "calibrate",
        "--size",
        "64MiB",
        "--duration",
        "1s",
        "--ramp",
        "0s",
    ];
    args.extend(points);
    args.extend(["--record", record.to_str().unwrap()]);
    let output = run(&args, dir);
    assert!(output.status.success(), "{}", stderr_of(&output));
}

fn report_schema() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/report.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The compare's settings that differ, by name: (A's text, B's text).
fn differing_settings(report: &Report) -> Vec<(String, String, String)> {
    let settings = report.section("settings").expect("a settings section");
    let table = settings.tables().next().expect("settings that differ");
    table
        .rows
        .iter()
        .map(|row| {
            (
                row[0].text.clone(),
                row[1].text.clone(),
                row[2].text.clone(),
            )
        })
        .collect()
}

/// Two runs that differ in data set (2 × 32 MiB against 1 × 8 MiB, which
/// fits shared_buffers) and sessions (2 against 1): their paths.
fn two_different_runs(dir: &Path) -> (String, String) {
    let (a, b) = (dir.join("a.strata"), dir.join("b.strata"));
    let plan_a = [
        "--schemas",
        "2",
        "--scale",
        "32MiB",
        "--shared-buffers",
        "16MiB",
    ];
    recorded_run(&a, &plan_a, dir);
    let plan_b = [
        "--schemas",
        "1",
        "--scale",
        "8MiB",
        "--shared-buffers",
        "16MiB",
        "--page-cache-limit",
        "none",
    ];
    recorded_run(&b, &plan_b, dir);
    let path = |path: &Path| path.to_str().unwrap().to_string();
    (path(&a), path(&b))
}

/// The text says what differs before any operation's figures.
fn assert_settings_come_first(a: &str, b: &str, dir: &Path) {
    let output = run(&["report", "--compare", a, b], dir);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle}: {text}"))
    };
    assert!(
        at("Settings that differ") < at("Latency by operation"),
        "{text}"
    );
    assert!(at("data set (schemas × size)") < at("select p99"), "{text}");
    assert!(
        at("2 × 32 MiB = 64 MiB") < at("1 × 8 MiB = 8 MiB"),
        "{text}"
    );
}

/// The JSON matches the report schema and holds the differences, each
/// operation's p99 for both runs and the findings that explain them.
fn assert_json_has_differences_and_percentiles(a: &str, b: &str, dir: &Path) -> Report {
    let json = run_json(&["report", "--compare", a, b], dir);
    let validator = jsonschema::validator_for(&report_schema()).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let report: Report = serde_json::from_value(json).unwrap();
    let differs = differing_settings(&report);
    let names: Vec<&str> = differs.iter().map(|row| row.0.as_str()).collect();
    assert!(names.contains(&"data set (schemas × size)"), "{differs:?}");
    assert!(
        differs.contains(&("sessions".into(), "2".into(), "1".into())),
        "{differs:?}"
    );
    for operation in ["select", "update", "commit"] {
        let name = format!("{operation}_lat_p99_ms");
        let scopes: Vec<&str> = report
            .figures
            .iter()
            .filter(|figure| figure.name == name && figure.value > 0.0)
            .filter_map(|figure| figure.scope.as_deref())
            .collect();
        assert_eq!(scopes, ["A", "B"], "{name}");
    }
    let ids: Vec<&str> = report.findings.iter().map(|f| f.id.as_str()).collect();
    assert!(ids.contains(&"compare_data_set_fits_cache"), "{ids:?}");
    assert!(ids.contains(&"compare_sessions_differ"), "{ids:?}");
    report
}

/// The HTML draws both runs on the shared charts.
fn assert_html_has_the_combined_charts(a: &str, b: &str, report: &Report, dir: &Path) {
    let html = dir.join("compare.html");
    let output = run(
        &[
            "report",
            "--compare",
            a,
            b,
            "--html",
            html.to_str().unwrap(),
        ],
        dir,
    );
    assert!(output.status.success(), "{}", stderr_of(&output));
    let html = std::fs::read_to_string(&html).unwrap();
    for chart in [
        "compare_loops_over_time",
        "compare_select_latency_histogram",
    ] {
        assert!(
            html.contains(&format!("data-chart-id=\"{chart}\"")),
            "{chart}"
        );
    }
    let histogram = report
        .charts()
        .find(|chart| chart.id == "compare_select_latency_histogram")
        .unwrap();
    let series: Vec<&str> = histogram.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(series, ["A", "B"]);
}

#[test]
fn compare_names_what_differs_before_the_figures_of_each_operation() {
    let dir = scratch();
    let (a, b) = two_different_runs(dir.path());
    assert_settings_come_first(&a, &b, dir.path());
    let report = assert_json_has_differences_and_percentiles(&a, &b, dir.path());
    assert_html_has_the_combined_charts(&a, &b, &report, dir.path());
    let calibration = dir.path().join("c.strata");
    recorded_calibration(&calibration, &["--qd", "2"], dir.path());
    let output = run(
        &["report", "--compare", &a, calibration.to_str().unwrap()],
        dir.path(),
    );
    let error = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{error}");
    assert!(
        error.contains("is a run Recording") && error.contains("is a calibrate Recording"),
        "{error}"
    );
}

#[test]
fn calibrations_compare_point_by_point_naming_the_unmatched() {
    let dir = scratch();
    let (a, b) = (dir.path().join("a.strata"), dir.path().join("b.strata"));
    recorded_calibration(
        &a,
        &["--sweep", "--max-qd", "2", "--max-streams", "0"],
        dir.path(),
    );
    recorded_calibration(
        &b,
        &["--workload", "small-random-read", "--qd", "2"],
        dir.path(),
    );
    let report = report_json(
        &["--compare", a.to_str().unwrap(), b.to_str().unwrap()],
        dir.path(),
    );
    let points = report.section("points").expect("a points section");
    let table = points.tables().next().expect("matching points");
    let iops = table
        .rows
        .iter()
        .find(|row| row[0].text.contains("qd=2") && row[0].text.ends_with("IOPS"))
        .unwrap_or_else(|| panic!("{table:?}"));
    assert!(
        iops[3].value.unwrap() > 0.0 && iops[4].value.unwrap() > 0.0,
        "{iops:?}"
    );
    let unmatched = points.blocks.iter().any(|block| {
        matches!(block, strata_output::document::Block::Note { text }
            if text.starts_with("Only in A (small=1 large=0)") && text.contains("qd=1"))
    });
    assert!(unmatched, "{points:?}");
}
