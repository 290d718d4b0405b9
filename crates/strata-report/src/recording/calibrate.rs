//! A `strata calibrate` Recording: its points placed on the recording's
//! timeline, the [`Measured`] window of the points that fall in it, and the
//! [calibrate] section (IOPS vs outstanding I/Os, latency vs IOPS with the
//! knee, MB/s vs streams, ORION's matrices) and per-point latency.
//!
//! Points carry no start time: each is placed after the previous one's
//! ramp and measured window, which is how calibrate runs them.
//!
//! Not for: the sections every recording shares (`sections`).

use super::latency::ms_cell;
use super::layers;
use super::measured::{Measured, OutlierEvent};
use super::run::{describe, device_window};
use super::samples::Timeline;
use super::sections::{number, WORKLOAD};
use super::time_series::line;
use crate::findings::{DeviceWindow, OutlierFigures};
use strata_output::document::{
    Axis, Cell, Chart, ChartKind, Column, Mark, Section, Series, Table, Window,
};
use strata_recording::calibrate::{Best, GroupResult};
use strata_recording::record::PointRecord;
use strata_recording::Recording;

/// One calibrate point and where its measured window lies.
pub(crate) struct Point<'a> {
    pub record: &'a PointRecord,
    pub window: Window,
}

impl Point<'_> {
    pub fn name(&self) -> &str {
        &self.record.point.name
    }

    fn groups(&self) -> impl Iterator<Item = &GroupResult> {
        self.record.point.groups.iter()
    }

    fn cell(&self) -> Option<(f64, f64)> {
        let cell = self.record.point.cell?;
        Some((cell.small_outstanding as f64, cell.large_streams as f64))
    }

    /// IOPS of the groups that are not `large`.
    fn small_iops(&self) -> Option<f64> {
        let small: Vec<f64> = self
            .groups()
            .filter(|group| !group.is_large())
            .map(|group| group.all.iops)
            .collect();
        (!small.is_empty()).then(|| small.iter().sum())
    }

    fn large_mb_per_s(&self) -> Option<f64> {
        self.groups()
            .find(|group| group.is_large())
            .map(|group| group.all.mb_per_s)
    }

    fn small_latency_us(&self) -> Option<f64> {
        self.groups()
            .find(|group| !group.is_large())
            .map(|group| group.all.latency.lat_mean_us)
    }
}

/// Every point in order, each after the previous one's ramp and window.
pub(crate) fn points(recording: &Recording) -> Vec<Point<'_>> {
    let ramp_s = recording.header.options.ramp_s();
    let mut start_s = 0.0;
    recording
        .point_results()
        .map(|record| {
            let window_s = record.point.window_s;
            let from_s = start_s + ramp_s;
            start_s = from_s + window_s;
            Point {
                record,
                window: Window {
                    from_s,
                    to_s: from_s + window_s,
                },
            }
        })
        .collect()
}

/// The points whose measured window's middle falls in `window`.
pub(crate) fn points_in<'a>(points: Vec<Point<'a>>, window: Window) -> Vec<Point<'a>> {
    points
        .into_iter()
        .filter(|point| {
            let middle = (point.window.from_s + point.window.to_s) / 2.0;
            middle >= window.from_s && middle <= window.to_s
        })
        .collect()
}

/// The window's figures: devices summed over the points in it (the md
/// target when it is one, else the physical devices), CPU from the layer
/// samples, and the recorded outliers over `threshold_ms`.
pub(crate) fn measured(
    recording: &Recording,
    timeline: &Timeline,
    points: &[Point],
    window: Window,
    threshold_ms: f64,
) -> Measured {
    let within = timeline.within(window);
    let mut measured = Measured::empty(window);
    measured.window_s = points
        .iter()
        .map(|point| point.window.to_s - point.window.from_s)
        .sum();
    measured.devices = devices(recording, points);
    measured.cpu = layers::cpu(&within, recording.header.host.cpus as f64);
    measured.nfs = layers::nfs(&within);
    measured.nic = layers::nic(&within);
    measured.outlier_events = outlier_events(recording, points, threshold_ms);
    let names: Vec<String> = measured
        .devices
        .iter()
        .map(|device| device.name.clone())
        .collect();
    let options = &recording.header.options;
    measured.outlier_floor_ms = options
        .outlier_floor_us
        .or(options.outlier_us)
        .map(|us| us / 1e3);
    measured.outliers = OutlierFigures {
        threshold_ms,
        count: Some(measured.outlier_events.len() as u64),
        worst_ms: measured
            .outlier_events
            .iter()
            .map(|event| event.latency_ms)
            .reduce(f64::max),
        statements: false,
        device_spikes: layers::await_spikes(&within, &names, threshold_ms),
    };
    measured
}

