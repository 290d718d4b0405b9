//! Real AWR and STATSPACK reports from public repositories
//! (../shared/fixtures/awr-real, sources in its SOURCES.md), each read as
//! Oracle defines its figures: averages are time ÷ waits from the event's
//! own row, every share says what it is a share of, an event keeps the
//! table (foreground, background, all sessions) it came from. Expected
//! values are computed here from the rows the report prints.

use std::path::PathBuf;
use strata_awr::model::{AwrReport, EventTable, WaitEvent};
use strata_awr::{build, parse, Report};
use strata_output::document::{Block, Finding};

fn real(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/awr-real")
        .join(name)
}

fn read_path(path: PathBuf) -> AwrReport {
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    parse(&String::from_utf8_lossy(&bytes), &name).unwrap_or_else(|e| panic!("{name}: {e:#}"))
}

fn read(name: &str) -> AwrReport {
    read_path(real(name))
}

fn fg<'a>(report: &'a AwrReport, name: &str) -> &'a WaitEvent {
    report
        .foreground_event(name)
        .unwrap_or_else(|| panic!("{name} not a foreground event of {}", report.name))
}

fn bg<'a>(report: &'a AwrReport, name: &str) -> &'a WaitEvent {
    report
        .background_event(name)
        .unwrap_or_else(|| panic!("{name} not a background event of {}", report.name))
}

/// time ÷ waits in ms, from the row as printed.
fn time_over_waits(event: &WaitEvent) -> f64 {
    event.time_s.expect("time printed") * 1000.0 / event.waits.expect("waits printed")
}

fn finding<'a>(document: &'a Report, id: &str) -> Option<&'a Finding> {
    document.findings.iter().find(|finding| finding.id == id)
}

/// Every text cell and note of a section, one string.
fn section_text(document: &Report, id: &str) -> String {
    let section = document
        .section(id)
        .unwrap_or_else(|| panic!("no section {id}"));
    let mut text = String::new();
    for block in &section.blocks {
        match block {
            Block::Table(table) => {
                for row in &table.rows {
                    for cell in row {
                        text.push_str(&cell.text);
                        text.push('|');
                    }
                    text.push('\n');
                }
            }
            Block::Note { text: note } => text.push_str(note),
            Block::Chart(_) => {}
        }
    }
    text
}

fn all_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for directory in ["awr", "awr-real"] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/fixtures")
            .join(directory);
        for entry in std::fs::read_dir(&path).unwrap() {
            let file = entry.unwrap().path();
            if file.extension().is_some_and(|e| e == "html" || e == "txt") {
                files.push(file);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 22, "{files:?}");
    files
}

#[test]
fn every_real_report_reads_without_problems() {
    for file in all_files() {
        let report = read_path(file.clone());
        assert!(
            report.problems.is_empty(),
            "{}: {:?}",
            file.display(),
            report.problems
        );
        assert!(!report.top_events.is_empty(), "{}", file.display());
    }
}

#[test]
fn averages_are_time_over_waits_not_oracles_whole_milliseconds() {
    let report = read_path(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/fixtures/awr/11.2.0.3-single-html-sarthi2020.html"),
    );
    let sequential = fg(&report, "db file sequential read");
    assert_eq!(
        sequential.avg_ms,
        Some(1.0),
        "Oracle's printed average kept"
    );
    let expected = time_over_waits(sequential);
    assert!((expected - 1.49993).abs() < 1e-4, "{expected}");
    let average = sequential.average().unwrap();
    assert!(average.computed);
    assert!((average.ms - expected).abs() < 1e-12);
    let log_write = bg(&report, "log file parallel write");
    let sync = fg(&report, "log file sync");
    let rest = time_over_waits(sync) - time_over_waits(log_write);
    assert!((rest - 7.515).abs() < 0.001, "{rest}");

    let document = build::report(&report);
    let waits = section_text(&document, "top_waits");
    assert!(
        waits.contains("db file sequential read|1,800,747|2,701|1.50|"),
        "{waits}"
    );
    assert!(
        waits.contains("log file parallel write|263,324|1,159|4.40|"),
        "{waits}"
    );
    let commit = section_text(&document, "commit_waits");
    assert!(commit.contains("rest of the commit wait|7.51|"), "{commit}");
    let labels = section_text(&document, "misleading_labels");
    assert!(
        labels.contains("db file sequential read 1 (time ÷ waits: 1.50)"),
        "{labels}"
    );
}

