//! The one output path: `--format text|json|csv|html`, `--json`,
//! `--output FILE` and `--html FILE` behave the same in every command;
//! `strata awr` names its figures; bad formats are refused by the option's
//! name; completions and manual pages come from the same definitions.

mod common;

use common::*;
use std::path::Path;

const AWR_TEXT: &str = "12.2.0.1-single-text-jas-min.txt";

/// strata in `dir` with its own temporary directory, which must be empty
/// again when it ends: a Recording made only for the HTML page is removed.
fn run_with_own_tmp(args: &[&str], dir: &Path) -> std::process::Output {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let output = strata()
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", &tmp)
        .output()
        .expect("starting strata");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(left.is_empty(), "left in the temporary directory: {left:?}");
    output
}

fn stdout_of(output: &std::process::Output) -> String {
    assert!(output.status.success(), "{}", stderr_of(output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn awr_json_names_read_requests_per_second_as_requests_not_blocks() {
    let dir = scratch();
    let output = run(
        &["awr", &awr_fixture(AWR_TEXT), "--format", "json"],
        dir.path(),
    );
    let json: serde_json::Value =
        serde_json::from_str(&stdout_of(&output)).expect("one JSON document");
    let figure = |name: &str| {
        json["figures"]
            .as_array()
            .expect("figures")
            .iter()
            .find(|figure| figure["name"] == name)
            .unwrap_or_else(|| panic!("no figure {name}: {}", json["figures"]))
            .clone()
    };
    let requests = figure("read_requests_per_s");
    assert_eq!(requests["value"], 101.5);
    assert_eq!(requests["unit"], "requests/s");
    assert_eq!(requests["layer"], "database");
    let blocks = figure("blocks_read_per_s");
    assert_eq!(blocks["value"], 103.8);
    assert_eq!(blocks["unit"], "blocks/s");
    assert_eq!(figure("read_bytes_per_s")["unit"], "bytes/s");
}

#[test]
fn awr_csv_starts_with_the_named_figures() {
    let dir = scratch();
    let output = run(
        &["awr", &awr_fixture(AWR_TEXT), "--format", "csv"],
        dir.path(),
    );
    let text = stdout_of(&output);
    assert!(
        text.starts_with("# figures\nscope,name,value,unit,layer,source_label\n"),
        "{text}"
    );
    assert!(
        text.contains(",read_requests_per_s,101.5,requests/s,database,"),
        "{text}"
    );
    assert!(text.contains("\n# load_profile: "), "{text}");
}

#[test]
fn html_goes_to_its_file_and_nothing_to_stdout_in_report_and_awr() {
    let dir = scratch();
    let inputs = [
        ("report", recording_fixture("run-update.strata")),
        ("awr", awr_fixture(AWR_TEXT)),
    ];
    for (command, input) in inputs {
        let page = dir.path().join(format!("{command}.html"));
        let output = run(
            &[command, &input, "--html", page.to_str().unwrap()],
            dir.path(),
        );
        assert_eq!(stdout_of(&output), "", "{command}");
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"), "{command}: {html}");
        let same = dir.path().join(format!("{command}-output.html"));
        let output = run(
            &[
                command,
                &input,
                "--format",
                "html",
                "--output",
                same.to_str().unwrap(),
            ],
            dir.path(),
        );
        assert_eq!(stdout_of(&output), "", "{command}");
        assert_eq!(std::fs::read_to_string(&same).unwrap(), html, "{command}");
    }
}

#[test]
fn output_writes_the_format_to_a_file() {
    let dir = scratch();
    let file = dir.path().join("report.json");
    let output = run(
        &[
            "report",
            &recording_fixture("calibrate-sweep.strata"),
            "--json",
            "--output",
            file.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(stdout_of(&output), "");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(json["schema"], "strata.report");
}

#[test]
fn a_bad_or_conflicting_format_is_refused_by_name_before_any_work() {
    let dir = scratch();
    let input = recording_fixture("run-update.strata");
    let output = run(&["report", &input, "--format", "xml"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("--format") && stderr.contains("text, json, csv, html"),
        "{stderr}"
    );
    let output = run(&["report", &input, "--format", "csv", "--json"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("--json") && stderr.contains("--format"),
        "{stderr}"
    );
}

#[test]
fn observe_streams_json_lines_and_csv_rows() {
    let dir = scratch();
    let args = ["observe", "--count", "2", "--interval", "200ms"];
    let json = stdout_of(&run(
        &[&args[..], &["--format", "json"]].concat(),
        dir.path(),
    ));
    let samples: Vec<serde_json::Value> = json
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect();
    assert_eq!(samples.len(), 2, "one line per interval: {json}");
    assert!(samples[1]["layers"]["cpu"]["metrics"].is_array(), "{json}");
    assert!(samples[0]["interval_s"].as_f64().unwrap() > 0.1);

    let csv = stdout_of(&run(
        &[&args[..], &["--format", "csv"]].concat(),
        dir.path(),
    ));
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("unix_s,t_s,interval_s,layer,name,labels,kind,value,rate_per_s")
    );
    let cpu_rates: Vec<&str> = lines
        .filter(|line| line.contains(",cpu,") && line.contains(",counter,"))
        .filter(|line| !line.ends_with(','))
        .collect();
    assert!(
        !cpu_rates.is_empty(),
        "counters of later samples carry a rate: {csv}"
    );
}

#[test]
fn observe_html_is_the_report_of_its_samples() {
    let dir = scratch();
    let page = dir.path().join("observe.html");
    let page_arg = page.to_str().unwrap();
    let args = [
        "observe",
        "--count",
        "2",
        "--interval",
        "200ms",
        "--html",
        page_arg,
    ];
    let output = run_with_own_tmp(&args, dir.path());
    assert_eq!(stdout_of(&output), "");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<svg"), "charts of the samples: {html}");
}

#[test]
fn calibrate_prints_its_points_as_csv_and_its_report_as_html() {
    let dir = scratch();
    let base = [
        "calibrate",
        "--size",
        "32MiB",
        "--workload",
        "small-random-read",
        "--qd",
        "2",
        "--ios",
        "400",
    ];
    let csv = stdout_of(&run(
        &[&base[..], &["--format", "csv"]].concat(),
        dir.path(),
    ));
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("point,group,rw,block_size_bytes,queue_depth"),
        "{csv}"
    );
    assert_eq!(lines.count(), 1, "one point, one group: {csv}");

    let page = dir.path().join("cal.html");
    let args = [&base[..], &["--html", page.to_str().unwrap()]].concat();
    let output = run_with_own_tmp(&args, dir.path());
    assert_eq!(stdout_of(&output), "");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<svg") && html.contains("calibrate"),
        "{html}"
    );
}

#[test]
fn completions_and_manual_pages_cover_every_subcommand() {
    let dir = scratch();
    let bash = stdout_of(&run(&["completions", "bash"], dir.path()));
    for word in ["calibrate", "observe", "--page-cache-limit", "--format"] {
        assert!(
            bash.contains(word),
            "{word} missing from the bash completions"
        );
    }
    let check = std::process::Command::new("bash")
        .args(["-n", "-c", &bash])
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    for shell in ["zsh", "fish"] {
        let script = stdout_of(&run(&["completions", shell], dir.path()));
        assert!(script.contains("latency-target"), "{shell}");
    }
    let page = stdout_of(&run(&["man"], dir.path()));
    assert!(page.contains(".TH STRATA 1"), "{page}");
    let pages = dir.path().join("man");
    let output = run(&["man", "--dir", pages.to_str().unwrap()], dir.path());
    assert!(output.status.success(), "{}", stderr_of(&output));
    for command in [
        "run",
        "calibrate",
        "observe",
        "report",
        "awr",
        "model",
        "setup",
    ] {
        let text = std::fs::read_to_string(pages.join(format!("strata-{command}.1"))).unwrap();
        assert!(
            text.contains(&format!(".TH STRATA-{}", command.to_uppercase())),
            "{text}"
        );
    }
}

#[test]
fn a_run_prints_its_seconds_as_csv_and_its_recording_as_html() {
    let dir = scratch();
    let page = dir.path().join("run.html");
    let record = dir.path().join("run.strata");
    let base = [
        "run",
        "--scale",
        "8MiB",
        "--shared-buffers",
        "16MiB",
        "--duration",
        "2s",
        "--warmup",
        "0s",
        "--record",
        record.to_str().unwrap(),
    ];
    let csv = stdout_of(&run(
        &[&base[..], &["--format", "csv"]].concat(),
        dir.path(),
    ));
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "second,loops,selects,updates,scans", "{csv}");
    assert_eq!(rows.len(), 3, "two seconds of window: {csv}");
    assert!(
        rows[1].starts_with("0,") && rows[2].starts_with("1,"),
        "{csv}"
    );

    let again = [&base[..], &["--html", page.to_str().unwrap()]].concat();
    let refused = run(&again, dir.path());
    assert_eq!(refused.status.code(), Some(2), "a Recording replaced");
    let output = run(&[&again[..], &["--overwrite"]].concat(), dir.path());
    assert_eq!(stdout_of(&output), "");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<svg") && html.contains("run.strata"),
        "{html}"
    );
    assert_nothing_left_behind(dir.path());
}

/// Recordings of format version 1, one of each kind, still report through
/// the binary in every format, with the sections their kind has.
#[test]
fn version_one_recordings_of_every_kind_still_report_in_every_format() {
    let dir = scratch();
    let kinds = [
        ("run-update.strata", "run", "load_profile"),
        ("calibrate-sweep.strata", "calibrate", "calibrate"),
        ("observe-db.strata", "observe", "time_series"),
    ];
    for (file, kind, section) in kinds {
        let path = recording_fixture(file);
        let first_line = std::fs::read_to_string(&path).unwrap();
        let header: serde_json::Value =
            serde_json::from_str(first_line.lines().next().unwrap()).unwrap();
        assert_eq!(header["version"], 1, "{file} is a version-1 Recording");
        let json = stdout_of(&run(&["report", &path, "--format", "json"], dir.path()));
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(json["source"]["kind"], kind, "{file}");
        let ids: Vec<&str> = json["sections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|section| section["id"].as_str().unwrap())
            .collect();
        assert!(ids.contains(&section), "{file}: {ids:?}");
        for format in ["text", "csv", "html"] {
            let output = stdout_of(&run(&["report", &path, "--format", format], dir.path()));
            assert!(output.len() > 200, "{file} as {format}: {output}");
        }
    }
}