fn devices(recording: &Recording, points: &[Point]) -> Vec<DeviceWindow> {
    let environment = &recording.header.environment;
    let mut sums: Vec<(DeviceWindow, f64)> = Vec::new();
    for point in points {
        let weight = point.window.to_s - point.window.from_s;
        for device in &point.record.point.devices {
            add_device(&mut sums, device_window(device, environment), weight);
        }
    }
    let mut devices: Vec<DeviceWindow> = sums
        .into_iter()
        .map(|(device, weight)| averaged(device, weight))
        .collect();
    let striped_target = devices
        .iter()
        .any(|device| device.role == "target" && device.stripe.is_some());
    let has_physical = devices.iter().any(|device| device.role == "physical");
    devices.retain(|device| match (striped_target, has_physical) {
        (true, _) => device.role == "target",
        (false, true) => device.role == "physical",
        (false, false) => true,
    });
    for device in &mut devices {
        describe(device, environment);
    }
    devices
}

/// Sums requests and bytes; util, queue and await weighted by window or
/// requests, divided out in [`averaged`].
fn add_device(sums: &mut Vec<(DeviceWindow, f64)>, device: DeviceWindow, weight: f64) {
    let requests = device.read_requests + device.write_requests;
    let index = match sums.iter().position(|(sum, _)| sum.name == device.name) {
        Some(index) => index,
        None => {
            let empty = DeviceWindow {
                name: device.name.clone(),
                role: device.role.clone(),
                ..DeviceWindow::default()
            };
            sums.push((empty, 0.0));
            sums.len() - 1
        }
    };
    let (sum, total_weight) = &mut sums[index];
    let weighted = |total: Option<f64>, value: Option<f64>, by: f64| {
        Some(total.unwrap_or(0.0) + value.unwrap_or(0.0) * by)
    };
    sum.util_pct = weighted(sum.util_pct, device.util_pct, weight);
    sum.queue_size = weighted(sum.queue_size, device.queue_size, weight);
    sum.await_ms = weighted(sum.await_ms, device.await_ms, requests);
    sum.service_time_ms = weighted(sum.service_time_ms, device.service_time_ms, requests);
    sum.read_requests += device.read_requests;
    sum.read_bytes += device.read_bytes;
    sum.write_requests += device.write_requests;
    sum.write_bytes += device.write_bytes;
    *total_weight += weight;
}

fn averaged(mut device: DeviceWindow, weight: f64) -> DeviceWindow {
    let requests = device.read_requests + device.write_requests;
    let divide = |value: Option<f64>, by: f64| value.filter(|_| by > 0.0).map(|v| v / by);
    device.util_pct = divide(device.util_pct, weight);
    device.queue_size = divide(device.queue_size, weight);
    device.await_ms = divide(device.await_ms, requests);
    device.service_time_ms = divide(device.service_time_ms, requests);
    device
}

fn outlier_events(recording: &Recording, points: &[Point], threshold_ms: f64) -> Vec<OutlierEvent> {
    recording
        .io_outliers()
        .filter(|event| points.iter().any(|point| event.point == point.name()))
        .map(|event| {
            let outlier = &event.outlier;
            OutlierEvent {
                point: event.point.clone(),
                t_s: outlier.t_s,
                group: outlier.group.clone(),
                operation: outlier.operation.clone(),
                offset_bytes: outlier.offset_bytes as f64,
                size_bytes: f64::from(outlier.size_bytes),
                latency_ms: outlier.lat_us / 1e3,
            }
        })
        .filter(|event| event.latency_ms >= threshold_ms)
        .collect()
}

