//! How a window's block requests, traced one by one, are shown: each
//! device's percentiles by operation beside /proc/diskstats' count, by the
//! submitters' role, the processes that made them, and the outliers.
//!
//! Not for: computing the figures (`strata_probe::blocktrace::shared`).

use std::fmt::Write as _;
use strata_core::units::format_size;
use strata_recording::run::{BlockTraceFigures, DatabaseFigures, TracedOutliers, TracedProcess};

/// Processes listed, most requests first.
const PROCESSES_SHOWN: usize = 10;
/// Outliers listed, longest first.
const OUTLIERS_SHOWN: usize = 20;

/// Each device's requests traced one by one: device time (D2C) and queue
/// time (Q2D) percentiles by operation, the count beside diskstats'.
pub fn text(traced: &BlockTraceFigures) -> String {
    if let Some(why) = &traced.unavailable {
        return format!("  requests not traced one by one: {why}\n");
    }
    let mut out = String::from(
        "\nBlock requests, one by one (BPF: block_io_start -> block_rq_issue -> block_io_done; \
         D2C device time, Q2D queue time, ms)\n",
    );
    let _ = writeln!(
        out,
        "  {:<10} {:<9} {:<7} {:>9} {:>9} {:>8} {:>8} {:>9} {:>8} {:>8} {:>9}",
        "device",
        "role",
        "op",
        "requests",
        "diskstats",
        "D2C p50",
        "D2C p99",
        "D2C p99.9",
        "D2C max",
        "Q2D p50",
        "Q2D p99.9"
    );
    for device in &traced.devices {
        for op in &device.operations {
            let diskstats = op
                .diskstats_requests
                .map_or("n/a".to_string(), |count| count.to_string());
            let (queue_p50, queue_p999) =
                op.queue_time
                    .as_ref()
                    .map_or(("n/a".to_string(), "n/a".to_string()), |queue| {
                        (
                            format!("{:.3}", queue.p50_ms),
                            format!("{:.3}", queue.p999_ms),
                        )
                    });
            let device_time = &op.device_time;
            let _ = writeln!(
                out,
                "  {:<10} {:<9} {:<7} {:>9} {:>9} {:>8.3} {:>8.3} {:>9.3} {:>8.3} {:>8} {:>9}",
                device.device,
                device.role,
                op.operation,
                op.requests,
                diskstats,
                device_time.p50_ms,
                device_time.p99_ms,
                device_time.p999_ms,
                device_time.max_ms,
                queue_p50,
                queue_p999
            );
        }
    }
    let unfollowed = &traced.unfollowed;
    let missing = unfollowed.ended_unseen
        + unfollowed.starts_dropped
        + unfollowed.ends_skipped_by_kernel
        + unfollowed.ends_not_seen;
    if missing + unfollowed.issues_skipped_by_kernel > 0 {
        let _ = writeln!(
            out,
            "  not in these figures: {} ends the kernel skipped (a BPF program already running on \
             that CPU), {} requests ended unseen (in flight when tracing began, or moved by a \
             front merge), {} starts dropped (65,536 in flight), {} ends not seen 2 s after their \
             start; {} issues skipped (no device time)",
            unfollowed.ends_skipped_by_kernel,
            unfollowed.ended_unseen,
            unfollowed.starts_dropped,
            unfollowed.ends_not_seen,
            unfollowed.issues_skipped_by_kernel
        );
    }
    out += &by_role_text(traced);
    out += &processes_text(&traced.processes);
    if let Some(outliers) = &traced.outliers {
        out += &outliers_text(outliers);
    }
    out
}

/// PostgreSQL's own read time beside its backends' reads at the block
/// layer (traced): what the host adds to each read — the system call, the
/// page cache, the wake-up — stated; nothing without PostgreSQL's read
/// time (track_io_timing) or traced backend reads.
pub fn host_share_text(traced: &BlockTraceFigures, database: Option<&DatabaseFigures>) -> String {
    let Some(database) = database.filter(|database| database.block_read_time_ms > 0.0) else {
        return String::new();
    };
    let reads: Vec<&TracedProcess> = traced
        .processes
        .iter()
        .filter(|process| process.role == "client backend" && process.operation == "read")
        .collect();
    let requests: u64 = reads.iter().map(|process| process.requests).sum();
    if requests == 0 {
        return String::new();
    }
    let weighted = |time: fn(&TracedProcess) -> f64| {
        reads
            .iter()
            .map(|process| time(process) * process.requests as f64)
            .sum::<f64>()
            / requests as f64
    };
    let (queue_ms, device_ms) = (
        weighted(|process| process.queue_time_mean_ms),
        weighted(|process| process.device_time_mean_ms),
    );
    let (per, count, unit) = match database.read_requests.filter(|count| *count > 0.0) {
        Some(count) => ("read request", count, "read requests, pg_stat_io"),
        None => (
            "8 KiB block",
            database.blocks_read,
            "blocks, pg_stat_database: a read of several blocks counts several",
        ),
    };
    if count <= 0.0 {
        return String::new();
    }
    let database_ms = database.block_read_time_ms / count;
    format!(
        "  the host's share of a backend read: PostgreSQL timed {database_ms:.3} ms per {per} \
         (blk_read_time over {count:.0} {unit}), the block layer {:.3} ms per request (traced, {requests} requests: \
         queue {queue_ms:.3} + device {device_ms:.3}): {:.3} ms in the host (the system call, the \
         page cache, the wake-up)\n",
        queue_ms + device_ms,
        database_ms - queue_ms - device_ms
    )
}

