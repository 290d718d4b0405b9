//! `strata report` end to end: a real short run with the page cache
//! unlimited reports `buffered_not_physical`; text fits 100 columns, JSON
//! parses back into the document, --html writes SVG charts, bad windows are
//! refused, and --compare works.

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
