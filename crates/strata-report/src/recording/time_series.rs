//! [time_series]: each layer's rates second by second as line charts —
//! device requests/s and MB/s, database blocks read/s, workload loops/s,
//! calibrate's per-second latency, a run's page cache held beside its
//! target, and each device's block request device time per second (p99
//! and max, traced).
//!
//! Not for: window totals (`sections`).

use super::measured::Measured;
use super::samples::{Labels, Timeline};
use strata_core::units::MIB;
use strata_output::document::{Axis, Chart, ChartKind, Section, Series};
use strata_recording::names::{blocktrace, device, label, layer};
use strata_recording::run::PageCacheHeld;

pub(crate) fn line(
    id: &str,
    title: &str,
    y_label: &str,
    y_unit: &str,
    series: Vec<Series>,
) -> Chart {
    Chart {
        id: id.to_string(),
        title: title.to_string(),
        kind: ChartKind::Line,
        x: Axis {
            label: "time from the recording's start".to_string(),
            unit: "s".to_string(),
            log: false,
        },
        y: Axis {
            label: y_label.to_string(),
            unit: y_unit.to_string(),
            log: false,
        },
        series: series
            .into_iter()
            .filter(|series| !series.points.is_empty())
            .collect(),
        marks: Vec::new(),
    }
}

pub(crate) fn device_series(
    timeline: &Timeline,
    devices: &[String],
    counter: &str,
    scale: f64,
) -> Vec<Series> {
    devices
        .iter()
        .map(|name| {
            let this = |labels: &Labels| labels.get(label::DEVICE) == Some(name);
            Series {
                name: format!("{name} {}", counter.replace('_', " ")),
                points: timeline
                    .per_second(layer::DEVICE, counter, &this)
                    .into_iter()
                    .map(|[t, rate]| [t, rate * scale])
                    .collect(),
            }
        })
        .collect()
}

/// Each device's block request device time in each second, read and
/// written: the p99 and the longest of the interval (the `blocktrace`
/// layer: every request traced), ms.
fn block_device_time(timeline: &Timeline, devices: &[String]) -> Chart {
    let mut series = Vec::new();
    for name in devices {
        for op in ["read", "write"] {
            let this = |labels: &Labels| {
                labels.get(label::DEVICE) == Some(name)
                    && labels.get("op").map(String::as_str) == Some(op)
            };
            for (gauge, what) in [
                (blocktrace::DEVICE_P99_NS, "p99"),
                (blocktrace::DEVICE_MAX_NS, "max"),
            ] {
                let points = timeline.gauge_series(layer::BLOCKTRACE, gauge, &this);
                series.push(Series {
                    name: format!("{name} {op} {what}"),
                    points: points.into_iter().map(|[t, ns]| [t, ns / 1e6]).collect(),
                });
            }
        }
    }
    line(
        "block_device_time_over_time",
        "Block request device time per second, p99 and max (blocktrace layer: each request traced)",
        "device time",
        "ms",
        series,
    )
}

/// The page cache of the server's files that strata's memory cgroup held
/// at each second of a window beginning at `from_s`, beside its target.
pub(crate) fn page_cache_held(held: &PageCacheHeld, from_s: f64) -> Option<Chart> {
    let held_points: Vec<[f64; 2]> = held
        .per_second_bytes
        .iter()
        .enumerate()
        .map(|(second, bytes)| [from_s + second as f64, *bytes as f64 / MIB as f64])
        .collect();
    let last_s = held_points.last()?[0];
    let target_mib = held.target_bytes as f64 / MIB as f64;
    Some(line(
        "page_cache_held_over_time",
        "Page cache of the server's files, strata's memory cgroup (page cache layer)",
        "page cache",
        "MiB",
        vec![
            Series {
                name: "held".to_string(),
                points: held_points,
            },
            Series {
                name: "target".to_string(),
                points: vec![[from_s, target_mib], [last_s, target_mib]],
            },
        ],
    ))
}

/// The section, from the timeline already cut to the window; `extra`
/// charts (calibrate's latency) are appended.
pub(crate) fn section(timeline: &Timeline, measured: &Measured, extra: Vec<Chart>) -> Section {
    let names: Vec<String> = measured
        .devices
        .iter()
        .map(|device| device.name.clone())
        .collect();
    let mut charts = Vec::new();
    let mut requests = device_series(timeline, &names, device::READ_REQUESTS, 1.0);
    requests.extend(device_series(timeline, &names, device::WRITE_REQUESTS, 1.0));
    charts.push(line(
        "device_iops_over_time",
        "Device requests/s (device layer)",
        "requests/s",
        "requests/s",
        requests,
    ));
    let mut bytes = device_series(timeline, &names, device::READ_BYTES, 1e-6);
    bytes.extend(device_series(timeline, &names, device::WRITE_BYTES, 1e-6));
    charts.push(line(
        "device_mb_per_s_over_time",
        "Device MB/s (device layer)",
        "MB/s",
        "MB/s",
        bytes,
    ));
    charts.push(block_device_time(timeline, &names));
    let source = measured
        .database
        .as_ref()
        .map(|database| database.source)
        .unwrap_or_default();
    let blocks = timeline.per_second(source.layer(), source.blocks_read_counter(), &|_| true);
    let title = format!(
        "Database blocks read/s (database layer, {})",
        measured.block_label()
    );
    charts.push(line(
        "database_blocks_read_over_time",
        &title,
        "blocks/s",
        "blocks/s",
        vec![Series {
            name: "blocks read".to_string(),
            points: blocks,
        }],
    ));
    if let Some(workload) = &measured.workload {
        charts.push(line(
            "workload_loops_over_time",
            "Workload loops/s (workload layer)",
            "loops/s",
            "loops/s",
            vec![Series {
                name: "loops".to_string(),
                points: workload.loops_per_second.clone(),
            }],
        ));
    }
    charts.extend(extra);
    let mut section = Section::new("time_series", "Over time");
    let mut drawn = 0;
    for chart in charts.into_iter().filter(|chart| !chart.series.is_empty()) {
        section = section.chart(chart);
        drawn += 1;
    }
    if drawn == 0 {
        section = section.note("No per-second samples in this window.");
    }
    section
}
