//! `strata awr` end to end: text, JSON and HTML output, compare, series,
//! and bad input, on the fixtures in ../shared/fixtures/awr.

mod common;

use common::*;

const RAC: &str = "12.1.0.2-rac-html-dataextraction_found.html";
const TEXT: &str = "12.2.0.1-single-text-jas-min.txt";
const STATSPACK: &str = "12.1.0.2-statspack-text-jas-min.txt";

fn awr_json(files: &[&str]) -> serde_json::Value {
    let dir = scratch();
    let mut args = vec!["awr".to_string()];
    args.extend(files.iter().map(|name| awr_fixture(name)));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_json(&args, dir.path())
}

#[test]
fn text_output_labels_blocks_and_requests() {
    let dir = scratch();
    let output = run(&["awr", &awr_fixture(RAC)], dir.path());
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let text = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for expected in [
        "Read requests/s (IOPS)",
        "17,483.6",
        "558,794.8",
        "'Physical Reads/s' in System Statistics counts blocks",
        "558,795 blocks/s = 17,484 requests/s × 31.96 blocks",
        "MiB/s",
    ] {
        assert!(
            text.contains(expected),
            "'{expected}' missing from:\n{text}"
        );
    }
}

#[test]
fn json_output_is_the_report_document() {
    let json = awr_json(&[TEXT]);
    assert_eq!(json["schema"], "strata.report");
    assert_eq!(json["source"]["kind"], "awr");
    let ids: Vec<&str> = json["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|section| section["id"].as_str().unwrap())
        .collect();
    for id in [
        "load_profile",
        "misleading_labels",
        "top_waits",
        "commit_waits",
        "io_by_function",
        "io_by_filetype",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    let findings: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["id"].as_str().unwrap())
        .collect();
    assert!(
        findings.contains(&"single_block_read_latency"),
        "{findings:?}"
    );
    assert!(json["problems"].as_array().unwrap().is_empty());
    let rows = json["sections"][0]["blocks"][0]["rows"].as_array().unwrap();
    let requests = rows
        .iter()
        .find(|row| row[0]["text"] == "Read requests/s (IOPS)")
        .unwrap();
    assert_eq!(requests[1]["value"], 101.5);
    assert_eq!(requests[1]["unit"], "requests/s");
}

#[test]
fn statspack_is_its_own_kind() {
    let json = awr_json(&[STATSPACK]);
    assert_eq!(json["source"]["kind"], "statspack");
}

#[test]
fn html_page_is_written() {
    let dir = scratch();
    let page = dir.path().join("awr.html");
    let output = run(
        &["awr", &awr_fixture(TEXT), "--html", page.to_str().unwrap()],
        dir.path(),
    );
    assert!(output.status.success(), "{}", stderr_of(&output));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<html") && html.contains("Load profile"),
        "{html}"
    );
    assert!(html.contains("101.5"), "read requests/s in the page");
}

#[test]
fn two_reports_are_compared() {
    let json = awr_json(&[TEXT, STATSPACK]);
    assert_eq!(json["source"]["kind"], "compare");
    let table = &json["sections"][0]["blocks"][0];
    let columns: Vec<&str> = table["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|column| column["name"].as_str().unwrap())
        .collect();
    assert_eq!(columns, ["Figure", "A", "B", "Change", "Unit"]);
    let sync = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row[0]["text"] == "log file sync")
        .unwrap();
    assert_eq!(sync[1]["value"], 0.37376);
    // STATSPACK prints 5 (whole ms); its row's 25 s over 4,491 waits is the average.
    let exact = sync[2]["value"].as_f64().unwrap();
    assert!((exact - 25.0 * 1000.0 / 4491.0).abs() < 1e-9, "{exact}");
}

/// A report of ../shared/fixtures/awr-real (real reports, SOURCES.md).
fn real_fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/awr-real")
        .join(name)
}

/// Three consecutive hours of one database (snapshots 173494 → 173500).
const RECEIPT: [&str; 3] = [
    "12.1.0.2-single-html-sarthi2020_AWR-reports-1.html",
    "12.1.0.2-single-html-sarthi2020_AWR-reports-2.html",
    "12.1.0.2-single-html-sarthi2020_AWR-reports-3.html",
];

fn interval_rows(section: &serde_json::Value) -> Vec<serde_json::Value> {
    section["blocks"][0]["rows"].as_array().unwrap().clone()
}

