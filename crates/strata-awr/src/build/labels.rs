//! The report's misleading labels, each said plainly with its own numbers:
//! "Physical Reads/s" counts blocks, "Read IO (MB)" is MiB, IOStat 'Data'
//! is binary while its other columns are decimal, and a log file sync
//! average is not a storage latency.

use crate::figures::LoadFigures;
use crate::model::AwrReport;
use strata_output::document::{format_number, Section};

pub fn misleading_labels(awr: &AwrReport) -> Section {
    let mut section = Section::new("misleading_labels", "Labels in the report that mislead");
    let notes: Vec<String> = [
        rac_physical_reads(awr),
        profile_physical_reads(awr),
        read_io_mb(awr),
        iostat_data(awr),
        log_file_sync(awr),
    ]
    .into_iter()
    .flatten()
    .collect();
    if notes.is_empty() {
        return section.note("No misleading label applies to the figures this report has.");
    }
    for note in notes {
        section = section.note(note);
    }
    section
}

/// "N blocks/s = R requests/s × B blocks".
fn blocks_as_requests(blocks: f64, awr: &AwrReport) -> Option<String> {
    let requests = LoadFigures::of(awr).read_requests?.per_second;
    (requests > 0.0).then(|| {
        format!(
            "{} blocks/s = {} requests/s × {} blocks",
            format_number(blocks, 0),
            format_number(requests, 0),
            format_number(blocks / requests, 2)
        )
    })
}

fn rac_physical_reads(awr: &AwrReport) -> Option<String> {
    let (_, sum) = awr
        .rac_per_second
        .iter()
        .find(|(label, _)| label == "Sum")?;
    let blocks = *sum.get("Physical Reads/s")?;
    let reading = blocks_as_requests(blocks, awr)
        .unwrap_or_else(|| format!("{} blocks/s", format_number(blocks, 0)));
    Some(format!(
        "'Physical Reads/s' in System Statistics counts blocks, not I/O requests: {reading}."
    ))
}

fn profile_physical_reads(awr: &AwrReport) -> Option<String> {
    let row = awr.profile(&["Physical read (blocks)", "Physical reads"])?;
    let blocks = row.per_second?;
    let reading = blocks_as_requests(blocks, awr)
        .unwrap_or_else(|| format!("{} blocks/s", format_number(blocks, 1)));
    Some(format!(
        "Load Profile '{}' counts blocks, not I/O requests: {reading}.",
        row.label
    ))
}

fn read_io_mb(awr: &AwrReport) -> Option<String> {
    let row = awr.profile(&["Read IO (MB)"])?;
    let mib = row.per_second?;
    Some(format!(
        "Load Profile 'Read IO (MB)' is in MiB (2^20 bytes): {} MiB/s = {} MB/s (10^6 bytes).",
        format_number(mib, 1),
        format_number(mib * 1.048576, 2)
    ))
}

fn iostat_data(awr: &AwrReport) -> Option<String> {
    let total: f64 = awr
        .io_by_function
        .iter()
        .filter(|row| !row.name.eq_ignore_ascii_case("TOTAL"))
        .filter_map(|row| row.read_mib_per_s)
        .sum();
    (!awr.io_by_function.is_empty()).then(|| {
        format!(
            "IOStat 'Data' columns (M, G) are binary: reads of all functions add up to {} MiB/s \
             = {} MB/s; its request and wait counts with K/M suffixes are decimal.",
            format_number(total, 2),
            format_number(total * 1.048576, 2)
        )
    })
}

fn log_file_sync(awr: &AwrReport) -> Option<String> {
    let sync = awr.foreground_event("log file sync")?.average_ms()?;
    Some(format!(
        "'log file sync' ({sync:.3} ms average) is the whole commit wait, not the redo write's \
         storage latency: see 'Commit waits decomposed'."
    ))
}
