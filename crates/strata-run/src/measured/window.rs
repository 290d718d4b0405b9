//! The window's figures for `strata model --from`: a strata Recording's
//! whole window (the same figures its report's findings rest on) or an
//! Oracle AWR or STATSPACK report's snapshot interval, as the measured
//! parts of strata-model's requests.
//!
//! Not for: any model arithmetic (strata-model), or reading a figure the
//! source lacks as zero — a missing figure is an error naming what is
//! missing.

use anyhow::{bail, Context};
use std::io::Read;
use std::path::Path;
use strata_model::command::{commit::MeasuredCommit, queue::MeasuredDevice, raid::MeasuredLoad};
use strata_report::findings::WindowFigures;
use strata_report::recording::{figures_with, ReportOptions};

/// The measured figures of `path`: a Recording's whole window (a run's
/// measured window) or an AWR/STATSPACK report's snapshot interval.
pub fn read(path: &Path) -> anyhow::Result<WindowFigures> {
    if is_recording(path)? {
        return figures_with(path, &ReportOptions::default());
    }
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).with_context(|| format!("--from {name}"))?;
    let awr = strata_awr::parse(&text, &name)
        .with_context(|| format!("--from {name}: neither a strata Recording nor"))?;
    Ok(strata_awr::figures::window_figures(&awr))
}

fn is_recording(path: &Path) -> anyhow::Result<bool> {
    let context = || format!("--from {}", path.display());
    let mut head = [0u8; 512];
    let read = std::fs::File::open(path)
        .and_then(|mut file| file.read(&mut head))
        .with_context(context)?;
    Ok(String::from_utf8_lossy(&head[..read]).contains("\"strata-recording\""))
}

/// The average commit wait and the average log write time, ms, with what
/// each one is called.
pub fn commit_inputs(figures: &WindowFigures, path: &Path) -> anyhow::Result<MeasuredCommit> {
    let Some(commit) = figures.commit.as_ref() else {
        bail!(
            "--from {}: no commit figures (no commits timed, or no log file sync wait)",
            path.display()
        );
    };
    let Some(log_write_ms) = commit.log_write_avg_ms else {
        bail!(
            "--from {}: no log write time (PostgreSQL: track_wal_io_timing off; Oracle: no log file parallel write)",
            path.display()
        );
    };
    Ok(MeasuredCommit {
        commit_wait_ms: commit.commit_avg_ms,
        commit_label: commit.commit_label.clone(),
        log_write_ms,
        log_write_label: commit.log_write_label.clone(),
    })
}

/// Front-end requests/s and the read share, from the devices the host
/// sees (the RAID set's front end).
pub fn front_end_load(figures: &WindowFigures, path: &Path) -> anyhow::Result<MeasuredLoad> {
    let reads: f64 = figures
        .devices
        .iter()
        .map(|device| device.read_requests)
        .sum();
    let writes: f64 = figures
        .devices
        .iter()
        .map(|device| device.write_requests)
        .sum();
    if figures.devices.is_empty() || figures.window_s <= 0.0 || reads + writes <= 0.0 {
        bail!(
            "--from {}: no device requests in its window (an AWR report has no device layer: give --iops and --read-pct)",
            path.display()
        );
    }
    Ok(MeasuredLoad {
        iops: (reads + writes) / figures.window_s,
        read_pct: reads / (reads + writes) * 100.0,
        devices: figures
            .devices
            .iter()
            .map(|device| device.name.clone())
            .collect(),
    })
}

/// The named device, or the busiest one, of a Recording's window: what an
/// open queueing model needs, and what the device's own response time was.
pub fn device_queue(
    figures: &WindowFigures,
    path: &Path,
    name: Option<&str>,
) -> anyhow::Result<MeasuredDevice> {
    let names: Vec<&str> = figures.devices.iter().map(|d| d.name.as_str()).collect();
    let device = match name {
        Some(name) => figures.devices.iter().find(|device| device.name == name),
        None => figures.devices.iter().max_by(|a, b| {
            a.util_pct
                .unwrap_or(0.0)
                .total_cmp(&b.util_pct.unwrap_or(0.0))
        }),
    };
    let Some(device) = device else {
        bail!(
            "--device {}: not in --from {} (its devices: {})",
            name.unwrap_or("(busiest)"),
            path.display(),
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
    };
    let requests = device.read_requests + device.write_requests;
    let (Some(service_time_ms), Some(util_pct), Some(await_ms), Some(queue_size)) = (
        device.service_time_ms,
        device.util_pct,
        device.await_ms,
        device.queue_size,
    ) else {
        bail!(
            "--from {}: device {} has no busy time or await figures",
            path.display(),
            device.name
        );
    };
    if requests <= 0.0 || figures.window_s <= 0.0 {
        bail!(
            "--from {}: device {} did no requests in the window",
            path.display(),
            device.name
        );
    }
    Ok(MeasuredDevice {
        device: device.name.clone(),
        requests_per_s: requests / figures.window_s,
        service_time_ms,
        util_pct,
        await_ms,
        queue_size,
    })
}
