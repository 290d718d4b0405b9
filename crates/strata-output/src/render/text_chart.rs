//! Charts as text: a sparkline per series for line and bar charts (with
//! min, max and last beside it), a compact x→y list for scatter charts, and
//! the chart's marks as sentences. Every line fits the width asked for.
//!
//! Not for: exact reading of every point of a long series; the JSON and
//! HTML outputs carry them all.

use super::sparkline::sparkline;
use super::wrap::{columns, wrap, wrap_with_prefix};
use super::{axis_text, axis_title, finite_points, format_chart_value, with_unit};
use crate::document::{Chart, ChartKind, Series};

/// A scatter series longer than this is shown as this many points, evenly
/// spaced in x order.
const SCATTER_ENTRIES: usize = 40;
const SERIES_INDENT: &str = "  ";
const DETAIL_INDENT: &str = "    ";

/// The lines of one chart, each at most `width` characters.
pub fn chart_lines(chart: &Chart, width: usize) -> Vec<String> {
    let mut lines = wrap(&chart.title, width);
    let kind = match chart.kind {
        ChartKind::Line => "line chart",
        ChartKind::Scatter => "scatter chart",
        ChartKind::Bars => "bar chart",
        ChartKind::Histogram => "histogram (each bar: its bucket, up to its x)",
    };
    let axes = format!(
        "{kind}; x: {}; y: {}",
        axis_text(&chart.x),
        axis_text(&chart.y)
    );
    lines.extend(wrap_with_prefix(&axes, SERIES_INDENT, DETAIL_INDENT, width));
    for series in &chart.series {
        let series_lines = match chart.kind {
            ChartKind::Scatter => scatter_lines(series, chart, width),
            ChartKind::Line | ChartKind::Bars | ChartKind::Histogram => {
                sparkline_lines(series, chart, width)
            }
        };
        lines.extend(series_lines);
    }
    for mark in &chart.marks {
        let x = with_unit(&format_chart_value(mark.x), &chart.x.unit);
        let y = with_unit(&format_chart_value(mark.y), &chart.y.unit);
        let text = format!("mark: {} at {x}, {y}", mark.label);
        lines.extend(wrap_with_prefix(&text, SERIES_INDENT, DETAIL_INDENT, width));
    }
    lines
}

/// `name: min …, max …, last …; n points, x a–b unit`, then the sparkline.
fn sparkline_lines(series: &Series, chart: &Chart, width: usize) -> Vec<String> {
    let points: Vec<[f64; 2]> = finite_points(&series.points).collect();
    let Some(&[_, last]) = points.last() else {
        return no_data(series, width);
    };
    let ys: Vec<f64> = points.iter().map(|[_, y]| *y).collect();
    let y_text = |value: f64| with_unit(&format_chart_value(value), &chart.y.unit);
    let (low_x, high_x) = range(points.iter().map(|[x, _]| *x));
    let (low_y, high_y) = range(ys.iter().copied());
    let x_range = format!(
        "{}–{}",
        format_chart_value(low_x),
        format_chart_value(high_x)
    );
    let stats = format!(
        "{}: min {}, max {}, last {}; {} points, x {}",
        series.name,
        y_text(low_y),
        y_text(high_y),
        y_text(last),
        points.len(),
        with_unit(&x_range, &chart.x.unit),
    );
    let mut lines = wrap_with_prefix(&stats, SERIES_INDENT, DETAIL_INDENT, width);
    let spark_width = width.saturating_sub(columns(DETAIL_INDENT)).max(1);
    lines.push(format!(
        "{DETAIL_INDENT}{}",
        sparkline(&ys, spark_width, chart.y.log)
    ));
    lines
}

fn no_data(series: &Series, width: usize) -> Vec<String> {
    let text = format!("{}: no data", series.name);
    wrap_with_prefix(&text, SERIES_INDENT, DETAIL_INDENT, width)
}

fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), value| {
        (low.min(value), high.max(value))
    })
}

/// `name: x (unit) → y (unit), n points`, then `x → y` entries in columns.
fn scatter_lines(series: &Series, chart: &Chart, width: usize) -> Vec<String> {
    let mut points: Vec<[f64; 2]> = finite_points(&series.points).collect();
    if points.is_empty() {
        return no_data(series, width);
    }
    points.sort_by(|a, b| a[0].total_cmp(&b[0]));
    let shown = evenly_spaced(&points, SCATTER_ENTRIES);
    let mut heading = format!(
        "{}: {} → {}, {} points",
        series.name,
        axis_title(&chart.x.label, &chart.x.unit),
        axis_title(&chart.y.label, &chart.y.unit),
        points.len()
    );
    if shown.len() < points.len() {
        heading.push_str(&format!(" ({} shown, evenly spaced in x)", shown.len()));
    }
    let mut lines = wrap_with_prefix(&heading, SERIES_INDENT, DETAIL_INDENT, width);
    let entries: Vec<String> = shown
        .iter()
        .map(|[x, y]| format!("{} → {}", format_chart_value(*x), format_chart_value(*y)))
        .collect();
    lines.extend(in_columns(&entries, width));
    lines
}

