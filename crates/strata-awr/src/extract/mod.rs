//! Turns the tables of a report (HTML or text, already split into
//! [`RawTable`]s) into an [`AwrReport`], by section titles and column
//! headings. Each part reads what it finds; what a report should have and
//! does not is named in `problems`.
//!
//! Not for: reading markup or layout (see `html`, `text`), or judging the
//! figures (see `figures`, `build`).

mod header;
mod host;
mod io;
mod stats;
mod waits;

use crate::model::{AwrReport, Format};
use crate::table::RawTable;

/// The report read from its tables. `raw` is the whole input, for the few
/// facts that live outside tables.
pub fn extract(tables: &[RawTable], raw: &str, name: &str, format: Format) -> AwrReport {
    let mut report = AwrReport::new(name, format);
    header::read(tables, raw, &mut report);
    stats::read(tables, &mut report);
    waits::read(tables, &mut report);
    io::read(tables, &mut report);
    host::read(tables, raw, &mut report);
    settle_block_size(&mut report);
    name_missing_parts(&mut report);
    if looks_cut(raw, format) {
        report.problems.push(
            "the report ends early (no 'End of Report'): it was cut or is incomplete; \
             sections after the cut are missing"
                .to_string(),
        );
    }
    report
}

/// The `db_block_size` parameter when the header had no block size; 8192
/// only as a named assumption.
fn settle_block_size(report: &mut AwrReport) {
    if report.header.block_size_bytes.is_some() {
        return;
    }
    let parameter = report
        .parameter("db_block_size")
        .and_then(crate::number::number);
    if let Some(bytes) = parameter {
        report.header.block_size_bytes = Some(bytes);
        report.header.block_size_source = Some("parameter db_block_size".to_string());
        return;
    }
    report.header.block_size_bytes = Some(8192.0);
    report.header.block_size_source = Some("assumed".to_string());
    report.problems.push(
        "block size not found (no 'Std Block Size', 'Block Size' or db_block_size): \
         8192 bytes assumed for blocks-to-bytes figures"
            .to_string(),
    );
}

/// Every report of its kind has these; a missing one is named.
fn name_missing_parts(report: &mut AwrReport) {
    let global = report.format == Format::HtmlAwrGlobal;
    let mut missing = Vec::new();
    if report.header.elapsed_s.is_none() {
        missing.push("snapshot header (Elapsed time): per-second figures cannot be checked");
    }
    if report.load_profile.is_empty() && !global {
        missing.push("Load Profile");
    }
    if report.activity.is_empty() {
        missing.push(if global {
            "System Statistics (Global)"
        } else {
            "Instance Activity Stats"
        });
    }
    if report.top_events.is_empty() {
        missing.push("Top timed events");
    }
    // A PDB report has no background events, IOStat by function or host
    // CPU: Oracle prints them for the container database only.
    let pdb = report.header.pdb.is_some();
    if report.background_events.is_empty() && !pdb {
        missing.push("Background Wait Events");
    }
    if report.io_by_function.is_empty() && !pdb {
        missing.push("IOStat by Function");
    }
    if report.io_by_filetype.is_empty() && !report.format.is_statspack() {
        missing.push("IOStat by Filetype");
    }
    if report.host_cpu.is_none() && !pdb {
        missing.push("Host CPU");
    }
    for part in missing {
        report
            .problems
            .push(format!("section not found or not readable: {part}"));
    }
}

fn looks_cut(raw: &str, format: Format) -> bool {
    let tail = &raw.as_bytes()[raw.len().saturating_sub(4096)..];
    let tail = String::from_utf8_lossy(tail).to_ascii_lowercase();
    match format {
        Format::HtmlAwr | Format::HtmlAwrGlobal => !tail.contains("</html>"),
        Format::TextAwr | Format::Statspack => !tail.contains("end of report"),
    }
}