#[test]
fn a_directory_is_a_series() {
    let dir = scratch();
    for name in RECEIPT {
        std::fs::copy(real_fixture(name), dir.path().join(name)).unwrap();
    }
    std::fs::write(dir.path().join("README.md"), "not a report").unwrap();
    let json = run_json(&["awr", dir.path().to_str().unwrap()], dir.path());
    assert_eq!(json["source"]["kind"], "series");
    assert_eq!(json["source"]["files"].as_array().unwrap().len(), 3);
    assert_eq!(json["sections"][0]["id"], "time_series");
    let rows = interval_rows(&json["sections"][0]);
    let ends: Vec<&str> = rows
        .iter()
        .map(|row| row[0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        ends,
        [
            "11-Jan-18 10:30:50",
            "11-Jan-18 11:30:05",
            "11-Jan-18 12:31:35"
        ]
    );
    let since: Vec<&str> = rows
        .iter()
        .map(|row| {
            row.as_array().unwrap().last().unwrap()["text"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(since, ["", "follows", "follows"]);
    assert_eq!(
        json["problems"].as_array().unwrap().len(),
        0,
        "{}",
        json["problems"]
    );
    let charts = &json["sections"][1]["blocks"];
    assert_eq!(charts[0]["type"], "chart");
    assert!(!charts[0]["series"].as_array().unwrap().is_empty());
}

#[test]
fn a_gap_between_snapshots_is_named() {
    let dir = scratch();
    let first = real_fixture(RECEIPT[0]);
    let third = real_fixture(RECEIPT[2]);
    let args = [
        "awr",
        "--series",
        first.to_str().unwrap(),
        third.to_str().unwrap(),
    ];
    let json = run_json(&args, dir.path());
    let rows = interval_rows(&json["sections"][0]);
    let since = rows[1].as_array().unwrap().last().unwrap()["text"]
        .as_str()
        .unwrap();
    assert!(
        since.starts_with("gap: snapshots 173496 to 173498"),
        "{since}"
    );
    assert!(
        json["problems"].to_string().contains("gap"),
        "{}",
        json["problems"]
    );
}

#[test]
fn two_databases_are_never_one_series() {
    let dir = scratch();
    let old = awr_fixture("11.2.0.3-single-html-sarthi2020.html");
    let new = awr_fixture("19c-single-html-lucky29011.html");
    let json = run_json(&["awr", "--series", &old, &new], dir.path());
    let ids: Vec<&str> = json["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|section| section["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"time_series_1") && ids.contains(&"time_series_2"),
        "{ids:?}"
    );
    assert!(!ids.contains(&"time_series"), "{ids:?}");
    for section in ["time_series_1", "time_series_2"] {
        let section = json["sections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == section)
            .unwrap();
        assert_eq!(
            interval_rows(section).len(),
            1,
            "one database's one interval"
        );
    }
    let about = json["about"].to_string();
    assert!(about.contains("DB1UAT") && about.contains("DVK"), "{about}");

    let only = run_json(
        &["awr", "--series", "--database", "DVK", &old, &new],
        dir.path(),
    );
    assert_eq!(only["sections"][0]["id"], "time_series");
    assert_eq!(interval_rows(&only["sections"][0]).len(), 1);
    let output = run(
        &["awr", "--series", "--database", "NOPE", &old, &new],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("--database NOPE") && stderr.contains("DB1UAT"),
        "{stderr}"
    );
}

#[test]
fn a_directory_with_an_unreadable_file_reports_the_others_and_names_it() {
    let dir = scratch();
    for name in RECEIPT {
        std::fs::copy(real_fixture(name), dir.path().join(name)).unwrap();
    }
    std::fs::write(dir.path().join("notes.html"), "<html><p>minutes</p></html>").unwrap();
    let output = run(&["awr", dir.path().to_str().unwrap(), "--json"], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["source"]["files"].as_array().unwrap().len(), 3);
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("not read") && stderr.contains("notes.html"),
        "{stderr}"
    );
}

#[test]
fn every_real_report_reads_with_exit_0() {
    let dir = scratch();
    let directory = real_fixture("");
    let mut read = 0;
    for entry in std::fs::read_dir(&directory).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "html" || e == "txt") {
            let output = run(&["awr", path.to_str().unwrap()], dir.path());
            assert!(
                output.status.success(),
                "{}: {}",
                path.display(),
                stderr_of(&output)
            );
            assert!(
                stderr_of(&output).is_empty(),
                "{}: {}",
                path.display(),
                stderr_of(&output)
            );
            read += 1;
        }
    }
    assert_eq!(read, 15);
}

#[test]
fn an_empty_file_is_refused() {
    let dir = scratch();
    let empty = dir.path().join("empty.html");
    std::fs::write(&empty, "").unwrap();
    let output = run(&["awr", empty.to_str().unwrap()], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let stderr = stderr_of(&output);
    assert!(stderr.contains("empty.html is empty"), "{stderr}");
    assert!(stderr.contains("AWR or STATSPACK"), "{stderr}");
}

#[test]
fn html_that_is_not_awr_is_refused() {
    let dir = scratch();
    let page = dir.path().join("sales.html");
    std::fs::write(
        &page,
        "<html><body><table><tr><td>Q3</td></tr></table></body></html>",
    )
    .unwrap();
    let output = run(&["awr", page.to_str().unwrap()], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("sales.html is not an Oracle AWR or STATSPACK report"),
        "{stderr}"
    );
    assert!(
        stderr.contains("expected 'WORKLOAD REPOSITORY report'"),
        "{stderr}"
    );
}

#[test]
fn a_report_cut_in_half_prints_what_it_has_and_names_the_rest() {
    let dir = scratch();
    let whole = std::fs::read(awr_fixture(TEXT)).unwrap();
    let half = dir.path().join("half.txt");
    std::fs::write(&half, &whole[..whole.len() / 3]).unwrap();
    let output = run(&["awr", half.to_str().unwrap(), "--json"], dir.path());
    assert!(output.status.success(), "{}", stderr_of(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let problems = json["problems"].to_string();
    assert!(problems.contains("IOStat by Function"), "{problems}");
    assert!(problems.contains("ends early"), "{problems}");
    assert!(stderr_of(&output).contains("IOStat by Function"));
    let rows = json["sections"][0]["blocks"][0]["rows"].as_array().unwrap();
    let requests = rows
        .iter()
        .find(|row| row[0]["text"] == "Read requests/s (IOPS)")
        .unwrap();
    assert_eq!(requests[1]["value"], 101.5, "read from the Load Profile");
}
