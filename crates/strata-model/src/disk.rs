//! Random IOPS of one rotating disk from its mechanics (DOMAIN lesson 6):
//! seek + half a rotation + transfer, at queue depth 1 and with command
//! queuing, over the whole disk or a short-stroked part of it.
//!
//! The model:
//! - seek(d) = settle + (average seek − settle) × sqrt(d ÷ d_avg): the arm
//!   accelerates, so seek time grows with the square root of distance, above
//!   a fixed settle time. d_avg = 1/3 of the span (two uniform points).
//! - Short stroking to a fraction f of the disk scales every distance by f.
//! - With Q queued commands the disk picks the nearest by seek distance
//!   (SSTF); the expected distance to the nearest of Q uniform targets is
//!   ≈ span / (2Q + 1) (exact at Q = 1, asymptotically exact for large Q).
//! - Rotational latency stays half a rotation: choosing by seek distance does
//!   not help rotation, which is why deep queues give ~2×, not 10×.
//!
//! Not for: SSDs, sequential I/O, or drive caches.

use crate::{invalid, require_non_negative, require_positive, ModelError};
use serde::Serialize;

#[derive(Debug, Clone, Copy, Serialize)]
pub struct DiskInput {
    pub rpm: f64,
    /// Average seek over the full stroke.
    pub average_seek_s: f64,
    /// Shortest seek (track-to-track plus settle).
    pub settle_s: f64,
    pub transfer_bytes_per_s: f64,
    pub request_bytes: f64,
    /// Fraction of the disk in use, 0 < f ≤ 1.
    pub span_fraction: f64,
    pub queue_depth: u32,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct DiskResult {
    pub seek_s: f64,
    pub rotational_latency_s: f64,
    pub transfer_s: f64,
    pub service_time_s: f64,
    pub iops: f64,
    /// Expected seek distance as a share of the average full-stroke distance.
    pub seek_distance_ratio: f64,
}

/// The usual full-stroke average seek of a disk of this speed.
pub fn typical_average_seek_s(rpm: f64) -> f64 {
    match rpm {
        r if r >= 15_000.0 => 3.5e-3,
        r if r >= 10_000.0 => 4.5e-3,
        r if r >= 7_200.0 => 8.5e-3,
        _ => 12e-3,
    }
}

fn check(input: &DiskInput) -> Result<(), ModelError> {
    require_positive("rpm", input.rpm)?;
    require_positive("seek", input.average_seek_s)?;
    require_non_negative("settle", input.settle_s)?;
    if input.settle_s > input.average_seek_s {
        return Err(invalid(
            "settle",
            "must not exceed the average seek (--seek)",
        ));
    }
    require_positive("transfer-rate", input.transfer_bytes_per_s)?;
    require_positive("size", input.request_bytes)?;
    if !(input.span_fraction > 0.0 && input.span_fraction <= 1.0) {
        return Err(invalid("span", "must be above 0% and at most 100%"));
    }
    if input.queue_depth == 0 {
        return Err(invalid("qd", "must be at least 1"));
    }
    Ok(())
}

/// Service time and IOPS of random requests.
pub fn random_iops(input: DiskInput) -> Result<DiskResult, ModelError> {
    check(&input)?;
    let depth = f64::from(input.queue_depth);
    let nearest_ratio = 3.0 / (2.0 * depth + 1.0);
    let seek_distance_ratio = input.span_fraction * nearest_ratio;
    let seek_s =
        input.settle_s + (input.average_seek_s - input.settle_s) * seek_distance_ratio.sqrt();
    let rotational_latency_s = 0.5 * 60.0 / input.rpm;
    let transfer_s = input.request_bytes / input.transfer_bytes_per_s;
    let service_time_s = seek_s + rotational_latency_s + transfer_s;
    Ok(DiskResult {
        seek_s,
        rotational_latency_s,
        transfer_s,
        service_time_s,
        iops: 1.0 / service_time_s,
        seek_distance_ratio,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifteen_k(span_fraction: f64, queue_depth: u32) -> DiskResult {
        random_iops(DiskInput {
            rpm: 15_000.0,
            average_seek_s: typical_average_seek_s(15_000.0),
            settle_s: 0.5e-3,
            transfer_bytes_per_s: 150e6,
            request_bytes: 8192.0,
            span_fraction,
            queue_depth,
        })
        .unwrap()
    }

    #[test]
    fn fifteen_k_full_disk_queue_depth_one() {
        let result = fifteen_k(1.0, 1);
        assert!((150.0..=200.0).contains(&result.iops), "{}", result.iops);
        assert!((result.rotational_latency_s - 2e-3).abs() < 1e-12);
    }

    #[test]
    fn fifteen_k_half_disk_deep_queue() {
        for depth in [16, 32, 64, 128] {
            let iops = fifteen_k(0.5, depth).iops;
            assert!((300.0..=450.0).contains(&iops), "QD{depth}: {iops}");
        }
    }

    #[test]
    fn short_stroking_and_queuing_only_help() {
        assert!(fifteen_k(0.5, 1).iops > fifteen_k(1.0, 1).iops);
        assert!(fifteen_k(1.0, 8).iops > fifteen_k(1.0, 1).iops);
    }
}
