//! [latency] for a run: per-operation percentiles (workload layer) and the
//! commit and select latency histograms in doubling buckets, shaped like
//! Oracle's `log file sync` wait histogram (<1 ms, <2, <4, …).
//!
//! Not for: calibrate's per-point latency (`calibrate`).

use super::sections::{number, WORKLOAD};
use std::collections::BTreeMap;
use strata_core::histogram::LatencyHistogram;
use strata_output::document::{Axis, Cell, Chart, ChartKind, Column, Section, Series, Table};
use strata_recording::record::RunResult;
use strata_recording::run::OperationFigures;

const OPERATIONS: [&str; 4] = ["select", "update", "commit", "scan"];

/// The run's latency section from its result record and histograms.
pub(crate) fn run_section(result: &RunResult) -> Section {
    let operations = &result.figures.workload.operations;
    let mut section = Section::new("latency", "Latency").table(percentile_table(operations));
    for operation in ["commit", "select"] {
        let key = format!("{operation}_lat_ns_hdr");
        let Some(text) = result.histograms.of(operation) else {
            continue;
        };
        match LatencyHistogram::from_base64(text) {
            Ok(histogram) if !histogram.is_empty() => {
                section = section.chart(histogram_chart(operation, &histogram))
            }
            Ok(_) => {}
            Err(error) => section = section.note(format!("{key}: unreadable histogram ({error})")),
        }
    }
    if let Some(traced) = &result.figures.block_trace {
        section = super::block_requests::add_to(section, traced);
    }
    section.note(
        "Latency covers the run's measured window, each statement timed by strata's sessions.",
    )
}

fn percentile_table(operations: &BTreeMap<String, OperationFigures>) -> Table {
    let mut columns = vec![
        Column::text("operation"),
        Column::text("layer"),
        Column::number("count", Some("statements")),
        Column::number("per second", Some("statements/s")),
    ];
    for heading in ["mean", "p50", "p90", "p99", "p99.9", "max"] {
        columns.push(Column::number(heading, Some("ms")));
    }
    let mut table = Table::new(Some("Per-operation latency (ms)"), columns);
    for name in OPERATIONS {
        let Some(operation) = operations.get(name).filter(|op| op.latency.count > 0) else {
            continue;
        };
        let latency = &operation.latency;
        let mut row = vec![
            Cell::text(name),
            Cell::text(WORKLOAD),
            Cell::number(latency.count as f64, 0, "statements"),
            Cell::number(operation.per_s, 1, "statements/s"),
        ];
        for us in [
            latency.lat_mean_us,
            latency.lat_p50_us,
            latency.lat_p90_us,
            latency.lat_p99_us,
            latency.lat_p99_9_us,
            latency.lat_max_us,
        ] {
            row.push(Cell::number(us / 1e3, 3, "ms"));
        }
        table.push(row);
    }
    table
}

/// Counts in buckets <1 ms, <2 ms, <4 ms, … up to the one holding the
/// slowest value: (upper bound ms, count).
pub(crate) fn doubling_buckets(histogram: &LatencyHistogram) -> Vec<(f64, u64)> {
    let mut buckets = Vec::new();
    let mut low_ns = 0u64;
    let mut high_ms = 1u64;
    loop {
        let high_ns = high_ms * 1_000_000;
        buckets.push((
            high_ms as f64,
            histogram.count_between_ns(low_ns, high_ns - 1),
        ));
        if histogram.max_ns() < high_ns || high_ms >= 1 << 22 {
            return buckets;
        }
        low_ns = high_ns;
        high_ms *= 2;
    }
}

fn histogram_chart(operation: &str, histogram: &LatencyHistogram) -> Chart {
    let points = doubling_buckets(histogram)
        .into_iter()
        .map(|(bound, count)| [bound, count as f64])
        .collect();
    Chart {
        id: format!("{operation}_latency_histogram"),
        title: format!(
            "{operation} latency histogram (workload layer; each bar: the statements between \
             its two edges, in ms, doubling buckets like Oracle's wait histograms)"
        ),
        kind: ChartKind::Histogram,
        x: Axis {
            label: "latency under".to_string(),
            unit: "ms".to_string(),
            log: true,
        },
        y: Axis {
            label: format!("{operation} statements"),
            unit: "statements".to_string(),
            log: false,
        },
        series: vec![Series {
            name: operation.to_string(),
            points,
        }],
        marks: Vec::new(),
    }
}

/// A latency in microseconds as a millisecond cell.
pub(crate) fn ms_cell(micros: Option<f64>) -> Cell {
    micros.map_or_else(Cell::empty, |us| number(us / 1e3, "ms"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_double_until_the_slowest_value() {
        let mut histogram = LatencyHistogram::new();
        for ns in [300_000, 900_000, 1_500_000, 5_000_000] {
            histogram.record_ns(ns);
        }
        assert_eq!(
            doubling_buckets(&histogram),
            vec![(1.0, 2), (2.0, 1), (4.0, 0), (8.0, 1)]
        );
    }
}