/// At most `count` of `points`, the first and last included.
fn evenly_spaced(points: &[[f64; 2]], count: usize) -> Vec<[f64; 2]> {
    if points.len() <= count {
        return points.to_vec();
    }
    (0..count)
        .map(|index| points[index * (points.len() - 1) / (count - 1)])
        .collect()
}

/// `entries` laid out left to right in as many equal columns as fit.
fn in_columns(entries: &[String], width: usize) -> Vec<String> {
    const GAP: usize = 3;
    let available = width.saturating_sub(columns(DETAIL_INDENT));
    let entry_width = entries
        .iter()
        .map(|entry| columns(entry))
        .max()
        .unwrap_or(1);
    let per_line = ((available + GAP) / (entry_width + GAP)).max(1);
    let mut lines = Vec::new();
    for chunk in entries.chunks(per_line) {
        let padded: Vec<String> = chunk
            .iter()
            .map(|entry| format!("{entry:<entry_width$}"))
            .collect();
        let line = format!("{DETAIL_INDENT}{}", padded.join(&" ".repeat(GAP)));
        let line = line.trim_end();
        if columns(line) <= width {
            lines.push(line.to_string());
        } else {
            lines.extend(wrap_with_prefix(line, DETAIL_INDENT, DETAIL_INDENT, width));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{Axis, Mark};

    fn chart(kind: ChartKind, points: Vec<[f64; 2]>) -> Chart {
        Chart {
            id: "latency".into(),
            title: "Read latency".into(),
            kind,
            x: Axis {
                label: "time".into(),
                unit: "s".into(),
                log: false,
            },
            y: Axis {
                label: "latency".into(),
                unit: "ms".into(),
                log: false,
            },
            series: vec![Series {
                name: "reads".into(),
                points,
            }],
            marks: vec![Mark {
                x: 2.0,
                y: 9.0,
                label: "spike".into(),
            }],
        }
    }

    #[test]
    fn a_line_chart_shows_a_sparkline_with_min_max_last() {
        let points = vec![
            [0.0, 1.0],
            [1.0, 5.0],
            [2.0, 9.0],
            [3.0, f64::NAN],
            [4.0, 3.0],
        ];
        let lines = chart_lines(&chart(ChartKind::Line, points), 100);
        assert_eq!(lines[0], "Read latency");
        assert_eq!(lines[1], "  line chart; x: time (s); y: latency (ms)");
        assert_eq!(
            lines[2],
            "  reads: min 1 ms, max 9 ms, last 3 ms; 4 points, x 0–4 s"
        );
        assert_eq!(lines[3], "    ▁▅█▃");
        assert_eq!(lines[4], "  mark: spike at 2 s, 9 ms");
    }

    #[test]
    fn a_scatter_chart_lists_points_in_x_order() {
        let points = vec![[16.0, 7900.0], [1.0, 250.0], [4.0, 1000.0]];
        let lines = chart_lines(&chart(ChartKind::Scatter, points), 100);
        assert_eq!(lines[2], "  reads: time (s) → latency (ms), 3 points");
        assert_eq!(lines[3], "    1 → 250      4 → 1,000    16 → 7,900");
    }

    #[test]
    fn a_long_scatter_series_is_sampled_and_fits() {
        let points: Vec<[f64; 2]> = (0..500)
            .map(|i| [f64::from(i), f64::from(i) * 1.5])
            .collect();
        let lines = chart_lines(&chart(ChartKind::Scatter, points), 40);
        assert!(lines.iter().all(|line| columns(line) <= 40), "{lines:#?}");
        let text = lines
            .join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(text.contains("500 points (40 shown"), "{lines:#?}");
        assert!(
            text.contains("0 → 0") && text.contains("499 → 748"),
            "{lines:#?}"
        );
    }

    #[test]
    fn an_empty_series_says_no_data() {
        let lines = chart_lines(&chart(ChartKind::Bars, vec![[1.0, f64::INFINITY]]), 100);
        assert_eq!(lines[2], "  reads: no data");
    }
}
