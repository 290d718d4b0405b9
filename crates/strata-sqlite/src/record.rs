//! The Recording of a SQLite run, in the shape `docs/recording.md` gives
//! for `run`: header (kind `run`, the environment), the load event, one
//! workload sample per second of the window, a `window_device` sample per
//! device, the OS layers each second, and the result with the latency
//! histograms. No `window_database` sample: SQLite has no counters.
//!
//! Not for: computing figures (`figures`). strata-run's
//! `output::write_recording` takes PostgreSQL's `SlobConfig`, which a SQLite
//! run does not have.

use std::path::Path;
use strata_core::recording::{Header, RecordingWriter};
use strata_observe::sampler::Sample;
use strata_run::accounting::RunFigures;
use strata_run::session_run::RunEnvironment;
use strata_slob::load::LoadReport;
use strata_slob::session::RunOutcome;

/// What the Recording holds besides the figures.
pub struct RecordingParts<'a> {
    pub command: &'a [String],
    pub options: &'a serde_json::Value,
    pub environment: &'a RunEnvironment,
    pub load: Option<&'a LoadReport>,
    pub samples: &'a [Sample],
}

pub fn write_recording(
    path: &Path,
    parts: &RecordingParts<'_>,
    figures: &RunFigures,
    outcome: &RunOutcome,
) -> anyhow::Result<()> {
    let mut header = Header::new("run", parts.command.to_vec());
    header.options = parts.options.clone();
    header.environment = serde_json::to_value(parts.environment)?;
    let mut writer = RecordingWriter::create(path, &header)?;
    if let Some(load) = parts.load {
        writer.write("event", &serde_json::json!({"event": "load", "load": load}))?;
    }
    for second in figures.per_second.as_array().into_iter().flatten() {
        writer.write(
            "sample",
            &serde_json::json!({"layer": "workload", "sample": second}),
        )?;
    }
    for device in &figures.devices {
        writer.write(
            "sample",
            &serde_json::json!({"layer": "window_device", "interval_s": figures.window_s, "sample": device}),
        )?;
    }
    for sample in parts.samples {
        strata_observe::record::write_sample(&mut writer, sample)?;
    }
    let histograms = serde_json::json!({
        "select_lat_ns_hdr": outcome.select.to_base64(),
        "update_lat_ns_hdr": outcome.update.to_base64(),
        "commit_lat_ns_hdr": outcome.commit.to_base64(),
        "scan_lat_ns_hdr": outcome.scan.to_base64(),
    });
    writer.write(
        "result",
        &serde_json::json!({"result": figures, "histograms": histograms}),
    )
}
