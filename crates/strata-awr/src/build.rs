//! One AWR or STATSPACK report as strata's report document: header facts,
//! the load profile with honest labels, the report's misleading labels
//! explained, top waits, commit waits decomposed, I/O by function and by
//! file type, and the findings (shared ones first, then the AWR-only ones).
//!
//! Not for: reading reports (see `parse`) or laying out text, JSON or HTML
//! (the renderers in strata-report do).

use crate::figures::{window_figures, LoadFigures, Rate};
use crate::model::AwrReport;
use strata_output::document::{format_number, Cell, Column, Fact, Report, Section, Table};

mod iostat;
mod labels;
mod waits;

pub use labels::misleading_labels;
pub use waits::KEY_EVENTS;

const MB: f64 = 1e6;
const MIB: f64 = 1024.0 * 1024.0;

/// The whole report for one AWR or STATSPACK file.
pub fn report(awr: &AwrReport) -> Report {
    let kind = if awr.format.is_statspack() {
        "statspack"
    } else {
        "awr"
    };
    let mut report = Report::new(title(awr), kind, vec![awr.name.clone()]);
    report.about = about(awr);
    report.figures = crate::figures::named_figures(awr, None);
    report.sections.push(load_profile(awr));
    report.sections.push(misleading_labels(awr));
    report.sections.push(waits::top_waits(awr));
    report.sections.push(waits::commit_waits(awr));
    report.sections.push(iostat::io_by_function(awr));
    report.sections.push(iostat::io_by_filetype(awr));
    report.findings = findings(awr);
    report.problems = awr.problems.clone();
    report
}

/// Shared findings, then the AWR-only ones.
pub fn findings(awr: &AwrReport) -> Vec<strata_output::document::Finding> {
    let mut found = strata_report::findings::evaluate(&window_figures(awr));
    found.extend(crate::findings::evaluate(awr));
    found
}

fn title(awr: &AwrReport) -> String {
    let release = awr.header.release.as_deref().unwrap_or("unknown release");
    format!(
        "strata awr — {} {release} {}",
        awr.format.describe(),
        scope(awr)
    )
}

/// Which part of the database the report covers: the whole cluster, one
/// instance of a RAC database (which of how many), one instance, a PDB.
fn scope(awr: &AwrReport) -> String {
    let header = &awr.header;
    let mut scope = if awr.format == crate::Format::HtmlAwrGlobal {
        "RAC global (all instances)".to_string()
    } else if header.rac == Some(true) {
        let name = header.instances.first().map(String::as_str).unwrap_or("?");
        let number = header
            .instance_number
            .map_or(String::new(), |number| format!(" {number}"));
        let of = header
            .cluster_instances
            .map_or(String::new(), |count| format!(" of {count}"));
        format!("RAC instance{number}{of} ({name}), not the whole cluster")
    } else {
        "single instance".to_string()
    };
    if let Some(pdb) = &header.pdb {
        scope.push_str(&format!(
            ", PDB {pdb} (a PDB report: no background waits, IOStat by function or host CPU)"
        ));
    }
    scope
}

fn about(awr: &AwrReport) -> Vec<Fact> {
    let header = &awr.header;
    let mut facts = Vec::new();
    let mut add = |label: &str, value: Option<String>| {
        if let Some(value) = value {
            facts.push(Fact::new(label, value));
        }
    };
    add("Report", Some(awr.format.describe().to_string()));
    add("Database", header.database.clone());
    add("DBID", header.dbid.clone());
    add("Scope", Some(scope(awr)));
    add(
        "Instances",
        (!header.instances.is_empty()).then(|| header.instances.join(", ")),
    );
    add("Release", header.release.clone());
    add("Host", header.host.clone());
    add(
        "CPUs",
        awr.host_cpu
            .as_ref()
            .and_then(|cpu| cpu.cpus)
            .map(|cpus| format_number(cpus, 0)),
    );
    add("Block size", block_size_text(awr));
    add(
        "Layout",
        header.spooled_at.map(|width| {
            format!(
                "spooled through SQL*Plus at {width} columns (every line cut there); \
                 strata rejoined the lines before reading"
            )
        }),
    );
    add(
        "Begin snapshot",
        header.begin_snap.as_ref().map(snapshot_text),
    );
    add("End snapshot", header.end_snap.as_ref().map(snapshot_text));
    add(
        "Elapsed",
        header.elapsed_s.map(|s| {
            format!(
                "{} s ({} min)",
                format_number(s, 0),
                format_number(s / 60.0, 2)
            )
        }),
    );
    add(
        "DB time",
        header
            .db_time_s
            .map(|s| format!("{} s", format_number(s, 1))),
    );
    facts
}

