//! IOStat by Function and by Filetype, in each of its shapes: the single
//! instance summary (`Reads: Data`, `Reqs per sec`, `Data per sec`), the
//! 12.2+ RAC table (`IOs/s`, `Read MB/s`, cluster rows `*`), the 12.1 RAC
//! per-second pivot (one column per function or file type) and
//! STATSPACK's summary (by function only: STATSPACK has no by-file-type
//! summary). Data figures are MiB.

use crate::model::{AwrReport, IoRow};
use crate::number::{data_mib, millis, number};
use crate::table::{cell, squeeze, RawTable};

/// Oracle's function names; text reports cut them to the column width.
const FUNCTIONS: [&str; 16] = [
    "Buffer Cache Reads",
    "Direct Reads",
    "Direct Writes",
    "DBWR",
    "LGWR",
    "ARCH",
    "Others",
    "RMAN",
    "Smart Scan",
    "Data Pump",
    "Recovery",
    "Streams AQ",
    "XDB",
    "Archive Manager",
    "Inmemory Populate",
    "TOTAL",
];

/// Oracle's file type names (V$IOSTAT_FILE); text reports cut them too.
const FILETYPES: [&str; 13] = [
    "Data File",
    "Log File",
    "Archive Log",
    "Temp File",
    "Control File",
    "Flashback Log",
    "Data File Backup",
    "Data File Incremental Backup",
    "Archive Log Backup",
    "Data File Copy",
    "Data Pump Dump File",
    "Other",
    "TOTAL",
];

/// Which IOStat breakdown a table holds.
#[derive(Clone, Copy)]
enum Breakdown {
    Function,
    Filetype,
}

impl Breakdown {
    fn name_heading(self) -> &'static str {
        match self {
            Breakdown::Function => "Function Name",
            Breakdown::Filetype => "Filetype Name",
        }
    }

    fn full_name(self, printed: &str) -> String {
        match self {
            Breakdown::Function => full_name(printed, &FUNCTIONS),
            Breakdown::Filetype => full_name(printed, &FILETYPES),
        }
    }
}

pub fn read(tables: &[RawTable], report: &mut AwrReport) {
    report.io_by_function = first_found(tables, by_function);
    report.io_by_filetype = first_found(tables, by_filetype);
}

/// The rows of the first table that yields any.
fn first_found(tables: &[RawTable], rows_of: fn(&RawTable) -> Vec<IoRow>) -> Vec<IoRow> {
    tables
        .iter()
        .map(rows_of)
        .find(|rows| !rows.is_empty())
        .unwrap_or_default()
}

fn by_function(table: &RawTable) -> Vec<IoRow> {
    if table.column("Function Name").is_some() && !table.titled("Function/File") {
        summary_or_global(table, Breakdown::Function)
    } else if table.has_columns(&["Function", "Read Requests", "Write Requests"]) {
        statspack_summary(table)
    } else if table.titled("IOStat by Function (per Second)") {
        per_second_pivot(table)
    } else {
        Vec::new()
    }
}

/// IOStat by Filetype summary, the 12.2+ RAC IOStat by File Type, or the
/// 12.1 RAC per-second pivot. STATSPACK's function-by-file-type detail
/// (a `Function` column beside `FileType Name`) is not a by-file-type sum.
fn by_filetype(table: &RawTable) -> Vec<IoRow> {
    if table.column("Filetype Name").is_some() && table.column("Function").is_none() {
        summary_or_global(table, Breakdown::Filetype)
    } else if table.titled("IOStat by File Type (per Second)") {
        filetype_pivot(table)
    } else {
        Vec::new()
    }
}

fn summary_or_global(table: &RawTable, breakdown: Breakdown) -> Vec<IoRow> {
    if table.column("Reads: Data").is_some() {
        summary(table, breakdown)
    } else if table.column("IOs/s").is_some() {
        global(table, breakdown)
    } else {
        Vec::new()
    }
}

/// The full name of a printed one: the same name (any case, without a
/// trailing colon) first, else the name it is the start of, because text
/// reports cut names to the column width ("Buffer Cache Re").
fn full_name(printed: &str, names: &[&str]) -> String {
    let printed = printed.trim_end_matches(':').trim();
    let same = names.iter().find(|full| full.eq_ignore_ascii_case(printed));
    let cut = || {
        names
            .iter()
            .find(|full| printed.len() >= 4 && full.starts_with(printed))
    };
    same.or_else(cut)
        .map(|full| full.to_string())
        .unwrap_or_else(|| printed.to_string())
}

