//! What a `strata run` measured, in the shapes its Recording, its JSON
//! document and its report hold: the sessions' work, the database's
//! counters, the devices, the page cache's absorption, the CPU, who else
//! used the devices, the statements that were outliers, and the load.
//! Every field name carries its unit and its layer.
//!
//! Not for: computing the figures (strata-run's accounting) or printing
//! them.

use crate::device::IostatFigures;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use strata_core::histogram::LatencySummary;
use strata_core::verdict::Verdict;

/// PostgreSQL's block size; the data set is laid out one row per block.
pub const BLOCK_BYTES: u64 = 8192;
/// Below this host idle share, the run was CPU-bound.
pub const CPU_BOUND_IDLE_PCT: f64 = 10.0;
/// Above this share of database block reads that no device saw (the page
/// cache absorbed them), a result is a cache result, not a storage result.
pub const ABSORBED_WARNING_PCT: f64 = 10.0;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OperationFigures {
    pub per_s: f64,
    /// The statements' latency; its `count` is the statements'.
    #[serde(flatten)]
    pub latency: LatencySummary,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkloadFigures {
    pub loops: u64,
    pub loops_per_s: f64,
    pub sql_statements: u64,
    pub sql_per_s: f64,
    pub rows_selected: u64,
    pub rows_updated: u64,
    /// select, update, commit, scan.
    pub operations: BTreeMap<String, OperationFigures>,
}

impl WorkloadFigures {
    /// The sessions' COMMITs, where they made any.
    pub fn commits(&self) -> Option<&OperationFigures> {
        let commit = self.operations.get("commit")?;
        (commit.latency.count > 0).then_some(commit)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SessionFigures {
    pub started: u32,
    pub failed: u32,
    pub alive_through_window: u32,
    pub reconnects: u64,
    /// When the first session lost the server (seconds from the start),
    /// and why.
    pub first_connection_lost: Option<(f64, String)>,
    pub failures: Vec<String>,
}

/// What PostgreSQL itself counted (pg_stat_database, pg_stat_wal,
/// pg_stat_io…). A figure this server version cannot give is absent, with
/// its reason in `unavailable`, never 0.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DatabaseFigures {
    /// Shared-buffer misses, in 8 KiB blocks (they include OS page-cache hits).
    pub blocks_read: f64,
    pub blocks_read_per_s: f64,
    /// Read requests PostgreSQL issued for relations (18+: pg_stat_io
    /// `reads`, summed over every backend type; a combined read of several
    /// blocks is one request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_requests: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_requests_per_s: Option<f64>,
    /// Bytes of those requests (18+: pg_stat_io `read_bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_bytes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_mb_per_s: Option<f64>,
    pub blocks_hit: f64,
    pub buffer_hit_pct: f64,
    pub commits: f64,
    pub commits_per_s: f64,
    pub wal_bytes: f64,
    pub wal_mb_per_s: f64,
    /// WAL write requests and syncs and their times: ≤17 pg_stat_wal, 18
    /// pg_stat_io object 'wal'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wal_writes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wal_syncs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wal_write_time_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wal_sync_time_ms: Option<f64>,
    /// blk_read_time: time backends spent reading blocks (track_io_timing).
    pub block_read_time_ms: f64,
    pub block_read_time_us_per_block: f64,
    pub temp_files: f64,
    pub temp_bytes: f64,
    pub deadlocks: f64,
    /// Why each absent figure is absent, by field name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unavailable: BTreeMap<String, String>,
    /// Every counter's change over the window, by `view.column`.
    pub counters: BTreeMap<String, f64>,
}

/// Blocks PostgreSQL read that never reached a device.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Absorption {
    pub database_blocks_read: f64,
    pub device_read_requests: u64,
    pub device_read_bytes: u64,
    /// Device read bytes expressed in 8 KiB blocks.
    pub device_read_blocks: f64,
    pub absorbed_blocks: f64,
    pub absorbed_pct: f64,
}

impl Absorption {
    /// The database's block reads against its data devices' reads (a
    /// device not only the WAL's): how many blocks no device read.
    pub fn of(database: &DatabaseFigures, devices: &[IostatFigures]) -> Absorption {
        let data_devices = devices.iter().filter(|device| device.role != "wal");
        let (device_read_requests, device_read_bytes) =
            data_devices.fold((0, 0), |(requests, bytes), device| {
                (requests + device.read_requests, bytes + device.read_bytes)
            });
        let device_read_blocks = device_read_bytes as f64 / BLOCK_BYTES as f64;
        let absorbed_blocks = (database.blocks_read - device_read_blocks).max(0.0);
        Absorption {
            database_blocks_read: database.blocks_read,
            device_read_requests,
            device_read_bytes,
            device_read_blocks,
            absorbed_blocks,
            absorbed_pct: if database.blocks_read > 0.0 {
                absorbed_blocks * 100.0 / database.blocks_read
            } else {
                0.0
            },
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CpuFigures {
    pub cpus: usize,
    /// The host's idle share of its CPU time over the window (iowait
    /// counts as idle), percent; `None` where the host's CPU was not
    /// observed at both edges or its counters were reset between them.
    #[serde(default)]
    pub host_idle_pct: Option<f64>,
    /// The host's iowait share, percent; `None` as for the idle share.
    #[serde(default)]
    pub host_iowait_pct: Option<f64>,
    /// Share of the window in which some task waited for a CPU
    /// (`/proc/pressure/cpu`'s `some`), percent; `None` without PSI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu_pressure_pct: Option<f64>,
    /// Seconds between the two edges the CPU times were read at: every
    /// share of the CPUs below is over this interval, not the sessions'
    /// window (0 in Recordings made before it was kept: the window then).
    #[serde(default)]
    pub interval_s: f64,
    /// CPU seconds of the server's processes.
    pub server_cpu_s: f64,
    /// CPU seconds of strata itself (all threads).
    pub strata_cpu_s: f64,
    /// The server's processes by backend type (io workers apart from the
    /// backends they read for); empty for a server not on this machine.
    #[serde(default)]
    pub server_processes: Vec<ProcessGroupFigures>,
}

impl CpuFigures {
    /// CPUs busy on average for `cpu_s` over the interval the CPU times
    /// were read over (`window_s` for a Recording without it); `None` when
    /// that is more than the host has: a figure that cannot be, never shown.
    pub fn cpus_used(&self, cpu_s: f64, window_s: f64) -> Option<f64> {
        let interval_s = match self.interval_s > 0.0 {
            true => self.interval_s,
            false => window_s,
        };
        let used = cpu_s / interval_s;
        (interval_s > 0.0 && used.is_finite() && used <= self.most_cpus()).then_some(used)
    }

    /// What the host's CPUs can give, with the clock tick's rounding of
    /// each process's CPU time (1%).
    fn most_cpus(&self) -> f64 {
        self.cpus as f64 * 1.01
    }

    /// CPU seconds of the server's processes and of strata together.
    pub fn server_and_driver_cpu_s(&self) -> f64 {
        self.server_cpu_s + self.strata_cpu_s
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunFigures {
    pub window_s: f64,
    pub interrupted: bool,
    pub sessions: SessionFigures,
    pub workload: WorkloadFigures,
    pub database: Option<DatabaseFigures>,
    pub devices: Vec<IostatFigures>,
    pub absorption: Option<Absorption>,
    pub cpu: CpuFigures,
    /// Per second of the window: loops, selects, updates, scans.
    pub per_second: Vec<SecondCounts>,
    /// Reasons this is not (only) a storage result, or that figures are missing.
    pub warnings: Vec<String>,
    /// Block-layer bytes of the server, strata and every other process
    /// (`/proc/PID/io`); `None` when no device of the run is on this machine.
    pub tenants: Option<TenantFigures>,
    /// Valid, not a storage result, or failed: judged once the engine has
    /// added what it knows (`verdict::judge`).
    #[serde(default = "Verdict::not_recorded")]
    pub verdict: Verdict,
    /// The page cache strata's memory cgroup held through the window,
    /// beside its target; `None` without such a cgroup.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_cache_held: Option<PageCacheHeld>,
    /// The statements at or over the outlier threshold, and which it is.
    #[serde(default)]
    pub outliers: OutlierFigures,
    /// How long after the window began its start edge was taken, seconds:
    /// a host too busy to take it on time measured another span.
    #[serde(default)]
    pub start_edge_late_s: f64,
    /// Other hosts followed beside the server's (`--agent` after the
    /// first), from their agents' counters at the window's two edges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_hosts: Vec<OtherHostFigures>,
    /// Why no device of the server's host is in these figures (its host
    /// is not observed, its agent did not answer at an edge): none of them,
    /// nor what the page cache absorbed, is made up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices_unobserved: Option<String>,
    /// Each block request of the run's devices over the window, traced
    /// (BPF on the block tracepoints); `None` in Recordings before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_trace: Option<BlockTraceFigures>,
    /// When the sessions' measured window began, Unix seconds: where it
    /// lies among the layer samples (its start edge may be taken late). Absent in Recordings before it was written
    /// (their window is taken to begin `warmup_s` after the first sample).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_start_unix_s: Option<f64>,
}

impl RunFigures {
    /// No figure of the server's host's devices, for `why` (the first
    /// reason given is kept).
    pub fn devices_not_observed(&mut self, why: String) {
        self.devices.clear();
        self.absorption = None;
        self.tenants = None;
        self.block_trace = Some(BlockTraceFigures {
            unavailable: Some(why.clone()),
            ..BlockTraceFigures::default()
        });
        self.devices_unobserved.get_or_insert(why);
    }

    /// How steady the window's work ran ([`quarter_spread_pct`] of its
    /// seconds).
    pub fn quarter_spread_pct(&self) -> Option<f64> {
        quarter_spread_pct(&self.per_second)
    }
}

/// How steady a window's work ran: its loops per second in each quarter
/// of its `seconds`, the highest less the lowest over their mean, percent.
/// None for fewer than 4 seconds or no loops. A host that moved within the
/// window (a VM's slow spell) shows here: a prediction's error within it
/// is the window's own noise.
pub fn quarter_spread_pct(seconds: &[SecondCounts]) -> Option<f64> {
    let count = seconds.len();
    if count < 4 {
        return None;
    }
    let quarters: Vec<f64> = (0..4)
        .map(|quarter| {
            let part = &seconds[quarter * count / 4..(quarter + 1) * count / 4];
            part.iter().map(|second| second.loops as f64).sum::<f64>() / part.len() as f64
        })
        .collect();
    let mean = quarters.iter().sum::<f64>() / 4.0;
    let highest = quarters.iter().copied().fold(f64::MIN, f64::max);
    let lowest = quarters.iter().copied().fold(f64::MAX, f64::min);
    (mean > 0.0).then(|| (highest - lowest) * 100.0 / mean)
}

/// Another host over the run's window, from its agent's counters at the
/// window's two edges.
#[derive(Clone, Debug, Serialize, PartialEq, Deserialize)]
pub struct OtherHostFigures {
    pub host: String,
    /// Its disks, iostat -x's way (role `observed`); empty with a gap.
    pub devices: Vec<IostatFigures>,
    pub cpus: Option<f64>,
    /// Its CPU's idle share over the window, %; `None` with a gap.
    pub host_idle_pct: Option<f64>,
    /// Why there are no figures: the agent did not answer at an edge.
    pub gap: Option<String>,
}

/// The page cache of the server's files (the cgroup's page cache less its
/// shared memory), sampled each second of the window.
#[derive(Clone, Debug, Serialize, PartialEq, Deserialize)]
pub struct PageCacheHeld {
    pub target_bytes: u64,
    pub mean_bytes: u64,
    pub max_bytes: u64,
    pub samples: usize,
    /// Seconds into the window when the cgroup's OOM kill count first grew
    /// (to the second).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_oom_kill_s: Option<f64>,
    /// The page cache of the server's files at each second of the window,
    /// in order (the first at the window's start).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_second_bytes: Vec<u64>,
}

/// The run's devices' block requests, traced one by one over the window:
/// their queue and device times as percentiles, their count beside
/// /proc/diskstats'.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BlockTraceFigures {
    /// Why nothing was traced (not root, no BPF, a kernel before 6.5, the
    /// devices on another host); `devices` is then empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Where the requests were traced when not by this strata: the server
    /// host's agent, from its `/blocktrace` at the window's edges, and
    /// how closely its clock was placed on this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traced_by: Option<String>,
    #[serde(default)]
    pub devices: Vec<TracedDevice>,
    /// Requests the tracer could not follow over the window.
    #[serde(default)]
    pub unfollowed: UnfollowedRequests,
    /// Each process's requests on these devices, by operation and role,
    /// most requests first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<TracedProcess>,
    /// The requests on these devices that took longer than the outlier
    /// threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outliers: Option<TracedOutliers>,
}

/// The buckets of [`TracedRoleOperation::device_time_buckets`]: bucket b
/// holds b ns exactly below 256; above, bucket b = (octave << 7 | sub)
/// holds [(128 + sub) << (octave - 1), +1 << (octave - 1)) ns. Counts of
/// the same bucket add exactly across windows, shards and hosts.
pub const BLOCK_TRACE_BUCKETS: &str = "log-linear ns: exact below 256, then 128 per power of two";

/// One process's requests on one device, of one operation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TracedProcess {
    pub pid: u32,
    /// Its name when its first traced request started.
    pub command: String,
    /// The role strata gave it (the database's `backend_type`), or "".
    pub role: String,
    pub device: String,
    pub operation: String,
    pub requests: u64,
    /// Bytes of those requests, as issued to the device.
    pub bytes: u64,
    pub device_time_mean_ms: f64,
    pub queue_time_mean_ms: f64,
}

/// The Linux `V$KERNEL_IO_OUTLIER`: every request over the threshold.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TracedOutliers {
    /// Listed: requests whose time start → end reached this, ms (the
    /// lesser of `absolute_ms` and 10 × its device's p99 device time).
    pub absolute_ms: f64,
    /// How each device's threshold was chosen, in words.
    pub rule: String,
    /// The kernel kept requests from this time up, ms: none shorter can be
    /// listed, whatever the rule says.
    pub kept_from_ms: f64,
    pub listed: Vec<TracedOutlier>,
    /// Outliers the ring (4,096) wrote over before they were read.
    pub overwritten: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TracedOutlier {
    /// When it ended, seconds after the start edge's trace snapshot.
    pub ended_s: f64,
    pub pid: u32,
    /// The thread of `pid` that submitted it, where not the process's own
    /// (a MariaDB connection's thread: PROCESSLIST's `TID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<u32>,
    pub command: String,
    pub role: String,
    pub device: String,
    pub operation: String,
    /// Its first sector (512 bytes) on the device.
    pub sector: u64,
    pub bytes: u32,
    pub queue_ms: f64,
    pub device_ms: f64,
    /// The lesser of the absolute threshold and 10 × the device's p99
    /// device time, ms, that it reached.
    pub threshold_ms: f64,
    /// The file its first sector lies in (under the database's data
    /// directory) and the byte's offset in it, where strata could map it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_offset_bytes: Option<u64>,
    /// The database's object stored in that file (PostgreSQL:
    /// `schema.relation`, with its fork when not the main one; `WAL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relation: Option<String>,
    /// The run's session whose server process or thread submitted it
    /// (PostgreSQL: the session's `pg_backend_pid()`; MariaDB: its
    /// connection's thread, PROCESSLIST's `TID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<u32>,
    /// The session's statement that was running from before the request
    /// started until after it ended, where it was slow enough to be kept
    /// (the statement outliers' floor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement: Option<StatementOutlier>,
    /// For another process or connection of the database's (a client that
    /// is not one of the sessions, an autovacuum worker): the query
    /// `pg_stat_activity` (MariaDB: PROCESSLIST) showed it running from
    /// before the request started until after it ended, string literals
    /// as `?`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Its place among the tracer's outliers, to name it within the run;
    /// not written.
    #[serde(skip)]
    pub sequence: u64,
}

impl TracedOutlier {
    /// What its process ran across it: the session's statement
    /// (`select of 24.0 ms`), else the query named for another process.
    pub fn ran_across(&self) -> Option<String> {
        match (&self.statement, &self.query) {
            (Some(statement), _) => Some(format!(
                "{} of {:.1} ms",
                statement.operation, statement.latency_ms
            )),
            (None, query) => query.clone(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UnfollowedRequests {
    /// Issued with no start seen: their device time only.
    pub issued_unstarted: u64,
    /// Ended with no start seen (in flight when tracing began, or moved by
    /// a front merge): not in the figures.
    pub ended_unseen: u64,
    /// Starts dropped with 65,536 requests in flight: not in the figures.
    pub starts_dropped: u64,
    /// Ends the kernel did not trace (a BPF program was already running on
    /// that CPU, as when a completion interrupts an issue): requests
    /// /proc/diskstats counts and these figures do not.
    #[serde(default)]
    pub ends_skipped_by_kernel: u64,
    /// Issues the kernel did not trace: those requests' total time is
    /// counted, their device time not.
    #[serde(default)]
    pub issues_skipped_by_kernel: u64,
    /// Requests in the histograms whose process the table of processes
    /// (65,536) had no room for.
    #[serde(default)]
    pub processes_dropped: u64,
    /// Requests started in the window, over 2 s before its end, whose end
    /// the tracer has not seen: at a slow device still, or ended without
    /// the kernel running the tracer's end program.
    #[serde(default)]
    pub ends_not_seen: u64,
    /// Requests started whose end the tracer did not see, found when the
    /// kernel reused the request for a later one (every device's; each
    /// operation's own are `TracedOperation::ends_missed`).
    #[serde(default)]
    pub ends_missed: u64,
}

/// One device's traced requests, by operation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TracedDevice {
    pub device: String,
    pub role: String,
    pub operations: Vec<TracedOperation>,
    /// The same requests by the role of the process that submitted them
    /// ("" for a process without one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_role: Vec<TracedRoleOperation>,
}

/// One role's requests of one operation on one device.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TracedRoleOperation {
    pub role: String,
    pub operation: String,
    pub requests: u64,
    /// Merges in this role's threads (bios merged as they submitted them),
    /// as /proc/diskstats counts merges.
    #[serde(default)]
    pub merges: u64,
    pub device_time: LatencyPercentiles,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_time: Option<LatencyPercentiles>,
    /// The device times as (bucket, requests), [`BLOCK_TRACE_BUCKETS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub device_time_buckets: Vec<(u16, u64)>,
    /// Their sizes as issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<RequestSizes>,
}

/// One operation's requests on one device.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TracedOperation {
    /// `read`, `write`, `flush`, `discard` or `other`.
    pub operation: String,
    /// Requests whose start was seen that ended in the window: what
    /// /proc/diskstats counts (Recordings before `issued_requests`: those
    /// issued to the driver).
    pub requests: u64,
    /// The same operation's completed requests by /proc/diskstats, where it
    /// counts them (read, write, flush, discard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diskstats_requests: Option<u64>,
    /// Requests issued to the driver that ended in the window: those whose
    /// device time `device_time` holds. Under fsync they differ from
    /// `requests`: a PREFLUSH write with no data ends without being issued
    /// (the flush it asks for is), and the flush the block layer issues
    /// for it has no start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_requests: Option<u64>,
    /// Requests whose start was traced and whose end the kernel did not
    /// run the tracer's program for, found in the window when the kernel
    /// reused the request's structure: /proc/diskstats counts them, and
    /// `requests` and the times do not, so `requests + ends_missed` is the
    /// trace's count of diskstats' (absent where the tracer does not say:
    /// an agent's histograms, Recordings before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_missed: Option<u64>,
    /// Requests /proc/diskstats saw complete while an edge of the window
    /// read the tracer's counts beside it (both edges'): each may be in the
    /// window for one count and not the other, so `requests` and
    /// `diskstats_requests` may differ by up to this many and be both
    /// right (an edge under load and the other under none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_while_read: Option<u64>,
    /// Issue to the driver → end (blktrace's D2C).
    pub device_time: LatencyPercentiles,
    /// Start → issue: the host's block layer and scheduler (Q2D).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_time: Option<LatencyPercentiles>,
    /// Start → end (Q2C: what /proc/diskstats times), its mean, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_mean_ms: Option<f64>,
    /// The requests' sizes as issued to the driver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<RequestSizes>,
    /// Merges traced (a bio merged into a request, or a request into
    /// another), and /proc/diskstats' count of them where it counts the
    /// operation's (read, write).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merges: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diskstats_merges: Option<u64>,
}

/// Requests' sizes as issued to the driver, bytes: their sum beside
/// /proc/diskstats' (sectors × 512), and their distribution.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestSizes {
    pub bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diskstats_bytes: Option<u64>,
    pub mean_bytes: f64,
    /// Percentiles and the largest, each the lowest size of its bucket
    /// (exact to 64 KiB).
    pub p50_bytes: u64,
    pub p99_bytes: u64,
    pub max_bytes: u64,
    /// The sizes as (bucket, requests), [`BLOCK_TRACE_BUCKETS`] in bytes.
    pub buckets: Vec<(u16, u64)>,
}

/// A latency distribution's summary, milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyPercentiles {
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OutlierFigures {
    pub threshold_ms: f64,
    /// How the threshold was chosen, in words.
    pub threshold_rule: String,
    /// Statements faster than this were not kept: none under it can be
    /// listed, in the run's output or in a report of its Recording.
    pub floor_ms: f64,
    /// Every statement in the window at or over the threshold, in the order
    /// they finished.
    pub statements: Vec<StatementOutlier>,
    /// Statements at or over the floor that were counted but not kept.
    pub dropped: u64,
}

/// One kind of server process over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessGroupFigures {
    /// `pg_stat_activity.backend_type` (`client backend`, `io worker`, …) or
    /// `postmaster`.
    pub backend_type: String,
    pub processes: usize,
    /// The processes exited before the end of the window (the sessions'
    /// backends do): their CPU time and device reads are what the postmaster
    /// collected from them as reaped children; their run-queue delay is lost.
    pub exited: bool,
    pub cpu_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_delay_ms: Option<f64>,
    /// Bytes the processes read from devices (`/proc/PID/io` `read_bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_read_bytes: Option<f64>,
}

/// One other process over the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OtherProcess {
    pub pid: u32,
    pub name: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Its bytes as a share of all processes' bytes, percent.
    pub share_pct: f64,
}

/// The window's block-layer bytes by whose they were.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TenantFigures {
    /// Bytes read and written by the run's devices (diskstats).
    pub device_bytes: u64,
    pub server_bytes: u64,
    pub strata_bytes: u64,
    /// Every other process's bytes (on any device, by /proc/PID/io).
    pub other_bytes: u64,
    /// Others' share of all processes' bytes (server, strata, others, the
    /// kernel's threads), percent.
    pub other_share_pct: f64,
    /// The largest other processes.
    pub top_others: Vec<OtherProcess>,
    /// How the processes' bytes were counted: [`COUNTED_BY_TRACE`] or
    /// [`COUNTED_BY_PROC_IO`].
    #[serde(default)]
    pub counted_by: String,
    /// The kernel's own threads' bytes (writeback and journal, on behalf of
    /// the processes that dirtied the pages), where traced; 0 otherwise
    /// (/proc/PID/io charges a write to the process that dirtied it).
    #[serde(default)]
    pub kernel_bytes: u64,
}

/// Tenants counted by the block requests traced on the run's devices:
/// exact, under the process that submitted each request.
pub const COUNTED_BY_TRACE: &str = "block requests traced on the run's devices";
/// Tenants counted by `/proc/PID/io`: reads and writes on any device, a
/// write when its page is dirtied.
pub const COUNTED_BY_PROC_IO: &str = "/proc/PID/io, read + write, any device";

impl TenantFigures {
    /// `dd (pid 4242) 812.3 MB, cp (pid 77) 10.0 MB` — decimal MB.
    pub fn named_others(&self) -> String {
        self.top_others
            .iter()
            .map(|other| {
                format!(
                    "{} (pid {}) {:.1} MB, {:.1}%",
                    other.name,
                    other.pid,
                    (other.read_bytes + other.write_bytes) as f64 / 1e6,
                    other.share_pct
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// What completed in one second of the window (`second` 0 is the first).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SecondCounts {
    pub second: u64,
    pub loops: u64,
    pub selects: u64,
    pub updates: u64,
    pub scans: u64,
}

/// One statement slower than the outlier floor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatementOutlier {
    /// When it finished, seconds after the window's start.
    pub at_s: f64,
    pub session: u32,
    pub schema: String,
    /// `select`, `update`, `commit` or `scan`.
    pub operation: String,
    pub latency_ms: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadAction {
    KeptComplete,
    Loaded,
    ReloadedIncomplete,
    Replaced,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SchemaLoad {
    pub schema: String,
    pub action: LoadAction,
    /// Rows of the `slob` table.
    pub rows: u64,
    /// 8 KiB heap blocks of the `slob` table.
    pub blocks: u64,
    /// All the schema's tables with their indexes and TOAST, in bytes.
    pub bytes_on_disk: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LoadReport {
    pub schemas: Vec<SchemaLoad>,
    /// Rows written by this setup (`slob` and `scan` tables).
    pub rows_loaded: u64,
    /// 8 KiB blocks of all the plan's `slob` tables.
    pub blocks: u64,
    /// Bytes on disk of all the plan's schemas.
    pub bytes_on_disk: u64,
    /// Bytes on disk of the schemas this setup loaded (not those it kept).
    pub bytes_loaded: u64,
    pub seconds: f64,
    /// `bytes_loaded` per hour of `seconds`, in 10^9 bytes.
    pub gb_per_hour: f64,
    /// `bytes_loaded` per hour of `seconds`, in 2^30 bytes.
    pub gib_per_hour: f64,
}

impl LoadReport {
    /// The report of a setup over `schemas` that took `seconds`: the bytes
    /// it loaded are those of the schemas it did not keep, and the rates are
    /// theirs over the whole setup.
    pub fn new(schemas: Vec<SchemaLoad>, rows_loaded: u64, seconds: f64) -> LoadReport {
        let bytes_loaded: u64 = schemas
            .iter()
            .filter(|schema| schema.action != LoadAction::KeptComplete)
            .map(|schema| schema.bytes_on_disk)
            .sum();
        let per_hour = |unit: f64| match seconds > 0.0 {
            true => bytes_loaded as f64 / unit * 3600.0 / seconds,
            false => 0.0,
        };
        LoadReport {
            rows_loaded,
            blocks: schemas.iter().map(|schema| schema.blocks).sum(),
            bytes_on_disk: schemas.iter().map(|schema| schema.bytes_on_disk).sum(),
            bytes_loaded,
            seconds,
            gb_per_hour: per_hour(1e9),
            gib_per_hour: per_hour(f64::from(1u32 << 30)),
            schemas,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2.37 CPUs were once shown on a 2-CPU host: CPU seconds read over
    /// edges 5 s apart divided by a 2 s window. Shares are over the edges'
    /// interval, and one beyond the host is none.
    #[test]
    fn cpu_shares_are_over_the_edges_interval_and_never_beyond_the_host() {
        let cpu = CpuFigures {
            cpus: 2,
            host_idle_pct: None,
            host_iowait_pct: None,
            host_cpu_pressure_pct: None,
            interval_s: 5.0,
            server_cpu_s: 9.0,
            strata_cpu_s: 0.5,
            server_processes: Vec::new(),
        };
        assert_eq!(cpu.cpus_used(9.0, 2.0), Some(1.8));
        assert_eq!(cpu.cpus_used(10.5, 2.0), None);
        let before = CpuFigures {
            interval_s: 0.0,
            ..cpu
        };
        assert_eq!(before.cpus_used(3.0, 2.0), Some(1.5));
        assert_eq!(before.cpus_used(3.0, 0.0), None);
    }

    fn seconds(loops: &[u64]) -> Vec<SecondCounts> {
        (loops.iter().enumerate())
            .map(|(second, &loops)| SecondCounts {
                second: second as u64,
                loops,
                selects: loops,
                updates: 0,
                scans: 0,
            })
            .collect()
    }

    #[test]
    fn an_outlier_says_the_statement_or_else_the_query_it_ran_across() {
        let statement = StatementOutlier {
            at_s: 2.5,
            session: 3,
            schema: "strata_slob_4".to_string(),
            operation: "select".to_string(),
            latency_ms: 24.04,
        };
        let mut outlier = TracedOutlier {
            statement: Some(statement),
            query: Some("SELECT ?".to_string()),
            ..TracedOutlier::default()
        };
        assert_eq!(outlier.ran_across().as_deref(), Some("select of 24.0 ms"));
        outlier.statement = None;
        assert_eq!(outlier.ran_across().as_deref(), Some("SELECT ?"));
        outlier.query = None;
        assert_eq!(outlier.ran_across(), None);
    }

    #[test]
    fn the_quarter_spread_is_the_highest_quarter_less_the_lowest_over_their_mean() {
        // 10 seconds: quarters of 2, 3, 2 and 3 seconds.
        let window = seconds(&[100, 100, 90, 90, 90, 120, 120, 80, 80, 80]);
        let quarters = [100.0, 90.0, 120.0, 80.0];
        let mean = quarters.iter().sum::<f64>() / 4.0;
        let spread = quarter_spread_pct(&window);
        assert!(
            spread.is_some_and(|pct| (pct - 40.0 * 100.0 / mean).abs() < 1e-9),
            "{spread:?}"
        );
        assert_eq!(quarter_spread_pct(&seconds(&[75; 20])), Some(0.0));
        assert_eq!(quarter_spread_pct(&seconds(&[75, 75, 75])), None);
        assert_eq!(quarter_spread_pct(&seconds(&[0; 8])), None);
    }
}
