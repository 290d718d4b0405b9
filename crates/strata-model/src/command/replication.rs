//! `strata model replication`: the time of one synchronous remote write over
//! a distance (overhead, transfer and round trips), and how many
//! asynchronous writes must be in flight to keep the link busy.
//!
//! Not for: the replication arithmetic itself ([`crate::replication`]).

use super::{ms, Page};
use crate::replication::{self, AsyncPipe, Calibration, SyncWrite, Transfer};
use serde::Serialize;
use std::time::Duration;
use strata_core::units::format_size;
use strata_output::document::{Cell, Column};
use strata_output::Output;

/// What `strata model replication` was asked.
#[derive(Debug, Clone)]
pub struct ReplicationRequest {
    pub size_bytes: u64,
    /// One-way distance.
    pub distance_km: f64,
    /// Fixed overhead of one write in the array.
    pub overhead: Duration,
    /// Time per KiB of a local write; `None`: size ÷ link bandwidth.
    pub per_kib: Option<Duration>,
    /// Two local writes (bytes, seconds) that give overhead and per-KiB.
    pub calibrate_from: Option<[(f64, f64); 2]>,
    pub link_gbit: f64,
    /// 10 bits per byte on the wire instead of 8.
    pub fibre_channel: bool,
    pub round_trips: u32,
    /// Propagation delay of the fibre.
    pub us_per_km: f64,
    pub explain: bool,
}

#[derive(Serialize)]
struct ReplicationReport {
    size_bytes: u64,
    distance_km: f64,
    link_bytes_per_s: f64,
    calibration: Option<Calibration>,
    sync: SyncWrite,
    asynchronous: AsyncPipe,
}

/// Runs `strata model replication`.
pub fn run(request: &ReplicationRequest) -> anyhow::Result<Output> {
    let link = replication::link_bytes_per_s(request.link_gbit, request.fibre_channel)?;
    let calibration = request
        .calibrate_from
        .map(replication::calibrate)
        .transpose()?;
    let (overhead_s, transfer) = match (calibration, request.per_kib) {
        (Some(fit), _) => (
            fit.overhead_s,
            Transfer::PerKib {
                seconds_per_kib: fit.seconds_per_kib,
            },
        ),
        (None, Some(per_kib)) => (
            request.overhead.as_secs_f64(),
            Transfer::PerKib {
                seconds_per_kib: per_kib.as_secs_f64(),
            },
        ),
        (None, None) => (
            request.overhead.as_secs_f64(),
            Transfer::Bandwidth { bytes_per_s: link },
        ),
    };
    let size = request.size_bytes as f64;
    let sync = replication::sync_write(replication::SyncInput {
        size_bytes: size,
        overhead_s,
        transfer,
        distance_km: request.distance_km,
        round_trips: request.round_trips,
        us_per_km: request.us_per_km,
        link_bytes_per_s: link,
    })?;
    let asynchronous = replication::async_pipe(size, link, request.distance_km, request.us_per_km)?;
    let report = ReplicationReport {
        size_bytes: request.size_bytes,
        distance_km: request.distance_km,
        link_bytes_per_s: link,
        calibration,
        sync,
        asynchronous,
    };
    let mut page = Page::new(
        "Remote replication",
        vec![
            Column::text("figure"),
            Column::number("value", None),
            Column::text("unit"),
        ],
    );
    synchronous(&mut page, &report, request);
    asynchronous_pipe(&mut page, &report, request);
    page.finish(&report)
}

fn value_row(page: &mut Page, name: &str, value: f64, decimals: usize, unit: &str) {
    page.row(vec![
        Cell::text(name),
        Cell::number(value, decimals, unit),
        Cell::text(unit),
    ]);
}

