//! The process's one block tracer, for a command that reads it at the
//! edges of its windows (`run`, `calibrate`), and each window's figures:
//! the devices' traced requests by operation, percentiles of their queue
//! and device times, their count beside /proc/diskstats'.
//!
//! Not for: the tracing itself (`super`), or printing the figures.

use super::{BlockTracer, Buckets, Kind, Op, TraceSnapshot};
use crate::diskstats::DiskStat;
use std::sync::OnceLock;
use strata_recording::device::IostatFigures;
use strata_recording::run::{
    BlockTraceFigures, LatencyPercentiles, TracedDevice, TracedOperation, UnfollowedRequests,
};

static TRACER: OnceLock<Result<BlockTracer, String>> = OnceLock::new();

/// Starts the tracer (once; later calls do nothing) and says why it could
/// not start.
pub fn start() -> Result<(), String> {
    let tracer = TRACER.get_or_init(|| BlockTracer::start().map_err(|error| format!("{error:#}")));
    tracer.as_ref().map(|_| ()).map_err(Clone::clone)
}

/// Keeps the tracer from starting in this process, for `why`.
pub fn decline(why: &str) {
    let _ = TRACER.set(Err(why.to_string()));
}

/// What the tracer counted so far; `None` when it is not running.
pub fn snapshot() -> Option<TraceSnapshot> {
    TRACER.get()?.as_ref().ok().map(BlockTracer::snapshot)
}

/// Why the tracer gave no figures for a window.
fn unavailable() -> String {
    match TRACER.get() {
        Some(Err(why)) => why.clone(),
        Some(Ok(_)) => "the devices are not on this host".to_string(),
        None => "block tracing was not started".to_string(),
    }
}

const OPERATIONS: [Op; 5] = [Op::Read, Op::Write, Op::Flush, Op::Discard, Op::Other];

/// The traced requests of `devices` (named as in `disks`) between two
/// snapshots; why there are none when either is missing.
pub fn figures(
    (before, after): (Option<&TraceSnapshot>, Option<&TraceSnapshot>),
    disks: &[DiskStat],
    devices: &[IostatFigures],
) -> BlockTraceFigures {
    let (Some(before), Some(after)) = (before, after) else {
        return BlockTraceFigures {
            unavailable: Some(unavailable()),
            ..BlockTraceFigures::default()
        };
    };
    let window = after.since(before);
    let traced = devices
        .iter()
        .filter_map(|device| {
            let disk = crate::diskstats::find(disks, &device.device)?;
            let operations = OPERATIONS
                .iter()
                .filter_map(|op| operation(&window, (disk.major, disk.minor), *op, device))
                .collect();
            Some(TracedDevice {
                device: device.device.clone(),
                role: device.role.clone(),
                operations,
            })
        })
        .collect();
    let skipped = window.unfollowed.skipped_by_kernel;
    BlockTraceFigures {
        unavailable: None,
        devices: traced,
        unfollowed: UnfollowedRequests {
            issued_unstarted: window.unfollowed.issued_unstarted,
            ended_unseen: window.unfollowed.ended_unseen,
            starts_dropped: window.unfollowed.starts_dropped,
            ends_skipped_by_kernel: skipped[2],
            issues_skipped_by_kernel: skipped[1],
        },
    }
}

fn operation(
    window: &TraceSnapshot,
    device: (u32, u32),
    op: Op,
    counted: &IostatFigures,
) -> Option<TracedOperation> {
    let device_time = window.get(device, op, Kind::Device)?;
    let diskstats_requests = match op {
        Op::Read => Some(counted.read_requests),
        Op::Write => Some(counted.write_requests),
        Op::Flush => Some(counted.flush_requests),
        Op::Discard | Op::Other => None,
    };
    Some(TracedOperation {
        operation: op.name().to_string(),
        requests: device_time.count(),
        diskstats_requests,
        device_time: percentiles(device_time)?,
        queue_time: window.get(device, op, Kind::Queue).and_then(percentiles),
        total_mean_ms: window
            .get(device, op, Kind::Total)
            .and_then(Buckets::mean_ns)
            .map(|ns| ns / 1e6),
    })
}

fn percentiles(buckets: &Buckets) -> Option<LatencyPercentiles> {
    let ms = |ns: f64| ns / 1e6;
    Some(LatencyPercentiles {
        mean_ms: ms(buckets.mean_ns()?),
        p50_ms: ms(buckets.quantile_ns(0.5)?),
        p99_ms: ms(buckets.quantile_ns(0.99)?),
        p999_ms: ms(buckets.quantile_ns(0.999)?),
        max_ms: ms(buckets.max_ns()? as f64),
    })
}
