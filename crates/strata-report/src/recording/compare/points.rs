//! [points] of compared calibrations, point by point: points match when
//! their groups run the same workload (pattern and read share), queue
//! depth, jobs, block size and sync mode, whatever the points' names (a
//! sweep's `small=4 large=0` matches a single point at qd 4). Each match's
//! IOPS, MB/s and latency percentiles with the change from A; points
//! present in only some Recordings are named.
//!
//! Not for: one calibration's curves (`crate::recording::calibrate`).

use super::compared::{table, Compared};
use super::Side;
use crate::recording::sections::{DEVICE, NFS, WORKLOAD};
use strata_core::histogram::LatencySummary;
use strata_output::document::Section;
use strata_recording::record::PointRecord;

/// What a point ran, as the key points match by: each group's workload.
fn key(point: &PointRecord) -> String {
    point
        .point
        .groups
        .iter()
        .map(|group| {
            format!(
                "{} bs={} qd={} jobs={} sync={}",
                group.rw,
                strata_core::units::format_size(u64::from(group.block_size_bytes)).replace(' ', ""),
                group.queue_depth,
                group.jobs,
                format!("{:?}", group.sync).to_lowercase()
            )
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Every point key of any Recording, in the order they first appear.
fn keys(sides: &[Side]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for side in sides {
        for point in side.recording.point_results() {
            let key = key(point);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    keys
}

fn point<'a>(side: &'a Side, key: &str) -> Option<&'a PointRecord> {
    side.recording
        .point_results()
        .find(|point| self::key(point) == key)
}

/// A point's figures: (metric, layer, unit, figure).
type PointFigure = (
    &'static str,
    &'static str,
    &'static str,
    fn(&PointRecord) -> Option<f64>,
);

/// The first group's latency summary, µs.
fn first_group(point: &PointRecord) -> Option<&LatencySummary> {
    point.point.groups.first().map(|group| &group.all.latency)
}

const POINT_FIGURES: [PointFigure; 5] = [
    ("IOPS", DEVICE, "requests/s", |p| {
        Some(p.point.groups.iter().map(|group| group.all.iops).sum())
    }),
    ("MB/s", DEVICE, "MB/s", |p| Some(p.point.mb_per_s())),
    ("p50", WORKLOAD, "ms", |p| {
        Some(first_group(p)?.lat_p50_us / 1e3)
    }),
    ("p99", WORKLOAD, "ms", |p| {
        Some(first_group(p)?.lat_p99_us / 1e3)
    }),
    ("p99.9", WORKLOAD, "ms", |p| {
        Some(first_group(p)?.lat_p99_9_us / 1e3)
    }),
];

/// A point's NFS calls, through strata's own client (`nfs://`) or the
/// kernel's (a target on its mount), so that the two stand side by side:
/// Direct NFS's bake-off; and the filer's NFS server's own time per call
/// where its agent counted it (`--agent`), the part of the round trip
/// neither client changes.
const NFS_FIGURES: [PointFigure; 4] = [
    ("NFS calls", NFS, "calls/s", |p| {
        let point = &p.point;
        (point.nfs.as_ref().map(|nfs| nfs.calls_per_s))
            .or_else(|| Some(kernel_ops(p)? / point.window_s))
    }),
    ("NFS calls per I/O", NFS, "calls", |p| {
        let point = &p.point;
        let ios: u64 = point.groups.iter().map(|group| group.all.requests).sum();
        (point.nfs.as_ref().map(|nfs| nfs.calls_per_io))
            .or_else(|| Some(kernel_ops(p)? / (ios as f64).max(1.0)))
    }),
    ("NFS round trip", NFS, "ms", |p| {
        if let Some(nfs) = &p.point.nfs {
            return Some(nfs.round_trip_mean_us / 1e3);
        }
        let ops = p.point.kernel_nfs.as_ref()?.ops.iter();
        let weighted: f64 = ops.map(|op| op.rtt_ms * op.ops as f64).sum();
        Some(weighted / kernel_ops(p)?.max(1.0))
    }),
    ("NFS server time", NFS, "ms", |p| {
        let server = &p.point.nfs.as_ref()?.filer.as_ref()?.server;
        let calls: u64 = server.iter().map(|op| op.calls).sum();
        let served_us: f64 = server
            .iter()
            .map(|op| op.server_mean_us * op.calls as f64)
            .sum();
        (calls > 0).then(|| served_us / calls as f64 / 1e3)
    }),
];

/// Every operation the kernel client's mount made over the point.
fn kernel_ops(point: &PointRecord) -> Option<f64> {
    let kernel = point.point.kernel_nfs.as_ref()?;
    Some(kernel.ops.iter().map(|op| op.ops as f64).sum())
}

/// One point's rows: IOPS, MB/s, and its first group's p50, p99, p99.9;
/// and its NFS calls where a Recording has them.
fn rows(sides: &[Side], key: &str) -> Vec<Compared> {
    let points: Vec<Option<&PointRecord>> = sides.iter().map(|side| point(side, key)).collect();
    POINT_FIGURES
        .iter()
        .chain(&NFS_FIGURES)
        .filter_map(|(metric, layer, unit, figure)| {
            let values: Vec<Option<f64>> = points.iter().map(|p| p.and_then(figure)).collect();
            values
                .iter()
                .any(Option::is_some)
                .then(|| Compared::new(format!("{key}: {metric}"), layer, unit, values))
        })
        .collect()
}

/// The section: matching points compared, the others named.
pub(super) fn section(sides: &[Side]) -> Section {
    let marks: Vec<String> = sides.iter().map(|side| side.mark.clone()).collect();
    let (matched, unmatched): (Vec<String>, Vec<String>) = keys(sides)
        .into_iter()
        .partition(|key| sides.iter().all(|side| point(side, key).is_some()));
    let rows: Vec<Compared> = matched.iter().flat_map(|key| rows(sides, key)).collect();
    let mut section = Section::new("points", "Point by point");
    section = match rows.is_empty() {
        true => section.note("No point of one Recording matches a point of every other."),
        false => section.table(table("Matching points", &marks, &rows)),
    };
    for key in unmatched {
        let present: Vec<String> = sides
            .iter()
            .filter_map(|side| Some(format!("{} ({})", side.mark, point(side, &key)?.point.name)))
            .collect();
        section = section.note(format!("Only in {}: {key}.", present.join(", ")));
    }
    section.note(
        "Points match by workload, block size, queue depth, jobs and sync mode; latency is \
         the point's first group's, as strata's own requests timed it.",
    )
}
