//! Every fixture in ../shared/fixtures/awr parses, and the figures checked
//! are the ones printed in the reports themselves (typed from reading them).

use std::path::PathBuf;
use strata_awr::model::{AwrReport, IoRow};
use strata_awr::{build, parse, Format};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/awr")
}

fn read(name: &str) -> AwrReport {
    let path = fixtures().join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse(&String::from_utf8_lossy(&bytes), name).expect("parses")
}

fn close(actual: Option<f64>, expected: f64) {
    let actual = actual.unwrap_or_else(|| panic!("missing, expected {expected}"));
    assert!(
        (actual - expected).abs() <= expected.abs() * 1e-6 + 1e-9,
        "{actual} != {expected}"
    );
}

fn total(report: &AwrReport, stat: &str) -> Option<f64> {
    report.stat(stat).and_then(|stat| stat.total)
}

fn fg_avg(report: &AwrReport, event: &str) -> Option<f64> {
    report
        .foreground_event(event)
        .and_then(|event| event.avg_ms)
}

fn bg_avg(report: &AwrReport, event: &str) -> Option<f64> {
    report
        .background_event(event)
        .and_then(|event| event.avg_ms)
}

/// The by-file-type row `name`, with its printed rates: read requests/s,
/// read MiB/s, write requests/s, write MiB/s.
fn filetype<'a>(report: &'a AwrReport, name: &str, rates: [f64; 4]) -> &'a IoRow {
    let row = report
        .io_by_filetype
        .iter()
        .find(|row| row.name == name)
        .unwrap_or_else(|| panic!("{name} not in {:?}", report.io_by_filetype));
    close(row.read_requests_per_s, rates[0]);
    close(row.read_mib_per_s, rates[1]);
    close(row.write_requests_per_s, rates[2]);
    close(row.write_mib_per_s, rates[3]);
    row
}

fn filetype_names(report: &AwrReport) -> Vec<&str> {
    report
        .io_by_filetype
        .iter()
        .map(|row| row.name.as_str())
        .collect()
}

/// STATSPACK has no IOStat by Filetype section: not a problem of the report.
const FILETYPE_MISSING: &str = "section not found or not readable: IOStat by Filetype";

#[test]
fn every_fixture_parses_into_a_report_without_problems() {
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap() == "SOURCES.md" {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let report = read(&name);
        assert!(report.problems.is_empty(), "{name}: {:?}", report.problems);
        let document = build::report(&report);
        assert!(document.section("load_profile").is_some(), "{name}");
        assert!(document.section("io_by_filetype").is_some(), "{name}");
        assert!(!document.findings.is_empty(), "{name}: no finding at all");
    }
}

#[test]
fn html_19c_single_instance() {
    let report = read("19c-single-html-lucky29011.html");
    assert_eq!(report.format, Format::HtmlAwr);
    assert_eq!(report.header.database.as_deref(), Some("DVK"));
    assert_eq!(report.header.release.as_deref(), Some("19.0.0.0.0"));
    close(report.header.block_size_bytes, 8192.0);
    close(report.header.elapsed_s, 117.66 * 60.0);
    close(report.header.db_time_s, 0.24 * 60.0);
    let end = report.header.end_snap.as_ref().unwrap();
    assert_eq!((end.id, end.time.as_str()), (Some(7), "20-Oct-24 21:48:53"));
    close(
        report.profile(&["Read IO requests"]).unwrap().per_second,
        0.4,
    );
    close(total(&report, "physical read IO requests"), 2572.0);
    close(total(&report, "physical reads"), 2756.0);
    close(fg_avg(&report, "db file sequential read"), 1.43);
    // Only background processes waited on log file sync in this interval:
    // it is not a foreground (commit) wait.
    assert!(report.foreground_event("log file sync").is_none());
    close(bg_avg(&report, "log file sync"), 36.11);
    close(bg_avg(&report, "log file parallel write"), 32.35);
    let cpu = report.host_cpu.as_ref().unwrap();
    close(cpu.cpus, 3.0);
    close(cpu.idle_pct, 95.8);
    let buffer_cache = &report
        .io_by_function
        .iter()
        .find(|r| r.name == "Buffer Cache Reads")
        .unwrap();
    close(buffer_cache.read_requests_per_s, 0.33);
    close(buffer_cache.avg_wait_ms, 2.17);
}

