//! The storage's curve from a calibrate Recording: its points of the
//! database's block read at random alone, by outstanding requests, for the
//! sweep's prediction and `strata model predict`.
//!
//! Not for: what the model does with the curve (strata-model's `predict`).

use strata_core::histogram::LatencyHistogram;
use strata_model::predict::{BatchPoint, StorageCurve, StoragePoint};
use strata_recording::record::PointRecord;
use strata_recording::{Kind, Recording};

/// The curve of `path`'s reads of `block_bytes`, the database's block.
pub fn read(path: &std::path::Path, block_bytes: u64) -> anyhow::Result<StorageCurve> {
    let recording = Recording::read_without_layers(path)
        .map_err(|error| error.context(format!("--calibration {}", path.display())))?;
    curve_of(&recording, block_bytes)
}

/// The curve of a calibrate Recording: its points of random reads of
/// `block_bytes` (the database's block: PostgreSQL's 8 KiB, InnoDB's 16
/// KiB) alone (no large streams, no writes, no errors), by outstanding
/// requests.
fn curve_of(calibration: &Recording, block_bytes: u64) -> anyhow::Result<StorageCurve> {
    let name = calibration.path.display();
    if calibration.header.kind != Kind::Calibrate {
        anyhow::bail!("--calibration {name}: not a calibrate Recording");
    }
    let mut points = Vec::new();
    for record in calibration.point_results() {
        if let Some(point) = small_read_point(record, block_bytes)? {
            points.push(point);
        }
    }
    if points.is_empty() {
        let size = match block_bytes % 1024 {
            0 => format!("{}KiB", block_bytes / 1024),
            _ => block_bytes.to_string(),
        };
        anyhow::bail!(
            "--calibration {name}: no point of {size} random reads alone, the database's block \
             (calibrate --sweep --bs {size}, or --workload small-random-read --bs {size})"
        );
    }
    StorageCurve::new(points).map_err(|error| anyhow::anyhow!("--calibration {name}: {error}"))
}

fn small_read_point(
    record: &PointRecord,
    block_bytes: u64,
) -> anyhow::Result<Option<StoragePoint>> {
    let point = &record.point;
    let usable = !point.interrupted
        && point.errors.is_empty()
        && !point.groups.is_empty()
        && point.groups.iter().all(|group| {
            !group.is_large()
                && u64::from(group.block_size_bytes) == block_bytes
                && group.writes.requests == 0
        });
    if !usable || point.small_iops() <= 0.0 {
        return Ok(None);
    }
    let mut latency = LatencyHistogram::new();
    let mut batches = LatencyHistogram::new();
    for group in &point.groups {
        if let Some(encoded) = record.histograms.get(&group.label) {
            latency.merge(&LatencyHistogram::from_base64(&encoded.read_lat_ns_hdr)?);
            if !encoded.batch_lat_ns_hdr.is_empty() {
                batches.merge(&LatencyHistogram::from_base64(&encoded.batch_lat_ns_hdr)?);
            }
        }
    }
    let blocks_per_batch = point.groups.iter().find_map(|group| {
        let figures = group.batches.as_ref()?;
        Some(figures.blocks_per_batch)
    });
    let batch = blocks_per_batch
        .filter(|_| !batches.is_empty())
        .map(|blocks_per_batch| BatchPoint {
            blocks_per_batch,
            batches: batches.count(),
            mean_s: batches.mean_ns() * 1e-9,
            p99_s: batches.percentile_ns(99.0) as f64 * 1e-9,
        });
    let outstanding: usize = point.groups.iter().map(|g| g.queue_depth * g.jobs).sum();
    Ok(Some(StoragePoint {
        outstanding: outstanding as u32,
        iops: point.small_iops(),
        mean_latency_s: latency.mean_ns() * 1e-9,
        sd_latency_s: latency.stdev_ns() * 1e-9,
        p99_latency_s: latency.percentile_ns(99.0) as f64 * 1e-9,
        cpu_per_io_s: (point.cpu.user_us_per_io + point.cpu.system_us_per_io) * 1e-6,
        batch,
    }))
}
