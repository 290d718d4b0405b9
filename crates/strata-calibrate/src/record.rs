//! The records a calibrate point adds to the Recording
//! (`docs/recording.md`).
//!
//! Not for: the tables and documents a calibration prints (`output`).

use crate::result::PointResult;
use strata_recording::record::{
    GroupHistogramsEncoded, IoOutlier, PointRecord, PointSecond, WindowDevice,
};
use strata_recording::{Record, RecordingWriter};

/// Writes one finished point into the Recording.
pub fn record_point(writer: &mut RecordingWriter, point: &PointResult) -> anyhow::Result<()> {
    let histograms = point
        .groups
        .iter()
        .map(|group| {
            let encoded = GroupHistogramsEncoded {
                read_lat_ns_hdr: group.histograms.read.to_base64(),
                write_lat_ns_hdr: group.histograms.write.to_base64(),
                batch_lat_ns_hdr: match group.batches {
                    Some(_) => group.histograms.batch.to_base64(),
                    None => String::new(),
                },
            };
            (group.label.clone(), encoded)
        })
        .collect();
    for second in &point.per_second {
        writer.write(&Record::PointSecond(PointSecond {
            point: point.name.clone(),
            second: second.clone(),
        }))?;
    }
    for device in &point.devices {
        writer.write(&Record::WindowDevice(WindowDevice {
            point: Some(point.name.clone()),
            interval_s: point.window_s,
            device: device.clone(),
        }))?;
    }
    for outlier in &point.slow_ios {
        writer.write(&Record::IoOutlier(IoOutlier {
            point: point.name.clone(),
            outlier: outlier.clone(),
        }))?;
    }
    writer.write(&Record::PointResult(PointRecord {
        point: point.clone(),
        histograms,
    }))
}