#[test]
fn shares_say_what_they_are_shares_of() {
    let report = read_path(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/fixtures/awr/11.2.0.3-single-html-sarthi2020.html"),
    );
    let log_write = bg(&report, "log file parallel write");
    assert_eq!(log_write.table, EventTable::Background);
    assert_eq!(log_write.pct_of.as_deref(), Some("background time"));
    assert_eq!(
        fg(&report, "log file sync").pct_of.as_deref(),
        Some("DB time")
    );
    let statspack = read("11.2.0.3-statspack-text-Apress_troubleshooting-oracle-perf-14-1.txt");
    assert!(statspack
        .top_events
        .iter()
        .all(|event| event.table == EventTable::AllSessions));
    assert_eq!(
        statspack.top_events[0].pct_of.as_deref(),
        Some("total call time")
    );
    let document = build::report(&statspack);
    let top = document.section("top_waits").unwrap();
    let Block::Table(table) = &top.blocks[0] else {
        panic!("top waits table")
    };
    assert_eq!(
        table.title.as_deref(),
        Some("Top timed events (all sessions)")
    );
}

#[test]
fn commit_decomposition_uses_exact_averages() {
    let report = read("11.2.0.3-single-html-Apress_troubleshooting-oracle-perf-14-1.html");
    let sync = time_over_waits(fg(&report, "log file sync"));
    let log_write = time_over_waits(bg(&report, "log file parallel write"));
    assert!((sync - 0.514).abs() < 0.001 && (log_write - 0.218).abs() < 0.001);
    let share = (log_write / sync * 100.0).round();
    let document = build::report(&report);
    let commit = finding(&document, "commit_waits_decomposed").unwrap();
    assert!(
        commit
            .title
            .contains(&format!("{share:.0}% of the average commit")),
        "{} (expected {share}%)",
        commit.title
    );

    let statspack = read("11.2.0.4-statspack-text-TheYanVictor_Statspack_scan.py-1.txt");
    let per_write = statspack.stat_total("redo write time").unwrap() * 10.0
        / statspack.stat_total("redo writes").unwrap();
    assert!((per_write - 0.164).abs() < 0.001, "{per_write}");
    let text = section_text(&build::report(&statspack), "commit_waits");
    assert!(
        text.contains("redo write time per redo write|0.164|"),
        "{text}"
    );
    assert!(!text.contains("|0.000|"), "{text}");
}

#[test]
fn a_log_write_longer_than_the_commit_is_group_commit_not_a_share() {
    let report = read(
        "19.0-single-html-DanielMendieta_Optimizacion_y_Monitoreo_de_Rendimiento_en_Oracle_con_AWR-1.html",
    );
    let sync = time_over_waits(fg(&report, "log file sync"));
    let log_write = time_over_waits(bg(&report, "log file parallel write"));
    assert!(log_write > sync, "{log_write} vs {sync}");
    let document = build::report(&report);
    let commit = finding(&document, "commit_waits_decomposed").unwrap();
    assert!(
        commit.title.contains("commits share log writes"),
        "{}",
        commit.title
    );
    assert!(commit.evidence.iter().all(|evidence| evidence.unit != "%"));
    let text = section_text(&document, "commit_waits");
    assert!(text.contains("group commit"), "{text}");
    assert!(text.contains("rest of the commit wait||"), "{text}");
}

#[test]
fn background_waits_are_never_taken_for_foreground_ones() {
    let report = read("11.2.0.4-single-html-1newstar_awr2csv-1.html");
    assert!(report.foreground_event("db file sequential read").is_none());
    assert_eq!(
        bg(&report, "db file sequential read").table,
        EventTable::Background
    );
    let document = build::report(&report);
    assert!(finding(&document, "single_block_read_latency").is_none());
    for event in &report.top_events {
        assert_eq!(event.table, EventTable::Foreground, "{}", event.name);
    }
}

#[test]
fn exadata_cell_reads_are_the_storage_latency_when_they_dominate() {
    let report = read("19.0-rac-html-Azure_Oracle-Workloads-for-Azure-2.html");
    let cell = fg(&report, "cell single block physical read");
    let sequential = fg(&report, "db file sequential read");
    assert!(cell.waits.unwrap() > 1000.0 * sequential.waits.unwrap());
    let document = build::report(&report);
    let latency = finding(&document, "single_block_read_latency").unwrap();
    assert!(
        latency.title.contains("cell single block physical read"),
        "{}",
        latency.title
    );
    let expected = time_over_waits(cell);
    assert!((latency.evidence[0].value - expected).abs() < 1e-9);
}

