//! `strata awr`'s reader: Oracle AWR reports (HTML and text, awrrpt single
//! instance and awrgrpt RAC global, 10g to 19c and later) and STATSPACK
//! reports, turned into strata's [`Report`] document with honest labels:
//! requests are not blocks, Oracle's "MB" is often MiB, and a commit wait is
//! not a storage latency until it has been decomposed.
//!
//! [`parse`] reads one report into an [`AwrReport`] (what the report says);
//! [`build::report`] judges it; [`compare::report`] and [`series::report`]
//! handle two or many reports; [`figures::window_figures`] gives a report's
//! window as `strata model --from` takes it (strata-run's `measured`).
//!
//! Not for: reading the AWR repository itself (no database connection), or
//! measuring anything.

pub mod build;
pub mod compare;
pub mod extract;
pub mod figures;
pub mod findings;
pub mod html;
pub mod model;
pub mod number;
pub mod series;
pub mod table;
pub mod text;

pub use model::{AwrReport, Format};
pub use strata_output::document::Report;

use anyhow::bail;

/// How far into a file the report's banner must appear (the 19c fixture
/// has SQL*Plus prompt text and a style sheet before it).
const BANNER_WITHIN: usize = 256 * 1024;

/// Reads one report. `name` is used in messages and in the report.
pub fn parse(text: &str, name: &str) -> anyhow::Result<AwrReport> {
    let format = detect(text, name)?;
    let spooled_at = match format {
        Format::HtmlAwr | Format::HtmlAwrGlobal => html::spool_width(text),
        Format::TextAwr | Format::Statspack => None,
    };
    let rejoined = spooled_at.map(|width| html::rejoin_spooled(text, width));
    let text = rejoined.as_deref().unwrap_or(text);
    let tables = match format {
        Format::HtmlAwr | Format::HtmlAwrGlobal => html::tables(text),
        Format::TextAwr | Format::Statspack => text::tables(text),
    };
    let mut report = extract::extract(&tables, text, name, format);
    report.header.spooled_at = spooled_at;
    Ok(report)
}

/// Where the report's banner stands: the first `BANNER_WITHIN` bytes
/// (cut at a character), lower case.
pub(crate) fn banner_head(text: &str) -> String {
    let mut head_end = text.len().min(BANNER_WITHIN);
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    text[..head_end].to_ascii_lowercase()
}

/// Which kind of report `text` is, or an error saying what was expected.
pub fn detect(text: &str, name: &str) -> anyhow::Result<Format> {
    if text.trim().is_empty() {
        bail!("{name} is empty: expected an Oracle AWR or STATSPACK report");
    }
    let head = banner_head(text);
    let html = head.contains("<html") || head.contains("<table");
    if head.contains("compare period report") || head.contains("compare period (rac) report") {
        bail!(
            "{name} is an AWR compare-period report (awrddrpt): strata awr reads one period's \
             report; give it each period's own report (awrrpt) and compare them with \
             `strata awr A B`"
        );
    }
    if head.contains("workload repository report (rac)") && html {
        return Ok(Format::HtmlAwrGlobal);
    }
    if head.contains("workload repository report")
        || head.contains("workload repository pdb report")
    {
        return Ok(if html {
            Format::HtmlAwr
        } else {
            Format::TextAwr
        });
    }
    if head.contains("statspack report") {
        return Ok(Format::Statspack);
    }
    bail!(
        "{name} is not an Oracle AWR or STATSPACK report: expected 'WORKLOAD REPOSITORY report' \
         or 'STATSPACK report' near the top"
    )
}
