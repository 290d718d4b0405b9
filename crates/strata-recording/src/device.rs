//! Block devices in the Recording: what a device is (its topology, as
//! sysfs describes it) and what it did over an interval (iostat -x's
//! figures).
//!
//! Not for: reading sysfs or diskstats (strata-probe).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DeviceKind {
    Disk,
    Partition {
        parent: String,
    },
    DeviceMapper {
        dm_name: String,
    },
    Md {
        level: String,
        chunk_bytes: u64,
        raid_disks: u32,
    },
    Loop {
        backing_file: Option<String>,
    },
}

/// A block device as sysfs describes it. Queue attributes of a partition are
/// those of its disk; attributes a kernel does not expose are `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockDevice {
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub kind: DeviceKind,
    pub size_bytes: u64,
    pub rotational: Option<bool>,
    pub logical_block_size: u32,
    pub physical_block_size: u32,
    pub read_ahead_kib: Option<u64>,
    pub scheduler: Option<String>,
    pub max_sectors_kib: Option<u64>,
}

/// Random requests per second a single rotating disk can serve at most
/// (15k rpm with a deep queue).
pub const ROTATING_DISK_IOPS_CEILING: f64 = 450.0;

/// Whether a device flagged rotational served more requests per second
/// than a rotating disk can: the flag is then the driver's word, not the
/// hardware's.
pub fn rotation_contradicted(rotational: Option<bool>, requests_per_s: f64) -> bool {
    rotational == Some(true) && requests_per_s > ROTATING_DISK_IOPS_CEILING
}

/// How a device's rotation reads beside the most requests per second it
/// was seen serving: sysfs's `queue/rotational` is what the driver said,
/// and a virtual disk often says rotational, so a "rotational" device
/// faster than any spindle is named as such rather than taken at its word.
pub fn rotation_as_served(rotational: Option<bool>, requests_per_s: f64) -> String {
    match rotational {
        Some(true) if rotation_contradicted(rotational, requests_per_s) => format!(
            "flagged rotational by the kernel, yet it served {} requests/s, more than any \
             rotating disk can ({ROTATING_DISK_IOPS_CEILING:.0}): a virtual disk or an array",
            strata_core::units::thousands(requests_per_s.round() as u64)
        ),
        Some(true) => "rotational".to_string(),
        Some(false) => "non-rotational".to_string(),
        None => "rotation unknown".to_string(),
    }
}

/// The iostat -x view of one device over an interval, ready to print or
/// serialize: raw counts and the derived rates side by side.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IostatFigures {
    pub device: String,
    /// What the device is to the caller (`target`, `physical`, `data`, `wal`…).
    pub role: String,
    pub read_requests: u64,
    pub write_requests: u64,
    pub flush_requests: u64,
    /// Requests merged into others (iostat's rrqm, wrqm, as counts).
    #[serde(default)]
    pub read_merges: u64,
    #[serde(default)]
    pub write_merges: u64,
    /// Discard requests completed, merged into others, and the bytes they
    /// discarded (/proc/diskstats, 4.18+; iostat -x's d/s, drqm).
    #[serde(default)]
    pub discard_requests: u64,
    #[serde(default)]
    pub discard_merges: u64,
    #[serde(default)]
    pub discard_bytes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub r_per_s: f64,
    pub w_per_s: f64,
    pub read_mb_per_s: f64,
    pub write_mb_per_s: f64,
    pub rareq_sz_kib: f64,
    pub wareq_sz_kib: f64,
    pub r_await_ms: f64,
    pub w_await_ms: f64,
    pub aqu_sz: f64,
    pub util_pct: f64,
}

impl IostatFigures {
    /// The completed requests /proc/diskstats counts of `operation`
    /// (`read`, `write`, `flush`, `discard`); `None` for one it does not
    /// count.
    pub fn completed_requests(&self, operation: &str) -> Option<u64> {
        match operation {
            "read" => Some(self.read_requests),
            "write" => Some(self.write_requests),
            "flush" => Some(self.flush_requests),
            "discard" => Some(self.discard_requests),
            _ => None,
        }
    }
}
