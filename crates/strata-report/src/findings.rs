//! Findings: conclusions that connect the layers, each with its evidence.
//!
//! Every source (a Recording's window, an AWR report) fills one
//! [`WindowFigures`] with what it has; [`evaluate`] returns the findings whose
//! evidence is present. A figure a source does not have is `None`, and a
//! finding that needs it stays silent: a finding never rests on a zero that
//! was not measured.
//!
//! The ids are stable (they are the JSON's `findings[].id`):
//! `commit_waits_decomposed`, `blocks_not_requests`, `buffered_not_physical`,
//! `slow_ios`, `device_saturation`, `storage_on_network`,
//! `small_sync_writes_on_stripe`, `request_smaller_than_stripe`,
//! `temp_spills`, `not_steady`, `cpu_bound`, `rotation_flag_contradicted`,
//! `commit_tail_against_the_wal_device`, `slow_requests_not_the_workloads`.
//!
//! Not for: reading sources, or formatting beyond the evidence's own text.

use strata_output::document::{format_number, Evidence, Finding, Severity};

mod commit_tail;
mod outlier_submitters;
pub use commit_tail::CommitTail;
pub use outlier_submitters::OutlierSubmitters;

/// Everything the findings look at, for one window, from any source.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowFigures {
    /// Length of the window, seconds.
    pub window_s: f64,
    /// The database's block size in bytes (8192 for PostgreSQL, the
    /// report's for Oracle); `None` for storage-only sources.
    pub block_size_bytes: Option<f64>,
    pub database: DatabaseIo,
    /// The devices the database (or calibrate's target) uses, physical ones
    /// only (a disk is never counted with its partitions).
    pub devices: Vec<DeviceWindow>,
    pub network: Option<NetworkIo>,
    pub commit: Option<CommitFigures>,
    pub cpu: Option<CpuEvidence>,
    pub temp: Option<TempFigures>,
    /// The window's main rate second by second (loops/s, device IOPS), for
    /// the steadiness finding.
    pub steadiness: Option<RateSeries>,
    pub outliers: Option<OutlierFigures>,
    /// A run's listed block request outliers, by who submitted them.
    pub outlier_submitters: Option<OutlierSubmitters>,
}

/// The database's own read counters over the window (totals, not rates).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DatabaseIo {
    /// Blocks read from outside the database's cache: PostgreSQL
    /// `blks_read`, Oracle `physical reads`.
    pub blocks_read: Option<f64>,
    /// Read requests as the database counts them: Oracle `physical read IO
    /// requests`, PostgreSQL 18 `pg_stat_io.reads`.
    pub read_requests: Option<f64>,
    /// Bytes the database read, when it counts them.
    pub read_bytes: Option<f64>,
    /// The database reads through the OS page cache (PostgreSQL, buffered
    /// InnoDB), so a device can see fewer reads than the database counts.
    pub through_page_cache: bool,
    /// Multiblock reads (scans) happened in the window.
    pub scans: bool,
}

/// One physical device over the window (totals, not rates).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceWindow {
    pub name: String,
    /// `data`, `wal`, `data+wal`, `target`.
    pub role: String,
    /// What sysfs says; virtual disks often say `true`.
    pub rotational: Option<bool>,
    /// The md array this device is, when it is a striped one.
    pub stripe: Option<Stripe>,
    pub read_requests: f64,
    pub read_bytes: f64,
    pub write_requests: f64,
    pub write_bytes: f64,
    pub util_pct: Option<f64>,
    /// Average number of requests in the device's queue (iostat aqu-sz).
    pub queue_size: Option<f64>,
    /// Average time a request took, queue included (iostat await), ms.
    pub await_ms: Option<f64>,
    /// Busy time per request (iostat's old svctm), ms.
    pub service_time_ms: Option<f64>,
}

impl DeviceWindow {
    /// The average read request's size, KiB (iostat's rareq-sz); `None`
    /// without reads.
    pub fn read_request_kib(&self) -> Option<f64> {
        (self.read_requests > 0.0).then(|| self.read_bytes / self.read_requests / 1024.0)
    }
}

/// A striped md array's geometry.
#[derive(Debug, Clone, PartialEq)]
pub struct Stripe {
    /// md's level: `raid0`, `raid10`, `raid5`, `raid6`, …
    pub level: String,
    pub chunk_bytes: f64,
    pub member_disks: u32,
}

/// Network-side I/O over the window (totals).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetworkIo {
    /// Bytes the NFS client read (`/proc/self/mountstats` READ bytes).
    pub nfs_read_bytes: Option<f64>,
    /// Bytes all NICs received.
    pub nic_receive_bytes: Option<f64>,
}

/// What a commit waited for, on average over the window.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitFigures {
    pub commits: f64,
    /// The average commit wait the sessions saw, ms (strata's COMMIT latency,
    /// Oracle's `log file sync` average).
    pub commit_avg_ms: f64,
    /// Where `commit_avg_ms` comes from, as the reader knows it.
    pub commit_label: String,
    /// The average time of one log write as storage served it, ms
    /// (PostgreSQL: WAL write + sync time per sync; Oracle: `log file
    /// parallel write` average).
    pub log_write_avg_ms: Option<f64>,
    pub log_write_label: String,
    /// The commits' p99 beside the WAL device's traced p99, where a run
    /// traced its block requests.
    pub tail: Option<CommitTail>,
}

