//! The lines after a header: each parsed as the record it must be, its
//! errors named by line and field.
//!
//! Not for: the header (`format`) or upgrading version 1 (`v1`).

use crate::format::FORMAT_NAME;
use crate::record::Record;
use anyhow::Context;
use std::path::Path;

/// One record and the line of the file it came from.
#[derive(Clone, Debug)]
pub struct Line {
    pub number: usize,
    pub record: Record,
}

/// The error of a line that does not parse as the type it must be: serde's
/// message (which names the missing or wrong field) without its position
/// in the line.
pub(crate) fn field_error(error: serde_json::Error) -> anyhow::Error {
    let message = error.to_string();
    let message = match message.rfind(" at line ") {
        Some(cut) if !error.is_eof() => message[..cut].to_string(),
        _ => message,
    };
    anyhow::anyhow!(message)
}

/// The error of a line that is not its record: cut short (a truncated
/// recording), or lacking or mistyping a field.
fn record_error(error: serde_json::Error) -> anyhow::Error {
    let truncated = error.is_eof();
    let error = field_error(error);
    match truncated {
        true => error.context("not a complete record (truncated recording?)"),
        false => error,
    }
}

/// Whether a line that is no record is a Recording's header (files
/// joined with `cat`).
fn is_header(text: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Declared {
        format: Option<String>,
    }
    serde_json::from_str::<Declared>(text)
        .is_ok_and(|declared| declared.format.as_deref() == Some(FORMAT_NAME))
}

pub(crate) fn parse_lines(numbered: &[(usize, String)], path: &Path) -> anyhow::Result<Vec<Line>> {
    numbered
        .iter()
        .map(|(number, text)| {
            let record =
                parse_line(text).with_context(|| format!("{}: line {number}", path.display()))?;
            Ok(Line {
                number: *number,
                record,
            })
        })
        .collect()
}

/// One line as the record `T` it must be; a header is a second one.
pub(crate) fn parse_line<T: serde::de::DeserializeOwned>(text: &str) -> anyhow::Result<T> {
    serde_json::from_str(text).map_err(|error| match is_header(text) {
        true => anyhow::anyhow!(second_header()),
        false => record_error(error),
    })
}

fn second_header() -> String {
    "a second header: this file holds more than one Recording (joined with cat?); each run has \
     its own file"
        .to_string()
}
