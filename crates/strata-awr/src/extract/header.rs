//! The header: database, instances, release, host, block size, snapshots,
//! elapsed time and DB time.

use crate::model::{AwrReport, Format, Snapshot};
use crate::number::{first_number, number, size_bytes, snap_time_s};
use crate::table::{cell, RawTable};

pub fn read(tables: &[RawTable], raw: &str, report: &mut AwrReport) {
    for table in tables {
        if table.column("DB Name").is_some() || table.has_columns(&["DB Id", "Release"]) {
            database(table, report);
        } else if table.column_named("Instance").is_some() && table.column("Inst Num").is_some() {
            instance(table, report);
        } else if table.column_named("Container Name").is_some() && is_pdb_report(raw) {
            report.header.pdb =
                text_of(cell(first_row(table), table.column_named("Container Name")));
        } else if table.column("Host Name").is_some() || is_statspack_host(table) {
            host(table, report);
        } else if table.has_columns(&["Snap Id", "Snap Time"]) {
            snapshots(table, report);
        } else if table.titled("Database Summary") && table.has_columns(&["Block Size"]) {
            global_summary(table, report);
        } else if table.titled("Database Instances Included") {
            global_instances(table, report);
        }
    }
    if report.header.database.is_none() {
        report.header.database = database_from_titles(raw);
    }
    block_size(tables, report);
}

/// A report awrrpt wrote inside a PDB (12.2 and later) says so in its
/// banner; a CDB's report lists every container in the same table.
fn is_pdb_report(raw: &str) -> bool {
    crate::banner_head(raw).contains("workload repository pdb report")
}

fn first_row(table: &RawTable) -> &[String] {
    table.rows.first().map(Vec::as_slice).unwrap_or(&[])
}

fn text_of(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_string())
}

fn database(table: &RawTable, report: &mut AwrReport) {
    let row = first_row(table);
    let name_column = table.column("DB Name").or(table.column_named("Database"));
    let header = &mut report.header;
    header.database = header.database.take().or(text_of(cell(row, name_column)));
    header.release = header
        .release
        .take()
        .or(text_of(cell(row, table.column("Release"))));
    if let Some(rac) = text_of(cell(row, table.column_named("RAC"))) {
        header.rac = Some(rac.eq_ignore_ascii_case("YES"));
    }
    header.dbid = text_of(cell(row, table.column_named("DB Id")));
    instance(table, report);
}

fn instance(table: &RawTable, report: &mut AwrReport) {
    let column = table.column_named("Instance");
    for row in &table.rows {
        if let Some(name) = text_of(cell(row, column)) {
            report.header.instances.push(name);
        }
    }
    let number = cell(first_row(table), table.column("Inst Num"));
    if report.header.instance_number.is_none() {
        report.header.instance_number = number.parse().ok();
    }
}

/// STATSPACK underlines "Host" as a title, so its host table's first
/// headings are blank: the host name is the cell before "Platform".
fn is_statspack_host(table: &RawTable) -> bool {
    table.titled("Host Name") && table.column_named("Platform").is_some()
}

fn host(table: &RawTable, report: &mut AwrReport) {
    let row = first_row(table);
    let column = table.column("Host Name").or_else(|| {
        (0..table.column_named("Platform")?).rfind(|at| !cell(row, Some(*at)).is_empty())
    });
    report.header.host = text_of(cell(row, column));
}

fn snapshots(table: &RawTable, report: &mut AwrReport) {
    if report.header.begin_snap.is_some() {
        return;
    }
    let id = table.column("Snap Id");
    let time = table.column("Snap Time");
    let snapshot = |row: &[String]| {
        let time_text = cell(row, time).to_string();
        Snapshot {
            id: number(cell(row, id)).map(|value| value as u64),
            epoch_s: snap_time_s(&time_text),
            time: time_text,
        }
    };
    let header = &mut report.header;
    let instances = cell(first_row(table), table.column_named("Instances"));
    header.cluster_instances = instances.parse().ok();
    header.begin_snap = table.row_labelled("Begin Snap").map(snapshot);
    header.end_snap = table.row_labelled("End Snap").map(snapshot);
    header.elapsed_s = table.row_labelled("Elapsed").and_then(minutes_after_label);
    header.db_time_s = table.row_labelled("DB Time").and_then(minutes_after_label);
}