/// The host's CPU over the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuEvidence {
    pub cpus: f64,
    pub idle_pct: Option<f64>,
    /// Average of /proc/stat's procs_running over the window's samples.
    pub procs_running_avg: Option<f64>,
    /// Time the database's processes waited for a CPU (schedstat run
    /// delay), ms per second of window, summed over the processes.
    pub run_delay_ms_per_s: Option<f64>,
    /// PSI cpu "some": share of the window in which some task waited for a
    /// CPU, percent.
    pub psi_cpu_some_pct: Option<f64>,
}

/// Temporary files the database wrote in the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TempFigures {
    pub files: f64,
    pub bytes: f64,
}

/// A per-second rate over the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RateSeries {
    /// What is counted, with its unit (`loops/s`, `device read requests/s`).
    pub name: String,
    pub values: Vec<f64>,
}

/// I/Os slower than a threshold, and device await spikes over it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutlierFigures {
    pub threshold_ms: f64,
    /// Individual I/Os (calibrate) or statements (run) over the threshold,
    /// when the source records them.
    pub count: Option<u64>,
    /// `count` and `worst_ms` are a run's statements, not I/Os.
    pub statements: bool,
    pub worst_ms: Option<f64>,
    /// Seconds in which a device's average await went over the threshold.
    pub device_spikes: Vec<AwaitSpike>,
}

/// One second in which a device's average await exceeded the threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct AwaitSpike {
    pub t_s: f64,
    pub device: String,
    pub await_ms: f64,
}

pub use strata_recording::run::{ABSORBED_WARNING_PCT, CPU_BOUND_IDLE_PCT};
/// Blocks per request from which a "read" count is clearly not a request count.
pub const BLOCKS_PER_REQUEST_NOTICE: f64 = 1.25;
/// Utilization from which a device counts as saturated.
pub const SATURATED_UTIL_PCT: f64 = 90.0;
pub use strata_recording::device::ROTATING_DISK_IOPS_CEILING;
/// How far the first or last tenth of a window may stray from its middle.
pub const STEADY_TOLERANCE_PCT: f64 = 20.0;

/// The findings whose evidence is present in `figures`, in the order of
/// the ids above.
pub fn evaluate(figures: &WindowFigures) -> Vec<Finding> {
    let rules: [fn(&WindowFigures) -> Option<Finding>; 14] = [
        commit_waits_decomposed,
        blocks_not_requests,
        buffered_not_physical,
        slow_ios,
        device_saturation,
        storage_on_network,
        small_sync_writes_on_stripe,
        request_smaller_than_stripe,
        temp_spills,
        not_steady,
        cpu_bound,
        rotation_flag_contradicted,
        commit_tail::commit_tail_against_the_wal_device,
        outlier_submitters::slow_requests_not_the_workloads,
    ];
    rules.iter().filter_map(|rule| rule(figures)).collect()
}

/// A finding from its parts; every finding module builds them this way.
pub(crate) fn finding(
    id: &str,
    severity: Severity,
    title: String,
    evidence: Vec<Evidence>,
    why: &str,
) -> Finding {
    Finding {
        id: id.to_string(),
        severity,
        title,
        evidence,
        why: why.to_string(),
    }
}

fn per_s(total: f64, window_s: f64) -> f64 {
    if window_s > 0.0 {
        total / window_s
    } else {
        f64::NAN
    }
}

fn device_read_totals(figures: &WindowFigures) -> Option<(f64, f64)> {
    if figures.devices.is_empty() {
        return None;
    }
    let requests = figures.devices.iter().map(|d| d.read_requests).sum();
    let bytes = figures.devices.iter().map(|d| d.read_bytes).sum();
    Some((requests, bytes))
}

/// Finding 1: the average commit wait against what storage took for one log
/// write; the rest is the log writer's and the scheduler's.
fn commit_waits_decomposed(figures: &WindowFigures) -> Option<Finding> {
    let commit = figures.commit.as_ref()?;
    let log_write_ms = commit.log_write_avg_ms?;
    if commit.commits <= 0.0 || commit.commit_avg_ms <= 0.0 {
        return None;
    }
    if log_write_ms > commit.commit_avg_ms {
        return Some(group_commit(commit, log_write_ms));
    }
    let storage_share = (log_write_ms / commit.commit_avg_ms).min(1.0);
    let rest_ms = (commit.commit_avg_ms - log_write_ms).max(0.0);
    let mut evidence = vec![
        Evidence::new(&commit.commit_label, commit.commit_avg_ms, 3, "ms"),
        Evidence::new(&commit.log_write_label, log_write_ms, 3, "ms"),
        Evidence::new("the rest (not log I/O)", rest_ms, 3, "ms"),
        Evidence::new("share explained by log I/O", storage_share * 100.0, 0, "%"),
        Evidence::new("commits", commit.commits, 0, "commits"),
    ];
    if storage_share >= 0.5 {
        let title = format!(
            "Commit waits are mostly log I/O: {:.0}% of the average commit",
            storage_share * 100.0
        );
        let why = "A faster log device (lower write and sync latency) would shorten commits.";
        return Some(finding(
            "commit_waits_decomposed",
            Severity::Info,
            title,
            evidence,
            why,
        ));
    }
    evidence.extend(run_queue_evidence(figures));
    let title = format!(
        "Commit waits are mostly not storage: log I/O explains {:.0}% of the average commit",
        storage_share * 100.0
    );
    let why = "Storage explains less than half of each commit wait; the rest is the log writer \
               and the sessions waiting for a CPU, so a faster disk would not fix it.";
    Some(finding(
        "commit_waits_decomposed",
        Severity::Warning,
        title,
        evidence,
        why,
    ))
}

