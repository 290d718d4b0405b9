//! How a calibration is shown and kept: the human tables, the versioned JSON
//! document (`docs/calibrate.md`) and ORION-style CSV files.
//!
//! Not for: deciding anything; every figure here was computed in `result`.

use crate::calibration::{CalibrationOutcome, ResolvedOptions, TargetDescription};
use crate::nfs_tables::{kernel_nfs_section, nfs_sections};
use crate::result::{GroupResult, PointResult, Summary};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use strata_core::units::{format_latency_ns, format_size};
use strata_recording::device::rotation_as_served;
use strata_recording::SortedKeys;

/// Name and version of the `--json` document.
pub const JSON_SCHEMA: &str = "strata.calibrate";
pub const JSON_SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct JsonDocument<'a> {
    schema: &'static str,
    schema_version: u32,
    /// The summary's verdict, at the top as in `strata run --json`.
    verdict: &'a strata_core::verdict::Verdict,
    interrupted: bool,
    target: &'a TargetDescription,
    options: SortedKeys<&'a ResolvedOptions>,
    points: &'a [PointResult],
    summary: &'a Summary,
}

pub fn json_document(outcome: &CalibrationOutcome, options: &ResolvedOptions) -> String {
    let document = JsonDocument {
        schema: JSON_SCHEMA,
        schema_version: JSON_SCHEMA_VERSION,
        verdict: &outcome.summary.verdict,
        interrupted: outcome.interrupted,
        target: &outcome.target,
        options: SortedKeys(options),
        points: &outcome.points,
        summary: &outcome.summary,
    };
    serde_json::to_string_pretty(&document).expect("results serialize")
}

fn group_row_name(point: &PointResult, group: &GroupResult) -> String {
    if point.groups.len() > 1 {
        format!("{} · {}", point.name, group.label)
    } else {
        point.name.clone()
    }
}

fn micros(us: f64) -> String {
    format_latency_ns(us * 1e3)
}

/// The workload table: strata's own count of its requests.
pub fn workload_table(points: &[PointResult]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<34} {:>10} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>15}",
        "point", "IOPS", "MB/s", "lat mean", "p50", "p90", "p99", "p99.9", "max", "CPU/IO usr+sys"
    );
    for point in points {
        for group in &point.groups {
            let figures = &group.all;
            let _ = writeln!(
                out,
                "{:<34} {:>10.0} {:>9.1} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>15}",
                group_row_name(point, group),
                figures.iops,
                figures.mb_per_s,
                micros(figures.latency.lat_mean_us),
                micros(figures.latency.lat_p50_us),
                micros(figures.latency.lat_p90_us),
                micros(figures.latency.lat_p99_us),
                micros(figures.latency.lat_p99_9_us),
                micros(figures.latency.lat_max_us),
                format!(
                    "{:.1}+{:.1} us",
                    point.cpu.user_us_per_io, point.cpu.system_us_per_io
                ),
            );
        }
    }
    out
}

/// Sorted batches timed whole, for the groups that read in them; empty
/// when none did.
pub fn batch_table(points: &[PointResult]) -> String {
    let mut out = String::new();
    for point in points {
        for group in &point.groups {
            let Some(batches) = &group.batches else {
                continue;
            };
            if out.is_empty() {
                let _ = writeln!(
                    out,
                    "{:<34} {:>8} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}",
                    "point", "blocks", "batches", "mean", "p50", "p99", "max", "p99/mean"
                );
            }
            let latency = &batches.latency;
            let _ = writeln!(
                out,
                "{:<34} {:>8} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10.3}",
                group_row_name(point, group),
                batches.blocks_per_batch,
                latency.count,
                micros(latency.lat_mean_us),
                micros(latency.lat_p50_us),
                micros(latency.lat_p99_us),
                micros(latency.lat_max_us),
                latency.lat_p99_us / latency.lat_mean_us
            );
        }
    }
    out
}

