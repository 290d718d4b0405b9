//! Observe samples in the Recording: one `layers` record per interval,
//! raw values and rates together, and the replay that turns them back into
//! the same samples.
//!
//! Not for: the format itself (strata-recording).

use crate::sampler::Sample;
use anyhow::bail;
use std::path::Path;
use strata_recording::{Kind, Record, Recording, RecordingWriter};

pub fn write_sample(writer: &mut RecordingWriter, sample: &Sample) -> anyhow::Result<()> {
    writer.write(&Record::Layers(sample.clone()))
}

/// The samples of an observe recording, in order.
pub fn read_samples(path: &Path) -> anyhow::Result<Vec<Sample>> {
    let recording = Recording::read(path)?;
    if recording.header.kind != Kind::Observe {
        bail!(
            "{} is a recording of `strata {}`, not of `strata observe`",
            path.display(),
            recording.header.kind
        );
    }
    Ok(recording.layers().cloned().collect())
}
