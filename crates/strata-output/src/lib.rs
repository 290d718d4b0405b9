//! strata-output: the one output path of every strata command. A command
//! builds a [`document::Report`] — named figures with their units and
//! layers, sections of tables, charts and notes, findings — and prints it
//! with a [`render::Format`]: text for a terminal, JSON for programs (the
//! document itself, schema `strata.report`), CSV for the tables, or a
//! self-contained HTML page.
//!
//! Not for: computing figures or deciding what is wrong (each command's
//! crate, and strata-report's findings), or where the output goes (the
//! binary writes to standard output or `--output FILE`).

pub mod args;
pub mod document;
pub mod render;

use document::Report;

/// What a command produced, in the forms it has. A format the command has
/// no form of its own is rendered from `document`.
#[derive(Default)]
pub struct Output {
    pub document: Option<Report>,
    /// The command's own text layout, where it has one.
    pub text: Option<String>,
    /// The command's own versioned JSON document, where it has one.
    pub json: Option<String>,
    /// The command's main table as CSV, where it has one.
    pub csv: Option<String>,
}

impl Output {
    pub fn document(report: Report) -> Output {
        Output {
            document: Some(report),
            ..Output::default()
        }
    }
}
