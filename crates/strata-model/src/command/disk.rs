//! `strata model disk`: the random IOPS of a rotating disk at each queue
//! depth, from its rpm, seek, settle and transfer rate, with short
//! stroking (`span`).
//!
//! Not for: the disk arithmetic itself ([`crate::disk`]).

use super::{ms, number, Page};
use crate::disk::{self, DiskResult};
use serde::Serialize;
use std::time::Duration;
use strata_core::units::format_size;
use strata_output::document::{Cell, Column};
use strata_output::Output;

/// What `strata model disk` was asked.
#[derive(Debug, Clone)]
pub struct DiskRequest {
    pub rpm: f64,
    /// Average full-stroke seek; `None`: typical for the rpm.
    pub seek: Option<Duration>,
    /// Shortest seek (track to track plus settle).
    pub settle: Duration,
    /// Media transfer rate, bytes per second.
    pub transfer_rate: u64,
    /// Request size, bytes.
    pub size: u64,
    /// Fraction of the disk in use.
    pub span: f64,
    /// One row per queue depth.
    pub queue_depths: Vec<u32>,
    pub explain: bool,
}

#[derive(Serialize)]
struct DiskRow {
    queue_depth: u32,
    #[serde(flatten)]
    result: DiskResult,
}

/// Runs `strata model disk`.
pub fn run(request: &DiskRequest) -> anyhow::Result<Output> {
    let average_seek_s = request.seek.map_or_else(
        || disk::typical_average_seek_s(request.rpm),
        |seek| seek.as_secs_f64(),
    );
    let mut rows = Vec::new();
    for &queue_depth in &request.queue_depths {
        let result = disk::random_iops(disk::DiskInput {
            rpm: request.rpm,
            average_seek_s,
            settle_s: request.settle.as_secs_f64(),
            transfer_bytes_per_s: request.transfer_rate as f64,
            request_bytes: request.size as f64,
            span_fraction: request.span,
            queue_depth,
        })?;
        rows.push(DiskRow {
            queue_depth,
            result,
        });
    }
    let columns = vec![
        Column::number("QD", None),
        number("seek", "ms"),
        number("rotation", "ms"),
        number("transfer", "ms"),
        number("service", "ms"),
        Column::number("IOPS", None),
    ];
    let mut page = Page::new("Rotating disk IOPS", columns);
    page.note(format!(
        "{} rpm, {:.2} ms average seek, {} requests over {:.0}% of the disk",
        request.rpm,
        ms(average_seek_s),
        format_size(request.size),
        request.span * 100.0
    ));
    page.line(format!(
        "{:>6} {:>10} {:>14} {:>13} {:>12} {:>8}",
        "QD", "seek ms", "rotation ms", "transfer ms", "service ms", "IOPS"
    ));
    for row in &rows {
        print_row(&mut page, row);
        if request.explain {
            explain(&mut page, &row.result, request, average_seek_s);
        }
    }
    page.finish(&rows)
}

fn print_row(page: &mut Page, row: &DiskRow) {
    let r = &row.result;
    page.line(format!(
        "{:>6} {:>10.3} {:>14.3} {:>13.3} {:>12.3} {:>8.0}",
        row.queue_depth,
        ms(r.seek_s),
        ms(r.rotational_latency_s),
        ms(r.transfer_s),
        ms(r.service_time_s),
        r.iops
    ));
    page.row(vec![
        Cell::number(f64::from(row.queue_depth), 0, "commands"),
        Cell::number(ms(r.seek_s), 3, "ms"),
        Cell::number(ms(r.rotational_latency_s), 3, "ms"),
        Cell::number(ms(r.transfer_s), 3, "ms"),
        Cell::number(ms(r.service_time_s), 3, "ms"),
        Cell::number(r.iops, 0, "IOPS"),
    ]);
}

fn explain(page: &mut Page, r: &DiskResult, request: &DiskRequest, average_seek_s: f64) {
    let settle_s = request.settle.as_secs_f64();
    page.note(format!("  seek = settle + (avg − settle) × sqrt(span × 3 / (2Q + 1)) = {:.3} + {:.3} × sqrt({:.4}) = {:.3} ms",
        ms(settle_s), ms(average_seek_s - settle_s), r.seek_distance_ratio, ms(r.seek_s)));
    page.note(format!("  IOPS = 1 / (seek + 30 s / rpm + size ÷ rate) = 1 / ({:.3} + {:.3} + {:.3}) ms = {:.1} IOPS",
        ms(r.seek_s), ms(r.rotational_latency_s), ms(r.transfer_s), r.iops));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifteen_k_at_queue_depth_one() {
        let request = DiskRequest {
            rpm: 15000.0,
            seek: None,
            settle: Duration::from_micros(500),
            transfer_rate: 150_000_000,
            size: 8192,
            span: 1.0,
            queue_depths: vec![1],
            explain: true,
        };
        let output = run(&request).unwrap();
        let text = output.text.unwrap();
        assert!(
            text.starts_with(
                "15000 rpm, 3.50 ms average seek, 8 KiB requests over 100% of the disk\n"
            ),
            "{text}"
        );
        assert!(text.contains("  IOPS = 1 / (seek"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&output.json.unwrap()).unwrap();
        let iops = json[0]["iops"].as_f64().unwrap();
        assert!((150.0..=200.0).contains(&iops), "{iops}");
    }
}
