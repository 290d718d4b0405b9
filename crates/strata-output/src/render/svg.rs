//! Charts as inline SVG for the HTML page: axes with tick labels in the
//! axes' units, axis titles `label (unit)`, a legend entry per series, every
//! finite data point a `circle.point` with a `<title>` tooltip, lines as
//! polylines (broken where a value is missing), bars as rects, and the
//! chart's marks ringed and labelled.
//!
//! The `<svg>` carries `data-chart-id` (the chart's id) and `data-points`
//! (how many points were drawn) so that tests and tools can find and count
//! them. On a log axis a value at or below zero cannot be placed: its point
//! is drawn on the axis, classed `off-scale`, and its tooltip says so.
//!
//! Not for: interactivity; there is no script.

use super::markup::escape;
use super::svg_scale::{ticks, Scale};
use super::{axis_text, finite_point_count, finite_points, format_chart_value, with_unit};
use crate::document::{Axis, Chart, ChartKind, Mark, Series};

const WIDTH: f64 = 760.0;
const TOP: f64 = 16.0;
const PLOT_HEIGHT: f64 = 280.0;
const RIGHT_MARGIN: f64 = 30.0;
/// Below the plot: x tick labels and the x axis title.
const X_AXIS_ROOM: f64 = 46.0;
const LEGEND_ROW: f64 = 20.0;
/// Rough width of one character at the charts' 11px font.
const CHAR_WIDTH: f64 = 6.6;
/// Colour-blind-safe (Okabe–Ito), darkened where too light on white.
const PALETTE: [&str; 8] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#b8860b", "#56b4e9", "#000000", "#8c564b",
];

/// The inline `<svg>` of one chart.
pub fn chart_svg(chart: &Chart) -> String {
    let frame = Frame::for_chart(chart);
    let mut svg = frame.open_tag(chart);
    svg.push_str(&format!("<title>{}</title>", escape(&chart.title)));
    svg.push_str(&frame.axes(chart));
    if frame.points == 0 {
        svg.push_str(&frame.no_data());
    }
    for (index, series) in chart.series.iter().enumerate() {
        svg.push_str(&frame.series(chart, series, index));
    }
    for mark in &chart.marks {
        svg.push_str(&frame.mark(chart, mark));
    }
    svg.push_str(&frame.legend(chart));
    svg.push_str("</svg>");
    svg
}

/// Where everything of one chart goes.
struct Frame {
    x: Scale,
    y: Scale,
    x_ticks: Vec<f64>,
    y_ticks: Vec<f64>,
    height: f64,
    points: usize,
    bar_width: f64,
}

fn colour(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

fn px(value: f64) -> String {
    format!("{value:.1}")
}

fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * CHAR_WIDTH
}

fn tick_label(value: f64, axis: &Axis) -> String {
    with_unit(&format_chart_value(value), &axis.unit)
}

/// Every value drawn on one axis: the points' and the marks'.
fn axis_values(chart: &Chart, coordinate: usize) -> Vec<f64> {
    let points = chart
        .series
        .iter()
        .flat_map(|series| finite_points(&series.points));
    let marks = chart.marks.iter().map(|mark| [mark.x, mark.y]);
    points.chain(marks).map(|point| point[coordinate]).collect()
}

impl Frame {
    fn for_chart(chart: &Chart) -> Frame {
        let y_values = axis_values(chart, 1);
        let bars = matches!(chart.kind, ChartKind::Bars | ChartKind::Histogram);
        let y_from_zero = bars || y_values.iter().all(|value| *value >= 0.0);
        let y_ticks = ticks(&y_values, chart.y.log, y_from_zero, 6);
        let (left, right) = margins(chart, &y_ticks);
        let plot_width = WIDTH - left - right;
        let (x_ticks, bar_gap) = match chart.kind {
            ChartKind::Histogram => (bucket_edges_fitting(chart, plot_width), 0.0),
            _ => x_ticks_fitting(chart, plot_width),
        };
        let x = Scale {
            low: x_ticks[0],
            high: x_ticks[x_ticks.len() - 1],
            log: chart.x.log,
            start: left,
            end: left + plot_width,
        };
        let y = Scale {
            low: y_ticks[0],
            high: y_ticks[y_ticks.len() - 1],
            log: chart.y.log,
            start: TOP + PLOT_HEIGHT,
            end: TOP,
        };
        let bar_width = bar_width(&x, bar_gap, chart.series.len());
        let legend_rows = legend_layout(chart, left)
            .last()
            .map_or(0, |entry| entry.row + 1);
        Frame {
            x,
            y,
            x_ticks,
            y_ticks,
            height: TOP + PLOT_HEIGHT + X_AXIS_ROOM + legend_rows as f64 * LEGEND_ROW + 8.0,
            points: finite_point_count(chart),
            bar_width,
        }
    }