/// The device table: iostat -x columns over each point's measured window.
pub fn device_table(points: &[PointResult]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<34} {:<8} {:>9} {:>9} {:>8} {:>8} {:>10} {:>9} {:>9} {:>7} {:>6}  check",
        "point",
        "device",
        "r/s",
        "w/s",
        "rMB/s",
        "wMB/s",
        "rareq-sz",
        "r_await",
        "w_await",
        "aqu-sz",
        "%util"
    );
    for point in points {
        for device in &point.devices {
            let check = match &point.verification {
                Some(verification) if verification.device == device.device => {
                    verification.verdict.replace('_', " ")
                }
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "{:<34} {:<8} {:>9.0} {:>9.0} {:>8.1} {:>8.1} {:>10} {:>9} {:>9} {:>7.2} {:>6.1}  {}",
                point.name,
                device.device,
                device.r_per_s,
                device.w_per_s,
                device.read_mb_per_s,
                device.write_mb_per_s,
                format!("{:.1} KiB", device.rareq_sz_kib),
                format!("{:.2} ms", device.r_await_ms),
                format!("{:.2} ms", device.w_await_ms),
                device.aqu_sz,
                device.util_pct,
                check,
            );
        }
    }
    out
}

/// strata's own mean time per request of `op` over a point's groups,
/// weighted by their requests, µs.
fn strata_mean_us(point: &PointResult, op: &str) -> Option<f64> {
    let figures = point.groups.iter().map(|group| match op {
        "read" => &group.reads,
        _ => &group.writes,
    });
    let (requests, weighted) = figures.filter(|figures| figures.requests > 0).fold(
        (0u64, 0.0),
        |(requests, weighted), figures| {
            let mean = figures.latency.lat_mean_us * figures.requests as f64;
            (requests + figures.requests, weighted + mean)
        },
    );
    (requests > 0).then(|| weighted / requests as f64)
}

/// The target's requests traced one by one per point: device time (D2C)
/// percentiles, the block layer's whole time (Q2C), and strata's own time
/// per request beside it: the difference is the host's per request
/// (submission, completion, wake-up).
pub fn trace_table(points: &[PointResult]) -> String {
    let why = points
        .iter()
        .filter_map(|point| point.block_trace.as_ref()?.unavailable.clone())
        .next();
    if let Some(why) = why {
        return format!("requests not traced one by one: {why}\n");
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<34} {:<8} {:<5} {:>9} {:>9} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "point",
        "device",
        "op",
        "requests",
        "diskstats",
        "missed",
        "D2C p50",
        "D2C p99",
        "D2C p99.9",
        "Q2C mean",
        "strata",
        "host/IO"
    );
    for point in points {
        let Some(traced) = &point.block_trace else {
            continue;
        };
        for device in traced
            .devices
            .iter()
            .filter(|device| device.role == "target")
        {
            for op in device
                .operations
                .iter()
                .filter(|op| op.operation != "flush")
            {
                let us = |ms: f64| format!("{:.1}", ms * 1e3);
                let count = |count: Option<u64>| count.map_or("n/a".to_string(), |n| n.to_string());
                let block_us = op.total_mean_ms.map(|ms| ms * 1e3);
                let strata_us = strata_mean_us(point, &op.operation);
                let host = match (strata_us, block_us) {
                    (Some(strata), Some(block)) => format!("{:.1}", strata - block),
                    _ => "n/a".to_string(),
                };
                let _ = writeln!(
                    out,
                    "{:<34} {:<8} {:<5} {:>9} {:>9} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                    point.name,
                    device.device,
                    op.operation,
                    op.requests,
                    count(op.diskstats_requests),
                    count(op.ends_missed),
                    us(op.device_time.p50_ms),
                    us(op.device_time.p99_ms),
                    us(op.device_time.p999_ms),
                    block_us.map_or("n/a".to_string(), |v| format!("{v:.1}")),
                    strata_us.map_or("n/a".to_string(), |v| format!("{v:.1}")),
                    host
                );
            }
        }
    }
    out += &block_outlier_lines(points);
    out
}