/// The wait count and average (by function) and the small and large read
/// service times (by file type), where the table has them.
fn with_waits(table: &RawTable, row: &[String], io_row: IoRow) -> IoRow {
    IoRow {
        waits: number(cell(row, table.column("Waits: Count"))),
        avg_wait_ms: millis(cell(row, table.column("Avg Time"))),
        small_read_ms: millis(cell(row, table.column("Small Read"))),
        large_read_ms: millis(cell(row, table.column("Large Read"))),
        ..io_row
    }
}

/// Single instance: `Reads: Data`, then its `Reqs per sec` and `Data per
/// sec`; the same after `Writes: Data`. Data with M/G suffixes is MiB.
fn summary(table: &RawTable, breakdown: Breakdown) -> Vec<IoRow> {
    let name = table.column(breakdown.name_heading());
    let reads = table.column("Reads: Data");
    let writes = table.column("Writes: Data");
    let next = |column: Option<usize>, step| column.map(|index| index + step);
    let io_row = |row: &Vec<String>| IoRow {
        name: breakdown.full_name(cell(row, name)),
        read_requests_per_s: number(cell(row, next(reads, 1))),
        read_mib_per_s: data_mib(cell(row, next(reads, 2))),
        write_requests_per_s: number(cell(row, next(writes, 1))),
        write_mib_per_s: data_mib(cell(row, next(writes, 2))),
        ..IoRow::default()
    };
    table
        .rows
        .iter()
        .filter(|row| !cell(row, name).is_empty())
        .map(|row| with_waits(table, row, io_row(row)))
        .collect()
}

/// 12.2+ RAC: `Reads/s`, `Read MB/s`, ... per instance; the cluster's rows
/// have `*` as instance.
fn global(table: &RawTable, breakdown: Breakdown) -> Vec<IoRow> {
    let name = table.column(breakdown.name_heading());
    let instance = table.column_named("I#");
    let rate = |row: &[String], heading: &str| number(cell(row, table.column_named(heading)));
    let io_row = |row: &Vec<String>| IoRow {
        name: breakdown.full_name(cell(row, name)),
        read_requests_per_s: rate(row, "Reads/s"),
        read_mib_per_s: rate(row, "Read MB/s"),
        write_requests_per_s: rate(row, "Writes/s"),
        write_mib_per_s: rate(row, "Write MB/s"),
        ..IoRow::default()
    };
    table
        .rows
        .iter()
        .filter(|row| cell(row, instance) == "*" && !cell(row, name).is_empty())
        .map(|row| with_waits(table, row, io_row(row)))
        .collect()
}

/// 12.1 RAC: columns `Total, Buffer Cache, Direct Reads` (read MB/s),
/// `Total, DBWR, Direct Writes, LGWR` (write MB/s), then the same for
/// requests/s; the `Sum` row is the cluster.
fn per_second_pivot(table: &RawTable) -> Vec<IoRow> {
    let Some(sum) = cluster_row(table) else {
        return Vec::new();
    };
    let occurrences = |name: &str| -> Vec<usize> { table.columns(name).collect() };
    let value = |index: Option<&usize>| index.and_then(|index| number(cell(sum, Some(*index))));
    let reads = |name: &str, full: &str| {
        let found = occurrences(name);
        IoRow {
            name: full.to_string(),
            read_mib_per_s: value(found.first()),
            read_requests_per_s: value(found.get(1)),
            ..IoRow::default()
        }
    };
    let writes = |name: &str| {
        let found = occurrences(name);
        IoRow {
            name: name.to_string(),
            write_mib_per_s: value(found.first()),
            write_requests_per_s: value(found.get(1)),
            ..IoRow::default()
        }
    };
    vec![
        reads("Buffer Cache", "Buffer Cache Reads"),
        reads("Direct Reads", "Direct Reads"),
        writes("DBWR"),
        writes("Direct Writes"),
        writes("LGWR"),
    ]
}