fn block_size_text(awr: &AwrReport) -> Option<String> {
    let bytes = awr.header.block_size_bytes?;
    let source = awr.header.block_size_source.as_deref().unwrap_or("header");
    Some(format!("{} bytes ({source})", format_number(bytes, 0)))
}

fn snapshot_text(snap: &crate::model::Snapshot) -> String {
    match snap.id {
        Some(id) => format!("{id} at {}", snap.time)
            .trim_end_matches(" at ")
            .to_string(),
        None => snap.time.clone(),
    }
}

fn profile_table() -> Table {
    Table::new(
        None,
        vec![
            Column::text("Figure"),
            Column::number("Per second", None),
            Column::text("Unit"),
            Column::text("From"),
        ],
    )
}

/// A load-profile row: label, the rate, the divisor to its unit, the unit,
/// decimals.
type RateRow<'a> = (&'a str, &'a Option<Rate>, f64, &'a str, usize);

fn push_rates(table: &mut Table, rows: &[RateRow]) {
    for &(label, rate, scale, unit, decimals) in rows {
        push_rate(table, label, rate, scale, unit, decimals);
    }
}

fn push_rate(
    table: &mut Table,
    label: &str,
    rate: &Option<Rate>,
    scale: f64,
    unit: &str,
    decimals: usize,
) {
    let (value, source) = match rate {
        Some(rate) => (
            Cell::number(rate.per_second / scale, decimals, unit),
            rate.source.clone(),
        ),
        None => (Cell::empty(), "not in the report".to_string()),
    };
    table.push(vec![
        Cell::text(label),
        value,
        Cell::text(unit),
        Cell::text(source),
    ]);
}

fn push_derived(
    table: &mut Table,
    label: &str,
    value: Option<f64>,
    unit: &str,
    decimals: usize,
    how: &str,
) {
    let cell = value.map_or_else(Cell::empty, |value| Cell::number(value, decimals, unit));
    table.push(vec![
        Cell::text(label),
        cell,
        Cell::text(unit),
        Cell::text(how),
    ]);
}

fn load_profile(awr: &AwrReport) -> Section {
    let load = LoadFigures::of(awr);
    let block = awr.header.block_size_bytes;
    let mut table = profile_table();
    push_rates(
        &mut table,
        &[
            (
                "Read requests/s (IOPS)",
                &load.read_requests,
                1.0,
                "requests/s",
                1,
            ),
            ("Blocks read/s", &load.blocks_read, 1.0, "blocks/s", 1),
            ("Read MB/s (decimal)", &load.read_bytes, MB, "MB/s", 2),
            ("Read MiB/s", &load.read_bytes, MIB, "MiB/s", 2),
        ],
    );
    push_request_size(&mut table, "read", load.read_request_bytes(block), block);
    push_rates(
        &mut table,
        &[
            (
                "Write requests/s (IOPS)",
                &load.write_requests,
                1.0,
                "requests/s",
                1,
            ),
            ("Blocks written/s", &load.blocks_written, 1.0, "blocks/s", 1),
            ("Write MB/s (decimal)", &load.write_bytes, MB, "MB/s", 2),
            ("Write MiB/s", &load.write_bytes, MIB, "MiB/s", 2),
        ],
    );
    push_request_size(&mut table, "write", load.write_request_bytes(block), block);
    push_rates(
        &mut table,
        &[
            ("Redo MB/s (decimal)", &load.redo_bytes, MB, "MB/s", 3),
            ("Redo writes/s", &load.redo_writes, 1.0, "writes/s", 1),
            ("Commits/s", &load.commits, 1.0, "commits/s", 1),
            (
                "Transactions/s",
                &load.transactions,
                1.0,
                "transactions/s",
                1,
            ),
        ],
    );
    Section::new("load_profile", "Load profile")
        .table(table)
        .note(
            "Requests are I/O calls (IOPS); blocks are database blocks; MB = 10^6 bytes, \
             MiB = 2^20 bytes. Requests are 'physical read IO requests' (database files), \
             not 'physical read total IO requests' (which adds control file and redo reads).",
        )
}

fn push_request_size(table: &mut Table, kind: &str, bytes: Option<f64>, block: Option<f64>) {
    let label = format!("Average {kind} request size");
    push_derived(
        table,
        &label,
        bytes.map(|bytes| bytes / 1024.0),
        "KiB",
        1,
        "bytes ÷ requests",
    );
    let blocks = bytes.zip(block).map(|(bytes, block)| bytes / block);
    let label = format!("Average {kind} request size (blocks)");
    push_derived(
        table,
        &label,
        blocks,
        "blocks",
        2,
        "bytes ÷ requests ÷ block size",
    );
}