/// [calibrate]: the sweep's curves and ORION's matrices, and the summary.
pub(crate) fn section(recording: &Recording, points: &[Point]) -> Section {
    let mut section = Section::new("calibrate", "Calibrate");
    let swept: Vec<&Point> = points
        .iter()
        .filter(|point| point.cell().is_some())
        .collect();
    if !swept.is_empty() {
        section = section
            .chart(iops_vs_outstanding(&swept))
            .chart(latency_vs_iops(&swept, knee_point(recording)))
            .chart(mb_per_s_vs_streams(&swept))
            .table(matrix(
                &swept,
                "IOPS of the small I/O (workload layer, requests/s)",
                "requests/s",
                |p| p.small_iops(),
            ))
            .table(matrix(
                &swept,
                "MB/s of the large I/O (workload layer, 10^6 bytes/s)",
                "MB/s",
                |p| p.large_mb_per_s(),
            ))
            .note("Rows: large streams; columns: small outstanding I/Os (ORION's matrix).");
    }
    if let Some(table) = summary_table(recording) {
        section = section.table(table);
    }
    section
}

fn knee_point(recording: &Recording) -> Option<String> {
    Some(recording.summary()?.knee.as_ref()?.point.clone())
}

fn by_streams<'a>(swept: &[&'a Point<'a>]) -> Vec<(f64, Vec<&'a Point<'a>>)> {
    let mut groups: Vec<(f64, Vec<&Point>)> = Vec::new();
    for point in swept {
        let streams = point.cell().map_or(0.0, |cell| cell.1);
        match groups.iter_mut().find(|(s, _)| *s == streams) {
            Some((_, members)) => members.push(point),
            None => groups.push((streams, vec![point])),
        }
    }
    groups
}

fn chart(id: &str, title: &str, x: (&str, &str), y: (&str, &str), series: Vec<Series>) -> Chart {
    Chart {
        id: id.to_string(),
        title: title.to_string(),
        kind: ChartKind::Line,
        x: Axis {
            label: x.0.to_string(),
            unit: x.1.to_string(),
            log: false,
        },
        y: Axis {
            label: y.0.to_string(),
            unit: y.1.to_string(),
            log: false,
        },
        series,
        marks: Vec::new(),
    }
}

fn iops_vs_outstanding(swept: &[&Point]) -> Chart {
    let series = by_streams(swept)
        .into_iter()
        .map(|(streams, points)| Series {
            name: format!("{streams} large streams"),
            points: points
                .iter()
                .filter_map(|p| Some([p.cell()?.0, p.small_iops()?]))
                .collect(),
        })
        .filter(|series| !series.points.is_empty())
        .collect();
    chart(
        "iops_vs_outstanding",
        "Small-I/O IOPS vs outstanding I/Os (workload layer)",
        ("small outstanding I/Os", "requests"),
        ("IOPS", "requests/s"),
        series,
    )
}

fn latency_vs_iops(swept: &[&Point], knee: Option<String>) -> Chart {
    let small_only: Vec<&&Point> = swept
        .iter()
        .filter(|p| p.cell().is_some_and(|c| c.1 == 0.0))
        .collect();
    let points = small_only
        .iter()
        .filter_map(|p| Some([p.small_iops()?, p.small_latency_us()? / 1e3]))
        .collect();
    let mut chart = chart(
        "latency_vs_iops",
        "Small-I/O mean latency vs IOPS, no large streams (workload layer)",
        ("IOPS", "requests/s"),
        ("mean latency", "ms"),
        vec![Series {
            name: "small I/O".to_string(),
            points,
        }],
    );
    let knee_mark = small_only
        .iter()
        .find(|p| Some(p.name()) == knee.as_deref())
        .and_then(|p| {
            Some(Mark {
                x: p.small_iops()?,
                y: p.small_latency_us()? / 1e3,
                label: format!("knee: {}", p.name()),
            })
        });
    chart.marks.extend(knee_mark);
    chart
}

fn mb_per_s_vs_streams(swept: &[&Point]) -> Chart {
    let mut points: Vec<[f64; 2]> = swept
        .iter()
        .filter(|p| p.cell().is_some_and(|c| c.0 == 0.0))
        .filter_map(|p| Some([p.cell()?.1, p.large_mb_per_s()?]))
        .collect();
    points.sort_by(|a, b| a[0].total_cmp(&b[0]));
    chart(
        "mb_per_s_vs_streams",
        "Large-I/O MB/s vs streams, no small I/O (workload layer)",
        ("large streams", "streams"),
        ("MB/s", "MB/s"),
        vec![Series {
            name: "large I/O".to_string(),
            points,
        }],
    )
}

