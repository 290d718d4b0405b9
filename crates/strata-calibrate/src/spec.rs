//! What a calibration runs: points made of I/O groups, each group one kind of
//! database-shaped load (small random reads, large sequential streams, log
//! writes). Every option resolves into these types before any I/O starts,
//! and the Recording stores them as they are here.
//!
//! Not for: running anything; see `point` and `worker`.

use serde::Serialize;
use std::time::Duration;
use strata_core::units::serialize_seconds;
pub use strata_recording::calibrate::{MatrixCell, SyncMode};

/// Where in the target's range the offsets of a random group fall.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Distribution {
    Uniform,
    /// Zipf over the blocks with exponent `theta` (fio's `zipf:θ`); ranks
    /// are scattered over the range so hot blocks are not adjacent.
    Zipf {
        theta: f64,
    },
    /// `pct` percent of requests go uniformly into `size_bytes` at
    /// `offset_bytes` (relative to the range start); the rest anywhere.
    Hotspot {
        offset_bytes: u64,
        size_bytes: u64,
        pct: f64,
    },
    /// Uniform blocks drawn `batch` at a time and read in ascending order,
    /// one request each: the order a PostgreSQL bitmap heap scan reads a
    /// statement's blocks in (`strata run`'s selects, pgio's).
    Sorted {
        batch: u32,
    },
    /// Uniform blocks drawn `batch` at a time and read in the order drawn,
    /// one request each, each batch timed whole: a statement that reads
    /// its blocks one by one through an index on shuffled keys (InnoDB's,
    /// `strata run --engine mariadb`).
    Batches {
        batch: u32,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AccessPattern {
    Random {
        distribution: Distribution,
    },
    /// Each job streams from its own start point, wrapping at the range end.
    Sequential,
}

/// One kind of load inside a point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupSpec {
    /// What it stands for: `small`, `large`, `log`, …
    pub label: String,
    pub block_size_bytes: u32,
    /// Share of requests that are reads, 0–100.
    pub read_pct: f64,
    pub pattern: AccessPattern,
    /// Requests in flight per job.
    pub queue_depth: usize,
    /// Independent jobs (streams), each with `queue_depth` in flight.
    pub jobs: usize,
    pub sync: SyncMode,
    /// Open-loop arrival rate for the whole group; latency is then measured
    /// from each request's scheduled time.
    pub rate_iops: Option<f64>,
}

impl GroupSpec {
    pub fn writes(&self) -> bool {
        self.read_pct < 100.0
    }

    pub fn outstanding(&self) -> usize {
        self.queue_depth * self.jobs
    }

    /// fio's name for the pattern, for tables.
    pub fn rw_name(&self) -> &'static str {
        let random = matches!(self.pattern, AccessPattern::Random { .. });
        match (self.read_pct, random) {
            (pct, true) if pct >= 100.0 => "randread",
            (pct, true) if pct <= 0.0 => "randwrite",
            (_, true) => "randrw",
            (pct, false) if pct >= 100.0 => "read",
            (pct, false) if pct <= 0.0 => "write",
            (_, false) => "rw",
        }
    }
}

/// One measurement: groups that run together for one window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointSpec {
    pub name: String,
    pub cell: Option<MatrixCell>,
    pub groups: Vec<GroupSpec>,
}

/// When a point ends.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StopRule {
    /// Run `ramp` unmeasured, then measure for `duration`.
    Timed {
        #[serde(rename = "ramp_s", serialize_with = "serialize_seconds")]
        ramp: Duration,
        #[serde(rename = "duration_s", serialize_with = "serialize_seconds")]
        duration: Duration,
    },
    /// Complete exactly `ios` requests per group (split over its jobs), all
    /// measured; the elapsed time is the result.
    Count { ios: u64 },
}
