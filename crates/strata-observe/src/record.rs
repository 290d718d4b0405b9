//! Observe samples in the Recording: one `sample` record per layer per
//! interval (`"layer"`, `"t_s"`, `"unix_s"`, `"interval_s"`, `"data"`), raw
//! values and rates together, and the replay that turns them back into the
//! same samples.
//!
//! Not for: the format itself (`strata_core::recording`).

use crate::sampler::{LayerSample, Sample};
use anyhow::{bail, Context};
use std::collections::BTreeMap;
use std::path::Path;
use strata_core::recording::{Recording, RecordingWriter};

pub fn write_sample(writer: &mut RecordingWriter, sample: &Sample) -> anyhow::Result<()> {
    for (layer, data) in &sample.layers {
        let record = serde_json::json!({
            "layer": layer,
            "t_s": sample.t_s,
            "unix_s": sample.unix_s,
            "interval_s": sample.interval_s,
            "data": data,
        });
        writer.write("sample", &record)?;
    }
    Ok(())
}

/// The samples of an observe recording, in order.
pub fn read_samples(path: &Path) -> anyhow::Result<Vec<Sample>> {
    let recording = Recording::read(path)?;
    if recording.header.kind != "observe" {
        bail!(
            "{} is a recording of `strata {}`, not of `strata observe`",
            path.display(),
            recording.header.kind
        );
    }
    let mut samples: Vec<Sample> = Vec::new();
    for (index, record) in recording.records_of("sample").enumerate() {
        let line = || format!("{}: sample record {}", path.display(), index + 1);
        let t_s = record["t_s"].as_f64().with_context(line)?;
        let layer = record["layer"].as_str().with_context(line)?.to_string();
        let data: LayerSample =
            serde_json::from_value(record["data"].clone()).with_context(line)?;
        if samples.last().is_none_or(|last| last.t_s != t_s) {
            samples.push(Sample {
                t_s,
                unix_s: record["unix_s"].as_f64().with_context(line)?,
                interval_s: record["interval_s"].as_f64().with_context(line)?,
                layers: BTreeMap::new(),
            });
        }
        samples
            .last_mut()
            .expect("pushed above")
            .layers
            .insert(layer, data);
    }
    Ok(samples)
}