#[test]
fn a_global_reports_foreground_table_is_foreground() {
    for name in [
        "12.2.0.1-rac-html-edwinjiang_dataextraction_found-3.html",
        "19.0-rac-html-Azure_Oracle-Workloads-for-Azure-2.html",
    ] {
        let report = read(name);
        assert!(!report.top_events.is_empty(), "{name}");
        for event in &report.top_events {
            assert_eq!(
                event.table,
                EventTable::Foreground,
                "{name}: {}",
                event.name
            );
            assert!(
                event.pct_time.unwrap_or(0.0) <= 100.0,
                "{name}: {} at {:?}% of DB time",
                event.name,
                event.pct_time
            );
        }
    }
}

#[test]
fn a_pdb_report_is_read() {
    let report = read("12.2.0.1-single-html-pcambell_awrrptanalyzor-5.html");
    assert_eq!(report.header.pdb.as_deref(), Some("SJJH"));
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert!(report.stat_total("physical read IO requests").is_some());
    assert!(build::report(&report).title.contains("PDB SJJH"));
}

#[test]
fn a_compare_period_report_is_refused_by_name() {
    let text = "<html><body>WORKLOAD REPOSITORY COMPARE PERIOD REPORT<table></table></body></html>";
    let error = parse(text, "diff.html").unwrap_err().to_string();
    assert!(error.contains("compare-period report"), "{error}");
}

#[test]
fn eleven_two_text_reads_the_split_total_wait_time_heading() {
    let report = read("11.2.0.4-single-text-1newstar_awr2csv-1.txt");
    let cpu = report
        .top_events
        .iter()
        .find(|e| e.name == "DB CPU")
        .unwrap();
    assert_eq!(cpu.time_s, Some(1.1));
    let name_service = report
        .top_events
        .iter()
        .find(|e| e.name == "name-service call wait")
        .unwrap();
    assert_eq!(
        (name_service.waits, name_service.time_s),
        (Some(12.0), Some(0.6))
    );
}

#[test]
fn request_sizes_come_from_totals_not_rounded_rates() {
    let report = read("11.2.0.4-single-html-1newstar_awr2csv-1.html");
    let bytes = report.stat_total("physical read bytes").unwrap();
    let requests = report.stat_total("physical read IO requests").unwrap();
    assert_eq!((bytes, requests), (557_056.0, 68.0));
    let load = strata_awr::figures::LoadFigures::of(&report);
    let size = load
        .read_request_bytes(report.header.block_size_bytes)
        .unwrap();
    assert_eq!(size, bytes / requests);
}

#[test]
fn multiblock_sizes_are_never_impossible() {
    for file in all_files() {
        let report = read_path(file.clone());
        let document = build::report(&report);
        let Some(found) = finding(&document, "multiblock_read_size") else {
            continue;
        };
        let value = |label: &str| {
            found
                .evidence
                .iter()
                .find(|e| e.label == label)
                .map(|e| e.value)
        };
        let size = value("multiblock read size").unwrap();
        assert!(size <= 1024.0 * 1.05, "{}: {}", file.display(), found.title);
        if let Some(asked) = value("size asked for") {
            if found.title.contains("as asked for") {
                assert!(size <= asked * 1.05, "{}: {}", file.display(), found.title);
            }
        }
    }
    for name in [
        "11.2.0.3-single-html-Apress_troubleshooting-oracle-perf-14-1.html",
        "12.2.0.1-single-html-edwinjiang_dataextraction_found-4.html",
    ] {
        let document = build::report(&read(name));
        let title = finding(&document, "multiblock_read_size").map(|f| f.title.clone());
        assert!(title.is_none(), "{name}: {title:?}");
    }
}

#[test]
fn a_one_instance_global_report_has_its_iostat() {
    let report = read("12.1.0.2-rac-html-edwinjiang_dataextraction_found-1.html");
    let direct = report
        .io_by_function
        .iter()
        .find(|row| row.name == "Direct Reads")
        .expect("IOStat by Function read from the only instance's row");
    assert_eq!(direct.read_requests_per_s, Some(744.35));
    assert!(report
        .io_by_filetype
        .iter()
        .any(|row| row.name == "Data File"));
}

