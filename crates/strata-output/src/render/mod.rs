//! Renderers: lay a [`Report`] out as text (100 columns), JSON, CSV or one
//! self-contained HTML page ([`Format`]). They compute nothing; every figure
//! and every label comes from the report.
//!
//! This module also holds the few wordings and number formats that the text
//! and HTML renderers must agree on. Not for: anything a JSON reader would
//! need, which is in the document itself.

use crate::document::{format_number, Axis, Chart, Fact, Report, Source};

pub mod csv;
pub mod html;
pub mod json;
mod markup;
pub mod sparkline;
mod svg;
mod svg_scale;
pub mod text;
mod text_chart;
mod text_table;
mod wrap;

/// Turns a report into one output format.
pub trait Renderer {
    fn render(&self, report: &Report) -> String;
}

/// The output formats every command prints in (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Csv,
    Html,
}

impl Format {
    /// The accepted values of `--format`.
    pub const NAMES: [&'static str; 4] = ["text", "json", "csv", "html"];

    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "text" => Some(Format::Text),
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            "html" => Some(Format::Html),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        Format::NAMES[self as usize]
    }

    /// The renderer of this format (text at 100 columns).
    pub fn renderer(self) -> Box<dyn Renderer> {
        match self {
            Format::Text => Box::new(text::TextRenderer::default()),
            Format::Json => Box::new(json::JsonRenderer),
            Format::Csv => Box::new(csv::CsvRenderer),
            Format::Html => Box::new(html::HtmlRenderer),
        }
    }
}

/// `report` in `format`.
pub fn render(report: &Report, format: Format) -> String {
    format.renderer().render(report)
}

/// Printed instead of findings when the report has none, so that "no
/// findings" is never mistaken for "findings not evaluated".
pub const NO_FINDINGS: &str =
    "No findings: none of the finding rules' evidence was present or crossed its threshold.";

/// Heading of the list of parts of the input that could not be read.
pub const COULD_NOT_READ: &str = "Could not read:";

/// A chart value with as many decimals as its size deserves: `8,047`,
/// `12.5`, `3.25`, `0.125`. Not-a-number prints as `n/a`.
pub fn format_chart_value(value: f64) -> String {
    let magnitude = value.abs();
    let decimals = if magnitude >= 100.0 || magnitude == 0.0 {
        0
    } else if magnitude >= 10.0 {
        1
    } else if magnitude >= 1.0 {
        2
    } else {
        3
    };
    let text = format_number(value, decimals);
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A formatted number followed by its unit the way the report writes it:
/// `12%`, `8,047 requests/s`, or the bare number when the unit is empty.
pub fn with_unit(number: &str, unit: &str) -> String {
    match unit {
        "" => number.to_string(),
        "%" => format!("{number}%"),
        _ => format!("{number} {unit}"),
    }
}

/// An axis label with its unit: `latency (ms)`; the label alone when it
/// already ends with its unit (`select statements`, not `select statements
/// (statements)`).
pub fn axis_title(label: &str, unit: &str) -> String {
    let says_its_unit = label == unit
        || label.ends_with(&format!(" {unit}"))
        || label.contains(&format!("({unit})"));
    if unit.is_empty() || says_its_unit {
        label.to_string()
    } else {
        format!("{label} ({unit})")
    }
}

/// An axis's title with its unit, saying so when the scale is logarithmic.
pub fn axis_text(axis: &Axis) -> String {
    let title = axis_title(&axis.label, &axis.unit);
    if axis.log {
        format!("{title}, log scale")
    } else {
        title
    }
}

/// The points of a series that can be drawn: both coordinates finite.
pub fn finite_points(points: &[[f64; 2]]) -> impl Iterator<Item = [f64; 2]> + '_ {
    points
        .iter()
        .copied()
        .filter(|[x, y]| x.is_finite() && y.is_finite())
}

/// How many points of a chart can be drawn, over all its series.
pub fn finite_point_count(chart: &Chart) -> usize {
    chart
        .series
        .iter()
        .map(|series| finite_points(&series.points).count())
        .sum()
}

/// What was read, as one more header fact: `run: a.strata (120–480 s)`.
pub fn source_fact(source: &Source) -> Option<Fact> {
    if source.files.is_empty() {
        return None;
    }
    let mut value = format!("{}: {}", source.kind, source.files.join(", "));
    if let Some(window) = source.window {
        let from = format_chart_value(window.from_s);
        let to = format_chart_value(window.to_s);
        value.push_str(&format!(" ({from}–{to} s)"));
    }
    Some(Fact::new("source", value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_values_keep_significant_decimals_only() {
        assert_eq!(format_chart_value(8047.3), "8,047");
        assert_eq!(format_chart_value(12.5), "12.5");
        assert_eq!(format_chart_value(3.0), "3");
        assert_eq!(format_chart_value(0.125), "0.125");
        assert_eq!(format_chart_value(0.0), "0");
        assert_eq!(format_chart_value(-250.0), "-250");
        assert_eq!(format_chart_value(f64::NAN), "n/a");
    }

    #[test]
    fn units_follow_the_report_convention() {
        assert_eq!(with_unit("12.5", "%"), "12.5%");
        assert_eq!(with_unit("8,047", "requests/s"), "8,047 requests/s");
        assert_eq!(with_unit("3", ""), "3");
        assert_eq!(axis_title("latency", "ms"), "latency (ms)");
    }
}
