//! How a window's block requests, traced one by one, are shown: each
//! device's percentiles by operation beside /proc/diskstats' count, by the
//! submitters' role, the processes that made them, and the outliers.
//!
//! Not for: computing the figures (`strata_probe::blocktrace::shared`).

use std::fmt::Write as _;
use strata_core::units::format_size;
use strata_recording::run::{
    BlockTraceFigures, DatabaseFigures, RequestSizes, TracedOutlier, TracedOutliers, TracedProcess,
};

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
         requests started and ended, as diskstats counts them; missed: started, and their end \
         not traced (found when the kernel reused the request), in diskstats' count and not \
         in the times; issued: those sent to the driver, whose D2C device time and Q2D queue \
         time are shown, ms)\n",
    );
    if let Some(by) = &traced.traced_by {
        let _ = writeln!(out, "  {by}");
    }
    let _ = writeln!(
        out,
        "  {:<10} {:<9} {:<7} {:>9} {:>9} {:>6} {:>9} {:>8} {:>8} {:>9} {:>8} {:>8} {:>9}",
        "device",
        "role",
        "op",
        "requests",
        "diskstats",
        "missed",
        "issued",
        "D2C p50",
        "D2C p99",
        "D2C p99.9",
        "D2C max",
        "Q2D p50",
        "Q2D p99.9"
    );
    out += &operations_text(traced);
    out += &unfollowed_text(traced);
    out += &sizes_text(traced);
    out += &by_role_text(traced);
    out += &processes_text(&traced.processes);
    if let Some(outliers) = &traced.outliers {
        out += &outliers_text(outliers);
    }
    out
}

/// One row per device and operation: the counts, device and queue time.
fn operations_text(traced: &BlockTraceFigures) -> String {
    let mut out = String::new();
    for device in &traced.devices {
        for op in &device.operations {
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
                "  {:<10} {:<9} {:<7} {:>9} {:>9} {:>6} {:>9} {:>8.3} {:>8.3} {:>9.3} {:>8.3} {:>8} {:>9}",
                device.device,
                device.role,
                op.operation,
                op.requests,
                count_text(op.diskstats_requests),
                count_text(op.ends_missed),
                count_text(op.issued_requests),
                device_time.p50_ms,
                device_time.p99_ms,
                device_time.p999_ms,
                device_time.max_ms,
                queue_p50,
                queue_p999
            );
        }
    }
    out
}

/// The requests the tracer could not follow, where there were any.
fn unfollowed_text(traced: &BlockTraceFigures) -> String {
    let mut out = String::new();
    let unfollowed = &traced.unfollowed;
    let missing = unfollowed.ended_unseen
        + unfollowed.starts_dropped
        + unfollowed.ends_skipped_by_kernel
        + unfollowed.ends_not_seen
        + unfollowed.ends_missed;
    if missing + unfollowed.issues_skipped_by_kernel > 0 {
        let _ = writeln!(
            out,
            "  not in these figures: {} ends missed (on every device), {} ends the kernel skipped \
             (a BPF program already running on that CPU), {} requests ended unseen (in flight \
             when tracing began, or moved by a front merge), {} starts dropped (65,536 in \
             flight), {} ends not seen 2 s after their start; {} issues skipped (no device time)",
            unfollowed.ends_missed,
            unfollowed.ends_skipped_by_kernel,
            unfollowed.ended_unseen,
            unfollowed.starts_dropped,
            unfollowed.ends_not_seen,
            unfollowed.issues_skipped_by_kernel
        );
    }
    out
}

/// A count, or "n/a" where it is not known.
fn count_text(count: Option<u64>) -> String {
    count.map_or("n/a".to_string(), |count| count.to_string())
}

/// Sizes shown as the commonest, most requests first.
const SIZES_SHOWN: usize = 3;

/// Each device's request sizes by operation (as issued: iostat's
/// rareq-sz as a distribution), their bytes beside /proc/diskstats'
/// sectors, and the merges beside its count of them.
fn sizes_text(traced: &BlockTraceFigures) -> String {
    let mut out = String::from(
        "  request sizes as issued (bytes traced vs /proc/diskstats sectors x 512) and merges \
         (a bio or request merged into another):\n",
    );
    let _ = writeln!(
        out,
        "  {:<10} {:<7} {:>11} {:>11} {:>10} {:>9} {:>9} {:>9} {:>7} {:>9}  commonest sizes",
        "device", "op", "bytes", "diskstats", "mean", "p50", "p99", "max", "merges", "diskstats",
    );
    let mut rows = 0;
    let mut discards = false;
    for device in &traced.devices {
        for op in &device.operations {
            let Some(sizes) = op.sizes.as_ref().filter(|sizes| sizes.bytes > 0) else {
                continue;
            };
            let _ = writeln!(
                out,
                "  {:<10} {:<7} {:>11} {:>11} {:>10} {:>9} {:>9} {:>9} {:>7} {:>9}  {}",
                device.device,
                op.operation,
                format_size(sizes.bytes),
                sizes.diskstats_bytes.map_or("n/a".to_string(), format_size),
                format_size(sizes.mean_bytes.round() as u64),
                format_size(sizes.p50_bytes),
                format_size(sizes.p99_bytes),
                format_size(sizes.max_bytes),
                count_text(op.merges),
                count_text(op.diskstats_merges),
                commonest_sizes(sizes)
            );
            rows += 1;
            discards |= op.operation == "discard";
        }
    }
    if discards {
        out += "  (a discard merged into a request passes no tracepoint: its merges are /proc/diskstats' alone)\n";
    }
    match rows {
        0 => String::new(),
        _ => out,
    }
}

