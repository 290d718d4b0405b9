//! What a `strata calibrate` point measured and what the calibration
//! concluded, in the shapes its Recording, its JSON document and its CSV
//! files hold. Every field name carries its unit (`_us`, `_bytes`,
//! `_per_s`, `_pct`).
//!
//! Not for: measuring (strata-calibrate's points) or printing.

use crate::device::IostatFigures;
use serde::{Deserialize, Serialize};
use strata_core::histogram::{LatencyHistogram, LatencySummary};
use strata_core::verdict::Verdict;

/// Where a point sits in an ORION matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatrixCell {
    /// Outstanding small I/Os.
    pub small_outstanding: usize,
    /// Concurrent large-I/O streams.
    pub large_streams: usize,
}

/// How writes are made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncMode {
    None,
    /// The target is opened with O_DSYNC.
    Dsync,
    /// Each write is followed by fdatasync and completes with it.
    Fdatasync,
}

impl SyncMode {
    pub const NAMES: &'static [&'static str] = &["none", "dsync", "fdatasync"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "none" => Some(SyncMode::None),
            "dsync" | "o_dsync" => Some(SyncMode::Dsync),
            "fdatasync" => Some(SyncMode::Fdatasync),
            _ => None,
        }
    }
}

/// Requests, throughput and latency of one operation (or of all of them).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OpFigures {
    pub requests: u64,
    pub bytes: u64,
    pub iops: f64,
    pub mb_per_s: f64,
    #[serde(flatten)]
    pub latency: LatencySummary,
}

pub fn per_second(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// Histograms kept for the Recording (lossless, mergeable).
#[derive(Clone, Debug, Default)]
pub struct GroupHistograms {
    pub read: LatencyHistogram,
    pub write: LatencyHistogram,
    /// Whole sorted batches, first request queued to last completed; empty
    /// unless the group reads in sorted batches.
    pub batch: LatencyHistogram,
}

/// Sorted batches timed as a whole (`--distribution sorted:BATCH`): the
/// time a statement that reads BATCH blocks in a bitmap heap scan's order
/// spends at the device, with the device's slow spells shared by its
/// requests, not averaged away as if they were independent.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BatchFigures {
    pub blocks_per_batch: u32,
    /// Its `count` is of batches begun and ended inside the window.
    #[serde(flatten)]
    pub latency: LatencySummary,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GroupResult {
    pub label: String,
    pub rw: String,
    pub block_size_bytes: u32,
    pub queue_depth: usize,
    pub jobs: usize,
    pub sync: SyncMode,
    /// Reads and writes together.
    pub all: OpFigures,
    pub reads: OpFigures,
    pub writes: OpFigures,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batches: Option<BatchFigures>,
    #[serde(skip)]
    pub histograms: GroupHistograms,
}

/// strata's own CPU time over the measured window (all threads).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CpuFigures {
    pub user_s: f64,
    pub system_s: f64,
    pub user_us_per_io: f64,
    pub system_us_per_io: f64,
}

/// strata's count of its own requests against the device's counters.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Verification {
    pub device: String,
    pub engine_read_requests: u64,
    pub device_read_requests: u64,
    pub engine_write_requests: u64,
    pub device_write_requests: u64,
    pub engine_read_bytes: u64,
    pub device_read_bytes: u64,
    pub engine_write_bytes: u64,
    pub device_write_bytes: u64,
    /// `consistent`, `device_saw_less` or `device_saw_more`, `not_checked`
    /// (buffered I/O) or `nothing_to_check` (no I/O completed), with the
    /// reason in `note`.
    pub verdict: String,
    pub note: String,
}

