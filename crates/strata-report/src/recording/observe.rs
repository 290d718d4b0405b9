//! A `strata observe` Recording as a [`Measured`] window: every layer from
//! the samples that fall in the window; the devices are the disks that are
//! not md members, and the md arrays.
//!
//! Not for: run's and calibrate's own records.

use super::layers;
use super::measured::Measured;
use super::samples::{Labels, Timeline};
use crate::findings::{OutlierFigures, RateSeries};
use strata_output::document::Window;
use strata_recording::names::{device, label, layer};
use strata_recording::Recording;

pub(crate) fn measured(
    recording: &Recording,
    timeline: &Timeline,
    window: Window,
    threshold_ms: f64,
) -> Measured {
    let within = timeline.within(window);
    let mut measured = Measured::empty(window);
    measured.window_s = within
        .covered_s(layer::DEVICE)
        .max(within.covered_s(layer::CPU));
    let names = layers::physical_device_names(&within);
    measured.devices = names
        .iter()
        .filter_map(|name| layers::device(&within, name, "observed"))
        .collect();
    measured.database = layers::database(&within, false);
    measured.waits = layers::waits(&within);
    measured.nfs = layers::nfs(&within);
    measured.nic = layers::nic(&within);
    measured.cpu = layers::cpu(&within, recording.header.host.cpus as f64);
    measured.outliers = OutlierFigures {
        threshold_ms,
        count: None,
        worst_ms: None,
        statements: false,
        device_spikes: layers::await_spikes(&within, &names, threshold_ms),
    };
    measured.steadiness = Some(device_iops(&within, &names));
    measured
}

/// Read + write requests/s of the counted devices, second by second.
fn device_iops(within: &Timeline, names: &[String]) -> RateSeries {
    let counted = |labels: &Labels| {
        labels
            .get(label::DEVICE)
            .is_some_and(|name| names.contains(name))
    };
    let values = within
        .layer(layer::DEVICE)
        .filter_map(|sample| {
            let reads = sample.rate(device::READ_REQUESTS, &counted)?;
            Some(reads + sample.rate(device::WRITE_REQUESTS, &counted).unwrap_or(0.0))
        })
        .collect();
    RateSeries {
        name: "device requests/s (read + write)".to_string(),
        values,
    }
}