    fn open_tag(&self, chart: &Chart) -> String {
        let kind = match chart.kind {
            ChartKind::Line => "line",
            ChartKind::Scatter => "scatter",
            ChartKind::Bars => "bars",
            ChartKind::Histogram => "histogram",
        };
        format!(
            "<svg class=\"chart\" role=\"img\" \
             viewBox=\"0 0 {WIDTH} {h}\" width=\"{WIDTH}\" height=\"{h}\" \
             data-chart-id=\"{id}\" data-kind=\"{kind}\" data-points=\"{points}\">",
            h = px(self.height),
            id = escape(&chart.id),
            points = self.points,
        )
    }

    fn plot_bottom(&self) -> f64 {
        self.y.start
    }

    fn axes(&self, chart: &Chart) -> String {
        let mut svg = String::from("<g class=\"axes\">");
        for tick in &self.x_ticks {
            let at = px(self.x.position(*tick));
            let (top, bottom) = (px(TOP), px(self.plot_bottom()));
            let label = escape(&tick_label(*tick, &chart.x));
            svg.push_str(&format!(
                "<line class=\"grid\" x1=\"{at}\" y1=\"{top}\" x2=\"{at}\" y2=\"{bottom}\"/>\
                 <text class=\"tick x\" x=\"{at}\" y=\"{}\" text-anchor=\"middle\">{label}</text>",
                px(self.plot_bottom() + 16.0)
            ));
        }
        for tick in &self.y_ticks {
            let at = px(self.y.position(*tick));
            let (left, right) = (px(self.x.start), px(self.x.end));
            let label = escape(&tick_label(*tick, &chart.y));
            svg.push_str(&format!(
                "<line class=\"grid\" x1=\"{left}\" y1=\"{at}\" x2=\"{right}\" y2=\"{at}\"/>\
                 <text class=\"tick y\" x=\"{}\" y=\"{at}\" dy=\"0.32em\" text-anchor=\"end\">{label}</text>",
                px(self.x.start - 6.0)
            ));
        }
        svg.push_str(&self.axis_lines_and_titles(chart));
        svg.push_str("</g>");
        svg
    }

    fn axis_lines_and_titles(&self, chart: &Chart) -> String {
        let (left, right, top, bottom) = (
            px(self.x.start),
            px(self.x.end),
            px(TOP),
            px(self.plot_bottom()),
        );
        let middle_x = px((self.x.start + self.x.end) / 2.0);
        let middle_y = px((TOP + self.plot_bottom()) / 2.0);
        format!(
            "<line class=\"axis\" x1=\"{left}\" y1=\"{bottom}\" x2=\"{right}\" y2=\"{bottom}\"/>\
             <line class=\"axis\" x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{bottom}\"/>\
             <text class=\"axis-title x\" x=\"{middle_x}\" y=\"{}\" text-anchor=\"middle\">{}</text>\
             <text class=\"axis-title y\" transform=\"translate(14 {middle_y}) rotate(-90)\" \
             text-anchor=\"middle\">{}</text>",
            px(self.plot_bottom() + 36.0),
            escape(&axis_text(&chart.x)),
            escape(&axis_text(&chart.y)),
        )
    }

    fn no_data(&self) -> String {
        format!(
            "<text class=\"no-data\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">no data</text>",
            px((self.x.start + self.x.end) / 2.0),
            px((TOP + self.plot_bottom()) / 2.0)
        )
    }

    fn series(&self, chart: &Chart, series: &Series, index: usize) -> String {
        let colour = colour(index);
        let mut svg = format!(
            "<g class=\"series\" data-series=\"{}\" fill=\"{colour}\" stroke=\"{colour}\">",
            escape(&series.name)
        );
        match chart.kind {
            ChartKind::Line => svg.push_str(&self.polylines(series)),
            ChartKind::Bars => svg.push_str(&self.bars(series, self.bar_offset(chart, index))),
            ChartKind::Histogram => {
                svg.push_str(&self.bucket_bars(series, (index, chart.series.len())))
            }
            ChartKind::Scatter => {}
        }
        let offset = self.bar_offset(chart, index);
        for (low, [x, y]) in self.bucket_lows(series) {
            let offset = match chart.kind {
                ChartKind::Histogram => self.bucket_middle(low, x) - self.x.position(x),
                _ => offset,
            };
            svg.push_str(&self.point(chart, &series.name, x, y, offset));
        }
        svg.push_str("</g>");
        svg
    }