/// "8 KiB 97.1%, 16 KiB 2.0%": the sizes most requests had.
fn commonest_sizes(sizes: &RequestSizes) -> String {
    let total: u64 = sizes.buckets.iter().map(|(_, count)| count).sum();
    let mut commonest = sizes.buckets.clone();
    commonest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    commonest
        .iter()
        .take(SIZES_SHOWN)
        .map(|(bucket, count)| {
            let (lowest, _) = strata_core::log_linear::bucket_range(*bucket);
            let share = *count as f64 * 100.0 / total.max(1) as f64;
            format!("{} {share:.1}%", format_size(lowest))
        })
        .collect::<Vec<_>>()
        .join(", ")
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

/// Each role's own read and write time by PostgreSQL (pg_stat_io's
/// `read_time` and `write_time` per backend type, with track_io_timing;
/// 16 and later) beside the same role's block requests on the run's
/// devices (traced): the database's time per operation, the block layer's
/// per request, and for reads the difference, what the host adds. Nothing
/// where pg_stat_io gives no times.
pub fn database_time_by_role_text(
    traced: &BlockTraceFigures,
    database: Option<&DatabaseFigures>,
) -> String {
    let Some(database) = database else {
        return String::new();
    };
    let unit = match database.read_requests {
        Some(_) => "request",
        None => "8 KiB block",
    };
    let mut out = format!(
        "  each role's own I/O time (pg_stat_io, per {unit}) beside its block requests (traced, \
         queue + device per request; a client backend's reads with its io workers'), ms:\n  {:<40} {:<6} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        "role", "op", "database", "ms each", "requests", "ms each", "host's"
    );
    let mut rows = 0;
    for (role, operation, requests, block_ms) in traced_by_role(traced) {
        let key = role.replace(' ', "_");
        let (count, time) = match operation.as_str() {
            "read" => ("reads", "read_time_ms"),
            "write" => ("writes", "write_time_ms"),
            _ => continue,
        };
        let counter = |column: &str| {
            database
                .counters
                .get(&format!("io.{key}.{column}"))
                .copied()
        };
        let (Some(operations), Some(time_ms)) = (counter(count), counter(time)) else {
            continue;
        };
        if operations <= 0.0 || time_ms <= 0.0 {
            continue;
        }
        let database_ms = time_ms / operations;
        let host = match operation.as_str() {
            "read" => format!("{:.3}", database_ms - block_ms),
            _ => "n/a".to_string(),
        };
        let _ = writeln!(
            out,
            "  {:<40} {:<6} {:>10.0} {:>10.3} {:>10} {:>10.3} {:>10}",
            role, operation, operations, database_ms, requests, block_ms, host
        );
        rows += 1;
    }
    match rows {
        0 => String::new(),
        _ => out,
    }
}

/// (role, operation, requests, mean queue + device ms) over the devices,
/// for the roles given. An io worker's reads are counted with the client
/// backends' (pg_stat_io counts them for the process that asked).
fn traced_by_role(traced: &BlockTraceFigures) -> Vec<(String, String, u64, f64)> {
    let mut sums: std::collections::BTreeMap<(String, String), (u64, f64)> = Default::default();
    for role in traced.devices.iter().flat_map(|device| &device.by_role) {
        let name = match (role.role.as_str(), role.operation.as_str()) {
            ("", _) => continue,
            ("io worker", "read") => "client backend",
            (name, _) => name,
        };
        let queue_ms = role.queue_time.as_ref().map_or(0.0, |queue| queue.mean_ms);
        let entry = sums
            .entry((name.to_string(), role.operation.clone()))
            .or_default();
        entry.0 += role.requests;
        entry.1 += (queue_ms + role.device_time.mean_ms) * role.requests as f64;
    }
    sums.into_iter()
        .map(|((role, operation), (requests, weighted_ms))| {
            (
                role,
                operation,
                requests,
                weighted_ms / requests.max(1) as f64,
            )
        })
        .collect()
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
        "  {:<10} {:<40} {:<7} {:>9} {:>8} {:>8} {:>8} {:>9} {:>8} {:>8} {:>9}",
        "device",
        "submitter",
        "op",
        "requests",
        "merges",
        "D2C p50",
        "D2C p99",
        "D2C p99.9",
        "Q2D p50",
        "Q2D p99",
        "size p50"
    );
    let mut rows = 0;
    for device in &traced.devices {
        for role in &device.by_role {
            let queue = |pick: fn(&strata_recording::run::LatencyPercentiles) -> f64| {
                role.queue_time
                    .as_ref()
                    .map_or("n/a".to_string(), |queue| format!("{:.3}", pick(queue)))
            };
            let size = role
                .sizes
                .as_ref()
                .map_or("n/a".to_string(), |sizes| format_size(sizes.p50_bytes));
            let _ = writeln!(
                out,
                "  {:<10} {:<40} {:<7} {:>9} {:>8} {:>8.3} {:>8.3} {:>9.3} {:>8} {:>8} {:>9}",
                device.device,
                role_label(&role.role),
                role.operation,
                role.requests,
                role.merges,
                role.device_time.p50_ms,
                role.device_time.p99_ms,
                role.device_time.p999_ms,
                queue(|queue| queue.p50_ms),
                queue(|queue| queue.p99_ms),
                size,
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

/// The session whose server process or thread submitted an outlier (with
/// its schema where its statement was kept), and what it ran across it:
/// the statement, or for another process or connection the query the
/// database showed (with the thread, where not the process's own); else
/// empty.
fn session_text(outlier: &TracedOutlier) -> String {
    let ran = outlier.ran_across();
    match (outlier.session, &outlier.statement, ran) {
        (Some(session), Some(statement), Some(ran)) => {
            format!("session {session} ({}): {ran}", statement.schema)
        }
        (Some(session), _, _) => format!("session {session}"),
        (None, _, Some(query)) => match outlier.thread {
            Some(thread) => format!("query (thread {thread}): {query}"),
            None => format!("query: {query}"),
        },
        (None, _, None) => String::new(),
    }
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
            "  {:>9} {:>8} {:<16} {:<40} {:<10} {:<7} {:>12} {:>10} {:>10} {:>10}  relation (file); session, statement or query",
            "ended s",
            "pid",
            "command",
            "role",
            "device",
            "op",
            "sector",
            "bytes",
            "Q2D ms",
            "D2C ms",
        );
        let mut longest: Vec<_> = outliers.listed.iter().collect();
        longest.sort_by(|a, b| (b.queue_ms + b.device_ms).total_cmp(&(a.queue_ms + a.device_ms)));
        for outlier in longest.into_iter().take(OUTLIERS_SHOWN) {
            let object = match (&outlier.relation, &outlier.file) {
                (Some(relation), Some(file)) => format!("{relation} ({file})"),
                (None, Some(file)) => format!("({file})"),
                _ => String::new(),
            };
            let object = [object, session_text(outlier)]
                .into_iter()
                .filter(|part| !part.is_empty())
                .collect::<Vec<_>>()
                .join("; ");
            let _ = writeln!(
                out,
                "  {:>9.3} {:>8} {:<16} {:<40} {:<10} {:<7} {:>12} {:>10} {:>10.3} {:>10.3}  {object}",
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

#[cfg(test)]
mod tests {
    use super::*;
    use strata_recording::run::{LatencyPercentiles, TracedDevice, TracedRoleOperation};

    fn role(role: &str, operation: &str, requests: u64, device_ms: f64) -> TracedRoleOperation {
        TracedRoleOperation {
            role: role.to_string(),
            operation: operation.to_string(),
            requests,
            device_time: LatencyPercentiles {
                mean_ms: device_ms,
                ..LatencyPercentiles::default()
            },
            ..TracedRoleOperation::default()
        }
    }

    #[test]
    fn a_roles_database_time_is_set_beside_its_traced_requests() {
        let traced = BlockTraceFigures {
            devices: vec![TracedDevice {
                by_role: vec![
                    role("client backend", "read", 100, 0.2),
                    role("io worker", "read", 300, 0.1),
                    role("checkpointer", "write", 10, 0.5),
                    role("", "write", 50, 0.5),
                ],
                ..TracedDevice::default()
            }],
            ..BlockTraceFigures::default()
        };
        let counters = [
            ("io.client_backend.reads", 400.0),
            ("io.client_backend.read_time_ms", 100.0),
            ("io.checkpointer.writes", 20.0),
            ("io.checkpointer.write_time_ms", 2.0),
        ];
        let database = DatabaseFigures {
            read_requests: Some(400.0),
            counters: counters.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..DatabaseFigures::default()
        };
        let text = database_time_by_role_text(&traced, Some(&database));
        // 400 reads in 100 ms: 0.25 ms each; the block layer's 0.125 ms
        // (100 × 0.2 + 300 × 0.1 over 400): 0.125 ms in the host.
        let backend = text
            .lines()
            .find(|line| line.trim_start().starts_with("client backend"))
            .unwrap();
        let fields: Vec<&str> = backend.split_whitespace().collect();
        assert_eq!(
            fields[2..],
            ["read", "400", "0.250", "400", "0.125", "0.125"],
            "{text}"
        );
        let checkpointer = text
            .lines()
            .find(|line| line.contains("checkpointer"))
            .unwrap();
        assert!(checkpointer.ends_with("n/a"), "{text}");
        assert!(text.contains("per request)"), "{text}");
        assert_eq!(text.lines().count(), 4, "{text}");
        assert_eq!(database_time_by_role_text(&traced, None), "");
    }
}
