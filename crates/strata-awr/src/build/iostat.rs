//! The IOStat sections: I/O by function and by file type, each row's
//! requests/s and data/s (MiB/s as Oracle prints it, MB/s beside it) and
//! the averages the report gives (waits by function, read service times by
//! file type).

use super::{MB, MIB};
use crate::model::{AwrReport, IoRow};
use strata_output::document::{Cell, Column, Section, Table};

/// An average column: its heading and how a row gives it, in ms.
type Average = (&'static str, fn(&IoRow) -> Option<f64>);

const DATA_UNITS_NOTE: &str = "Oracle's IOStat 'Data' columns are in multiples of 1024 \
     (MiB) while its other K/M/G columns are decimal; both units are shown.";

pub fn io_by_function(awr: &AwrReport) -> Section {
    let section = Section::new("io_by_function", "I/O by function (IOStat)");
    if awr.io_by_function.is_empty() {
        return section.note("The report has no readable IOStat by Function section.");
    }
    let averages: [Average; 1] = [("Avg wait", |row| row.avg_wait_ms)];
    section
        .table(io_table("Function", &awr.io_by_function, &averages))
        .note(format!(
            "{DATA_UNITS_NOTE} Direct Reads are scans that bypass the buffer cache, \
             Buffer Cache Reads are mostly single-block reads, LGWR writes the redo log, \
             DBWR writes dirty blocks."
        ))
}

pub fn io_by_filetype(awr: &AwrReport) -> Section {
    let section = Section::new("io_by_filetype", "I/O by file type (IOStat)");
    if awr.io_by_filetype.is_empty() {
        return section.note("The report has no readable IOStat by Filetype section.");
    }
    let averages: [Average; 2] = [
        ("Small read avg", |row| row.small_read_ms),
        ("Large read avg", |row| row.large_read_ms),
    ];
    section
        .table(io_table("File type", &awr.io_by_filetype, &averages))
        .note(format!(
            "{DATA_UNITS_NOTE} Small and large read averages are Oracle's service times \
             for single-block and multiblock reads, where the report gives them. Data File \
             is the tablespaces' files, Log File the online redo log (LGWR writes it, \
             archiving reads it), Temp File sorts, hashes and temporary tables spilled to \
             disk; TOTAL counts every file type, also those not listed. A RAC report's \
             rows are the whole cluster."
        ))
}

/// Name, read and write requests/s, MiB/s and MB/s, then `averages` in ms.
fn io_table(name_heading: &str, rows: &[IoRow], averages: &[Average]) -> Table {
    let mut columns = vec![
        Column::text(name_heading),
        Column::number("Read requests/s", Some("requests/s")),
        Column::number("Read MiB/s", Some("MiB/s")),
        Column::number("Read MB/s", Some("MB/s")),
        Column::number("Write requests/s", Some("requests/s")),
        Column::number("Write MiB/s", Some("MiB/s")),
        Column::number("Write MB/s", Some("MB/s")),
    ];
    columns.extend(
        averages
            .iter()
            .map(|(heading, _)| Column::number(*heading, Some("ms"))),
    );
    let mut table = Table::new(None, columns);
    for row in rows {
        let mut cells = rate_cells(row);
        cells.extend(
            averages
                .iter()
                .map(|(_, value)| optional(value(row), 3, "ms")),
        );
        table.push(cells);
    }
    table
}

fn rate_cells(row: &IoRow) -> Vec<Cell> {
    let decimal = |mib: Option<f64>| mib.map(|mib| mib * MIB / MB);
    vec![
        Cell::text(&row.name),
        optional(row.read_requests_per_s, 1, "requests/s"),
        optional(row.read_mib_per_s, 3, "MiB/s"),
        optional(decimal(row.read_mib_per_s), 3, "MB/s"),
        optional(row.write_requests_per_s, 1, "requests/s"),
        optional(row.write_mib_per_s, 3, "MiB/s"),
        optional(decimal(row.write_mib_per_s), 3, "MB/s"),
    ]
}

fn optional(value: Option<f64>, decimals: usize, unit: &str) -> Cell {
    value.map_or_else(Cell::empty, |value| Cell::number(value, decimals, unit))
}
