//! The report document: what a report says, independent of how it is printed.
//!
//! Every source becomes a [`Report`]: facts about what was read, sections of
//! tables, charts and notes, and findings. The renderers (text, JSON, HTML)
//! only lay it out; they never compute a figure. The JSON renderer is this
//! structure serialized, so the field names here are the documented schema
//! (`docs/report.md`, `schema: "strata.report"`).
//!
//! Not for: computing figures (the builders do) or deciding what is wrong
//! (strata-report's `findings` does).

use serde::{Deserialize, Deserializer, Serialize};

/// The schema name written into every report's JSON.
pub const SCHEMA: &str = "strata.report";
/// The schema version; bumped when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

/// One whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub schema_version: u32,
    /// e.g. "strata report — run", "strata awr — 19c single instance".
    pub title: String,
    /// What was read.
    pub source: Source,
    /// Header facts: host, database, release, snapshot times, command line.
    pub about: Vec<Fact>,
    /// The report's figures by name, each with its unit and layer, for
    /// programs: `read_requests_per_s` is read by name, not found among
    /// table cells by its label.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figure>,
    pub sections: Vec<Section>,
    /// Findings that connect the layers; empty when none applies (the
    /// renderers then say so).
    pub findings: Vec<Finding>,
    /// Parts of the input that could not be read, each named: a report is
    /// printed with what could be read, never with a silent zero.
    pub problems: Vec<String>,
}

/// One named figure: what it counts, in which unit, at which layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Stable and unique within its scope: `read_requests_per_s`,
    /// `blocks_read_per_s`, `read_bytes_per_s`.
    pub name: String,
    #[serde(deserialize_with = "f64_or_nan")]
    pub value: f64,
    /// `requests/s`, `blocks/s`, `bytes/s`, `ms`, `%`.
    pub unit: String,
    /// Where it was counted: `database`, `device`, `host`, `network`.
    pub layer: String,
    /// What the source calls it, when that differs from what it counts
    /// (AWR's "Physical read IO requests").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_label: Option<String>,
    /// Which part of the input it belongs to when the report covers
    /// several (a compare's `A`/`B`, a series' interval); `None` for the
    /// whole report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl Figure {
    pub fn new(name: &str, value: f64, unit: &str, layer: &str) -> Figure {
        Figure {
            name: name.to_string(),
            value,
            unit: unit.to_string(),
            layer: layer.to_string(),
            source_label: None,
            scope: None,
        }
    }
}

/// Where the report's numbers come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// `run`, `calibrate`, `observe`, `awr`, `statspack`, `compare`, `series`.
    pub kind: String,
    /// The files read, as given on the command line.
    pub files: Vec<String>,
    /// The part of the source covered, in seconds from its start, when the
    /// report covers a window of it.
    pub window: Option<Window>,
}

/// A time window of a source, in seconds from the source's start.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub from_s: f64,
    pub to_s: f64,
}

/// A label and its value, already formatted with its unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    pub label: String,
    pub value: String,
}

/// A titled part of the report. `id` is stable across versions
/// (`load_profile`, `top_waits`, `io_by_layer`, `latency`, `calibrate`,
/// `time_series`, `outliers`, …) so that tools can find a section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    pub id: String,
    pub title: String,
    pub blocks: Vec<Block>,
}

/// One piece of a section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Table(Table),
    Chart(Chart),
    /// A sentence or two: an explanation, a caveat, a misleading label named.
    Note {
        text: String,
    },
}

/// A table. Each cell carries its display text and, for numbers, the value
/// and unit, so JSON readers need not parse text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub title: Option<String>,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
}

/// A table column: its heading and, when every cell shares one, its unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    pub unit: Option<String>,
    /// Numbers are right-aligned, text left-aligned.
    pub numeric: bool,
}

/// One table cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// What the renderers print.
    pub text: String,
    /// The number behind the text, when there is one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub value: Option<f64>,
    /// The unit of `value` (`requests/s`, `blocks/s`, `MB/s`, `KiB`, `ms`, `%`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub unit: Option<String>,
}

/// A chart. Points are (x, y) in the axes' units. Renderers draw lines for
/// `Line`, dots for `Scatter` and bars for `Bars`; text output shows a
/// sparkline or a compact table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chart {
    /// Stable within a report (`iops_vs_outstanding`, `device_iops_over_time`).
    pub id: String,
    pub title: String,
    pub kind: ChartKind,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    /// Points worth a label (the knee of a latency curve, a spike).
    pub marks: Vec<Mark>,
}

/// How a chart's series are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChartKind {
    Line,
    Scatter,
    Bars,
    /// Bars of buckets: each point's x is its bucket's upper edge, and its
    /// bar spans from the edge before it (half its own for the first on a
    /// log axis) to its own; the x ticks are the edges, so every bar sits
    /// between two labels.
    Histogram,
}

