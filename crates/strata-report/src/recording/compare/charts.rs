//! Compared runs on shared charts: their per-second series on one time
//! axis (seconds since each run's window start, so that runs made at
//! different times line up) and their latency histograms per operation on
//! one chart (doubling buckets, one series per run).
//!
//! Not for: one Recording's charts (`time_series`, `latency`).

use super::operations::OPERATIONS;
use super::Side;
use crate::recording::latency::doubling_buckets;
use crate::recording::samples::{Labels, Timeline};
use strata_core::histogram::LatencyHistogram;
use strata_output::document::{Axis, Chart, ChartKind, Section, Series};
use strata_recording::names::{device, label, layer};

fn chart(id: &str, title: &str, kind: ChartKind, x: Axis, y: Axis, series: Vec<Series>) -> Chart {
    Chart {
        id: id.to_string(),
        title: title.to_string(),
        kind,
        x,
        y,
        series: series
            .into_iter()
            .filter(|series| !series.points.is_empty())
            .collect(),
        marks: Vec::new(),
    }
}

fn axis(label: &str, unit: &str, log: bool) -> Axis {
    Axis {
        label: label.to_string(),
        unit: unit.to_string(),
        log,
    }
}

fn since_window_start() -> Axis {
    axis("seconds since each run's window start", "s", false)
}

/// Loops completed each second of the window; second k ends at k + 1.
fn loops(side: &Side) -> Series {
    Series {
        name: format!("{} loops/s", side.mark),
        points: side
            .recording
            .run_seconds()
            .map(|second| [second.second as f64 + 1.0, second.loops as f64])
            .collect(),
    }
}

/// The run's data devices' read requests per second over its window.
fn device_reads(side: &Side) -> Series {
    let window = side.measured.window;
    let names: Vec<&str> = side
        .measured
        .devices
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    let measured = |labels: &Labels| {
        labels
            .get(label::DEVICE)
            .is_some_and(|name| names.contains(&name.as_str()))
    };
    let timeline = Timeline::of(&side.recording).within(window);
    Series {
        name: format!("{} device r/s", side.mark),
        points: timeline
            .per_second(layer::DEVICE, device::READ_REQUESTS, &measured)
            .into_iter()
            .map(|[t_s, rate]| [t_s - window.from_s, rate])
            .collect(),
    }
}

/// One histogram chart per operation any run timed, a series per run.
fn histograms(sides: &[Side]) -> Vec<Chart> {
    let mut charts = Vec::new();
    for operation in OPERATIONS {
        let series: Vec<Series> = sides
            .iter()
            .filter_map(|side| {
                let text = side.recording.run_result()?.histograms.of(operation)?;
                let histogram = LatencyHistogram::from_base64(text).ok()?;
                let points = doubling_buckets(&histogram)
                    .into_iter()
                    .map(|(bound_ms, count)| [bound_ms, count as f64]);
                (!histogram.is_empty()).then(|| Series {
                    name: side.mark.clone(),
                    points: points.collect(),
                })
            })
            .collect();
        if series.is_empty() {
            continue;
        }
        charts.push(chart(
            &format!("compare_{operation}_latency_histogram"),
            &format!(
                "{operation} latency histograms (workload layer; each bar: the statements \
                 between its two edges, in ms, doubling buckets), one series per run"
            ),
            ChartKind::Histogram,
            axis("latency under", "ms", true),
            axis(&format!("{operation} statements"), "statements", false),
            series,
        ));
    }
    charts
}

/// The time series and latency sections.
pub(super) fn sections(sides: &[Side]) -> Vec<Section> {
    let over_time = [
        chart(
            "compare_loops_over_time",
            "Workload loops/s (workload layer), each run from its window's start",
            ChartKind::Line,
            since_window_start(),
            axis("loops/s", "loops/s", false),
            sides.iter().map(loops).collect(),
        ),
        chart(
            "compare_device_reads_over_time",
            "Device read requests/s (device layer), each run from its window's start",
            ChartKind::Line,
            since_window_start(),
            axis("requests/s", "requests/s", false),
            sides.iter().map(device_reads).collect(),
        ),
    ];
    let mut time_series = Section::new("time_series", "Over time, on one axis");
    for chart in over_time
        .into_iter()
        .filter(|chart| !chart.series.is_empty())
    {
        time_series = time_series.chart(chart);
    }
    let mut latency = Section::new("latency", "Latency histograms, on one chart per operation");
    for chart in histograms(sides) {
        latency = latency.chart(chart);
    }
    vec![time_series, latency]
}