fn synchronous(page: &mut Page, report: &ReplicationReport, request: &ReplicationRequest) {
    let sync = &report.sync;
    let size = format_size(report.size_bytes);
    page.line(format!(
        "synchronous {size} write over {} km:",
        report.distance_km
    ));
    page.line(format!("  time {:.3} ms, {:.0} writes/s per outstanding write, {:.2} MB/s, {:.2}% of a {:.0} MB/s link",
        ms(sync.total_s), sync.writes_per_s, sync.mb_per_s, sync.link_percent, report.link_bytes_per_s / 1e6));
    value_row(page, "synchronous write time", ms(sync.total_s), 3, "ms");
    value_row(
        page,
        "writes per outstanding write",
        sync.writes_per_s,
        0,
        "writes/s",
    );
    value_row(page, "one writer's throughput", sync.mb_per_s, 2, "MB/s");
    value_row(
        page,
        "one writer's share of the link",
        sync.link_percent,
        2,
        "%",
    );
    if !request.explain {
        return;
    }
    if let Some(fit) = &report.calibration {
        page.note(format!(
            "  calibrated: overhead {:.4} ms, {:.5} ms per KiB",
            ms(fit.overhead_s),
            ms(fit.seconds_per_kib)
        ));
    }
    page.note(format!("  time = overhead + transfer + round trips × 2 × distance × µs/km = {:.4} ms + {:.4} ms + {} × 2 × {} km × {} µs = {:.4} ms",
        ms(sync.overhead_s), ms(sync.transfer_s), request.round_trips, report.distance_km, request.us_per_km, ms(sync.total_s)));
    page.note(format!(
        "  writes/s = 1 / {:.4} ms = {:.1} /s",
        ms(sync.total_s),
        sync.writes_per_s
    ));
}

fn asynchronous_pipe(page: &mut Page, report: &ReplicationReport, request: &ReplicationRequest) {
    let pipe = &report.asynchronous;
    let size = format_size(report.size_bytes);
    page.line(format!("asynchronous stream of {size} writes:"));
    page.line(format!("  frame length {:.3} km; {:.1} frames fill the fibre one way; {} writes outstanding keep the link busy (round trip)",
        pipe.frame_km, pipe.frames_one_way, pipe.outstanding_writes));
    value_row(page, "frame length", pipe.frame_km, 3, "km");
    value_row(
        page,
        "frames on the fibre one way",
        pipe.frames_one_way,
        1,
        "frames",
    );
    let outstanding = pipe.outstanding_writes as f64;
    value_row(
        page,
        "writes outstanding to keep the link busy",
        outstanding,
        0,
        "writes",
    );
    if !request.explain {
        return;
    }
    page.note(format!(
        "  frame km = size ÷ bandwidth × km/s = {} B ÷ {:.0} B/s × {:.0} km/s = {:.3} km",
        report.size_bytes,
        report.link_bytes_per_s,
        1e6 / request.us_per_km,
        pipe.frame_km
    ));
    page.note(format!(
        "  outstanding = max(1, ceil(2 × distance ÷ frame)) = ceil(2 × {} km ÷ {:.3} km) = {}",
        report.distance_km, pipe.frame_km, pipe.outstanding_writes
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifty_km_explained() {
        let request = ReplicationRequest {
            size_bytes: 2048,
            distance_km: 50.0,
            overhead: Duration::from_micros(600),
            per_kib: Some(Duration::from_micros(27)),
            calibrate_from: None,
            link_gbit: 2.0,
            fibre_channel: false,
            round_trips: 1,
            us_per_km: 5.0,
            explain: true,
        };
        let output = run(&request).unwrap();
        let text = output.text.unwrap();
        assert!(text.contains("1 × 2 × 50 km × 5 µs = 1.1540 ms"), "{text}");
        assert!(
            text.starts_with("synchronous 2 KiB write over 50 km:\n"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&output.json.unwrap()).unwrap();
        assert!((json["sync"]["total_s"].as_f64().unwrap() - 1.154e-3).abs() < 1e-12);
    }
}