/// A chart axis: what it shows and in which unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    pub label: String,
    pub unit: String,
    /// Logarithmic scale (latency histograms).
    pub log: bool,
}

/// One named line or set of points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub name: String,
    #[serde(deserialize_with = "points_or_nan")]
    pub points: Vec<[f64; 2]>,
}

/// A labelled point on a chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    #[serde(deserialize_with = "f64_or_nan")]
    pub x: f64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub y: f64,
    pub label: String,
}

/// A conclusion drawn from the numbers, with the numbers it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable per kind of finding (`commit_waits_decomposed`,
    /// `blocks_not_requests`, `buffered_not_physical`, …).
    pub id: String,
    pub severity: Severity,
    pub title: String,
    pub evidence: Vec<Evidence>,
    /// One sentence: why this matters.
    pub why: String,
}

/// How much a finding matters to whoever reads the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing when reading the numbers.
    Info,
    /// The result does not mean what it seems to, or something is wrong.
    Warning,
}

/// One number behind a finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub label: String,
    #[serde(deserialize_with = "f64_or_nan")]
    pub value: f64,
    pub unit: String,
    /// The value as printed, with its unit.
    pub text: String,
}

/// JSON has no NaN: serde writes a non-finite number as `null`, and a
/// reader takes `null` back as NaN, so every report round-trips.
fn f64_or_nan<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
}

fn points_or_nan<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<[f64; 2]>, D::Error> {
    let points = Vec::<[Option<f64>; 2]>::deserialize(deserializer)?;
    Ok(points
        .into_iter()
        .map(|[x, y]| [x.unwrap_or(f64::NAN), y.unwrap_or(f64::NAN)])
        .collect())
}

impl Report {
    /// An empty report of a source kind, to be filled by a builder.
    pub fn new(title: impl Into<String>, kind: impl Into<String>, files: Vec<String>) -> Self {
        Report {
            schema: SCHEMA.to_string(),
            schema_version: SCHEMA_VERSION,
            title: title.into(),
            source: Source {
                kind: kind.into(),
                files,
                window: None,
            },
            about: Vec::new(),
            figures: Vec::new(),
            sections: Vec::new(),
            findings: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// The section with this id, if the report has it.
    pub fn section(&self, id: &str) -> Option<&Section> {
        self.sections.iter().find(|section| section.id == id)
    }

    /// Every chart in the report, in order.
    pub fn charts(&self) -> impl Iterator<Item = &Chart> {
        self.sections
            .iter()
            .flat_map(|section| section.blocks.iter())
            .filter_map(|block| match block {
                Block::Chart(chart) => Some(chart),
                _ => None,
            })
    }
}

impl Fact {
    pub fn new(label: impl Into<String>, value: impl Into<String>) -> Self {
        Fact {
            label: label.into(),
            value: value.into(),
        }
    }
}

impl Section {
    pub fn new(id: impl Into<String>, title: impl Into<String>) -> Self {
        Section {
            id: id.into(),
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    pub fn note(mut self, text: impl Into<String>) -> Self {
        self.blocks.push(Block::Note { text: text.into() });
        self
    }

    pub fn table(mut self, table: Table) -> Self {
        self.blocks.push(Block::Table(table));
        self
    }

    pub fn chart(mut self, chart: Chart) -> Self {
        self.blocks.push(Block::Chart(chart));
        self
    }

    /// The tables of this section, in order.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.blocks.iter().filter_map(|block| match block {
            Block::Table(table) => Some(table),
            _ => None,
        })
    }
}

impl Table {
    /// A table with these column headings; a heading ending in a unit in
    /// brackets is not parsed: give units with [`Column::number`].
    pub fn new(title: Option<&str>, columns: Vec<Column>) -> Self {
        Table {
            title: title.map(str::to_string),
            columns,
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.columns.len(), "row width");
        self.rows.push(row);
    }

    /// The row whose first cell reads `label`.
    pub fn row(&self, label: &str) -> Option<&[Cell]> {
        self.rows
            .iter()
            .find(|row| row.first().is_some_and(|cell| cell.text == label))
            .map(Vec::as_slice)
    }
}

impl Column {
    pub fn text(name: impl Into<String>) -> Self {
        Column {
            name: name.into(),
            unit: None,
            numeric: false,
        }
    }

    pub fn number(name: impl Into<String>, unit: Option<&str>) -> Self {
        Column {
            name: name.into(),
            unit: unit.map(str::to_string),
            numeric: true,
        }
    }
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Self {
        Cell {
            text: text.into(),
            value: None,
            unit: None,
        }
    }