/// Each point's block requests over their outlier threshold, counted, and
/// the slowest named; nothing where no point had any.
fn block_outlier_lines(points: &[PointResult]) -> String {
    let mut out = String::new();
    for point in points {
        let Some(outliers) = point
            .block_trace
            .as_ref()
            .and_then(|traced| traced.outliers.as_ref())
        else {
            continue;
        };
        let slowest = outliers
            .listed
            .iter()
            .max_by(|a, b| (a.queue_ms + a.device_ms).total_cmp(&(b.queue_ms + b.device_ms)));
        if let Some(slowest) = slowest {
            let _ = writeln!(
                out,
                "{}: {} block requests at or over {:.3} ms (the lesser of {:.0} ms and 10 × the device's p99 device time); the slowest: {} KiB {} at sector {} of {} by {} (pid {}), queue {:.3} ms, device {:.3} ms",
                point.name,
                outliers.listed.len() as u64 + outliers.overwritten,
                slowest.threshold_ms,
                outliers.absolute_ms,
                slowest.bytes / 1024,
                slowest.operation,
                slowest.sector,
                slowest.device,
                slowest.command,
                slowest.pid,
                slowest.queue_ms,
                slowest.device_ms
            );
        }
    }
    out
}

fn best_line(
    label: &str,
    best: &Option<crate::result::Best>,
    format_value: impl Fn(f64) -> String,
) -> String {
    match best {
        Some(best) => format!(
            "  {label:<34} {} at [{}]\n",
            format_value(best.value),
            best.point
        ),
        None => format!("  {label:<34} not measured\n"),
    }
}

pub fn summary_text(summary: &Summary) -> String {
    let mut out = String::from("Summary\n");
    out += &best_line("max small-I/O IOPS", &summary.max_iops, |v| {
        format!("{v:.0} IOPS")
    });
    out += &best_line("max throughput", &summary.max_mb_per_s, |v| {
        format!("{v:.1} MB/s")
    });
    out += &best_line("min small-I/O latency (mean)", &summary.min_latency, micros);
    let target = &summary.iops_under_latency_target;
    let label = format!("max IOPS with p99 <= {}", micros(target.lat_target_us));
    out += &match (&target.best, target.p99_us) {
        (Some(best), Some(p99)) => {
            format!(
                "  {label:<34} {:.0} IOPS (p99 {}) at [{}]\n",
                best.value,
                micros(p99),
                best.point
            )
        }
        _ => format!("  {label:<34} no point met the target\n"),
    };
    out += &best_line("knee (max IOPS / mean latency)", &summary.knee, |v| {
        format!("{v:.0} IOPS")
    });
    out
}

/// The target and its device; `peak_requests_per_s` (the most the devices
/// served at any point) tells a device flagged rotational that cannot be.
pub fn describe_target(target: &TargetDescription, peak_requests_per_s: f64) -> String {
    let device = match (&target.device, &target.device_note) {
        (Some(device), _) => {
            let physical: Vec<&str> = target
                .physical_devices
                .iter()
                .map(|d| d.name.as_str())
                .collect();
            let rotational = rotation_as_served(device.rotational, peak_requests_per_s);
            format!(
                "on {} ({rotational}; physical: {})",
                device.name,
                physical.join(", ")
            )
        }
        (None, Some(note)) => format!("device unknown: {note}"),
        (None, None) => "device unknown".to_string(),
    };
    format!(
        "target {} ({}, {}{}) {device}\nengine {}, {}, range {}..{} ({})\n",
        target.path.display(),
        target.kind.replace('_', " "),
        format_size(target.size_bytes),
        if target.temporary { ", temporary" } else { "" },
        target.engine,
        match (target.kind, target.direct) {
            ("nfs_file", _) => "strata's own NFS client (no client cache)",
            (_, true) => "O_DIRECT",
            (_, false) => "buffered (page cache)",
        },
        target.range.start_bytes,
        target.range.end_bytes,
        format_size(target.range.len()),
    )
}