/// 12.1 RAC IOStat by File Type (per Second): four groups of columns,
/// each starting at its `Total` column, in the order Oracle prints them
/// (read MB/s, write MB/s, read requests/s, write requests/s), one column
/// per file type; the `Sum` row is the cluster. Anything but four groups
/// is not read.
fn filetype_pivot(table: &RawTable) -> Vec<IoRow> {
    let (Some(sum), Some(groups)) = (cluster_row(table), pivot_groups(table)) else {
        return Vec::new();
    };
    let mut rows: Vec<IoRow> = Vec::new();
    for (column, heading) in table.header.iter().enumerate().skip(groups[0]) {
        let group = groups.iter().rposition(|start| *start <= column);
        let name = if groups.contains(&column) {
            "TOTAL".to_string()
        } else {
            full_name(heading, &FILETYPES)
        };
        let value = number(cell(sum, Some(column)));
        set_pivot_value(row_named(&mut rows, name), group, value);
    }
    rows
}

/// The cluster's row of a per-instance pivot: `Sum`, or the only
/// instance's row where the report covers one instance (Oracle prints no
/// Sum row then).
fn cluster_row(table: &RawTable) -> Option<&[String]> {
    table
        .row_labelled("Sum")
        .or_else(|| match table.rows.as_slice() {
            [only] if cell(only, Some(0)).parse::<u32>().is_ok() => Some(only.as_slice()),
            _ => None,
        })
}

/// Where each group of a per-second pivot starts: its `Total` columns.
fn pivot_groups(table: &RawTable) -> Option<Vec<usize>> {
    let totals: Vec<usize> = table
        .columns("Total")
        .filter(|index| squeeze(&table.header[*index]).eq_ignore_ascii_case("Total"))
        .collect();
    (totals.len() == 4).then_some(totals)
}

fn row_named(rows: &mut Vec<IoRow>, name: String) -> &mut IoRow {
    let index = match rows.iter().position(|row| row.name == name) {
        Some(index) => index,
        None => {
            rows.push(IoRow {
                name,
                ..IoRow::default()
            });
            rows.len() - 1
        }
    };
    &mut rows[index]
}

fn set_pivot_value(row: &mut IoRow, group: Option<usize>, value: Option<f64>) {
    match group {
        Some(0) => row.read_mib_per_s = value,
        Some(1) => row.write_mib_per_s = value,
        Some(2) => row.read_requests_per_s = value,
        Some(3) => row.write_requests_per_s = value,
        _ => {}
    }
}

/// STATSPACK's IO Stat by Function - summary: requests/s and data/s
/// (`44.0M`, binary like AWR's 'Data' columns) for reads and writes.
fn statspack_summary(table: &RawTable) -> Vec<IoRow> {
    let reads = table.column("Read Requests");
    let writes = table.column("Write Requests");
    let next = |column: Option<usize>| column.map(|index| index + 1);
    table
        .rows
        .iter()
        .filter(|row| !cell(row, Some(0)).is_empty())
        .map(|row| IoRow {
            name: full_name(cell(row, Some(0)), &FUNCTIONS),
            read_requests_per_s: number(cell(row, reads)),
            read_mib_per_s: data_mib(cell(row, next(reads))),
            write_requests_per_s: number(cell(row, writes)),
            write_mib_per_s: data_mib(cell(row, next(writes))),
            waits: number(cell(row, table.column("Wait Count"))),
            avg_wait_ms: millis(cell(row, table.column("Avg Tm"))),
            ..IoRow::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_and_printed_names_become_full_names() {
        assert_eq!(
            full_name("Buffer Cache Re", &FUNCTIONS),
            "Buffer Cache Reads"
        );
        assert_eq!(full_name("TOTAL:", &FILETYPES), "TOTAL");
        assert_eq!(full_name("Total", &FILETYPES), "TOTAL");
        assert_eq!(full_name("Other", &FILETYPES), "Other");
        assert_eq!(full_name("Archive Log", &FILETYPES), "Archive Log");
        assert_eq!(
            full_name("Archive Log Ba", &FILETYPES),
            "Archive Log Backup"
        );
        assert_eq!(
            full_name("Data File Incr", &FILETYPES),
            "Data File Incremental Backup"
        );
        assert_eq!(full_name("Change Tracking", &FILETYPES), "Change Tracking");
    }
}
