//! The Recording of a MariaDB run, in the shape `docs/recording.md` gives
//! for `run`: header (kind `run`, the environment with `engine` =
//! `mariadb`), the load event, one `workload` sample per second of the
//! window, a `window_device` sample per device, a `window_database` sample
//! with every InnoDB counter's change, the layers sampled each second (OS
//! and the `mariadb` collector), and the result with the figures and the
//! latency histograms.
//!
//! Not for: computing figures (`figures`).

use serde::Serialize;
use std::path::Path;
use strata_core::recording::{Header, RecordingWriter};
use strata_observe::sampler::Sample;
use strata_slob::session::RunOutcome;

use crate::environment::MariaDbEnvironment;
use crate::figures::MariaDbFigures;
use crate::setup::SetupReport;

/// The sessions' latency histograms: HdrHistogram V2, base64, nanoseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Histograms {
    pub select_lat_ns_hdr: String,
    pub update_lat_ns_hdr: String,
    pub commit_lat_ns_hdr: String,
    pub scan_lat_ns_hdr: String,
}

impl Histograms {
    pub fn of(outcome: &RunOutcome) -> Histograms {
        Histograms {
            select_lat_ns_hdr: outcome.select.to_base64(),
            update_lat_ns_hdr: outcome.update.to_base64(),
            commit_lat_ns_hdr: outcome.commit.to_base64(),
            scan_lat_ns_hdr: outcome.scan.to_base64(),
        }
    }
}

/// What the Recording holds besides the figures.
pub struct RecordingParts<'a> {
    pub command: &'a [String],
    pub options: &'a serde_json::Value,
    pub environment: &'a MariaDbEnvironment,
    pub setup: Option<&'a SetupReport>,
    pub samples: &'a [Sample],
}

pub fn write_recording(
    path: &Path,
    parts: &RecordingParts<'_>,
    figures: &MariaDbFigures,
    histograms: &Histograms,
) -> anyhow::Result<()> {
    let mut header = Header::new("run", parts.command.to_vec());
    header.options = parts.options.clone();
    header.environment = serde_json::to_value(parts.environment)?;
    let mut writer = RecordingWriter::create(path, &header)?;
    if let Some(setup) = parts.setup {
        writer.write(
            "event",
            &serde_json::json!({"event": "load", "load": setup.load, "layout": setup.layout}),
        )?;
    }
    let window_s = figures.run.window_s;
    for second in figures.run.per_second.as_array().into_iter().flatten() {
        writer.write(
            "sample",
            &serde_json::json!({"layer": "workload", "sample": second}),
        )?;
    }
    for device in &figures.run.devices {
        writer.write("sample", &serde_json::json!({"layer": "window_device", "interval_s": window_s, "sample": device}))?;
    }
    if let Some(innodb) = &figures.innodb {
        writer.write("sample", &serde_json::json!({"layer": "window_database", "interval_s": window_s, "counters": innodb.counters}))?;
    }
    for sample in parts.samples {
        strata_observe::record::write_sample(&mut writer, sample)?;
    }
    writer.write(
        "result",
        &serde_json::json!({"result": figures, "histograms": histograms}),
    )
}