#[test]
fn a_report_spooled_at_132_columns_is_rejoined_and_read() {
    let report = read("12.2.0.1-rac-html-edwinjiang_dataextraction_found-2.html");
    assert_eq!(report.header.spooled_at, Some(132));
    assert_eq!(report.top_events[0].name, "db file sequential read");
    // OS Statistics By Instance: 2 CPUs at 90.68% idle, 2 at 57.27%.
    let idle = report.host_cpu.as_ref().unwrap().idle_pct.unwrap();
    assert!((idle - (90.68 + 57.27) / 2.0).abs() < 0.01, "{idle}");
    let document = build::report(&report);
    assert!(finding(&document, "cpu_bound").is_none());
}

#[test]
fn rac_instance_reports_say_which_instance_of_how_many() {
    let report = read("11.2.0.4-single-html-1newstar_awr2csv-1.html");
    assert_eq!(report.header.instance_number, Some(1));
    assert_eq!(report.header.cluster_instances, Some(2));
    let title = build::report(&report).title;
    assert!(title.contains("RAC instance 1 of 2 (orcl1)"), "{title}");
}

#[test]
fn a_pdb_reports_instance_is_its_first_inst_num() {
    let report = read("12.2.0.1-single-html-pcambell_awrrptanalyzor-5.html");
    assert_eq!(report.header.instance_number, Some(1));
    assert_eq!(report.header.cluster_instances, Some(2));
}

#[test]
fn temp_spills_say_only_what_spilled() {
    let report = read_path(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/fixtures/awr/11.2.0.3-single-html-sarthi2020.html"),
    );
    let blocks = report
        .stat_total("physical writes direct temporary tablespace")
        .unwrap();
    let mib = blocks * report.header.block_size_bytes.unwrap() / 1048576.0;
    assert_eq!(report.stat_total("sorts (disk)"), Some(0.0));
    let document = build::report(&report);
    let spill = finding(&document, "temp_spills").unwrap();
    assert_eq!(
        spill.title,
        format!("Work areas spilled to the temporary tablespace: {mib:.1} MiB written")
    );
}

#[test]
fn statspack_header_is_read() {
    let report = read("11.2.0.4-statspack-text-TheYanVictor_Statspack_scan.py-1.txt");
    assert_eq!(report.header.release.as_deref(), Some("11.2.0.4.0"));
    assert_eq!(report.header.host.as_deref(), Some("my_server-aps-1"));
    assert_eq!(report.header.dbid.as_deref(), Some("1066102538"));
}

#[test]
fn findings_never_name_postgresql_settings_for_oracle() {
    for file in all_files() {
        let document = build::report(&read_path(file.clone()));
        for found in &document.findings {
            let text = format!("{} {}", found.title, found.why);
            for postgres in ["work_mem", "shared_buffers", "effective_io_concurrency"] {
                assert!(!text.contains(postgres), "{}: {text}", file.display());
            }
            assert!(!found.title.contains("temporary files"), "{}", found.title);
        }
    }
}

/// The page as SQL*Plus spools it with `set linesize 132` and no
/// `trimspool`: every line cut into 132-character pieces, each padded.
fn spooled_at_132(page: &str) -> String {
    let mut spooled = String::new();
    for line in page.lines() {
        let characters: Vec<char> = line.trim_end_matches('\r').chars().collect();
        for piece in characters
            .chunks(132)
            .chain(characters.is_empty().then_some(&[][..]))
        {
            let piece: String = piece.iter().collect();
            spooled.push_str(&format!("{piece:<132}\n"));
        }
    }
    spooled
}

#[test]
fn any_html_report_spooled_at_132_columns_reads_as_the_original() {
    let mut checked = 0;
    for file in all_files() {
        if file.extension().is_some_and(|e| e != "html") {
            continue;
        }
        let bytes = std::fs::read(&file).unwrap();
        let page = String::from_utf8_lossy(&bytes);
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let original = parse(&page, &name).unwrap();
        if original.header.spooled_at.is_some() {
            continue;
        }
        let spooled = parse(&spooled_at_132(&page), &name).unwrap();
        assert_eq!(spooled.header.spooled_at, Some(132), "{name}");
        assert_eq!(spooled.activity, original.activity, "{name}");
        assert_eq!(spooled.top_events, original.top_events, "{name}");
        assert_eq!(
            spooled.background_events, original.background_events,
            "{name}"
        );
        assert_eq!(spooled.io_by_function, original.io_by_function, "{name}");
        assert_eq!(spooled.host_cpu, original.host_cpu, "{name}");
        checked += 1;
    }
    assert!(checked >= 10, "{checked} reports re-spooled");
}
