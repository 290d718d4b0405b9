//! A run's block requests, traced one by one, in its report: per device
//! the device time's distribution by the submitters' role (doubling
//! buckets of µs, biolatency's), their percentiles with the queue time
//! beside them, and the outliers (the Linux `V$KERNEL_IO_OUTLIER`).
//!
//! Not for: tracing, or the figures' arithmetic (the run computed them).

use strata_core::log_linear;
use strata_output::document::{Axis, Cell, Chart, ChartKind, Column, Section, Series, Table};
use strata_recording::run::{BlockTraceFigures, TracedDevice, TracedOutliers};

/// The layer the figures come from, as the report's tables name it.
const LAYER: &str = "block (traced)";

/// `section` with the traced requests' charts and tables added, or why
/// there are none.
pub(crate) fn add_to(mut section: Section, traced: &BlockTraceFigures) -> Section {
    if let Some(why) = &traced.unavailable {
        return section.note(format!("Block requests were not traced one by one: {why}."));
    }
    if let Some(by) = &traced.traced_by {
        section = section.note(format!("Block requests: {by}."));
    }
    for device in &traced.devices {
        if let Some(chart) = distribution_chart(device) {
            section = section.chart(chart);
        }
    }
    section = section.table(role_table(&traced.devices));
    section = section.table(size_table(&traced.devices));
    match &traced.outliers {
        Some(outliers) if outliers.listed.is_empty() => section.note(format!(
            "Block request outliers ({}; the kernel kept requests from {:.3} ms): none.",
            outliers.rule, outliers.kept_from_ms
        )),
        Some(outliers) => section.table(outlier_table(outliers)),
        None => section,
    }
}

/// "(no role given)" for a process strata gave none.
fn role_label(role: &str) -> String {
    match role {
        "" => "(no role given)".to_string(),
        role => role.to_string(),
    }
}

/// Fine buckets folded into doubling ones: (upper bound µs, requests).
fn doubling_us(buckets: &[(u16, u64)]) -> Vec<(f64, u64)> {
    log_linear::doubling_us(buckets.iter().copied())
        .into_iter()
        .map(|(bound, requests)| (bound as f64, requests))
        .collect()
}

fn distribution_chart(device: &TracedDevice) -> Option<Chart> {
    let series: Vec<Series> = device
        .by_role
        .iter()
        .filter(|role| !role.device_time_buckets.is_empty())
        .map(|role| Series {
            name: format!("{} {}", role_label(&role.role), role.operation),
            points: doubling_us(&role.device_time_buckets)
                .into_iter()
                .map(|(bound, requests)| [bound, requests as f64])
                .collect(),
        })
        .collect();
    (!series.is_empty()).then(|| Chart {
        id: format!("block_device_time_{}", device.device),
        title: format!(
            "{}: block requests' device time by the submitter's role (issue -> end, D2C; each \
             bar: the requests between its two edges, µs, doubling like biolatency)",
            device.device
        ),
        kind: ChartKind::Histogram,
        x: Axis {
            label: "device time under".to_string(),
            unit: "µs".to_string(),
            log: true,
        },
        y: Axis {
            label: "requests".to_string(),
            unit: "requests".to_string(),
            log: false,
        },
        series,
        marks: Vec::new(),
    })
}

fn role_table(devices: &[TracedDevice]) -> Table {
    let mut columns = vec![
        Column::text("device"),
        Column::text("submitter"),
        Column::text("op"),
        Column::text("layer"),
        Column::number("requests", Some("requests")),
    ];
    for heading in [
        "D2C p50",
        "D2C p99",
        "D2C p99.9",
        "D2C max",
        "Q2D p50",
        "Q2D p99",
    ] {
        columns.push(Column::number(heading, Some("ms")));
    }
    let mut table = Table::new(
        Some("Block requests by the submitter's role (ms): device time D2C, queue time Q2D"),
        columns,
    );
    let ms = |value: f64| Cell::number(value, 3, "ms");
    for device in devices {
        for role in &device.by_role {
            let time = &role.device_time;
            let mut row = vec![
                Cell::text(&device.device),
                Cell::text(role_label(&role.role)),
                Cell::text(&role.operation),
                Cell::text(LAYER),
                Cell::number(role.requests as f64, 0, "requests"),
            ];
            row.extend([time.p50_ms, time.p99_ms, time.p999_ms, time.max_ms].map(ms));
            match &role.queue_time {
                Some(queue) => row.extend([queue.p50_ms, queue.p99_ms].map(ms)),
                None => row.extend([Cell::empty(), Cell::empty()]),
            }
            table.push(row);
        }
    }
    table
}