/// `Elapsed:  117.66 (mins)` → seconds.
fn minutes_after_label(row: &[String]) -> Option<f64> {
    first_number(&row[1..].join(" ")).map(|minutes| minutes * 60.0)
}

fn global_summary(table: &RawTable, report: &mut AwrReport) {
    let row = first_row(table);
    let header = &mut report.header;
    header.database = text_of(cell(row, table.column_named("Name")));
    header.dbid = text_of(cell(row, table.column_named("Id")));
    header.rac = Some(true);
    if let Some(bytes) = number(cell(row, table.column("Block Size"))) {
        header.block_size_bytes = Some(bytes);
        header.block_size_source = Some("Database Summary 'Block Size'".to_string());
    }
    header.elapsed_s = number(cell(row, table.column("Elapsed time"))).map(|m| m * 60.0);
    header.db_time_s = number(cell(row, table.column_named("DB time"))).map(|m| m * 60.0);
    let snap_id = |column| number(cell(row, column)).map(|value| value as u64);
    header.begin_snap = Some(Snapshot {
        id: snap_id(table.column_named("Begin")),
        ..Snapshot::default()
    });
    header.end_snap = Some(Snapshot {
        id: snap_id(table.column_named("End")),
        ..Snapshot::default()
    });
}

fn global_instances(table: &RawTable, report: &mut AwrReport) {
    let instance = table.column_named("Instance");
    for row in &table.rows {
        if let Some(name) = text_of(cell(row, instance)) {
            report.header.instances.push(name);
        }
    }
    let row = first_row(table);
    let header = &mut report.header;
    header.release = text_of(cell(row, table.column("Release")));
    header.host = text_of(cell(row, table.column_named("Host")));
    for (snap, column) in [
        (&mut header.begin_snap, table.column("Begin Snap Time")),
        (&mut header.end_snap, table.column("End Snap Time")),
    ] {
        let time = cell(row, column).to_string();
        let entry = snap.get_or_insert_with(Snapshot::default);
        entry.epoch_s = snap_time_s(&time);
        entry.time = time;
    }
}

/// STATSPACK prints the database name only in `DB/Inst: NAME/inst`.
fn database_from_titles(raw: &str) -> Option<String> {
    let at = raw.find("DB/Inst: ")? + "DB/Inst: ".len();
    let name: String = raw[at..]
        .chars()
        .take_while(|c| *c != '/' && !c.is_whitespace())
        .collect();
    text_of(&name)
}

/// The block size: `Std Block Size:` in Cache Sizes, the RAC summary, or
/// the `db_block_size` parameter (read later); 8192 is assumed only with a
/// problem saying so.
fn block_size(tables: &[RawTable], report: &mut AwrReport) {
    if report.header.block_size_bytes.is_some() {
        return;
    }
    let found = tables
        .iter()
        .flat_map(|table| table.rows.iter())
        .find_map(|row| {
            let joined = row.join(" ");
            let at = joined.find("Std Block Size:")? + "Std Block Size:".len();
            size_bytes(joined[at..].split_whitespace().next()?)
        });
    if let Some(bytes) = found {
        report.header.block_size_bytes = Some(bytes);
        report.header.block_size_source = Some("Cache Sizes 'Std Block Size'".to_string());
    }
    if report.format == Format::HtmlAwrGlobal && report.header.instances.is_empty() {
        report
            .problems
            .push("section not found: Database Instances Included In Report".into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Format;

    fn containers() -> RawTable {
        RawTable {
            title: "This table displays pdb instance information".into(),
            heading: String::new(),
            header: vec![
                "Container DB Id".into(),
                "Container Name".into(),
                "Open Time".into(),
            ],
            rows: vec![vec!["433659332".into(), "ETPDB".into(), "08-Dec-21".into()]],
        }
    }

    #[test]
    fn only_a_pdb_reports_banner_makes_it_a_pdb_report() {
        let mut cdb = AwrReport::new("cdb.html", Format::HtmlAwr);
        read(
            &[containers()],
            "<h1>WORKLOAD REPOSITORY report for</h1>",
            &mut cdb,
        );
        assert_eq!(cdb.header.pdb, None, "a CDB's report lists every container");
        let mut pdb = AwrReport::new("pdb.html", Format::HtmlAwr);
        let banner = "<h1>WORKLOAD REPOSITORY PDB report (root snapshots)</h1>";
        read(&[containers()], banner, &mut pdb);
        assert_eq!(pdb.header.pdb.as_deref(), Some("ETPDB"));
    }
}