pub fn outliers_text(points: &[PointResult], threshold_us: f64, limit: usize) -> String {
    let all: Vec<_> = points
        .iter()
        .flat_map(|p| p.outliers.iter().map(move |o| (p, o)))
        .collect();
    let dropped: u64 = points.iter().map(|p| p.outliers_dropped).sum();
    let mut out = format!(
        "I/O outliers (slower than {}): {}\n",
        micros(threshold_us),
        all.len() as u64 + dropped
    );
    for (point, outlier) in all.iter().take(limit) {
        let _ = writeln!(
            out,
            "  [{}] t={:.3}s {} {} at offset {} ({} bytes): {}",
            point.name,
            outlier.t_s,
            outlier.group,
            outlier.operation,
            outlier.offset_bytes,
            outlier.size_bytes,
            micros(outlier.lat_us)
        );
    }
    if all.len() > limit {
        let _ = writeln!(
            out,
            "  … {} more in the JSON output and the Recording",
            all.len() - limit
        );
    }
    out
}

/// ORION's matrices (rows: large streams; columns: small outstanding I/Os;
/// a cell is empty where the point has no I/O of that kind) plus
/// `points.csv`, one row per group of every point.
pub fn write_csv(dir: &Path, points: &[PointResult]) -> anyhow::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = vec![write_points_csv(dir, points)?];
    if points.iter().all(|point| point.cell.is_some()) && !points.is_empty() {
        let has_small = |p: &PointResult| p.small_groups().next().is_some();
        let has_large = |p: &PointResult| p.groups.iter().any(|g| g.is_large());
        let small_iops = |p: &PointResult| has_small(p).then(|| p.small_iops());
        let large_mbps = |p: &PointResult| {
            let large = p.groups.iter().filter(|g| g.is_large());
            has_large(p).then(|| large.map(|g| g.all.mb_per_s).sum())
        };
        let small_lat = |p: &PointResult| has_small(p).then(|| p.small_latency().mean_ns() / 1e3);
        written.push(write_matrix(
            dir,
            "iops.csv",
            "IOPS of small I/O",
            points,
            small_iops,
        )?);
        written.push(write_matrix(
            dir,
            "mbps.csv",
            "MB/s of large I/O",
            points,
            large_mbps,
        )?);
        written.push(write_matrix(
            dir,
            "lat.csv",
            "mean latency of small I/O in us",
            points,
            small_lat,
        )?);
    }
    Ok(written)
}

fn write_matrix(
    dir: &Path,
    name: &str,
    what: &str,
    points: &[PointResult],
    figure: impl Fn(&PointResult) -> Option<f64>,
) -> anyhow::Result<std::path::PathBuf> {
    let cells: BTreeMap<(usize, usize), Option<f64>> = points
        .iter()
        .filter_map(|p| {
            p.cell
                .map(|c| ((c.large_streams, c.small_outstanding), figure(p)))
        })
        .collect();
    let columns: std::collections::BTreeSet<usize> = cells.keys().map(|k| k.1).collect();
    let rows: std::collections::BTreeSet<usize> = cells.keys().map(|k| k.0).collect();
    let mut out = format!("# {what}\nlarge_streams\\small_outstanding");
    for column in &columns {
        let _ = write!(out, ",{column}");
    }
    out.push('\n');
    for row in &rows {
        let _ = write!(out, "{row}");
        for column in &columns {
            match cells.get(&(*row, *column)).copied().flatten() {
                Some(value) => {
                    let _ = write!(out, ",{value:.2}");
                }
                None => out.push(','),
            }
        }
        out.push('\n');
    }
    let path = dir.join(name);
    std::fs::write(&path, out)?;
    Ok(path)
}

fn write_points_csv(dir: &Path, points: &[PointResult]) -> anyhow::Result<std::path::PathBuf> {
    let path = dir.join("points.csv");
    std::fs::write(&path, points_csv(points))?;
    Ok(path)
}