/// The log write outlasts the commit wait: the averages cannot be split.
fn group_commit(commit: &CommitFigures, log_write_ms: f64) -> Finding {
    let evidence = vec![
        Evidence::new(&commit.commit_label, commit.commit_avg_ms, 3, "ms"),
        Evidence::new(&commit.log_write_label, log_write_ms, 3, "ms"),
        Evidence::new("commits", commit.commits, 0, "commits"),
    ];
    let title = format!(
        "The average log write ({log_write_ms:.3} ms) is longer than the average commit wait \
         ({:.3} ms): commits share log writes",
        commit.commit_avg_ms
    );
    let why = "One log write carries the redo of many commits (group commit), and a commit that \
               arrives while a write is under way waits for only part of it, so the averages \
               cannot say what share of a commit is log I/O. Compare the log write with the log \
               device's service time; a slow log write still bounds commit latency under load.";
    finding(
        "commit_waits_decomposed",
        Severity::Info,
        title,
        evidence,
        why,
    )
}

fn run_queue_evidence(figures: &WindowFigures) -> Vec<Evidence> {
    let Some(cpu) = figures.cpu.as_ref() else {
        return Vec::new();
    };
    let mut evidence = vec![Evidence::new("CPUs", cpu.cpus, 0, "CPUs")];
    if let Some(running) = cpu.procs_running_avg {
        evidence.push(Evidence::new(
            "runnable tasks (procs_running, average)",
            running,
            1,
            "tasks",
        ));
    }
    if let Some(delay) = cpu.run_delay_ms_per_s {
        evidence.push(Evidence::new(
            "database processes' run-queue delay",
            delay,
            1,
            "ms/s",
        ));
    }
    if let Some(psi) = cpu.psi_cpu_some_pct {
        evidence.push(Evidence::new(
            "PSI cpu some (a task waited for a CPU)",
            psi,
            1,
            "%",
        ));
    }
    if let Some(idle) = cpu.idle_pct {
        evidence.push(Evidence::new("host idle", idle, 1, "%"));
    }
    evidence
}

/// Finding 2: a "read" count that counts blocks is not a request count.
fn blocks_not_requests(figures: &WindowFigures) -> Option<Finding> {
    let block_size = figures.block_size_bytes?;
    let (requests, blocks, layer) = match figures.database.read_requests {
        Some(requests) => (requests, figures.database.blocks_read?, "database"),
        None => {
            let (requests, bytes) = device_read_totals(figures)?;
            (requests, bytes / block_size, "devices")
        }
    };
    if requests <= 0.0 || blocks / requests < BLOCKS_PER_REQUEST_NOTICE {
        return None;
    }
    let bytes = figures.database.read_bytes.filter(|_| layer == "database");
    let bytes = bytes.unwrap_or(blocks * block_size);
    let window_s = figures.window_s;
    let request_kib = bytes / requests / 1024.0;
    let title = format!(
        "Blocks are not requests: {} read requests/s of {:.0} KiB = {} blocks/s, {} MB/s ({layer})",
        format_number(per_s(requests, window_s), 0),
        request_kib,
        format_number(per_s(blocks, window_s), 0),
        format_number(per_s(bytes, window_s) / 1e6, 1),
    );
    let evidence = vec![
        Evidence::new("read requests", per_s(requests, window_s), 0, "requests/s"),
        Evidence::new("blocks read", per_s(blocks, window_s), 0, "blocks/s"),
        Evidence::new("blocks per request", blocks / requests, 2, "blocks"),
        Evidence::new("average read request", request_kib, 1, "KiB"),
        Evidence::new("read throughput", per_s(bytes, window_s) / 1e6, 1, "MB/s"),
    ];
    let why = "A figure labelled \"reads\" that counts blocks overstates IOPS by the blocks per \
               request; storage is sized in requests/s and MB/s.";
    Some(finding(
        "blocks_not_requests",
        Severity::Info,
        title,
        evidence,
        why,
    ))
}

/// Finding 3: database block reads that no device saw came from the page cache.
fn buffered_not_physical(figures: &WindowFigures) -> Option<Finding> {
    if !figures.database.through_page_cache {
        return None;
    }
    let database_blocks = figures.database.blocks_read?;
    let block_size = figures.block_size_bytes?;
    let (_, device_bytes) = device_read_totals(figures)?;
    if database_blocks <= 0.0 {
        return None;
    }
    let device_blocks = device_bytes / block_size;
    let absorbed = (database_blocks - device_blocks).max(0.0);
    let absorbed_pct = absorbed / database_blocks * 100.0;
    if absorbed_pct <= ABSORBED_WARNING_PCT {
        return None;
    }
    let title = format!(
        "Buffered, not physical: {absorbed_pct:.1}% of the database's block reads never reached a device"
    );
    let evidence = vec![
        Evidence::new("database blocks read", database_blocks, 0, "blocks"),
        Evidence::new(
            "device reads, in blocks' worth of bytes",
            device_blocks,
            0,
            "blocks",
        ),
        Evidence::new("absorbed by the page cache", absorbed, 0, "blocks"),
        Evidence::new("absorbed share", absorbed_pct, 1, "%"),
    ];
    let why =
        "Above 10% the result measures the OS page cache, not the storage: it is a cache result.";
    Some(finding(
        "buffered_not_physical",
        Severity::Warning,
        title,
        evidence,
        why,
    ))
}