fn role_label(role: &str) -> &str {
    match role {
        "" => "(no role given)",
        role => role,
    }
}

/// Each device's requests by the role of the process that submitted them.
fn by_role_text(traced: &BlockTraceFigures) -> String {
    let mut out = String::from("  by the submitter's role:\n");
    let _ = writeln!(
        out,
        "  {:<10} {:<40} {:<7} {:>9} {:>8} {:>8} {:>9} {:>8} {:>8}",
        "device",
        "submitter",
        "op",
        "requests",
        "D2C p50",
        "D2C p99",
        "D2C p99.9",
        "Q2D p50",
        "Q2D p99"
    );
    let mut rows = 0;
    for device in &traced.devices {
        for role in &device.by_role {
            let queue = |pick: fn(&strata_recording::run::LatencyPercentiles) -> f64| {
                role.queue_time
                    .as_ref()
                    .map_or("n/a".to_string(), |queue| format!("{:.3}", pick(queue)))
            };
            let _ = writeln!(
                out,
                "  {:<10} {:<40} {:<7} {:>9} {:>8.3} {:>8.3} {:>9.3} {:>8} {:>8}",
                device.device,
                role_label(&role.role),
                role.operation,
                role.requests,
                role.device_time.p50_ms,
                role.device_time.p99_ms,
                role.device_time.p999_ms,
                queue(|queue| queue.p50_ms),
                queue(|queue| queue.p99_ms),
            );
            rows += 1;
        }
    }
    match rows {
        0 => String::new(),
        _ => out,
    }
}

fn processes_text(processes: &[TracedProcess]) -> String {
    if processes.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "  by process (traced, exact; {} of {} shown, most requests first):\n",
        processes.len().min(PROCESSES_SHOWN),
        processes.len()
    );
    let _ = writeln!(
        out,
        "  {:>8} {:<16} {:<40} {:<10} {:<7} {:>9} {:>10} {:>13} {:>13}",
        "pid", "command", "role", "device", "op", "requests", "bytes", "D2C mean ms", "Q2D mean ms"
    );
    for process in processes.iter().take(PROCESSES_SHOWN) {
        let _ = writeln!(
            out,
            "  {:>8} {:<16} {:<40} {:<10} {:<7} {:>9} {:>10} {:>13.3} {:>13.3}",
            process.pid,
            process.command,
            role_label(&process.role),
            process.device,
            process.operation,
            process.requests,
            format_size(process.bytes),
            process.device_time_mean_ms,
            process.queue_time_mean_ms
        );
    }
    out
}

/// The Linux `V$KERNEL_IO_OUTLIER`: the requests over their threshold, or
/// that there were none.
fn outliers_text(outliers: &TracedOutliers) -> String {
    let mut out = format!(
        "  outliers ({}; the kernel kept requests from {:.3} ms):",
        outliers.rule, outliers.kept_from_ms
    );
    if outliers.listed.is_empty() {
        let _ = writeln!(out, " none");
    } else {
        let _ = writeln!(out, " {}", outliers.listed.len());
        let _ = writeln!(
            out,
            "  {:>9} {:>8} {:<16} {:<40} {:<10} {:<7} {:>12} {:>10} {:>10} {:>10}",
            "ended s",
            "pid",
            "command",
            "role",
            "device",
            "op",
            "sector",
            "bytes",
            "Q2D ms",
            "D2C ms"
        );
        let mut longest: Vec<_> = outliers.listed.iter().collect();
        longest.sort_by(|a, b| (b.queue_ms + b.device_ms).total_cmp(&(a.queue_ms + a.device_ms)));
        for outlier in longest.into_iter().take(OUTLIERS_SHOWN) {
            let _ = writeln!(
                out,
                "  {:>9.3} {:>8} {:<16} {:<40} {:<10} {:<7} {:>12} {:>10} {:>10.3} {:>10.3}",
                outlier.ended_s,
                outlier.pid,
                outlier.command,
                role_label(&outlier.role),
                outlier.device,
                outlier.operation,
                outlier.sector,
                outlier.bytes,
                outlier.queue_ms,
                outlier.device_ms
            );
        }
    }
    if outliers.overwritten > 0 {
        let _ = writeln!(
            out,
            "  {} more outliers were written over in the kernel's ring (4,096) before they were read",
            outliers.overwritten
        );
    }
    out
}