#[test]
fn html_11g_old_labels() {
    let report = read("11.2.0.3-single-html-sarthi2020.html");
    assert_eq!(report.header.database.as_deref(), Some("DB1UAT"));
    assert_eq!(report.header.begin_snap.as_ref().unwrap().id, Some(42809));
    assert!(report.profile(&["Physical reads"]).is_some());
    assert!(report.profile(&["Read IO requests"]).is_none());
    close(total(&report, "physical read IO requests"), 4_089_416.0);
    close(total(&report, "physical reads"), 193_811_754.0);
    let top = &report.top_events[0];
    assert_eq!(top.name, "direct path read");
    close(top.waits, 332_492.0);
    close(top.avg_ms, 21.0);
    close(fg_avg(&report, "log file sync"), 12.0);
    close(bg_avg(&report, "log file parallel write"), 4.0);
    close(report.host_cpu.as_ref().unwrap().idle_pct, 7.8);
}

#[test]
fn html_18c_exadata_block_size_and_cell_reads() {
    let report = read("18.0-single-html-eyko139.html");
    close(report.header.block_size_bytes, 16384.0);
    assert!(report.foreground_event("db file sequential read").is_none());
    let cell = report
        .foreground_event("cell single block physical read")
        .unwrap();
    close(cell.waits, 1_075_359.0);
    close(cell.avg_ms, 0.42051);
    close(fg_avg(&report, "log file sync"), 2.45);
    close(report.host_cpu.as_ref().unwrap().cpus, 14.0);
    let document = build::report(&report);
    let latency = document
        .findings
        .iter()
        .find(|f| f.id == "single_block_read_latency");
    // time ÷ waits (452.2 s ÷ 1,075,359): Oracle printed 420.51us; shown
    // with three significant digits, as every average is.
    assert!(
        latency.unwrap().title.contains("0.421 ms"),
        "{}",
        latency.unwrap().title
    );
}

#[test]
fn rac_12_1_physical_reads_are_blocks() {
    let report = read("12.1.0.2-rac-html-dataextraction_found.html");
    assert_eq!(report.format, Format::HtmlAwrGlobal);
    assert_eq!(report.header.database.as_deref(), Some("SLOB"));
    assert_eq!(report.header.instances, vec!["SLOB1", "SLOB2"]);
    close(report.header.elapsed_s, 2.77 * 60.0);
    let (_, sum) = report
        .rac_per_second
        .iter()
        .find(|(label, _)| label == "Sum")
        .unwrap();
    close(sum.get("Physical Reads/s").copied(), 558_794.77);
    close(
        report.stat_per_second("physical read IO requests"),
        17_483.62,
    );
    close(report.stat_per_second("physical reads"), 558_794.77);
    assert_eq!(
        report.parameter("db_file_multiblock_read_count"),
        Some("32")
    );
    close(bg_avg(&report, "log file parallel write"), 0.27);
    close(
        report.foreground_event("direct path read").unwrap().waits,
        1_175_907.0,
    );

    let document = build::report(&report);
    let notes = format!("{:?}", document.section("misleading_labels").unwrap());
    assert!(
        notes.contains("'Physical Reads/s' in System Statistics counts blocks"),
        "{notes}"
    );
    assert!(
        notes.contains("558,795 blocks/s = 17,484 requests/s × 31.96 blocks"),
        "{notes}"
    );
    let profile = document
        .section("load_profile")
        .unwrap()
        .tables()
        .next()
        .unwrap();
    let blocks = profile.row("Blocks read/s").unwrap();
    assert_eq!(blocks[2].text, "blocks/s");
    let requests = profile.row("Read requests/s (IOPS)").unwrap();
    assert_eq!(requests[1].text, "17,483.6");
    let ids: Vec<&str> = document.findings.iter().map(|f| f.id.as_str()).collect();
    assert!(ids.contains(&"multiblock_read_size"), "{ids:?}");
}