/// One second of the measured window, all groups together.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SecondSample {
    pub t_s: u64,
    pub read_iops: u64,
    pub write_iops: u64,
    pub read_mb_per_s: f64,
    pub write_mb_per_s: f64,
    pub lat_mean_us: f64,
    pub lat_max_us: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OutlierRecord {
    pub t_s: f64,
    pub group: String,
    pub operation: String,
    pub offset_bytes: u64,
    pub size_bytes: u32,
    pub lat_us: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointResult {
    pub name: String,
    pub cell: Option<MatrixCell>,
    /// Stopped early by Ctrl-C or an error.
    pub interrupted: bool,
    pub window_s: f64,
    pub groups: Vec<GroupResult>,
    pub cpu: CpuFigures,
    pub devices: Vec<IostatFigures>,
    pub verification: Option<Verification>,
    pub per_second: Vec<SecondSample>,
    /// I/Os at or over `--outlier`.
    pub outliers: Vec<OutlierRecord>,
    /// I/Os at or over the floor (`--outlier` or 100 ms, whichever is
    /// less): the Recording's `io_outlier` events.
    #[serde(skip)]
    pub slow_ios: Vec<OutlierRecord>,
    /// I/Os at or over the floor counted but not kept.
    pub outliers_dropped: u64,
    pub errors: Vec<String>,
    /// The devices' requests traced one by one over the window (BPF), or
    /// why not; `None` in Recordings before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_trace: Option<crate::run::BlockTraceFigures>,
    /// An `nfs://` target's calls, as strata's own client counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nfs: Option<NfsFigures>,
    /// A target on a mount of the kernel's NFS client: its per-operation
    /// counters for that mount over the window (`/proc/self/mountstats`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_nfs: Option<KernelNfsFigures>,
}

/// The kernel NFS client's mount a target lies on, over a point's window:
/// nfsiostat's columns for each operation it made.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelNfsFigures {
    /// The mount point.
    pub mount: String,
    pub server: String,
    pub export: String,
    pub ops: Vec<KernelNfsOp>,
}

/// One operation (`READ`, `WRITE`, `COMMIT`, …) of a mount over a window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelNfsOp {
    pub op: String,
    pub ops: u64,
    pub ops_per_s: f64,
    /// Sent and received, RPC headers included (mountstats' bytes).
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Transmissions beyond one per operation.
    pub retransmissions: u64,
    pub timeouts: u64,
    /// Per operation, ms: waiting to be sent (the backlog), from send to
    /// reply, and from the call to its end (nfsiostat's avg queue, RTT and
    /// exe).
    pub queue_ms: f64,
    pub rtt_ms: f64,
    pub execute_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<u64>,
}

/// A point's NFS calls over its measured window, as strata's own client
/// counted them on its connections (an `nfs://` target), read at the
/// window's edges at the same moments as the interfaces' bytes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NfsFigures {
    pub server: String,
    /// How durable writes were made durable: `file_sync` (FILE_SYNC
    /// writes) or `unstable_commit` (UNSTABLE writes, each then COMMITted).
    pub durable_writes: String,
    /// TCP connections per job (`--nfs-connections`).
    pub connections: u32,
    /// The most bytes one READ or WRITE call carried (`--nfs-transfer`).
    pub transfer_bytes: u32,
    pub calls: u64,
    pub replies: u64,
    pub calls_per_s: f64,
    /// Calls per I/O: an I/O larger than the transfer size is several.
    pub calls_per_io: f64,
    /// From a call's send to its reply, µs, mean: the server's time and
    /// the network's, and the calls sent before it on its connection.
    pub round_trip_mean_us: f64,
    /// The RPC records' bytes on the connections, each with its mark.
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// The I/Os' bytes of data, read and written.
    pub data_bytes: u64,
    /// The records' bytes beyond the data, % of the data: the protocol's
    /// own (RPC and NFS headers); TCP/IP's is not in it.
    pub protocol_overhead_pct: f64,
    /// The interface this host reaches the server through, and its bytes
    /// over the same window (everything on it: TCP/IP's headers, and any
    /// other traffic); absent when it is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface_bytes_received: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface_bytes_sent: Option<u64>,
    /// Each address of the server the connections were spread over
    /// (`--nfs-address`, Direct NFS's paths), when there were several.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<NfsPathFigures>,
    /// The filer's own side over the same window, from its agent
    /// (`--agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filer: Option<FilerFigures>,
}