    /// One polyline per run of finite points, so a gap stays a gap.
    fn polylines(&self, series: &Series) -> String {
        let mut svg = String::new();
        let runs = series
            .points
            .split(|[x, y]| !x.is_finite() || !y.is_finite())
            .filter(|run| !run.is_empty());
        for run in runs {
            let coordinates: Vec<String> = run
                .iter()
                .map(|[x, y]| format!("{},{}", px(self.x.position(*x)), px(self.y.position(*y))))
                .collect();
            svg.push_str(&format!(
                "<polyline class=\"line\" fill=\"none\" stroke-width=\"1.8\" points=\"{}\"/>",
                coordinates.join(" ")
            ));
        }
        svg
    }

    fn bar_offset(&self, chart: &Chart, index: usize) -> f64 {
        if chart.kind != ChartKind::Bars {
            return 0.0;
        }
        let count = chart.series.len() as f64;
        (index as f64 - (count - 1.0) / 2.0) * self.bar_width
    }

    fn bars(&self, series: &Series, offset: f64) -> String {
        let baseline = if self.y.log { self.y.low } else { 0.0 };
        let base = self.y.position(baseline);
        let mut svg = String::new();
        for [x, y] in finite_points(&series.points) {
            let left = self.x.position(x) + offset - self.bar_width / 2.0;
            svg.push_str(&bar_rect(
                left,
                self.bar_width.max(1.0),
                self.y.position(y),
                base,
            ));
        }
        svg
    }

    /// Each drawable point with the lower edge of its bucket: the point
    /// before it, or for the first, half its x on a log axis (the axis's
    /// first tick) and one gap below on a linear one.
    fn bucket_lows(&self, series: &Series) -> Vec<(f64, [f64; 2])> {
        let mut points: Vec<[f64; 2]> = finite_points(&series.points).collect();
        points.sort_by(|a, b| a[0].total_cmp(&b[0]));
        let first_low = self.x.low;
        let mut low = first_low;
        points
            .into_iter()
            .map(|point| {
                let this = (low, point);
                low = point[0];
                this
            })
            .collect()
    }

    /// The pixel halfway across a bucket.
    fn bucket_middle(&self, low: f64, high: f64) -> f64 {
        (self.x.position(low) + self.x.position(high)) / 2.0
    }

    /// One bar per bucket, from its lower edge to its upper one; of
    /// `count` series side by side, series `index` takes its share of it.
    fn bucket_bars(&self, series: &Series, (index, count): (usize, usize)) -> String {
        let baseline = if self.y.log { self.y.low } else { 0.0 };
        let base = self.y.position(baseline);
        let mut svg = String::new();
        for (low, [x, y]) in self.bucket_lows(series) {
            let (low, high) = (self.x.position(low), self.x.position(x));
            let share = (high - low) / count.max(1) as f64;
            let left = low + share * index as f64;
            let width = (share - 2.0).max(1.0);
            svg.push_str(&bar_rect(left + 1.0, width, self.y.position(y), base));
        }
        svg
    }

    fn point(&self, chart: &Chart, series: &str, x: f64, y: f64, offset: f64) -> String {
        let off_scale = self.x.is_off_scale(x) || self.y.is_off_scale(y);
        let class = if off_scale {
            "point off-scale"
        } else {
            "point"
        };
        let radius = if chart.kind == ChartKind::Scatter {
            3.5
        } else {
            2.5
        };
        let mut tooltip = format!(
            "{}, {} ({series})",
            tick_label(x, &chart.x),
            tick_label(y, &chart.y)
        );
        if off_scale {
            tooltip.push_str(" — at or below zero, drawn on the log axis");
        }
        format!(
            "<circle class=\"{class}\" cx=\"{}\" cy=\"{}\" r=\"{radius}\" stroke=\"none\"><title>{}</title></circle>",
            px(self.x.position(x) + offset),
            px(self.y.position(y)),
            escape(&tooltip)
        )
    }