#[test]
fn rac_12_2_cluster_rows() {
    let report = read("12.2.0.1-rac-html-dataextraction_found.html");
    assert_eq!(report.header.database.as_deref(), Some("DB1TP"));
    close(report.header.elapsed_s, 30.03 * 60.0);
    let (_, sum) = report
        .rac_per_second
        .iter()
        .find(|(label, _)| label == "Sum")
        .unwrap();
    close(sum.get("Physical Reads/s").copied(), 6_542.39);
    let sequential = report.foreground_event("db file sequential read").unwrap();
    close(sequential.waits, 6_417_241.0);
    close(sequential.avg_ms, 0.40335);
    close(bg_avg(&report, "log file parallel write"), 0.23981);
    let buffer_cache = report
        .io_by_function
        .iter()
        .find(|r| r.name == "Buffer Cache Reads")
        .unwrap();
    close(buffer_cache.read_requests_per_s, 6_542.56);
    close(report.host_cpu.as_ref().unwrap().cpus, 8.0);
}

#[test]
fn text_awr_12_2_with_units_in_averages() {
    let report = read("12.2.0.1-single-text-jas-min.txt");
    assert_eq!(report.format, Format::TextAwr);
    assert_eq!(report.header.database.as_deref(), Some("BPSC"));
    close(report.header.elapsed_s, 60.25 * 60.0);
    close(report.header.db_time_s, 66.24 * 60.0);
    close(
        report.profile(&["Read IO requests"]).unwrap().per_second,
        101.5,
    );
    close(
        report
            .profile(&["Physical read (blocks)"])
            .unwrap()
            .per_second,
        103.8,
    );
    close(total(&report, "physical read IO requests"), 366_729.0);
    close(total(&report, "redo write time"), 4_410.0);
    close(fg_avg(&report, "db file sequential read"), 0.10972);
    close(fg_avg(&report, "log file sync"), 0.37376);
    close(bg_avg(&report, "log file parallel write"), 0.38673);
    let cpu = report.host_cpu.as_ref().unwrap();
    close(cpu.cpus, 40.0);
    close(cpu.idle_pct, 97.1);
    let buffer_cache = report
        .io_by_function
        .iter()
        .find(|r| r.name == "Buffer Cache Reads")
        .unwrap();
    close(buffer_cache.read_requests_per_s, 101.1);
    close(buffer_cache.read_mib_per_s, 0.801);
    assert_eq!(report.parameter("db_block_size"), Some("8192"));
}

#[test]
fn statspack_12_1() {
    let report = read("12.1.0.2-statspack-text-jas-min.txt");
    assert_eq!(report.format, Format::Statspack);
    close(report.header.elapsed_s, 60.02 * 60.0);
    close(report.header.block_size_bytes, 8192.0);
    close(
        report.profile(&["Physical reads"]).unwrap().per_second,
        5_627.4,
    );
    close(total(&report, "physical read IO requests"), 164_750.0);
    let overflowed = report.stat("physical read bytes").unwrap();
    assert_eq!(
        overflowed.per_transaction, None,
        "'############' is no number"
    );
    close(fg_avg(&report, "log file sync"), 5.0);
    close(bg_avg(&report, "log file parallel write"), 6.0);
    let cpu = report.host_cpu.as_ref().unwrap();
    close(cpu.cpus, 22.0);
    close(cpu.idle_pct, 95.79);
    let direct = report
        .io_by_function
        .iter()
        .find(|r| r.name == "Direct Reads")
        .unwrap();
    close(direct.read_requests_per_s, 44.6);
    assert!(report.io_by_filetype.is_empty());
    assert!(
        !report
            .problems
            .iter()
            .any(|problem| problem == FILETYPE_MISSING),
        "STATSPACK never has the section: {:?}",
        report.problems
    );
    let document = build::report(&report);
    let section = format!("{:?}", document.section("io_by_filetype").unwrap());
    assert!(
        section.contains("no readable IOStat by Filetype"),
        "{section}"
    );
}

#[test]
fn filetype_19c_html_summary() {
    let report = read("19c-single-html-lucky29011.html");
    assert_eq!(
        filetype_names(&report),
        ["Control File", "Data File", "Log File", "Other", "TOTAL"]
    );
    let control = filetype(&report, "Control File", [1.00, 0.018, 0.34, 0.007]);
    close(control.small_read_ms, 0.00528);
    close(control.large_read_ms, 1.45);
    let data = filetype(&report, "Data File", [0.33, 0.003, 0.13, 0.003]);
    close(data.small_read_ms, 1.93);
    assert_eq!(data.large_read_ms, None, "blank cell");
    filetype(&report, "Log File", [0.0, 0.0, 0.07, 0.003]);
    close(
        filetype(&report, "Other", [0.0, 0.0, 0.0, 0.001]).small_read_ms,
        1.50,
    );
    let total = filetype(&report, "TOTAL", [1.33, 0.021, 0.54, 0.013]);
    close(total.small_read_ms, 0.48658);
    close(total.large_read_ms, 1.45);
}

