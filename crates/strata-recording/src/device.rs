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