/// Each device's request sizes by operation, their bytes beside
/// /proc/diskstats' sectors, and the merges beside its count.
fn size_table(devices: &[TracedDevice]) -> Table {
    let mut table = Table::new(
        Some("Block request sizes as issued (bytes traced beside /proc/diskstats' sectors x 512) and merges"),
        vec![
            Column::text("device"),
            Column::text("op"),
            Column::text("layer"),
            Column::number("bytes", Some("bytes")),
            Column::number("diskstats", Some("bytes")),
            Column::number("mean", Some("bytes")),
            Column::number("p50", Some("bytes")),
            Column::number("p99", Some("bytes")),
            Column::number("max", Some("bytes")),
            Column::number("merges", Some("merges")),
            Column::number("diskstats merges", Some("merges")),
        ],
    );
    let bytes = |value: f64| Cell::number(value, 0, "bytes");
    let count =
        |value: Option<u64>| value.map_or(Cell::empty(), |v| Cell::number(v as f64, 0, "merges"));
    for device in devices {
        for op in &device.operations {
            let Some(sizes) = &op.sizes else { continue };
            table.push(vec![
                Cell::text(&device.device),
                Cell::text(&op.operation),
                Cell::text(LAYER),
                bytes(sizes.bytes as f64),
                sizes
                    .diskstats_bytes
                    .map_or(Cell::empty(), |v| bytes(v as f64)),
                bytes(sizes.mean_bytes),
                bytes(sizes.p50_bytes as f64),
                bytes(sizes.p99_bytes as f64),
                bytes(sizes.max_bytes as f64),
                count(op.merges),
                count(op.diskstats_merges),
            ]);
        }
    }
    table
}

fn outlier_table(outliers: &TracedOutliers) -> Table {
    let title = format!(
        "Block request outliers ({}; the kernel kept requests from {:.3} ms){}",
        outliers.rule,
        outliers.kept_from_ms,
        match outliers.overwritten {
            0 => String::new(),
            lost => format!("; {lost} more written over in the kernel's ring"),
        }
    );
    let mut table = Table::new(
        Some(&title),
        vec![
            Column::number("ended", Some("s")),
            Column::number("pid", None),
            Column::text("command"),
            Column::text("role"),
            Column::text("device"),
            Column::text("op"),
            Column::number("sector", None),
            Column::number("size", Some("bytes")),
            Column::number("Q2D", Some("ms")),
            Column::number("D2C", Some("ms")),
            Column::text("relation"),
            Column::text("file"),
            Column::text("session"),
            Column::text("statement or query"),
        ],
    );
    for outlier in &outliers.listed {
        table.push(vec![
            Cell::number(outlier.ended_s, 3, "s"),
            Cell::number(f64::from(outlier.pid), 0, ""),
            Cell::text(&outlier.command),
            Cell::text(role_label(&outlier.role)),
            Cell::text(&outlier.device),
            Cell::text(&outlier.operation),
            Cell::number(outlier.sector as f64, 0, ""),
            Cell::number(f64::from(outlier.bytes), 0, "bytes"),
            Cell::number(outlier.queue_ms, 3, "ms"),
            Cell::number(outlier.device_ms, 3, "ms"),
            outlier.relation.as_ref().map_or(Cell::empty(), Cell::text),
            outlier.file.as_ref().map_or(Cell::empty(), Cell::text),
            outlier.session.map_or(Cell::empty(), |session| {
                Cell::number(f64::from(session), 0, "")
            }),
            outlier.ran_across().map_or(Cell::empty(), Cell::text),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_core::log_linear::bucket_of;

    #[test]
    fn fine_buckets_fold_into_doubling_microseconds() {
        let buckets = [
            (bucket_of(500), 2),       // 0.5 µs: under 1
            (bucket_of(40_000), 3),    // 40 µs: under 64
            (bucket_of(50_000), 4),    // 50 µs: under 64
            (bucket_of(2_000_000), 1), // 2 ms: under 2048
        ];
        assert_eq!(
            doubling_us(&buckets),
            vec![(1.0, 2), (64.0, 7), (2048.0, 1)]
        );
    }
}