/// Finding 4: individual I/Os and device seconds over the outlier threshold.
fn slow_ios(figures: &WindowFigures) -> Option<Finding> {
    let outliers = figures.outliers.as_ref()?;
    let count = outliers.count.unwrap_or(0);
    if count == 0 && outliers.device_spikes.is_empty() {
        return None;
    }
    let (items, item) = match outliers.statements {
        true => ("statements", "statement"),
        false => ("I/Os", "I/O"),
    };
    let decimals = if outliers.threshold_ms < 1.0 { 3 } else { 1 };
    let mut evidence = vec![Evidence::new(
        "threshold",
        outliers.threshold_ms,
        decimals,
        "ms",
    )];
    if count > 0 {
        evidence.push(Evidence::new(
            format!("{items} over the threshold"),
            count as f64,
            0,
            items,
        ));
    }
    if let Some(worst) = outliers.worst_ms {
        evidence.push(Evidence::new(format!("slowest {item}"), worst, 1, "ms"));
    }
    if let Some(spike) = outliers
        .device_spikes
        .iter()
        .max_by(|a, b| a.await_ms.total_cmp(&b.await_ms))
    {
        evidence.push(Evidence::new(
            "seconds with a device await over the threshold",
            outliers.device_spikes.len() as f64,
            0,
            "s",
        ));
        evidence.push(Evidence::new(
            format!(
                "worst device await ({} at {:.0} s)",
                spike.device, spike.t_s
            ),
            spike.await_ms,
            1,
            "ms",
        ));
    }
    let title = format!("Slow {items}: over {} ms", ms_text(outliers.threshold_ms));
    let why = match outliers.statements {
        true => {
            "Averages hide these; a few very slow statements stall their sessions: beside the \
             device's slow seconds they say whether the storage or the database made them slow."
        }
        false => {
            "Averages hide these; a few very slow I/Os stall the sessions that wait for them \
             and point at a device or path problem."
        }
    };
    Some(finding("slow_ios", Severity::Warning, title, evidence, why))
}

/// Milliseconds as a threshold is read: whole from 100 ms, one decimal from
/// 1 ms, else up to three (0.2, not 0).
pub(crate) fn ms_text(ms: f64) -> String {
    let text = match ms {
        ms if ms >= 100.0 => format!("{ms:.0}"),
        ms if ms >= 1.0 => format!("{ms:.1}"),
        ms => format!("{ms:.3}"),
    };
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}

/// Finding 5: a device busy nearly all the time with requests queued.
fn device_saturation(figures: &WindowFigures) -> Option<Finding> {
    let device = figures
        .devices
        .iter()
        .filter(|device| {
            device
                .util_pct
                .is_some_and(|util| util >= SATURATED_UTIL_PCT)
                && device.queue_size.is_some_and(|queue| queue > 1.0)
        })
        .max_by(|a, b| {
            a.util_pct
                .unwrap_or(0.0)
                .total_cmp(&b.util_pct.unwrap_or(0.0))
        })?;
    let iops = per_s(
        device.read_requests + device.write_requests,
        figures.window_s,
    );
    let mut evidence = vec![
        Evidence::new("utilization (%util)", device.util_pct?, 1, "%"),
        Evidence::new("average queue (aqu-sz)", device.queue_size?, 2, "requests"),
        Evidence::new("requests", iops, 0, "requests/s"),
    ];
    let mut title = format!("Device saturation: {} is busy with a queue", device.name);
    if let Some((queueing_pct, split)) = queueing_split(device) {
        evidence.extend(split);
        title = format!("{title}: {queueing_pct:.0}% of its response time is queueing");
    }
    if device.rotational == Some(true) && iops > ROTATING_DISK_IOPS_CEILING {
        evidence.push(Evidence::new(
            "a rotating disk's random-IOPS ceiling",
            ROTATING_DISK_IOPS_CEILING,
            0,
            "requests/s",
        ));
    }
    let why = "%util near 100 with a queue means requests wait for the device; more load only \
               adds queueing time (a striped or parallel device may still have headroom).";
    Some(finding(
        "device_saturation",
        Severity::Warning,
        title,
        evidence,
        why,
    ))
}