    /// An empty cell: the figure does not exist for this row.
    pub fn empty() -> Self {
        Cell::text("")
    }

    /// A number shown with `decimals` decimals and thousands separators,
    /// followed by nothing: the unit is in the column or the row label.
    pub fn number(value: f64, decimals: usize, unit: &str) -> Self {
        Cell {
            text: format_number(value, decimals),
            value: Some(value),
            unit: Some(unit.to_string()),
        }
    }

    /// A number with its own display text (e.g. "8.1 KiB").
    pub fn number_as(value: f64, unit: &str, text: impl Into<String>) -> Self {
        Cell {
            text: text.into(),
            value: Some(value),
            unit: Some(unit.to_string()),
        }
    }
}

impl Evidence {
    /// A number behind a finding, printed with `decimals` decimals and its unit.
    pub fn new(label: impl Into<String>, value: f64, decimals: usize, unit: &str) -> Self {
        let number = format_number(value, decimals);
        let text = match unit {
            "" => number,
            "%" => format!("{number}%"),
            _ => format!("{number} {unit}"),
        };
        Evidence {
            label: label.into(),
            value,
            unit: unit.to_string(),
            text,
        }
    }
}

/// `value` with `decimals` decimals and a comma between thousands
/// (`8047.3` with 0 decimals → `8,047`). Not-a-number prints as `n/a`.
pub fn format_number(value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return "n/a".to_string();
    }
    let fixed = format!("{:.*}", decimals, value.abs());
    let (whole, fraction) = match fixed.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (fixed.as_str(), None),
    };
    let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
    for (index, digit) in whole.chars().enumerate() {
        if index > 0 && (whole.len() - index) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    let negative = value < 0.0 && fixed.chars().any(|c| c.is_ascii_digit() && c != '0');
    let sign = if negative { "-" } else { "" };
    match fraction {
        Some(fraction) => format!("{sign}{grouped}.{fraction}"),
        None => format!("{sign}{grouped}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(format_number(8047.3, 0), "8,047");
        assert_eq!(format_number(64078.0, 0), "64,078");
        assert_eq!(format_number(1234567.891, 2), "1,234,567.89");
        assert_eq!(format_number(999.0, 0), "999");
        assert_eq!(format_number(-1500.0, 0), "-1,500");
        assert_eq!(format_number(-0.001, 1), "0.0");
        assert_eq!(format_number(f64::NAN, 1), "n/a");
    }

    #[test]
    fn evidence_text_carries_its_unit() {
        assert_eq!(
            Evidence::new("read requests", 8047.0, 0, "requests/s").text,
            "8,047 requests/s"
        );
        assert_eq!(Evidence::new("absorbed", 12.5, 1, "%").text, "12.5%");
    }

    #[test]
    fn a_report_round_trips_through_json() {
        let mut table = Table::new(
            None,
            vec![Column::text("metric"), Column::number("per s", None)],
        );
        table.push(vec![
            Cell::text("read requests"),
            Cell::number(8047.0, 0, "requests/s"),
        ]);
        let mut report = Report::new("t", "run", vec!["a.strata".into()]);
        report
            .sections
            .push(Section::new("load_profile", "Load profile").table(table));
        let json = serde_json::to_string(&report).unwrap();
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(back, report);
        assert!(json.contains(r#""type":"table""#), "{json}");
    }

    #[test]
    fn numbers_that_are_not_finite_come_back_as_nan() {
        let mut report = Report::new("t", "run", Vec::new());
        report.findings.push(Finding {
            id: "x".into(),
            severity: Severity::Info,
            title: "x".into(),
            evidence: vec![Evidence::new("ratio", f64::NAN, 1, "")],
            why: "x".into(),
        });
        let chart = Chart {
            id: "c".into(),
            title: "c".into(),
            kind: ChartKind::Line,
            x: Axis {
                label: "t".into(),
                unit: "s".into(),
                log: false,
            },
            y: Axis {
                label: "v".into(),
                unit: "1".into(),
                log: false,
            },
            series: vec![Series {
                name: "s".into(),
                points: vec![[1.0, f64::INFINITY], [2.0, 3.0]],
            }],
            marks: vec![Mark {
                x: f64::NAN,
                y: 1.0,
                label: "m".into(),
            }],
        };
        report.sections.push(Section::new("s", "S").chart(chart));
        let json = serde_json::to_string(&report).unwrap();
        let back: Report = serde_json::from_str(&json).unwrap();
        assert!(back.findings[0].evidence[0].value.is_nan());
        let chart = back.charts().next().unwrap();
        assert!(chart.series[0].points[0][1].is_nan());
        assert_eq!(chart.series[0].points[1], [2.0, 3.0]);
        assert!(chart.marks[0].x.is_nan());
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
    }
}
