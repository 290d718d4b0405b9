//! One module per `strata model` subcommand: its request (the inputs,
//! resolved, with no command-line types) and the function that runs the
//! model on it and returns every form of its output as a
//! [`strata_output::Output`] — the text table with `--explain`'s formulas,
//! the JSON document, and a report (one table, notes, measured figures)
//! that CSV and HTML are rendered from.
//!
//! Not for: the arithmetic (the model modules of this crate), parsing
//! options (the binary, with [`crate::input`]), reading measured inputs
//! (strata-awr's `measured`), or writing anything anywhere.

pub mod args;
pub mod cluster;
pub mod commit;
pub mod disk;
pub mod flash_cache;
pub mod mva;
pub mod nfs;
pub mod predict;
pub mod queue;
pub mod raid;
pub mod replication;
pub mod requests;

use serde::Serialize;
use strata_output::document::{Cell, Column, Figure, Report, Section, Table};
use strata_output::Output;

/// The `source.kind` of every model report.
const KIND: &str = "model";

/// One command's output being built: the text lines as printed, and the
/// report's table, notes and figures beside them.
pub(crate) struct Page {
    title: String,
    files: Vec<String>,
    text: String,
    table: Table,
    notes: Vec<String>,
    figures: Vec<Figure>,
}

impl Page {
    /// A page titled `title` whose table has `columns`.
    pub(crate) fn new(title: &str, columns: Vec<Column>) -> Page {
        Page {
            title: title.to_string(),
            files: Vec::new(),
            text: String::new(),
            table: Table::new(None, columns),
            notes: Vec::new(),
            figures: Vec::new(),
        }
    }

    /// A line of the text layout only (a table's heading or row).
    pub(crate) fn line(&mut self, line: impl Into<String>) {
        self.text.push_str(&line.into());
        self.text.push('\n');
    }

    /// A line of the text layout that the report keeps as a note too (a
    /// measured input, a formula with its numbers, a summary).
    pub(crate) fn note(&mut self, line: impl Into<String>) {
        let line = line.into();
        self.notes.push(line.trim_start().to_string());
        self.line(line);
    }

    /// A row of the report's table.
    pub(crate) fn row(&mut self, cells: Vec<Cell>) {
        self.table.push(cells);
    }

    /// A figure that was measured, not modelled.
    pub(crate) fn figure(&mut self, figure: Figure) {
        self.figures.push(figure);
    }

    /// The input file the report is of.
    pub(crate) fn file(&mut self, name: &str) {
        self.files.push(name.to_string());
    }

    /// The finished output: the text as built, `json` pretty-printed with
    /// a final newline, and the report.
    pub(crate) fn finish(self, json: &impl Serialize) -> anyhow::Result<Output> {
        let mut report = Report::new(self.title.as_str(), KIND, self.files);
        report.figures = self.figures;
        let mut section = Section::new(KIND, self.title).table(self.table);
        for note in self.notes {
            section = section.note(note);
        }
        report.sections.push(section);
        Ok(Output {
            document: Some(report),
            text: Some(self.text),
            json: Some(format!("{}\n", serde_json::to_string_pretty(json)?)),
            csv: None,
        })
    }
}

/// Milliseconds of a time in seconds.
pub(crate) fn ms(seconds: f64) -> f64 {
    seconds * 1e3
}

/// A number column with its unit.
pub(crate) fn number(name: &str, unit: &str) -> Column {
    Column::number(name, Some(unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_printed_and_kept_without_their_indent() {
        let mut page = Page::new("t", vec![Column::text("a")]);
        page.line("heading");
        page.row(vec![Cell::text("x")]);
        page.note("  a = b");
        let output = page.finish(&[1]).unwrap();
        assert_eq!(output.text.as_deref(), Some("heading\n  a = b\n"));
        assert_eq!(output.json.as_deref(), Some("[\n  1\n]\n"));
        let report = output.document.unwrap();
        let section = report.section(KIND).unwrap();
        assert_eq!(section.tables().count(), 1);
        assert_eq!(section.blocks.len(), 2);
    }
}
