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
        rounded_averages(awr),
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
    let only_instance = match awr.rac_per_second.as_slice() {
        [only] => Some(only),
        _ => None,
    };
    let (_, sum) = awr
        .rac_per_second
        .iter()
        .find(|(label, _)| label == "Sum")
        .or(only_instance)?;
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
    let sync = awr.foreground_event("log file sync")?.average()?;
    Some(format!(
        "'log file sync' ({} ms average) is the whole commit wait, not the redo write's \
         storage latency: see 'Commit waits decomposed'.",
        format_number(sync.ms, sync.decimals)
    ))
}

/// Oracle's printed averages of the key events where its rounding hides
/// more than a tenth of the value (whole ms in 11g and STATSPACK).
fn rounded_averages(awr: &AwrReport) -> Option<String> {
    let rounded: Vec<String> = super::waits::key_events(awr)
        .into_iter()
        .filter_map(|(name, event)| {
            let printed = event.avg_ms?;
            let average = event.average().filter(|average| average.computed)?;
            let off = (printed - average.ms).abs() > 0.1 * average.ms.max(1e-9);
            off.then(|| {
                format!(
                    "{name} {} (time ÷ waits: {})",
                    format_number(
                        printed,
                        crate::model::decimals_for(event.avg_resolution_ms.unwrap_or(1.0))
                    ),
                    format_number(average.ms, average.decimals)
                )
            })
        })
        .collect();
    (!rounded.is_empty()).then(|| {
        format!(
            "Oracle's 'Avg wait (ms)' is rounded and hides more than a tenth of these averages: \
             {}. strata prints time ÷ waits.",
            rounded.join("; ")
        )
    })
}