/// One row per group of every point: the workload's requests, rates and
/// latency percentiles, and strata's CPU per I/O (`points.csv`).
pub fn points_csv(points: &[PointResult]) -> String {
    let mut out = String::from(
        "point,group,rw,block_size_bytes,queue_depth,jobs,window_s,requests,iops,mb_per_s,lat_mean_us,lat_p50_us,lat_p90_us,lat_p99_us,lat_p99_9_us,lat_max_us,cpu_user_us_per_io,cpu_system_us_per_io\n",
    );
    for point in points {
        for group in &point.groups {
            let latency = &group.all.latency;
            let _ = writeln!(
                out,
                "\"{}\",{},{},{},{},{},{:.3},{},{:.2},{:.3},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.3},{:.3}",
                point.name, group.label, group.rw, group.block_size_bytes, group.queue_depth, group.jobs,
                point.window_s, group.all.requests, group.all.iops, group.all.mb_per_s,
                latency.lat_mean_us, latency.lat_p50_us, latency.lat_p90_us, latency.lat_p99_us,
                latency.lat_p99_9_us, latency.lat_max_us, point.cpu.user_us_per_io, point.cpu.system_us_per_io,
            );
        }
    }
    out
}

/// The whole calibration as text: the verdict first, the target, strata's
/// own counts, the device's, each point's checks and errors, the summary
/// and the slowest requests (at most 20).
pub fn report_text(outcome: &CalibrationOutcome, outlier_us: f64) -> String {
    let mut out = String::new();
    for line in outcome.summary.verdict.lines() {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    out.push_str(&describe_target(
        &outcome.target,
        peak_requests_per_s(&outcome.points),
    ));
    if outcome.interrupted {
        let _ = writeln!(
            out,
            "INTERRUPTED: partial result ({} points)",
            outcome.points.len()
        );
    }
    out.push_str(
        "\nWorkload — strata's own count of its requests (IOPS = requests/s, MB/s = 10^6 bytes/s)\n",
    );
    out.push_str(&workload_table(&outcome.points));
    match nfs_sections(&outcome.points) {
        Some(nfs) => out.push_str(&nfs),
        None => {
            out.push_str(
                "\nDevice — /proc/diskstats over the same measured windows (iostat -x \
                 definitions)\n",
            );
            out.push_str(&device_table(&outcome.points));
            out.push_str(
                "\nRequests traced one by one — the target's device (BPF; µs): missed, ends not \
                 traced (in diskstats' count, not in the times), D2C device time, Q2C the block \
                 layer's whole time, strata its own per request, host/IO the difference\n",
            );
            out.push_str(&trace_table(&outcome.points));
        }
    }
    if let Some(kernel) = kernel_nfs_section(&outcome.points) {
        out.push_str(&kernel);
    }
    let batches = batch_table(&outcome.points);
    if !batches.is_empty() {
        out.push_str(
            "\nBatches — each sorted batch timed whole, first request queued to last completed (a \
             statement's time at the device)\n",
        );
        out.push_str(&batches);
    }
    for point in &outcome.points {
        if let Some(verification) = &point.verification {
            let _ = writeln!(out, "  [{}] check: {}", point.name, verification.note);
        }
        for error in &point.errors {
            let _ = writeln!(out, "  [{}] ERROR: {error}", point.name);
        }
    }
    out.push('\n');
    out.push_str(&summary_text(&outcome.summary));
    out.push('\n');
    out.push_str(&outliers_text(&outcome.points, outlier_us, 20));
    out
}

/// The most requests per second any device served at any point.
fn peak_requests_per_s(points: &[PointResult]) -> f64 {
    points
        .iter()
        .flat_map(|point| &point.devices)
        .map(|device| device.r_per_s + device.w_per_s)
        .fold(0.0, f64::max)
}

/// The calibration's outputs: its text, its JSON document and, as CSV,
/// its points; the HTML page is the report of its Recording.
pub fn calibration_output(
    outcome: &CalibrationOutcome,
    options: &ResolvedOptions,
    outlier_us: f64,
) -> strata_output::Output {
    strata_output::Output {
        text: Some(report_text(outcome, outlier_us)),
        json: Some(format!("{}\n", json_document(outcome, options))),
        csv: Some(points_csv(&outcome.points)),
        document: None,
    }
}
