//! The CSV renderer: every table of the report, and its named figures, as
//! comma-separated values a spreadsheet or a script reads without parsing
//! text. Numbers are written whole (`12345.678`, no thousands separators,
//! no unit); a heading carries its unit in parentheses (`r_await (ms)`).
//!
//! One table gives plain CSV. Several give one block each, in the report's
//! order, each introduced by a `# section: title` line and separated by an
//! empty line (read them with a comment character of `#`). The named
//! figures, when the report has any, come first.
//!
//! Not for: charts or notes (their numbers are in the tables and figures).

use super::Renderer;
use crate::document::{Block, Cell, Column, Figure, Report, Table};

/// Comma-separated values of the report's figures and tables.
pub struct CsvRenderer;

impl Renderer for CsvRenderer {
    fn render(&self, report: &Report) -> String {
        let mut blocks: Vec<(String, Vec<Vec<String>>)> = Vec::new();
        if !report.figures.is_empty() {
            blocks.push(("figures".to_string(), figure_rows(&report.figures)));
        }
        for section in &report.sections {
            for block in &section.blocks {
                if let Block::Table(table) = block {
                    let title = table.title.as_deref().unwrap_or(&section.title);
                    blocks.push((format!("{}: {title}", section.id), table_rows(table)));
                }
            }
        }
        let single = blocks.len() == 1;
        let mut out = String::new();
        for (index, (title, rows)) in blocks.iter().enumerate() {
            if index > 0 {
                out.push('\n');
            }
            if !single {
                out.push_str(&format!("# {}\n", title.replace('\n', " ")));
            }
            out.push_str(&csv_text(rows));
        }
        out
    }
}

fn figure_rows(figures: &[Figure]) -> Vec<Vec<String>> {
    let heading = ["scope", "name", "value", "unit", "layer", "source_label"];
    let mut rows = vec![heading.iter().map(|name| name.to_string()).collect()];
    rows.extend(figures.iter().map(|figure| {
        vec![
            figure.scope.clone().unwrap_or_default(),
            figure.name.clone(),
            number(figure.value),
            figure.unit.clone(),
            figure.layer.clone(),
            figure.source_label.clone().unwrap_or_default(),
        ]
    }));
    rows
}

fn table_rows(table: &Table) -> Vec<Vec<String>> {
    let mut rows = vec![table.columns.iter().map(heading).collect()];
    rows.extend(
        table
            .rows
            .iter()
            .map(|row| row.iter().map(cell).collect::<Vec<_>>()),
    );
    rows
}

fn heading(column: &Column) -> String {
    match column.unit.as_deref() {
        Some(unit) if !unit.is_empty() => format!("{} ({unit})", column.name),
        _ => column.name.clone(),
    }
}

/// The number behind a cell when it has one, else its text.
fn cell(cell: &Cell) -> String {
    match cell.value {
        Some(value) => number(value),
        None => cell.text.clone(),
    }
}

/// A number in full, or empty when it is not one.
fn number(value: f64) -> String {
    if value.is_finite() {
        format!("{value}")
    } else {
        String::new()
    }
}

/// `rows` as CSV text, each field quoted where it must be; rows may
/// differ in length.
pub fn csv_text(rows: &[Vec<String>]) -> String {
    let mut writer = csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    for row in rows {
        writer.write_record(row).expect("writing CSV to memory");
    }
    let bytes = writer.into_inner().expect("flushing CSV to memory");
    String::from_utf8(bytes).expect("CSV of UTF-8 text is UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{Column, Section};

    fn table(title: &str, value: f64) -> Block {
        Block::Table(Table {
            title: Some(title.to_string()),
            columns: vec![
                Column {
                    name: "device".into(),
                    unit: None,
                    numeric: false,
                },
                Column {
                    name: "r_await".into(),
                    unit: Some("ms".into()),
                    numeric: true,
                },
            ],
            rows: vec![vec![
                Cell::text("sda, the \"data\" disk"),
                Cell::number(value, 3, "ms"),
            ]],
        })
    }

    #[test]
    fn one_table_is_plain_csv_with_units_in_the_heading_and_whole_numbers() {
        let mut report = Report::new("t", "run", vec![]);
        report.sections.push(Section {
            id: "io".into(),
            title: "I/O".into(),
            blocks: vec![table("devices", 1234.5678)],
        });
        assert_eq!(
            CsvRenderer.render(&report),
            "device,r_await (ms)\n\"sda, the \"\"data\"\" disk\",1234.5678\n"
        );
    }

    #[test]
    fn figures_and_several_tables_come_as_titled_blocks() {
        let mut report = Report::new("t", "awr", vec![]);
        report.figures.push(Figure::new(
            "read_requests_per_s",
            812.5,
            "requests/s",
            "database",
        ));
        report.sections.push(Section {
            id: "io".into(),
            title: "I/O".into(),
            blocks: vec![table("a", 1.0), table("b", f64::NAN)],
        });
        let text = CsvRenderer.render(&report);
        assert!(text.starts_with("# figures\nscope,name,value,unit,layer,source_label\n,read_requests_per_s,812.5,requests/s,database,\n\n# io: a\n"), "{text}");
        assert!(
            text.ends_with("# io: b\ndevice,r_await (ms)\n\"sda, the \"\"data\"\" disk\",\n"),
            "{text}"
        );
    }
}