fn matrix(
    swept: &[&Point],
    title: &str,
    unit: &str,
    figure: impl Fn(&Point) -> Option<f64>,
) -> Table {
    let mut outstanding: Vec<f64> = swept.iter().filter_map(|p| Some(p.cell()?.0)).collect();
    outstanding.sort_by(f64::total_cmp);
    outstanding.dedup();
    let mut columns = vec![Column::number("large streams \\ small outstanding", None)];
    columns.extend(
        outstanding
            .iter()
            .map(|o| Column::number(format!("small {o}"), Some(unit))),
    );
    let mut table = Table::new(Some(title), columns);
    for (streams, points) in by_streams(swept) {
        let mut row = vec![Cell::number(streams, 0, "streams")];
        for o in &outstanding {
            let value = points
                .iter()
                .find(|p| p.cell().is_some_and(|c| c.0 == *o))
                .and_then(|p| figure(p));
            row.push(value.map_or_else(Cell::empty, |v| number(v, unit)));
        }
        table.push(row);
    }
    table
}

fn summary_table(recording: &Recording) -> Option<Table> {
    let summary = recording.summary()?;
    let mut table = Table::new(
        Some("Summary (workload layer)"),
        vec![
            Column::text("figure"),
            Column::number("value", None),
            Column::text("unit"),
            Column::text("point"),
        ],
    );
    let figures: [(&str, &Option<Best>); 4] = [
        ("max small-I/O IOPS", &summary.max_iops),
        ("max throughput", &summary.max_mb_per_s),
        ("min small-I/O latency", &summary.min_latency),
        ("knee (max IOPS / mean latency)", &summary.knee),
    ];
    for (label, figure) in figures {
        let Some(best) = figure else {
            continue;
        };
        table.push(vec![
            Cell::text(label),
            number(best.value, &best.unit),
            Cell::text(&best.unit),
            Cell::text(&best.point),
        ]);
    }
    let target = &summary.iops_under_latency_target;
    let label = format!(
        "max IOPS with p99 ≤ {}",
        strata_core::units::format_latency_ns(target.lat_target_us * 1e3)
    );
    table.push(match &target.best {
        Some(best) => vec![
            Cell::text(label),
            number(best.value, &best.unit),
            Cell::text(&best.unit),
            Cell::text(&best.point),
        ],
        None => vec![
            Cell::text(label),
            Cell::empty(),
            Cell::text("no point met the target"),
            Cell::empty(),
        ],
    });
    Some(table)
}

/// [latency] for calibrate: each point's groups' percentiles.
pub(crate) fn latency_section(points: &[Point]) -> Section {
    let mut columns = vec![
        Column::text("point"),
        Column::text("group"),
        Column::text("layer"),
        Column::number("IOPS", Some("requests/s")),
    ];
    for heading in ["mean", "p50", "p99", "p99.9", "max"] {
        columns.push(Column::number(heading, Some("ms")));
    }
    let mut table = Table::new(Some("Per-point latency (ms)"), columns);
    for point in points {
        for group in point.groups() {
            let all = &group.all;
            let latency = &all.latency;
            let mut row = vec![
                Cell::text(point.name()),
                Cell::text(&group.label),
                Cell::text(WORKLOAD),
                number(all.iops, "requests/s"),
            ];
            for us in [
                latency.lat_mean_us,
                latency.lat_p50_us,
                latency.lat_p99_us,
                latency.lat_p99_9_us,
                latency.lat_max_us,
            ] {
                row.push(ms_cell(Some(us)));
            }
            table.push(row);
        }
    }
    Section::new("latency", "Latency").table(table)
}

/// Calibrate's per-second latency on the timeline, for [time_series]: one
/// line per point, never one point's seconds joined to the next's.
pub(crate) fn latency_over_time(recording: &Recording, points: &[Point]) -> Chart {
    let mut mean = Vec::new();
    let mut max = Vec::new();
    for point in points {
        let seconds = recording
            .point_seconds()
            .filter(|second| second.point == point.name());
        for second in seconds {
            let second = &second.second;
            let t_s = point.window.from_s + second.t_s as f64 + 1.0;
            mean.push([t_s, second.lat_mean_us / 1e3]);
            max.push([t_s, second.lat_max_us / 1e3]);
        }
        // A gap between points: each point's seconds are a line of their own.
        mean.push([f64::NAN, f64::NAN]);
        max.push([f64::NAN, f64::NAN]);
    }
    line(
        "calibrate_latency_over_time",
        "Latency per second (workload layer)",
        "latency",
        "ms",
        vec![
            Series {
                name: "mean".to_string(),
                points: mean,
            },
            Series {
                name: "max".to_string(),
                points: max,
            },
        ],
    )
}