    fn mark(&self, chart: &Chart, mark: &Mark) -> String {
        if !mark.x.is_finite() || !mark.y.is_finite() {
            return String::new();
        }
        let (cx, cy) = (self.x.position(mark.x), self.y.position(mark.y));
        let right_half = cx > (self.x.start + self.x.end) / 2.0;
        let (label_x, anchor) = if right_half {
            (cx - 10.0, "end")
        } else {
            (cx + 10.0, "start")
        };
        let tooltip = format!(
            "{}: {}, {}",
            mark.label,
            tick_label(mark.x, &chart.x),
            tick_label(mark.y, &chart.y)
        );
        format!(
            "<g class=\"mark\"><title>{tooltip}</title>\
             <line class=\"mark-guide\" x1=\"{x}\" y1=\"{y}\" x2=\"{x}\" y2=\"{bottom}\"/>\
             <circle class=\"mark-ring\" cx=\"{x}\" cy=\"{y}\" r=\"7\"/>\
             <text class=\"mark-label\" x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text></g>",
            px(label_x),
            px((cy - 10.0).max(TOP + 10.0)),
            escape(&mark.label),
            tooltip = escape(&tooltip),
            x = px(cx),
            y = px(cy),
            bottom = px(self.plot_bottom()),
        )
    }

    fn legend(&self, chart: &Chart) -> String {
        let mut svg = String::from("<g class=\"legend\">");
        let top = self.plot_bottom() + X_AXIS_ROOM;
        for entry in legend_layout(chart, self.x.start) {
            let series = &chart.series[entry.index];
            let y = top + entry.row as f64 * LEGEND_ROW;
            svg.push_str(&format!(
                "<rect class=\"swatch\" x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\
                 <text class=\"legend-label\" x=\"{}\" y=\"{}\">{}</text>",
                px(entry.x),
                px(y),
                colour(entry.index),
                px(entry.x + 17.0),
                px(y + 10.0),
                escape(&legend_text(series))
            ));
        }
        svg.push_str("</g>");
        svg
    }
}

fn legend_text(series: &Series) -> String {
    if finite_points(&series.points).next().is_none() {
        format!("{} (no data)", series.name)
    } else {
        series.name.clone()
    }
}

/// Where one legend entry goes: its row and left edge.
struct LegendEntry {
    index: usize,
    row: usize,
    x: f64,
}

/// Legend entries left to right, starting a new row when one would not fit.
fn legend_layout(chart: &Chart, left: f64) -> Vec<LegendEntry> {
    let mut entries = Vec::new();
    let (mut row, mut x) = (0, left);
    for (index, series) in chart.series.iter().enumerate() {
        let entry_width = 17.0 + text_width(&legend_text(series)) + 18.0;
        if x > left && x + entry_width > WIDTH - RIGHT_MARGIN {
            row += 1;
            x = left;
        }
        entries.push(LegendEntry { index, row, x });
        x += entry_width;
    }
    entries
}

/// Room left of the plot for the y tick labels and the y axis title, and
/// right of it for half the last x tick label.
fn margins(chart: &Chart, y_ticks: &[f64]) -> (f64, f64) {
    let y_label_width = y_ticks
        .iter()
        .map(|tick| text_width(&tick_label(*tick, &chart.y)))
        .fold(0.0, f64::max);
    let left = 30.0 + y_label_width + 8.0;
    let (x_ticks, _) = x_ticks_fitting(chart, WIDTH - left - RIGHT_MARGIN);
    let last_label = x_ticks
        .last()
        .map_or(0.0, |tick| text_width(&tick_label(*tick, &chart.x)));
    (left, RIGHT_MARGIN.max(last_label / 2.0 + 6.0))
}

/// The x ticks, as many as fit their labels side by side, and the smallest
/// gap between two bars' x values (for bar widths; 0 unless a bar chart).
fn x_ticks_fitting(chart: &Chart, plot_width: f64) -> (Vec<f64>, f64) {
    let mut values = axis_values(chart, 0);
    let gap = if chart.kind == ChartKind::Bars {
        smallest_gap(&values)
    } else {
        0.0
    };
    if gap > 0.0 && !chart.x.log {
        let (low, high) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                (l.min(*v), h.max(*v))
            });
        values.extend([low - gap / 2.0, high + gap / 2.0]);
    }
    for target in (2..=8).rev() {
        let candidate = ticks(&values, chart.x.log, false, target);
        let widest = candidate
            .iter()
            .map(|tick| text_width(&tick_label(*tick, &chart.x)) + 16.0)
            .fold(0.0, f64::max);
        if widest * candidate.len() as f64 <= plot_width || target == 2 {
            return (candidate, gap);
        }
    }
    unreachable!("the loop returns at target 2")
}