/// A filer host over a point's window, as its agent (a strata agent or
/// node_exporter there) counted at the window's edges: the devices under
/// the export and its network interfaces. When an edge had no answer,
/// `missing` says why and nothing is counted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FilerFigures {
    /// The host as its agent names itself.
    pub host: String,
    /// The agent's URL, without a password.
    pub agent: String,
    #[serde(default)]
    pub devices: Vec<FilerDeviceFigures>,
    #[serde(default)]
    pub interfaces: Vec<FilerInterfaceFigures>,
    /// The NFS server's own count of the calls on the export, where its
    /// agent serves one (a strata agent with `--nfs-server`): each
    /// operation it counted calls of over the window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server: Vec<FilerServerCallFigures>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// One operation of one protocol on the export over the window, as the
/// filer's NFS server counted it, and how strata's round trip of the same
/// operation splits into the server's own time and the rest: the
/// network's, both TCP/IP stacks', and the wait in their queues.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FilerServerCallFigures {
    /// The server (`nfs-ganesha`).
    pub server: String,
    /// `NFSv3`, `NFSv40`, …
    pub protocol: String,
    /// `READ` or `WRITE`.
    pub op: String,
    pub calls: u64,
    pub errors: u64,
    /// The data the calls carried.
    pub bytes: u64,
    /// The server's own time per call, µs, mean.
    pub server_mean_us: f64,
    /// strata's round trip per call of this operation over the same
    /// window, µs, mean; absent when strata had no reply to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip_mean_us: Option<f64>,
    /// The round trip less the server's time, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_server_us: Option<f64>,
}

/// One of the filer's devices under the export over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FilerDeviceFigures {
    pub device: String,
    pub read_requests: u64,
    pub read_bytes: u64,
    pub write_requests: u64,
    pub write_bytes: u64,
}

/// One of the filer's interfaces over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FilerInterfaceFigures {
    pub interface: String,
    pub receive_bytes: u64,
    pub transmit_bytes: u64,
}

/// One address of the server over a point's window: its connections' calls
/// and bytes, and the interface this host reaches it through.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NfsPathFigures {
    /// The address as given (`--nfs-address`).
    pub address: String,
    /// Its connections per job.
    pub connections: u32,
    pub calls: u64,
    pub calls_per_s: f64,
    /// % of the point's calls.
    pub calls_pct: f64,
    pub round_trip_mean_us: f64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// The interface, and everything on it over the window (shared with
    /// any other address reached through it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface_bytes_received: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface_bytes_sent: Option<u64>,
}

impl PointResult {
    pub fn total_requests(&self) -> u64 {
        self.groups.iter().map(|group| group.all.requests).sum()
    }

    /// IOPS of the small-I/O groups (everything but large streams).
    pub fn small_iops(&self) -> f64 {
        self.small_groups().map(|group| group.all.iops).sum()
    }

    pub fn mb_per_s(&self) -> f64 {
        self.groups.iter().map(|group| group.all.mb_per_s).sum()
    }

    /// For a point of one group on an NFS server: the connections with
    /// requests in flight (each job's `--nfs-connections`, no more than its
    /// depth: calibrate opens no connection without one) and the I/Os in
    /// flight (depth × jobs); `None` for any other point.
    pub fn nfs_in_flight(&self) -> Option<(usize, usize)> {
        let nfs = self.nfs.as_ref()?;
        let [group] = &self.groups[..] else {
            return None;
        };
        let (depth, jobs) = (group.queue_depth.max(1), group.jobs.max(1));
        Some(((nfs.connections as usize).min(depth) * jobs, depth * jobs))
    }

    pub fn small_groups(&self) -> impl Iterator<Item = &GroupResult> {
        self.groups.iter().filter(|group| !group.is_large())
    }

    /// Latency of all small-I/O requests of the point together.
    pub fn small_latency(&self) -> LatencyHistogram {
        let mut merged = LatencyHistogram::new();
        for group in self.small_groups() {
            merged.merge(&group.histograms.read);
            merged.merge(&group.histograms.write);
        }
        merged
    }
}

