//! A calibrate Recording's points of an `nfs://` target, as `strata model
//! nfs --from` takes them: each point of one group, its I/Os in flight,
//! sizes, connections, and the calls, round trip and CPU strata measured.
//!
//! Not for: the model (strata-model's `nfs`).

use strata_model::command::nfs::{MeasuredNfs, MeasuredNfsPoint};
use strata_recording::calibrate::PointResult;
use strata_recording::{Kind, Recording};

/// The NFS points of the calibrate Recording at `path`.
pub fn read(path: &std::path::Path) -> anyhow::Result<MeasuredNfs> {
    let name = path.display();
    let recording = Recording::read_without_layers(path)
        .map_err(|error| error.context(format!("--from {name}")))?;
    if recording.header.kind != Kind::Calibrate {
        anyhow::bail!("--from {name}: not a calibrate Recording");
    }
    let all: Vec<&PointResult> = recording
        .point_results()
        .map(|record| &record.point)
        .collect();
    let points: Vec<MeasuredNfsPoint> = all.iter().filter_map(|point| measured(point)).collect();
    if points.is_empty() {
        anyhow::bail!(
            "--from {name}: no point of one group measured on an nfs:// target without errors \
             (calibrate --target nfs://HOST/EXPORT/PATH --sweep)"
        );
    }
    Ok(MeasuredNfs {
        recording: name.to_string(),
        skipped: all.len() - points.len(),
        points,
    })
}

/// `point` as the model takes it, when it is one group on an NFS server,
/// whole and without errors.
fn measured(point: &PointResult) -> Option<MeasuredNfsPoint> {
    let nfs = point.nfs.as_ref()?;
    let [group] = &point.groups[..] else {
        return None;
    };
    if point.interrupted || !point.errors.is_empty() || nfs.calls == 0 || point.window_s <= 0.0 {
        return None;
    }
    let cpu_us_per_io = point.cpu.user_us_per_io + point.cpu.system_us_per_io;
    let (connections, outstanding_ios) = point.nfs_in_flight()?;
    Some(MeasuredNfsPoint {
        name: point.name.clone(),
        outstanding_ios: u32::try_from(outstanding_ios).ok()?,
        io_bytes: u64::from(group.block_size_bytes),
        transfer_bytes: u64::from(nfs.transfer_bytes),
        connections: u32::try_from(connections).ok()?,
        calls_per_s: nfs.calls_per_s,
        mb_per_s: group.all.bytes as f64 / 1e6 / point.window_s,
        round_trip_us: nfs.round_trip_mean_us,
        cpu_us_per_call: cpu_us_per_io / nfs.calls_per_io.max(f64::MIN_POSITIVE),
    })
}
