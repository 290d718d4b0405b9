//! IOStat by Function and by Filetype, in each of its shapes: the single
//! instance summary (`Reads: Data`, `Reqs per sec`, `Data per sec`), the
//! 12.2+ RAC table (`IOs/s`, `Read MB/s`, cluster rows `*`), the 12.1 RAC
//! per-second pivot (one column per function) and STATSPACK's summary.
//! Data figures are MiB.

use crate::model::{AwrReport, IoRow};
use crate::number::{data_mib, millis, number};
use crate::table::{cell, RawTable};

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

pub fn read(tables: &[RawTable], report: &mut AwrReport) {
    for table in tables {
        let rows = if table.column("Function Name").is_some() && !table.titled("Function/File") {
            summary_or_global(table)
        } else if table.has_columns(&["Function", "Read Requests", "Write Requests"]) {
            statspack_summary(table)
        } else if table.titled("IOStat by Function (per Second)") {
            per_second_pivot(table)
        } else {
            continue;
        };
        if report.io_by_function.is_empty() {
            report.io_by_function = rows;
        }
    }
    for table in tables {
        if table.column("Filetype Name").is_some() && report.io_by_filetype.is_empty() {
            report.io_by_filetype = summary_or_global(table);
        }
    }
}

fn summary_or_global(table: &RawTable) -> Vec<IoRow> {
    if table.column("Reads: Data").is_some() {
        summary(table)
    } else if table.column("IOs/s").is_some() {
        global(table)
    } else {
        Vec::new()
    }
}

/// Cut names ("Buffer Cache Re") become the full name.
fn function_name(printed: &str) -> String {
    let printed = printed.trim_end_matches(':').trim();
    FUNCTIONS
        .iter()
        .find(|full| {
            full.eq_ignore_ascii_case(printed) || (printed.len() >= 4 && full.starts_with(printed))
        })
        .map(|full| full.to_string())
        .unwrap_or_else(|| printed.to_string())
}

fn name_column(table: &RawTable) -> Option<usize> {
    table
        .column("Function Name")
        .or(table.column("Filetype Name"))
}

fn summary(table: &RawTable) -> Vec<IoRow> {
    let name = name_column(table);
    let reads = table.column("Reads: Data");
    let writes = table.column("Writes: Data");
    let next = |column: Option<usize>, step| column.map(|index| index + step);
    table
        .rows
        .iter()
        .filter(|row| !cell(row, name).is_empty())
        .map(|row| IoRow {
            name: function_name(cell(row, name)),
            read_requests_per_s: number(cell(row, next(reads, 1))),
            read_mib_per_s: data_mib(cell(row, next(reads, 2))),
            write_requests_per_s: number(cell(row, next(writes, 1))),
            write_mib_per_s: data_mib(cell(row, next(writes, 2))),
            waits: number(cell(row, table.column("Waits: Count"))),
            avg_wait_ms: millis(cell(row, table.column("Avg Time"))),
        })
        .collect()
}

fn global(table: &RawTable) -> Vec<IoRow> {
    let name = name_column(table);
    let instance = table.column_named("I#");
    table
        .rows
        .iter()
        .filter(|row| cell(row, instance) == "*" && !cell(row, name).is_empty())
        .map(|row| IoRow {
            name: function_name(cell(row, name)),
            read_requests_per_s: number(cell(row, table.column_named("Reads/s"))),
            read_mib_per_s: number(cell(row, table.column_named("Read MB/s"))),
            write_requests_per_s: number(cell(row, table.column_named("Writes/s"))),
            write_mib_per_s: number(cell(row, table.column_named("Write MB/s"))),
            waits: number(cell(row, table.column("Waits: Count"))),
            avg_wait_ms: millis(cell(row, table.column("Avg Time"))),
        })
        .collect()
}

/// 12.1 RAC: columns `Total, Buffer Cache, Direct Reads` (read MB/s),
/// `Total, DBWR, Direct Writes, LGWR` (write MB/s), then the same for
/// requests/s; the `Sum` row is the cluster.
fn per_second_pivot(table: &RawTable) -> Vec<IoRow> {
    let Some(sum) = table.row_labelled("Sum") else {
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
            name: function_name(cell(row, Some(0))),
            read_requests_per_s: number(cell(row, reads)),
            read_mib_per_s: data_mib(cell(row, next(reads))),
            write_requests_per_s: number(cell(row, writes)),
            write_mib_per_s: data_mib(cell(row, next(writes))),
            waits: number(cell(row, table.column("Wait Count"))),
            avg_wait_ms: millis(cell(row, table.column("Avg Tm"))),
        })
        .collect()
}