#[test]
fn filetype_12_2_text_summary() {
    let report = read("12.2.0.1-single-text-jas-min.txt");
    assert_eq!(
        filetype_names(&report),
        [
            "Data File",
            "Log File",
            "Control File",
            "Archive Log",
            "Temp File",
            "TOTAL"
        ]
    );
    let data = filetype(&report, "Data File", [101.5, 0.81, 12.5, 0.237]);
    close(data.small_read_ms, 0.00442);
    close(data.large_read_ms, 0.0);
    let log = filetype(&report, "Log File", [0.2, 0.198, 29.0, 0.153]);
    close(log.small_read_ms, 0.07895);
    close(log.large_read_ms, 2.81);
    filetype(&report, "Control File", [7.7, 0.187, 1.2, 0.018]);
    let archive = filetype(&report, "Archive Log", [0.0, 0.0, 0.2, 0.198]);
    assert_eq!(archive.small_read_ms, None);
    let total = filetype(&report, "TOTAL", [109.3, 1.195, 42.8, 0.605]);
    close(total.large_read_ms, 2.03);

    let document = build::report(&report);
    let ids: Vec<&str> = document.sections.iter().map(|s| s.id.as_str()).collect();
    let after = ids.iter().position(|id| *id == "io_by_function").unwrap() + 1;
    assert_eq!(ids[after], "io_by_filetype", "{ids:?}");
    let table = document
        .section("io_by_filetype")
        .unwrap()
        .tables()
        .next()
        .unwrap();
    let data = table.row("Data File").unwrap();
    assert_eq!(data[1].text, "101.5");
    assert_eq!(data[2].text, "0.810", "MiB/s as printed");
    assert_eq!(data[3].text, "0.849", "0.81 MiB/s = 0.849 MB/s");
    assert_eq!(data[7].text, "0.004", "4.42us small read");
}

#[test]
fn filetype_older_html_summaries() {
    let old = read("11.2.0.3-single-html-sarthi2020.html");
    let data = filetype(&old, "Data File", [1114.38, 418.947, 52.51, 0.587615]);
    close(data.small_read_ms, 1.29);
    close(data.large_read_ms, 13.75);
    let exadata = read("18.0-single-html-eyko139.html");
    let data = filetype(&exadata, "Data File", [42.36, 5.235, 5.23, 0.106]);
    close(data.small_read_ms, 0.27112);
    close(data.large_read_ms, 369.08);
    filetype(&exadata, "Flashback Log", [0.0, 0.0, 0.33, 0.089]);
    close(
        filetype(&exadata, "Other", [0.57, 0.001, 0.0, 0.0]).small_read_ms,
        0.83474,
    );
}

#[test]
fn filetype_rac_cluster_rows() {
    let rac_12_2 = read("12.2.0.1-rac-html-dataextraction_found.html");
    assert_eq!(rac_12_2.io_by_filetype.len(), 6, "only the '*' rows");
    let total = filetype(&rac_12_2, "TOTAL", [6563.00, 57.81, 3198.14, 55.80]);
    close(total.small_read_ms, 0.0096);
    close(total.large_read_ms, 0.24515);
    filetype(&rac_12_2, "Data File", [6542.53, 51.11, 2548.12, 50.33]);
    filetype(&rac_12_2, "Log File", [6.98, 6.49, 646.93, 3.46]);

    let rac_12_1 = read("12.1.0.2-rac-html-dataextraction_found.html");
    assert_eq!(
        filetype_names(&rac_12_1),
        ["TOTAL", "Data File", "Temp File", "Log File"]
    );
    filetype(&rac_12_1, "TOTAL", [17495.13, 4364.44, 5.57, 0.08]);
    filetype(&rac_12_1, "Data File", [17478.12, 4364.18, 2.69, 0.02]);
    filetype(&rac_12_1, "Temp File", [0.03, 0.0, 0.04, 0.0]);
    let log = rac_12_1
        .io_by_filetype
        .iter()
        .find(|row| row.name == "Log File")
        .unwrap();
    assert_eq!(log.read_requests_per_s, None, "no Log File read column");
    close(log.write_requests_per_s, 0.92);
    close(log.write_mib_per_s, 0.02);
}