/// One bar: `width` pixels from `left`, between the pixels `top` and
/// `base` of the y axis.
fn bar_rect(left: f64, width: f64, top: f64, base: f64) -> String {
    format!(
        "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" stroke=\"none\" fill-opacity=\"0.75\"/>",
        px(left),
        px(top.min(base)),
        px(width),
        px((base - top).abs())
    )
}

/// A histogram's x ticks: its buckets' edges (every point's x, and below
/// the first, half it on a log axis or one gap on a linear one), every
/// other one or fewer when their labels would not fit, the first and last
/// always kept.
fn bucket_edges_fitting(chart: &Chart, plot_width: f64) -> Vec<f64> {
    let mut edges = axis_values(chart, 0);
    edges.sort_by(f64::total_cmp);
    edges.dedup();
    edges.retain(|edge| edge.is_finite() && (!chart.x.log || *edge > 0.0));
    let Some(&first) = edges.first() else {
        return ticks(&[], chart.x.log, false, 2);
    };
    let below = match (chart.x.log, smallest_gap(&edges)) {
        (true, _) => first / 2.0,
        (false, gap) if gap > 0.0 => first - gap,
        (false, _) => first - 1.0,
    };
    edges.insert(0, below);
    let widest = edges
        .iter()
        .map(|edge| text_width(&tick_label(*edge, &chart.x)) + 16.0)
        .fold(0.0, f64::max);
    let fit = ((plot_width / widest).floor() as usize).max(2);
    let stride = edges.len().div_ceil(fit).max(1);
    let last = edges.len() - 1;
    edges
        .iter()
        .enumerate()
        .filter(|(index, _)| index % stride == 0 || *index == last)
        .map(|(_, edge)| *edge)
        .collect()
}

/// The smallest distance between two distinct finite values.
fn smallest_gap(values: &[f64]) -> f64 {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    sorted.dedup();
    sorted
        .windows(2)
        .map(|pair| pair[1] - pair[0])
        .fold(0.0, |smallest: f64, gap| {
            if smallest == 0.0 {
                gap
            } else {
                smallest.min(gap)
            }
        })
}

/// Each bar's width in pixels: the series side by side fill 80% of the
/// smallest gap between two x values.
fn bar_width(x: &Scale, gap: f64, series_count: usize) -> f64 {
    if gap <= 0.0 {
        return 24.0;
    }
    let gap_pixels = (x.position(x.low + gap) - x.position(x.low)).abs();
    let gap_pixels = if x.log { 24.0 } else { gap_pixels };
    (gap_pixels * 0.8 / series_count.max(1) as f64).clamp(1.5, 48.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(y_log: bool, points: Vec<[f64; 2]>) -> Chart {
        Chart {
            id: "c<1>".into(),
            title: "t".into(),
            kind: ChartKind::Line,
            x: Axis {
                label: "time".into(),
                unit: "s".into(),
                log: false,
            },
            y: Axis {
                label: "latency".into(),
                unit: "ms".into(),
                log: y_log,
            },
            series: vec![Series {
                name: "reads".into(),
                points,
            }],
            marks: vec![],
        }
    }

    #[test]
    fn every_finite_point_is_a_circle_with_a_tooltip() {
        let svg = chart_svg(&chart(false, vec![[0.0, 1.0], [1.0, f64::NAN], [2.0, 3.0]]));
        assert!(svg.contains("data-chart-id=\"c&lt;1&gt;\"") && svg.contains("data-points=\"2\""));
        assert_eq!(svg.matches("<circle class=\"point\"").count(), 2);
        assert!(svg.contains("<title>2 s, 3 ms (reads)</title>"), "{svg}");
        assert_eq!(
            svg.matches("<polyline").count(),
            2,
            "the missing value breaks the line"
        );
    }

    #[test]
    fn zero_on_a_log_axis_is_drawn_on_the_axis_and_said_so() {
        let svg = chart_svg(&chart(true, vec![[0.0, 0.0], [1.0, 10.0]]));
        assert_eq!(svg.matches("<circle class=\"point").count(), 2);
        assert!(svg.contains("class=\"point off-scale\""));
        assert!(svg.contains("latency (ms), log scale"));
    }

    #[test]
    fn a_chart_without_points_says_no_data() {
        let svg = chart_svg(&chart(false, vec![]));
        assert!(svg.contains(">no data</text>") && svg.contains("data-points=\"0\""));
        assert!(svg.contains("reads (no data)"));
    }
}
