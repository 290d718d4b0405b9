//! A run (or a setup) in every output format: its text, its versioned JSON
//! document, and as CSV its per-second series — one row per second of the
//! measured window — or, for a setup, its schemas. The HTML page of a run
//! is the report of its Recording (the binary asks strata-report for it).
//!
//! Not for: the figures themselves (`accounting`) or their wording
//! (`output`).

use crate::outcome::SlobOutcome;
use crate::output::{json_document, report_text};
use crate::request::ResolvedOptions;
use strata_output::document::{Cell, Column, Report, Section, Table};
use strata_output::render::{render, Format};
use strata_output::Output;
use strata_slob::load::LoadReport;
use strata_slob::session::SecondCounts;

/// The run's outputs; `document` is the setup's schemas when there was a
/// load and no window (a setup), else `None`.
pub fn run_output(outcome: &SlobOutcome, options: &ResolvedOptions) -> Output {
    let per_second = outcome.figures.as_ref().map(|figures| {
        let table = per_second_table(&figures.per_second);
        document(
            "strata run — per second",
            "per_second",
            "Per second of the window",
            table,
        )
    });
    let schemas = outcome.load.as_ref().map(|load| {
        let table = schema_table(load);
        document("strata setup — schemas", "schemas", "Schemas", table)
    });
    let csv_document = per_second.as_ref().or(schemas.as_ref());
    Output {
        text: Some(report_text(outcome)),
        json: Some(format!("{}\n", json_document(outcome, options))),
        csv: csv_document.map(|report| render(report, Format::Csv)),
        document: per_second.is_none().then_some(schemas).flatten(),
    }
}

fn document(title: &str, id: &str, section: &str, table: Table) -> Report {
    let mut report = Report::new(title, "run", Vec::new());
    report.sections.push(Section::new(id, section).table(table));
    report
}

/// `second, loops, selects, updates, scans`: what completed in each second
/// of the window (second 0 is the first).
fn per_second_table(per_second: &[SecondCounts]) -> Table {
    let columns = ["second", "loops", "selects", "updates", "scans"]
        .into_iter()
        .map(|name| Column::number(name, None))
        .collect();
    let mut table = Table::new(None, columns);
    for second in per_second {
        let counts = [
            second.second,
            second.loops,
            second.selects,
            second.updates,
            second.scans,
        ];
        table.push(
            counts
                .map(|count| Cell::number(count as f64, 0, ""))
                .to_vec(),
        );
    }
    table
}

fn schema_table(load: &LoadReport) -> Table {
    let mut table = Table::new(
        None,
        vec![
            Column::text("schema"),
            Column::text("action"),
            Column::number("rows", None),
            Column::number("blocks", None),
            Column::number("bytes_on_disk", Some("bytes")),
        ],
    );
    for schema in &load.schemas {
        let action = serde_json::to_value(&schema.action)
            .ok()
            .and_then(|value| value.as_str().map(str::to_string))
            .unwrap_or_default();
        table.push(vec![
            Cell::text(&schema.schema),
            Cell::text(action),
            Cell::number(schema.rows as f64, 0, ""),
            Cell::number(schema.blocks as f64, 0, ""),
            Cell::number(schema.bytes_on_disk as f64, 0, "bytes"),
        ]);
    }
    table
}