/// A best point and its figure.
#[derive(Clone, Debug, Serialize, PartialEq, Deserialize)]
pub struct Best {
    pub point: String,
    pub value: f64,
    pub unit: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LatencyTargetResult {
    pub lat_target_us: f64,
    /// The highest small-I/O IOPS of a point whose small-I/O p99 met the target.
    pub best: Option<Best>,
    pub p99_us: Option<f64>,
}

/// The CALIBRATE_IO / ORION summary.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    pub max_iops: Option<Best>,
    pub max_mb_per_s: Option<Best>,
    pub min_latency: Option<Best>,
    pub iops_under_latency_target: LatencyTargetResult,
    /// The small-I/O-only point with the most IOPS per unit of mean latency
    /// (Kleinrock's "power"): past it, more queue buys latency, not IOPS.
    pub knee: Option<Best>,
    /// Valid, not a storage result, or failed (`verdict::judge`); not
    /// recorded in version 1 Recordings made before verdicts.
    #[serde(default = "Verdict::not_recorded")]
    pub verdict: Verdict,
}

fn best_by(
    points: &[PointResult],
    unit: &str,
    figure: impl Fn(&PointResult) -> Option<f64>,
    prefer_low: bool,
) -> Option<Best> {
    points
        .iter()
        .filter_map(|point| figure(point).map(|value| (point, value)))
        .filter(|(_, value)| value.is_finite() && *value > 0.0)
        .max_by(|a, b| {
            let order = a.1.total_cmp(&b.1);
            if prefer_low {
                order.reverse()
            } else {
                order
            }
        })
        .map(|(point, value)| Best {
            point: point.name.clone(),
            value,
            unit: unit.to_string(),
        })
}

impl Summary {
    /// The summary of `points`, with the verdict judged on them
    /// (`verdict::judge`).
    pub fn of(points: &[PointResult], lat_target_us: f64, verdict: Verdict) -> Summary {
        let small_only = |point: &PointResult| point.groups.iter().all(|group| !group.is_large());
        let has_small =
            |point: &PointResult| point.small_groups().any(|group| group.all.requests > 0);
        let max_iops = best_by(
            points,
            "IOPS",
            |p| has_small(p).then(|| p.small_iops()),
            false,
        );
        let max_mb_per_s = best_by(points, "MB/s", |p| Some(p.mb_per_s()), false);
        let min_latency = best_by(
            points,
            "us (mean)",
            |p| has_small(p).then(|| p.small_latency().mean_ns() / 1e3),
            true,
        );
        let meets_target = |point: &PointResult| {
            let p99_us = point.small_latency().percentile_ns(99.0) as f64 / 1e3;
            (has_small(point) && p99_us <= lat_target_us).then(|| point.small_iops())
        };
        let under_target = best_by(points, "IOPS", meets_target, false);
        let p99_us = under_target.as_ref().and_then(|best| {
            let point = points.iter().find(|point| point.name == best.point)?;
            Some(point.small_latency().percentile_ns(99.0) as f64 / 1e3)
        });
        let knee = best_by(
            points,
            "IOPS",
            |p| {
                let mean_ns = p.small_latency().mean_ns();
                (small_only(p) && has_small(p) && mean_ns > 0.0).then(|| p.small_iops() / mean_ns)
            },
            false,
        )
        .map(|best| {
            let point = points
                .iter()
                .find(|point| point.name == best.point)
                .expect("found above");
            Best {
                value: point.small_iops(),
                ..best
            }
        });
        Summary {
            max_iops,
            max_mb_per_s,
            min_latency,
            iops_under_latency_target: LatencyTargetResult {
                lat_target_us,
                best: under_target,
                p99_us,
            },
            knee,
            verdict,
        }
    }
}

impl GroupResult {
    /// Large streams measure bandwidth; everything else measures IOPS.
    pub fn is_large(&self) -> bool {
        self.label == "large"
    }
}