#[test]
fn malformed_inputs_are_refused_or_named() {
    let empty = parse("", "empty.html").unwrap_err().to_string();
    assert!(empty.contains("empty.html is empty"), "{empty}");
    let page =
        "<html><body><h1>Quarterly sales</h1><table><tr><td>1</td></tr></table></body></html>";
    let not_awr = parse(page, "sales.html").unwrap_err().to_string();
    assert!(
        not_awr.contains("not an Oracle AWR or STATSPACK report"),
        "{not_awr}"
    );
    assert!(not_awr.contains("WORKLOAD REPOSITORY report"), "{not_awr}");

    let whole =
        std::fs::read_to_string(fixtures().join("12.2.0.1-single-text-jas-min.txt")).unwrap();
    let third = &whole[..whole.len() / 3];
    let cut = parse(third, "third.txt").unwrap();
    close(
        cut.profile(&["Read IO requests"]).unwrap().per_second,
        101.5,
    );
    let problems = cut.problems.join("\n");
    assert!(problems.contains("IOStat by Function"), "{problems}");
    assert!(problems.contains("ends early"), "{problems}");
}

#[test]
fn a_cut_html_report_keeps_what_it_has() {
    let path = fixtures().join("19c-single-html-lucky29011.html");
    let whole = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    let cut = parse(&whole[..whole.len() / 3], "third.html").unwrap();
    close(cut.header.elapsed_s, 117.66 * 60.0);
    assert!(
        cut.problems
            .iter()
            .any(|p| p.contains("Instance Activity Stats")),
        "{:?}",
        cut.problems
    );
}

/// A report of 10+ MB (a fixture padded with Instance Activity rows)
/// parses in well under a second of CPU per MB, even in a debug build.
#[test]
fn large_reports_parse_fast() {
    let path = fixtures().join("12.2.0.1-single-text-jas-min.txt");
    let whole = std::fs::read_to_string(path).unwrap();
    let at = whole.find("physical reads cache prefetch").unwrap();
    let line_start = whole[..at].rfind('\n').unwrap() + 1;
    let mut padded = String::with_capacity(11 << 20);
    padded.push_str(&whole[..line_start]);
    let mut index = 0;
    while padded.len() < 10 << 20 {
        padded.push_str(&format!(
            "padding statistic {index:<14}                {:>10}          103.8           5.0\n",
            index * 7
        ));
        index += 1;
    }
    padded.push_str(&whole[line_start..]);
    let megabytes = padded.len() as f64 / 1e6;
    let started = std::time::Instant::now();
    let report = parse(&padded, "padded.txt").unwrap();
    let seconds = started.elapsed().as_secs_f64();
    assert!(report.activity.len() > 100_000, "{}", report.activity.len());
    close(total(&report, "physical read IO requests"), 366_729.0);
    assert!(
        seconds / megabytes < 1.0,
        "{seconds:.2} s for {megabytes:.1} MB"
    );
    eprintln!("{megabytes:.1} MB in {seconds:.2} s");
}

/// Every fixture's report, and a comparison and a series of them, as JSON
/// that docs/report.schema.json accepts, and as text within 100 columns.
#[test]
fn every_fixture_report_matches_the_report_schema() {
    use strata_output::render::{json::JsonRenderer, text::TextRenderer, Renderer};
    let schema_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/report.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let mut reports = Vec::new();
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name != "SOURCES.md" {
            reports.push(read(&name));
        }
    }
    let mut documents: Vec<_> = reports.iter().map(build::report).collect();
    documents.push(strata_awr::compare::report(&reports[0], &reports[1]));
    documents.push(strata_awr::series::report(&reports, None).expect("one series per database"));
    for document in &documents {
        let json: serde_json::Value = serde_json::from_str(&JsonRenderer.render(document)).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&json)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", document.title);
        let text = TextRenderer::default().render(document);
        assert!(
            text.lines().all(|line| line.chars().count() <= 100),
            "{}",
            document.title
        );
    }
}
