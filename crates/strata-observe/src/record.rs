//! Observe samples in the Recording: one `layers` record per interval,
//! raw values and rates together, followed with `--top N` by a `top`
//! record of the busiest processes, and the replay that turns them back
//! into the same samples.
//!
//! Not for: the format itself (strata-recording).

use crate::sampler::Sample;
use crate::top::TopProcesses;
use anyhow::bail;
use std::path::Path;
use strata_recording::{Kind, Record, Recording, RecordingWriter};

pub fn write_sample(writer: &mut RecordingWriter, sample: &Sample) -> anyhow::Result<()> {
    writer.write(&Record::Layers(sample.clone()))
}

/// The top processes of the interval the sample written last ends.
pub fn write_top(writer: &mut RecordingWriter, top: &TopProcesses) -> anyhow::Result<()> {
    writer.write(&Record::Top(top.clone()))
}

/// The samples of an observe recording, in order, each with the top
/// processes recorded after it.
pub fn read_samples(path: &Path) -> anyhow::Result<Vec<(Sample, Option<TopProcesses>)>> {
    let recording = Recording::read(path)?;
    if recording.header.kind != Kind::Observe {
        bail!(
            "{} is a recording of `strata {}`, not of `strata observe`",
            path.display(),
            recording.header.kind
        );
    }
    if let Some(truncated) = &recording.truncated {
        strata_core::note::note(&format!("strata: {truncated}"));
    }
    Ok(recording
        .layers_with_top()
        .into_iter()
        .map(|(sample, top)| (sample.clone(), top.cloned()))
        .collect())
}