/// Finding 12: a device sysfs calls rotational served more requests per
/// second than a rotating disk can, so the flag is the driver's word (a
/// virtual disk's), not the hardware: the figures are not a spindle's.
fn rotation_flag_contradicted(figures: &WindowFigures) -> Option<Finding> {
    let (device, requests_per_s) = figures
        .devices
        .iter()
        .map(|device| {
            let requests = device.read_requests + device.write_requests;
            (device, per_s(requests, figures.window_s))
        })
        .filter(|(device, requests_per_s)| {
            strata_recording::device::rotation_contradicted(device.rotational, *requests_per_s)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(finding(
        "rotation_flag_contradicted",
        Severity::Info,
        format!(
            "{} is flagged rotational, yet served more requests than a rotating disk can",
            device.name
        ),
        vec![
            Evidence::new("requests", requests_per_s, 0, "requests/s"),
            Evidence::new(
                "a rotating disk's random-IOPS ceiling",
                ROTATING_DISK_IOPS_CEILING,
                0,
                "requests/s",
            ),
        ],
        "sysfs's queue/rotational is what the driver reports, and virtual disks often report \
         rotational: this device is a virtual disk or an array, so read its figures as that, \
         not as one spindle's (the flag still steers the I/O scheduler and readahead).",
    ))
}

/// A device's response time split into service and queueing: the queueing
/// share in percent, and the evidence.
fn queueing_split(device: &DeviceWindow) -> Option<(f64, Vec<Evidence>)> {
    let (await_ms, service_ms) = (device.await_ms?, device.service_time_ms?);
    let queueing_pct = if await_ms > 0.0 {
        ((await_ms - service_ms) / await_ms * 100.0).max(0.0)
    } else {
        0.0
    };
    let evidence = vec![
        Evidence::new("response time (await)", await_ms, 3, "ms"),
        Evidence::new("service time (busy time per request)", service_ms, 3, "ms"),
        Evidence::new("queueing share of the response time", queueing_pct, 0, "%"),
    ];
    Some((queueing_pct, evidence))
}

/// Finding 6: the database read, the local devices did not, the network did.
fn storage_on_network(figures: &WindowFigures) -> Option<Finding> {
    let database_blocks = figures.database.blocks_read?;
    let block_size = figures.block_size_bytes?;
    let network = figures.network.as_ref()?;
    let database_bytes = figures
        .database
        .read_bytes
        .unwrap_or(database_blocks * block_size);
    if database_bytes <= 0.0 {
        return None;
    }
    let device_bytes = device_read_totals(figures).map_or(0.0, |(_, bytes)| bytes);
    if device_bytes >= 0.1 * database_bytes {
        return None;
    }
    let (network_bytes, source) = match (network.nfs_read_bytes, network.nic_receive_bytes) {
        (Some(nfs), _) if nfs >= 0.5 * database_bytes => (nfs, "NFS client reads"),
        (_, Some(nic)) if nic >= 0.5 * database_bytes => (nic, "NIC receive"),
        _ => return None,
    };
    let window_s = figures.window_s;
    let evidence = vec![
        Evidence::new(
            "database reads",
            per_s(database_bytes, window_s) / 1e6,
            1,
            "MB/s",
        ),
        Evidence::new(
            "local device reads",
            per_s(device_bytes, window_s) / 1e6,
            1,
            "MB/s",
        ),
        Evidence::new(source, per_s(network_bytes, window_s) / 1e6, 1, "MB/s"),
    ];
    let title = format!("iostat's blind spot: the reads went over the network ({source})");
    let why = "Local block devices saw almost none of the database's reads while the network \
               carried them: the storage is on the network, read the NFS and NIC figures, not iostat.";
    Some(finding(
        "storage_on_network",
        Severity::Warning,
        title,
        evidence,
        why,
    ))
}

/// md levels that stripe, with the number of members that hold data.
fn data_disks(stripe: &Stripe) -> Option<u32> {
    let members = stripe.member_disks;
    match stripe.level.as_str() {
        "raid0" => Some(members),
        "raid10" => Some(members / 2),
        "raid5" | "raid4" => Some(members.saturating_sub(1)),
        "raid6" => Some(members.saturating_sub(2)),
        _ => None,
    }
    .filter(|disks| *disks >= 2)
}

/// Finding 7: log writes smaller than the stripe unit land on one member.
fn small_sync_writes_on_stripe(figures: &WindowFigures) -> Option<Finding> {
    figures.devices.iter().find_map(|device| {
        let stripe = device.stripe.as_ref()?;
        data_disks(stripe)?;
        if !device.role.contains("wal") || device.write_requests <= 0.0 {
            return None;
        }
        let write_bytes = device.write_bytes / device.write_requests;
        if write_bytes >= stripe.chunk_bytes {
            return None;
        }
        let evidence = vec![
            Evidence::new("average write request", write_bytes / 1024.0, 1, "KiB"),
            Evidence::new(
                "stripe unit (md chunk)",
                stripe.chunk_bytes / 1024.0,
                0,
                "KiB",
            ),
            Evidence::new("members", stripe.member_disks as f64, 0, "disks"),
        ];
        let title = format!(
            "Small sync writes on a stripe: {}'s log writes fit in one {} chunk",
            device.name, stripe.level
        );
        let why = "Each log write smaller than the stripe unit touches one member, and the next \
                   waits for it: the log's ceiling is one disk, however wide the stripe.";
        Some(finding(
            "small_sync_writes_on_stripe",
            Severity::Warning,
            title,
            evidence,
            why,
        ))
    })
}

/// Finding 8: multiblock reads smaller than a full stripe keep members idle.
fn request_smaller_than_stripe(figures: &WindowFigures) -> Option<Finding> {
    const MULTIBLOCK_BYTES: f64 = 32.0 * 1024.0;
    figures.devices.iter().find_map(|device| {
        let stripe = device.stripe.as_ref()?;
        let disks = data_disks(stripe)?;
        if device.role.contains("wal") && !device.role.contains("data")
            || device.read_requests <= 0.0
        {
            return None;
        }
        let read_bytes = device.read_bytes / device.read_requests;
        let stripe_width = stripe.chunk_bytes * disks as f64;
        let multiblock = figures.database.scans || read_bytes >= MULTIBLOCK_BYTES;
        if !multiblock || read_bytes >= stripe_width {
            return None;
        }
        let evidence = vec![
            Evidence::new("average read request", read_bytes / 1024.0, 1, "KiB"),
            Evidence::new(
                "full stripe width (chunk × data disks)",
                stripe_width / 1024.0,
                0,
                "KiB",
            ),
            Evidence::new("data disks", disks as f64, 0, "disks"),
        ];
        let title = format!(
            "Scan requests smaller than {}'s stripe width: {:.0} KiB of {:.0} KiB",
            device.name,
            read_bytes / 1024.0,
            stripe_width / 1024.0
        );
        let why = "A scan request smaller than the full stripe keeps some members idle; raise the \
                   read size (read_ahead_kb, io_combine_limit on PostgreSQL 17+).";
        Some(finding(
            "request_smaller_than_stripe",
            Severity::Info,
            title,
            evidence,
            why,
        ))
    })
}

/// Finding 9: sorts and hashes spilled to temporary files.
fn temp_spills(figures: &WindowFigures) -> Option<Finding> {
    let temp = figures.temp.as_ref()?;
    if temp.files <= 0.0 && temp.bytes <= 0.0 {
        return None;
    }
    let evidence = vec![
        Evidence::new("temporary files", temp.files, 0, "files"),
        Evidence::new("temporary bytes", temp.bytes / 1048576.0, 1, "MiB"),
    ];
    let title = format!(
        "Temp spills: {} temporary files, {:.1} MiB",
        format_number(temp.files, 0),
        temp.bytes / 1048576.0
    );
    let why = "Memory for sorts and hashes (work_mem) is too small for the work, whatever disk \
               the spill lands on.";
    Some(finding(
        "temp_spills",
        Severity::Warning,
        title,
        evidence,
        why,
    ))
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Finding 10: the rate at the start or the end of the window strays from its middle.
fn not_steady(figures: &WindowFigures) -> Option<Finding> {
    let series = figures.steadiness.as_ref()?;
    let values = &series.values;
    if values.len() < 10 {
        return None;
    }
    let tenth = values.len() / 10;
    let first = mean(&values[..tenth]);
    let middle = mean(&values[tenth..values.len() - tenth]);
    let last = mean(&values[values.len() - tenth..]);
    if middle <= 0.0 {
        return None;
    }
    let first_off = (first - middle) / middle * 100.0;
    let last_off = (last - middle) / middle * 100.0;
    if first_off.abs() <= STEADY_TOLERANCE_PCT && last_off.abs() <= STEADY_TOLERANCE_PCT {
        return None;
    }
    let evidence = vec![
        Evidence::new(format!("first tenth ({})", series.name), first, 1, ""),
        Evidence::new(format!("middle ({})", series.name), middle, 1, ""),
        Evidence::new(format!("last tenth ({})", series.name), last, 1, ""),
        Evidence::new("first tenth vs middle", first_off, 0, "%"),
        Evidence::new("last tenth vs middle", last_off, 0, "%"),
    ];
    let title = format!(
        "Not steady: {} moved more than 20% within the window",
        series.name
    );
    let why = "A warm-up or a drift inside the window makes its average describe neither state; \
               lengthen the warm-up or report the steady part (--from/--to).";
    Some(finding(
        "not_steady",
        Severity::Warning,
        title,
        evidence,
        why,
    ))
}

/// The host had no idle CPU: the result measures the CPU, not the storage.
fn cpu_bound(figures: &WindowFigures) -> Option<Finding> {
    let cpu = figures.cpu.as_ref()?;
    let idle = cpu.idle_pct?;
    if idle >= CPU_BOUND_IDLE_PCT {
        return None;
    }
    let title = format!("CPU-bound: the host was {idle:.1}% idle");
    let why = "With no idle CPU the sessions wait for a processor, not for storage: this is not \
               a storage result.";
    Some(finding(
        "cpu_bound",
        Severity::Warning,
        title,
        run_queue_evidence(figures),
        why,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(figures: &WindowFigures) -> Vec<String> {
        evaluate(figures)
            .into_iter()
            .map(|finding| finding.id)
            .collect()
    }

    fn fires(figures: &WindowFigures, id: &str) -> Finding {
        evaluate(figures)
            .into_iter()
            .find(|finding| finding.id == id)
            .unwrap_or_else(|| panic!("{id} did not fire: {:?}", ids(figures)))
    }

    fn device(role: &str, reads: f64, read_bytes: f64) -> DeviceWindow {
        DeviceWindow {
            name: "sdb".into(),
            role: role.into(),
            read_requests: reads,
            read_bytes,
            ..DeviceWindow::default()
        }
    }

    fn postgres(blocks_read: f64, devices: Vec<DeviceWindow>) -> WindowFigures {
        WindowFigures {
            window_s: 10.0,
            block_size_bytes: Some(8192.0),
            database: DatabaseIo {
                blocks_read: Some(blocks_read),
                through_page_cache: true,
                ..DatabaseIo::default()
            },
            devices,
            ..WindowFigures::default()
        }
    }

    #[test]
    fn nothing_measured_gives_no_findings() {
        assert!(evaluate(&WindowFigures::default()).is_empty());
    }

    #[test]
    fn commit_waits_split_into_log_io_and_the_rest() {
        let mut figures = WindowFigures {
            commit: Some(CommitFigures {
                commits: 1000.0,
                commit_avg_ms: 4.0,
                commit_label: "log file sync (average)".into(),
                log_write_avg_ms: Some(1.0),
                log_write_label: "log file parallel write (average)".into(),
                tail: None,
            }),
            cpu: Some(CpuEvidence {
                cpus: 2.0,
                procs_running_avg: Some(9.0),
                ..CpuEvidence::default()
            }),
            ..WindowFigures::default()
        };
        let finding = fires(&figures, "commit_waits_decomposed");
        assert_eq!(finding.severity, Severity::Warning);
        assert!(finding.title.contains("25%"), "{}", finding.title);
        assert!(finding
            .evidence
            .iter()
            .any(|e| e.label.contains("procs_running") && e.value == 9.0));
        figures.commit.as_mut().unwrap().log_write_avg_ms = Some(3.0);
        assert_eq!(
            fires(&figures, "commit_waits_decomposed").severity,
            Severity::Info
        );
        figures.commit.as_mut().unwrap().log_write_avg_ms = Some(6.0);
        let group = fires(&figures, "commit_waits_decomposed");
        assert!(
            group.title.contains("commits share log writes"),
            "{}",
            group.title
        );
        assert!(
            !group.evidence.iter().any(|e| e.unit == "%"),
            "no share above 100%"
        );
        figures.commit.as_mut().unwrap().log_write_avg_ms = None;
        assert!(ids(&figures).is_empty());
    }

    #[test]
    fn blocks_per_request_show_the_request_size() {
        // 8,047 requests/s of 64 KiB over 10 s, as the example.
        let figures = postgres(
            643_000.0,
            vec![device("data", 80_470.0, 80_470.0 * 65536.0)],
        );
        let finding = fires(&figures, "blocks_not_requests");
        assert!(
            finding
                .title
                .contains("8,047 read requests/s of 64 KiB = 64,376 blocks/s"),
            "{}",
            finding.title
        );
        let single_blocks = postgres(80_470.0, vec![device("data", 80_470.0, 80_470.0 * 8192.0)]);
        assert!(!ids(&single_blocks).contains(&"blocks_not_requests".to_string()));
    }

    #[test]
    fn database_request_counts_are_preferred_to_devices() {
        let mut figures = postgres(80_000.0, Vec::new());
        figures.database.read_requests = Some(10_000.0);
        figures.database.through_page_cache = false;
        let finding = fires(&figures, "blocks_not_requests");
        assert!(finding.title.ends_with("(database)"), "{}", finding.title);
    }

    #[test]
    fn reads_no_device_saw_are_a_cache_result() {
        let cached = postgres(100_000.0, vec![device("data", 20_000.0, 20_000.0 * 8192.0)]);
        let finding = fires(&cached, "buffered_not_physical");
        assert!(finding.title.contains("80.0%"), "{}", finding.title);
        let physical = postgres(100_000.0, vec![device("data", 95_000.0, 95_000.0 * 8192.0)]);
        assert!(ids(&physical).is_empty(), "{:?}", ids(&physical));
        let mut direct = cached.clone();
        direct.database.through_page_cache = false;
        assert!(!ids(&direct).contains(&"buffered_not_physical".to_string()));
    }

    #[test]
    fn thresholds_read_as_written() {
        assert_eq!(ms_text(343.73631), "344");
        assert_eq!(ms_text(2.0), "2");
        assert_eq!(ms_text(12.34), "12.3");
        assert_eq!(ms_text(0.2), "0.2");
    }

    #[test]
    fn slow_ios_need_an_outlier_or_a_spike() {
        let mut figures = WindowFigures {
            outliers: Some(OutlierFigures {
                threshold_ms: 500.0,
                count: Some(0),
                ..OutlierFigures::default()
            }),
            ..WindowFigures::default()
        };
        assert!(ids(&figures).is_empty());
        figures
            .outliers
            .as_mut()
            .unwrap()
            .device_spikes
            .push(AwaitSpike {
                t_s: 12.0,
                device: "sdb".into(),
                await_ms: 812.0,
            });
        let finding = fires(&figures, "slow_ios");
        assert!(finding.evidence.iter().any(|e| e.value == 812.0));
    }

    #[test]
    fn saturation_splits_response_time_into_queue_and_service() {
        let mut busy = device("data", 1_800.0, 1_800.0 * 8192.0);
        busy.util_pct = Some(98.0);
        busy.queue_size = Some(4.0);
        busy.await_ms = Some(20.0);
        busy.service_time_ms = Some(5.0);
        busy.rotational = Some(true);
        let figures = WindowFigures {
            window_s: 10.0,
            devices: vec![busy.clone()],
            ..WindowFigures::default()
        };
        let finding = fires(&figures, "device_saturation");
        assert!(
            finding
                .title
                .contains("75% of its response time is queueing"),
            "{}",
            finding.title
        );
        busy.queue_size = Some(0.6);
        let idle_queue = WindowFigures {
            window_s: 10.0,
            devices: vec![busy],
            ..WindowFigures::default()
        };
        assert!(ids(&idle_queue).is_empty());
    }

    #[test]
    fn a_rotational_flag_beyond_a_spindle_is_named_as_the_drivers_word() {
        let mut flagged = device("data", 4_000.0, 4_000.0 * 8192.0);
        flagged.rotational = Some(true);
        let spindle_speed = WindowFigures {
            window_s: 10.0,
            devices: vec![flagged.clone()],
            ..WindowFigures::default()
        };
        assert!(ids(&spindle_speed).is_empty());
        flagged.read_requests = 570_000.0;
        let flash_speed = WindowFigures {
            devices: vec![flagged.clone()],
            ..spindle_speed.clone()
        };
        let finding = fires(&flash_speed, "rotation_flag_contradicted");
        assert_eq!(finding.evidence[0].value, 57_000.0);
        flagged.rotational = Some(false);
        let honest = WindowFigures {
            devices: vec![flagged],
            ..spindle_speed
        };
        assert!(ids(&honest).is_empty());
    }

    #[test]
    fn reads_over_the_network_point_away_from_iostat() {
        let mut figures = postgres(100_000.0, vec![device("data", 100.0, 100.0 * 8192.0)]);
        figures.database.through_page_cache = false;
        figures.network = Some(NetworkIo {
            nfs_read_bytes: Some(800_000_000.0),
            nic_receive_bytes: None,
        });
        fires(&figures, "storage_on_network");
        figures.network = Some(NetworkIo {
            nfs_read_bytes: Some(1_000.0),
            nic_receive_bytes: Some(2_000.0),
        });
        assert!(!ids(&figures).contains(&"storage_on_network".to_string()));
    }

    fn striped(role: &str) -> DeviceWindow {
        DeviceWindow {
            name: "md0".into(),
            role: role.into(),
            stripe: Some(Stripe {
                level: "raid0".into(),
                chunk_bytes: 524288.0,
                member_disks: 4,
            }),
            ..DeviceWindow::default()
        }
    }

    #[test]
    fn small_log_writes_on_a_stripe_touch_one_member() {
        let mut log = striped("wal");
        log.write_requests = 1000.0;
        log.write_bytes = 1000.0 * 8192.0;
        let figures = WindowFigures {
            devices: vec![log.clone()],
            ..WindowFigures::default()
        };
        fires(&figures, "small_sync_writes_on_stripe");
        log.stripe.as_mut().unwrap().level = "raid1".into();
        assert!(ids(&WindowFigures {
            devices: vec![log],
            ..WindowFigures::default()
        })
        .is_empty());
    }

    #[test]
    fn scan_requests_smaller_than_the_stripe_width() {
        let mut data = striped("data");
        data.read_requests = 1000.0;
        data.read_bytes = 1000.0 * 131072.0;
        let figures = WindowFigures {
            devices: vec![data.clone()],
            ..WindowFigures::default()
        };
        let finding = fires(&figures, "request_smaller_than_stripe");
        assert!(
            finding.title.contains("128 KiB of 2048 KiB"),
            "{}",
            finding.title
        );
        data.read_bytes = 1000.0 * 2_097_152.0;
        assert!(ids(&WindowFigures {
            devices: vec![data],
            ..WindowFigures::default()
        })
        .is_empty());
    }

    #[test]
    fn temp_files_are_spills() {
        let mut figures = WindowFigures {
            temp: Some(TempFigures::default()),
            ..WindowFigures::default()
        };
        assert!(ids(&figures).is_empty());
        figures.temp = Some(TempFigures {
            files: 12.0,
            bytes: 2_678_784.0,
        });
        assert!(fires(&figures, "temp_spills")
            .title
            .contains("12 temporary files, 2.6 MiB"));
    }

    #[test]
    fn a_warm_up_inside_the_window_is_not_steady() {
        let mut values = vec![50.0; 2];
        values.extend(vec![100.0; 18]);
        let mut figures = WindowFigures {
            steadiness: Some(RateSeries {
                name: "loops/s".into(),
                values,
            }),
            ..WindowFigures::default()
        };
        fires(&figures, "not_steady");
        figures.steadiness.as_mut().unwrap().values = vec![
            100.0, 95.0, 105.0, 98.0, 102.0, 100.0, 99.0, 101.0, 97.0, 103.0,
        ];
        assert!(ids(&figures).is_empty());
    }

    #[test]
    fn no_idle_cpu_is_cpu_bound() {
        let mut figures = WindowFigures {
            cpu: Some(CpuEvidence {
                cpus: 2.0,
                idle_pct: Some(3.0),
                ..CpuEvidence::default()
            }),
            ..WindowFigures::default()
        };
        fires(&figures, "cpu_bound");
        figures.cpu.as_mut().unwrap().idle_pct = Some(40.0);
        assert!(ids(&figures).is_empty());
    }
}
