//! The records a calibrate point adds to the Recording
//! (`docs/recording.md`).
//!
//! Not for: the tables and documents a calibration prints (`output`).

use crate::result::PointResult;
use std::collections::BTreeMap;
use strata_core::recording::RecordingWriter;

/// Writes one finished point into the Recording.
pub fn record_point(writer: &mut RecordingWriter, point: &PointResult) -> anyhow::Result<()> {
    let histograms: BTreeMap<String, serde_json::Value> = point
        .groups
        .iter()
        .map(|group| {
            let encoded = serde_json::json!({
                "read_lat_ns_hdr": group.histograms.read.to_base64(),
                "write_lat_ns_hdr": group.histograms.write.to_base64(),
            });
            (group.label.clone(), encoded)
        })
        .collect();
    for sample in &point.per_second {
        writer.write(
            "sample",
            &serde_json::json!({"layer": "workload", "point": point.name, "sample": sample}),
        )?;
    }
    for device in &point.devices {
        let sample = serde_json::json!({"layer": "window_device", "point": point.name, "interval_s": point.window_s, "sample": device});
        writer.write("sample", &sample)?;
    }
    for outlier in &point.slow_ios {
        writer.write(
            "event",
            &serde_json::json!({"event": "io_outlier", "point": point.name, "outlier": outlier}),
        )?;
    }
    writer.write(
        "result",
        &serde_json::json!({"point": point, "histograms": histograms}),
    )
}
