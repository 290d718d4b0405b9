//! The block layer, request by request: every request's queue time (from
//! its start, `block_io_start`, to its issue to the driver,
//! `block_rq_issue`: the host's block layer and I/O scheduler, blktrace's
//! Q2D) and device time (issue to its end, `block_io_done`: D2C), per
//! device and operation, counted in the kernel by BPF programs into
//! log-linear buckets (exact below 256 ns, then 128 per power of two: any
//! percentile within 0.8%) and read from user space when asked, never an
//! event stream. Requests the programs could not follow are counted, never
//! hidden.
//!
//! For: root (or CAP_BPF and CAP_PERFMON) on Linux 6.5 or later, whose
//! block tracepoints carry the request's start and end; the reason it
//! cannot run otherwise ([`BlockTracer::start`]'s error).
//!
//! Each request is also counted under its submitter: the role strata gave
//! its thread (a database's backend, WAL writer, …; [`BlockTracer::name_roles`])
//! splits the histograms, and each process's requests, bytes and times are
//! totalled with its name. A request that took longer than the outlier
//! floor is kept whole (its process, device, sector, size, queue and device
//! time) in a ring of 4,096: the Linux `V$KERNEL_IO_OUTLIER`.
//!
//! Not for: a window's figures for a run or a calibration (`shared`).

mod bpf;
mod btf;
mod program;
pub mod served;
pub mod shared;

use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use program::OUTLIER_SLOTS;
pub use strata_core::log_linear::{bucket_of, bucket_range, SUB_BUCKET_BITS};

const STARTS_IN_FLIGHT: u32 = 65_536;
/// Buckets past the dense ones (values over 2^26, series past the first
/// 128).
const BUCKET_ENTRIES: u32 = 65_536;
const SERIES_ENTRIES: u32 = 4_096;

/// What a request was asked to do (from the tracepoint's `rwbs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Op {
    Read = 0,
    Write = 1,
    Discard = 2,
    Flush = 3,
    Other = 4,
}

/// Which span of a request's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Kind {
    /// Issue to the driver → end: the device's time (blktrace's D2C).
    Device = 0,
    /// Start → issue: the host's block layer and scheduler (Q2D).
    Queue = 1,
    /// Start → end: what `/proc/diskstats` times.
    Total = 2,
    /// Not a span: the request's size as issued, in bytes (its buckets
    /// and sum count bytes, not ns).
    Size = 3,
}

impl Op {
    fn of(value: u8) -> Op {
        match value {
            0 => Op::Read,
            1 => Op::Write,
            2 => Op::Discard,
            3 => Op::Flush,
            _ => Op::Other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Discard => "discard",
            Op::Flush => "flush",
            Op::Other => "other",
        }
    }
}

impl Kind {
    fn of(value: u8) -> Option<Kind> {
        match value {
            0 => Some(Kind::Device),
            1 => Some(Kind::Queue),
            2 => Some(Kind::Total),
            3 => Some(Kind::Size),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Device => "device",
            Kind::Queue => "queue",
            Kind::Total => "total",
            Kind::Size => "size",
        }
    }
}

/// One histogram's identity: a device (major, minor), an operation, a
/// span, the submitters' role (0: none given).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SeriesKey {
    pub major: u32,
    pub minor: u32,
    pub op: Op,
    pub kind: Kind,
    pub role: u8,
}

/// One process's requests on one device, of one operation and role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ProcessKey {
    pub tgid: u32,
    pub major: u32,
    pub minor: u32,
    pub op: Op,
    pub role: u8,
}

/// A process's requests, as its submitter: their number, bytes (as
/// issued), device and queue time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessTotals {
    /// The process's name (its thread's `comm`) when its first request
    /// started.
    pub command: String,
    pub requests: u64,
    pub bytes: u64,
    pub device_ns: u64,
    pub queue_ns: u64,
}

/// A request that took at least the outlier floor, start to end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoOutlier {
    /// Its place among all the outliers since the tracer started, from 1.
    pub sequence: u64,
    /// When it ended, CLOCK_MONOTONIC nanoseconds.
    pub ended_ns: u64,
    pub tgid: u32,
    pub command: String,
    pub role: u8,
    pub op: Op,
    pub major: u32,
    pub minor: u32,
    pub sector: u64,
    pub bytes: u32,
    pub queue_ns: u64,
    pub device_ns: u64,
    /// The submitting thread (its process's own for a single-threaded
    /// process, a connection's for MariaDB).
    pub thread: u32,
}

/// A histogram of requests' times (ns) or sizes (bytes, [`Kind::Size`]):
/// counts by bucket, and the exact count and sum, read apart from the
/// buckets right beside /proc/diskstats. Its figures are in its kind's
/// unit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Buckets {
    pub counts: BTreeMap<u16, u64>,
    pub requests: u64,
    pub sum: u64,
}

impl Buckets {
    /// The requests counted, as read beside /proc/diskstats.
    pub fn count(&self) -> u64 {
        self.requests
    }

    pub fn mean(&self) -> Option<f64> {
        (self.requests > 0).then(|| self.sum as f64 / self.requests as f64)
    }

    /// The value under which `quantile` (0–1) of the requests fell: the
    /// middle of the bucket that holds it.
    pub fn quantile(&self, quantile: f64) -> Option<f64> {
        let (low, width) = bucket_range(self.quantile_bucket(quantile)?);
        Some(low as f64 + (width as f64 - 1.0) / 2.0)
    }

    /// The bucket that holds the value under which `quantile` (0–1) of the
    /// requests fell.
    pub fn quantile_bucket(&self, quantile: f64) -> Option<u16> {
        let counts = self.counts.iter().map(|(bucket, count)| (*bucket, *count));
        strata_core::log_linear::quantile_bucket(counts, quantile)
    }

    /// The top of the highest bucket counted: no request took longer (or
    /// was larger).
    pub fn max(&self) -> Option<u64> {
        let (bucket, _) = self.counts.iter().next_back()?;
        let (low, width) = bucket_range(*bucket);
        Some(low + width - 1)
    }

    /// Adds `other`'s counts (another role's, another host's).
    pub fn add(&mut self, other: &Buckets) {
        for (bucket, count) in &other.counts {
            *self.counts.entry(*bucket).or_default() += count;
        }
        self.requests += other.requests;
        self.sum += other.sum;
    }

    /// The counts since `earlier` (a histogram read before from the same
    /// tracer).
    pub fn since(&self, earlier: Option<&Buckets>) -> Buckets {
        let Some(earlier) = earlier else {
            return self.clone();
        };
        Buckets {
            counts: counts_since(&self.counts, &earlier.counts),
            requests: self.requests.saturating_sub(earlier.requests),
            sum: self.sum.saturating_sub(earlier.sum),
        }
    }
}

/// Each count less its `earlier` value (0 when it had none), those that
/// grew only.
fn counts_since<K: Ord + Copy>(
    now: &BTreeMap<K, u64>,
    earlier: &BTreeMap<K, u64>,
) -> BTreeMap<K, u64> {
    now.iter()
        .map(|(key, count)| {
            let before = earlier.get(key).copied().unwrap_or(0);
            (*key, count.saturating_sub(before))
        })
        .filter(|(_, count)| *count > 0)
        .collect()
}

/// Each edge's count and the other's, added.
fn both_edges<K: Ord + Copy>(
    later: &BTreeMap<K, u64>,
    earlier: &BTreeMap<K, u64>,
) -> BTreeMap<K, u64> {
    let mut both = earlier.clone();
    for (key, count) in later {
        *both.entry(*key).or_default() += count;
    }
    both
}

/// Requests the programs could not follow, since the tracer started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Unfollowed {
    /// Issued with no start seen (started before tracing began): device
    /// time only.
    pub issued_unstarted: u64,
    /// Ended with no start or issue seen (in flight when tracing began, or
    /// a request whose sector a front merge moved): not counted.
    pub ended_unseen: u64,
    /// Starts dropped because the table of requests in flight was full.
    pub starts_dropped: u64,
    /// Events of each tracepoint (start, issue, end) the kernel did not
    /// run its program for, because a BPF program was already running on
    /// that CPU (a completion interrupting an issue): a skipped end is a
    /// request missing from the counts.
    pub skipped_by_kernel: [u64; 3],
    /// Requests whose process could not be given a total (the table of
    /// processes was full): in the histograms, under no process.
    pub processes_dropped: u64,
    /// Outliers written over in the ring before they were read.
    pub outliers_overwritten: u64,
    /// Requests started more than 2 s before the snapshot whose end the
    /// tracer has not seen (`stale_starts`, counted in a window by
    /// `since`): still at a slow device (/proc/diskstats' in-flight count
    /// holds them), or ended without the kernel running the end's program
    /// (seen while another tracer detached from the same tracepoints).
    pub ends_not_seen: u64,
}

/// Everything the tracer counted since it started.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceSnapshot {
    #[serde(with = "served::pairs")]
    pub series: BTreeMap<SeriesKey, Buckets>,
    #[serde(with = "served::pairs")]
    pub processes: BTreeMap<ProcessKey, ProcessTotals>,
    /// Merges by device (major, minor), operation and the role of the
    /// thread they happened in (0: none), as /proc/diskstats counts them:
    /// a bio merged into a request, or a request into another.
    #[serde(with = "served::pairs")]
    pub merges: BTreeMap<((u32, u32), Op, u8), u64>,
    /// Requests whose start was traced and whose end was not (the kernel
    /// did not run the end's program: docs/tracing.md), found when the
    /// kernel reused the request's structure for a later request; by the
    /// missed request's device, operation and role. /proc/diskstats
    /// counts them; the histograms do not.
    #[serde(with = "served::pairs")]
    pub ends_missed: BTreeMap<((u32, u32), Op, u8), u64>,
    /// Requests /proc/diskstats saw complete while this snapshot's counts
    /// were read beside it, by device (major, minor) and operation: each
    /// may be on the window's side of this edge in one count and not in
    /// the other. A window's (`since`) are both its edges'.
    #[serde(default, with = "served::pairs")]
    pub completed_while_read: BTreeMap<((u32, u32), Op), u64>,
    /// The outliers still in the ring, in order.
    pub outliers: Vec<IoOutlier>,
    /// Outliers since the tracer started (the ring keeps the last 4,096).
    pub outliers_seen: u64,
    /// The floor the kernel kept outliers over when this was read, ns.
    pub outlier_floor_ns: u64,
    /// The roles' names, by their number (0: none given, "").
    pub roles: Vec<String>,
    pub unfollowed: Unfollowed,
    /// When it was read, CLOCK_MONOTONIC nanoseconds (the programs'
    /// clock).
    pub taken_ns: u64,
    /// The start times (ns) of the requests started over 2 s before the
    /// snapshot and not seen ending.
    pub stale_starts: Vec<u64>,
}

impl TraceSnapshot {
    /// What was counted between `earlier` and this snapshot.
    pub fn since(&self, earlier: &TraceSnapshot) -> TraceSnapshot {
        let series = self
            .series
            .iter()
            .map(|(key, buckets)| (*key, buckets.since(earlier.series.get(key))))
            .filter(|(_, buckets)| buckets.count() > 0)
            .collect();
        let processes = self
            .processes
            .iter()
            .filter_map(|(key, totals)| {
                let before = earlier.processes.get(key).cloned().unwrap_or_default();
                let requests = totals.requests.saturating_sub(before.requests);
                (requests > 0).then(|| {
                    let totals = ProcessTotals {
                        command: totals.command.clone(),
                        requests,
                        bytes: totals.bytes.saturating_sub(before.bytes),
                        device_ns: totals.device_ns.saturating_sub(before.device_ns),
                        queue_ns: totals.queue_ns.saturating_sub(before.queue_ns),
                    };
                    (*key, totals)
                })
            })
            .collect();
        let outliers: Vec<IoOutlier> = self
            .outliers
            .iter()
            .filter(|outlier| outlier.sequence > earlier.outliers_seen)
            .cloned()
            .collect();
        let seen = self.outliers_seen.saturating_sub(earlier.outliers_seen);
        TraceSnapshot {
            series,
            processes,
            merges: counts_since(&self.merges, &earlier.merges),
            ends_missed: counts_since(&self.ends_missed, &earlier.ends_missed),
            completed_while_read: both_edges(
                &self.completed_while_read,
                &earlier.completed_while_read,
            ),
            unfollowed: self
                .unfollowed
                .since(&earlier.unfollowed, seen, outliers.len()),
            outliers,
            outliers_seen: self.outliers_seen,
            outlier_floor_ns: self.outlier_floor_ns,
            roles: self.roles.clone(),
            taken_ns: self.taken_ns,
            stale_starts: self.stale_starts.clone(),
        }
    }

    /// The merges of one device (major, minor) and operation, every
    /// role's together.
    pub fn merges_of(&self, device: (u32, u32), op: Op) -> u64 {
        of_device(&self.merges, device, op)
    }

    /// The requests of one device (major, minor) and operation that
    /// /proc/diskstats saw complete while the edges read the counts.
    pub fn completed_while_read_of(&self, device: (u32, u32), op: Op) -> u64 {
        self.completed_while_read
            .get(&(device, op))
            .copied()
            .unwrap_or(0)
    }

    /// The ends missed on every device.
    pub fn ends_missed_in_all(&self) -> u64 {
        self.ends_missed.values().sum()
    }

    /// The ends missed of one device (major, minor) and operation, every
    /// role's together.
    pub fn ends_missed_of(&self, device: (u32, u32), op: Op) -> u64 {
        of_device(&self.ends_missed, device, op)
    }

    /// The histogram of one device (major, minor), operation and span,
    /// every role's together.
    pub fn get(&self, device: (u32, u32), op: Op, kind: Kind) -> Option<Buckets> {
        let mut merged: Option<Buckets> = None;
        for (key, buckets) in &self.series {
            if (key.major, key.minor, key.op, key.kind) == (device.0, device.1, op, kind) {
                merged.get_or_insert_with(Buckets::default).add(buckets);
            }
        }
        merged
    }

    /// Every device and operation's histogram of `kind`, roles together.
    pub fn by_device(&self, kind: Kind) -> BTreeMap<((u32, u32), Op), Buckets> {
        let mut merged: BTreeMap<((u32, u32), Op), Buckets> = BTreeMap::new();
        for (key, buckets) in &self.series {
            if key.kind == kind {
                merged
                    .entry(((key.major, key.minor), key.op))
                    .or_default()
                    .add(buckets);
            }
        }
        merged
    }

    /// The role numbered `role`: "" when none was given.
    pub fn role_name(&self, role: u8) -> &str {
        self.roles.get(usize::from(role)).map_or("", String::as_str)
    }
}

/// The counts of one device and operation, every role's together.
fn of_device(counts: &BTreeMap<((u32, u32), Op, u8), u64>, device: (u32, u32), op: Op) -> u64 {
    counts
        .iter()
        .filter(|((on, counted_op, _), _)| *on == device && *counted_op == op)
        .map(|(_, count)| count)
        .sum()
}

impl Unfollowed {
    /// Since `before`, with the outliers seen and kept in between.
    fn since(&self, before: &Unfollowed, outliers_seen: u64, outliers_kept: usize) -> Unfollowed {
        let less = |now: u64, then: u64| now.saturating_sub(then);
        Unfollowed {
            issued_unstarted: less(self.issued_unstarted, before.issued_unstarted),
            ended_unseen: less(self.ended_unseen, before.ended_unseen),
            starts_dropped: less(self.starts_dropped, before.starts_dropped),
            skipped_by_kernel: std::array::from_fn(|at| {
                less(self.skipped_by_kernel[at], before.skipped_by_kernel[at])
            }),
            processes_dropped: less(self.processes_dropped, before.processes_dropped),
            outliers_overwritten: less(outliers_seen, outliers_kept as u64),
            ends_not_seen: 0,
        }
    }
}

/// The block tracer: its programs attached to the three tracepoints while
/// it lives.
pub struct BlockTracer {
    starts: bpf::Map,
    buckets: bpf::Map,
    /// Each of the first series' buckets of each kind, by its slot.
    dense: bpf::Map,
    /// The series given dense slots, by slot: a series keeps its slot.
    dense_slots: std::sync::Mutex<BTreeMap<u32, SeriesKey>>,
    totals: bpf::Map,
    /// The counts and sums of the series with dense slots, per CPU.
    slot_totals: bpf::Map,
    /// Per CPU, the series its last request was of, and its slot.
    series_cache: bpf::Map,
    lost: bpf::Map,
    roles: bpf::Map,
    processes: bpf::Map,
    config: bpf::Map,
    outliers: bpf::Map,
    merges: bpf::Map,
    ends_missed: bpf::Map,
    role_names: std::sync::Mutex<Vec<String>>,
    attachments: Vec<bpf::Attachment>,
}

/// The tracepoints of a request's life, in this order (`skipped_by_kernel`
/// counts them so), then those of merges.
const TRACEPOINTS: [&str; 6] = [
    "block_io_start",
    "block_rq_issue",
    "block_io_done",
    "block_bio_backmerge",
    "block_bio_frontmerge",
    "block_rq_merge",
];
const MERGE_ENTRIES: u32 = 4_096;

/// A request in flight longer than this is named among those whose end
/// was not seen.
const STALE_NS: u64 = 2_000_000_000;

/// The outlier floor until one is set: Oracle's 500 ms.
pub const DEFAULT_OUTLIER_FLOOR_NS: u64 = 500_000_000;

/// Roles are numbered in six bits of the histograms' key.
const MOST_ROLES: usize = 63;
const THREADS_WITH_A_ROLE: u32 = 65_536;
const PROCESS_ENTRIES: u32 = 65_536;

impl BlockTracer {
    /// Loads and attaches the programs; the error says why tracing cannot
    /// run here (not root, no BPF, no BTF, a kernel before 6.5).
    pub fn start() -> Result<BlockTracer> {
        BlockTracer::start_on(&TRACEPOINTS)
    }

    /// [`BlockTracer::start`] with programs on these tracepoints only.
    fn start_on(tracepoints: &[&str]) -> Result<BlockTracer> {
        let btf = btf::Btf::of_the_kernel()?;
        let layout = program::Layout::of(&btf)?;
        let tracer = BlockTracer::with_maps()?;
        tracer.set_outlier_floor(DEFAULT_OUTLIER_FLOOR_NS)?;
        let maps = program::Maps {
            starts: &tracer.starts,
            buckets: &tracer.buckets,
            dense: &tracer.dense,
            totals: &tracer.totals,
            slot_totals: &tracer.slot_totals,
            series_cache: &tracer.series_cache,
            lost: &tracer.lost,
            roles: &tracer.roles,
            processes: &tracer.processes,
            config: &tracer.config,
            outliers: &tracer.outliers,
            merges: &tracer.merges,
            ends_missed: &tracer.ends_missed,
        };
        let attachments = attach(tracepoints, (&btf, &layout), &maps)?;
        Ok(BlockTracer {
            attachments,
            ..tracer
        })
    }

    /// The tracer's maps, made empty; no program attached yet.
    fn with_maps() -> Result<BlockTracer> {
        // An entry per request structure seen, kept once its request has
        // ended; the least recently used make way (a structure freed with
        // its queue is never seen again).
        Ok(BlockTracer {
            starts: bpf::Map::create(
                bpf::MAP_TYPE_LRU_HASH,
                8,
                program::REQUEST_BYTES,
                STARTS_IN_FLIGHT,
            )?,
            buckets: bpf::Map::create(bpf::MAP_TYPE_HASH, 8, 8, BUCKET_ENTRIES)?,
            dense: bpf::Map::create(
                bpf::MAP_TYPE_ARRAY,
                4,
                8,
                program::DENSE_SLOTS * program::DENSE_PER_SLOT,
            )?,
            dense_slots: std::sync::Mutex::new(BTreeMap::new()),
            totals: bpf::Map::create(
                bpf::MAP_TYPE_HASH,
                8,
                program::SERIES_TOTALS_BYTES,
                SERIES_ENTRIES,
            )?,
            slot_totals: bpf::Map::create(
                bpf::MAP_TYPE_PERCPU_ARRAY,
                4,
                program::SLOT_TOTALS_BYTES,
                program::DENSE_SLOTS,
            )?,
            series_cache: bpf::Map::create(
                bpf::MAP_TYPE_PERCPU_ARRAY,
                4,
                program::SERIES_CACHE_BYTES,
                1,
            )?,
            lost: bpf::Map::create(bpf::MAP_TYPE_ARRAY, 4, 8, program::LOST_COUNTERS)?,
            roles: bpf::Map::create(bpf::MAP_TYPE_HASH, 4, 4, THREADS_WITH_A_ROLE)?,
            processes: bpf::Map::create_with(
                bpf::MAP_TYPE_PERCPU_HASH,
                (program::PROCESS_KEY_BYTES, program::PROCESS_VALUE_BYTES),
                PROCESS_ENTRIES,
                bpf::NO_PREALLOC,
            )?,
            config: bpf::Map::create(bpf::MAP_TYPE_ARRAY, 4, 8, program::CONFIG_ENTRIES)?,
            outliers: bpf::Map::create(
                bpf::MAP_TYPE_ARRAY,
                4,
                program::OUTLIER_BYTES,
                program::OUTLIER_SLOTS,
            )?,
            merges: bpf::Map::create(bpf::MAP_TYPE_HASH, 8, 8, MERGE_ENTRIES)?,
            ends_missed: bpf::Map::create(bpf::MAP_TYPE_HASH, 8, 8, MERGE_ENTRIES)?,
            role_names: std::sync::Mutex::new(vec![String::new()]),
            attachments: Vec::new(),
        })
    }

    /// Keeps every request that takes `floor_ns` or longer, start to end,
    /// as an outlier.
    pub fn set_outlier_floor(&self, floor_ns: u64) -> Result<()> {
        let key = program::CONFIG_OUTLIER_FLOOR.to_ne_bytes();
        self.config.update(&key, &floor_ns.to_ne_bytes())
    }

    /// Gives the threads (by thread id: a process's own id for its main
    /// thread) the role named: their requests are counted under it from
    /// now on. Fails past 63 roles.
    pub fn name_roles(&self, threads: &[(u32, &str)]) -> Result<()> {
        let mut names = self
            .role_names
            .lock()
            .map_err(|_| anyhow::anyhow!("the roles' table was poisoned"))?;
        for (thread, role) in threads {
            let number = match names.iter().position(|name| name == role) {
                Some(number) => number,
                None if names.len() <= MOST_ROLES => {
                    names.push(role.to_string());
                    names.len() - 1
                }
                None => anyhow::bail!("more than {MOST_ROLES} roles: {role} cannot be counted"),
            };
            self.roles
                .update(&thread.to_ne_bytes(), &(number as u32).to_ne_bytes())?;
        }
        if !threads.is_empty() {
            let key = program::CONFIG_ROLES_GIVEN.to_ne_bytes();
            self.config.update(&key, &1u64.to_ne_bytes())?;
        }
        Ok(())
    }

    /// Takes the threads' roles away (their requests count under none).
    pub fn forget_roles(&self, threads: &[u32]) {
        for thread in threads {
            self.roles.delete(&thread.to_ne_bytes());
        }
    }

    /// Everything counted since the tracer started, each map read in
    /// batches: the counts, then the distributions.
    pub fn snapshot(&self) -> TraceSnapshot {
        let mut snapshot = self.counts();
        self.add_distributions(&mut snapshot);
        snapshot
    }

    /// The counts a caller compares with /proc/diskstats: the processes'
    /// totals, the series' counts and sums, the merges. A few hundred
    /// entries: read between a database's counters and /proc/diskstats.
    pub fn counts(&self) -> TraceSnapshot {
        let mut snapshot = TraceSnapshot {
            taken_ns: monotonic_ns(),
            ..TraceSnapshot::default()
        };
        let mut dense_slots = self
            .dense_slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let totals_bytes = program::SERIES_TOTALS_BYTES as usize;
        self.totals.for_each(|key, value| {
            let (Some((series_key, _)), true) = (series_key(key), value.len() >= totals_bytes)
            else {
                return;
            };
            if let Some(slot) = u64_at(value, program::SLOT_AT as usize).checked_sub(1) {
                dense_slots.insert(slot as u32, series_key);
            }
            add_counts_and_sums(&mut snapshot, series_key, value);
        });
        self.slot_totals.for_each(|slot, value| {
            let Some(series_key) = dense_slots.get(&u32_at(slot, 0)) else {
                return;
            };
            for cpus_part in self.slot_totals.per_cpu(value) {
                add_counts_and_sums(&mut snapshot, *series_key, cpus_part);
            }
        });
        self.processes.for_each(|key, value| {
            snapshot
                .processes
                .extend(process_entry(key, self.processes.per_cpu(value)));
        });
        snapshot.merges = by_device_op_and_role(&self.merges);
        snapshot.ends_missed = by_device_op_and_role(&self.ends_missed);
        snapshot
    }

    /// The rest of a snapshot of the counts: the buckets, the outliers, the
    /// requests in flight and not followed. The bulk of the maps: a caller
    /// reads them after /proc/diskstats.
    pub fn add_distributions(&self, snapshot: &mut TraceSnapshot) {
        self.buckets.for_each(|key, value| {
            let (Some((series_key, bucket)), Ok(value)) =
                (series_key(key), <[u8; 8]>::try_from(value))
            else {
                return;
            };
            let series = snapshot.series.entry(series_key).or_default();
            *series.counts.entry(bucket).or_default() += u64::from_ne_bytes(value);
        });
        self.add_dense_buckets(snapshot);
        self.read_outliers(snapshot);
        snapshot.stale_starts = self.stale_starts(snapshot.taken_ns);
        snapshot.roles = self
            .role_names
            .lock()
            .map(|names| names.clone())
            .unwrap_or_default();
        snapshot.unfollowed = self.unfollowed();
    }

    /// The buckets of the series with dense slots (those `counts` has
    /// seen), each slot read in one batch.
    fn add_dense_buckets(&self, snapshot: &mut TraceSnapshot) {
        let slots = self
            .dense_slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let per_kind = program::DENSE_BUCKETS as usize;
        for (slot, series_key) in slots {
            let values = self.dense.array_range(
                slot * program::DENSE_PER_SLOT,
                program::DENSE_PER_SLOT as usize,
            );
            let counted = values.iter().enumerate().filter(|(_, count)| **count > 0);
            for (at, count) in counted {
                let Some(kind) = Kind::of((at / per_kind) as u8) else {
                    continue;
                };
                let series = snapshot
                    .series
                    .entry(SeriesKey { kind, ..series_key })
                    .or_default();
                *series.counts.entry((at % per_kind) as u16).or_default() += count;
            }
        }
    }

    fn config(&self, index: u32) -> u64 {
        self.config
            .lookup(&index.to_ne_bytes())
            .map_or(0, |value| u64_at(&value, 0))
    }

    /// The outliers in the ring: the last 4,096 seen at most.
    fn read_outliers(&self, snapshot: &mut TraceSnapshot) {
        snapshot.outlier_floor_ns = self.config(program::CONFIG_OUTLIER_FLOOR);
        (snapshot.outliers_seen, snapshot.outliers) = self.outliers_after(0);
    }

    /// The outliers seen so far, and those after the `after`th still in the
    /// ring (the last 4,096 at most), in order: one map lookup when there
    /// are none.
    pub fn outliers_after(&self, after: u64) -> (u64, Vec<IoOutlier>) {
        let seen = self.config(program::CONFIG_OUTLIERS_SEEN);
        let first = (seen.saturating_sub(u64::from(program::OUTLIER_SLOTS)) + 1)
            .max(after.saturating_add(1));
        if first > seen {
            return (seen, Vec::new());
        }
        // Past a few dozen, the whole ring in one batch beats a lookup each.
        let ring: Option<BTreeMap<Vec<u8>, Vec<u8>>> =
            (seen + 1 - first > 64).then(|| self.outliers.entries().into_iter().collect());
        let outliers = (first..=seen)
            .filter_map(|sequence| {
                let slot = ((sequence - 1) % u64::from(program::OUTLIER_SLOTS)) as u32;
                let key = slot.to_ne_bytes();
                let value = match &ring {
                    Some(ring) => ring.get(key.as_slice()).cloned(),
                    None => self.outliers.lookup(&key),
                }?;
                let outlier = outlier_entry(&value)?;
                (outlier.sequence == sequence).then_some(outlier)
            })
            .collect();
        (seen, outliers)
    }

    /// The start times of the requests in flight that started more than
    /// `STALE_NS` before `now_ns`.
    fn stale_starts(&self, now_ns: u64) -> Vec<u64> {
        self.starts
            .entries()
            .iter()
            .map(|(_, value)| u64_at(value, 0))
            .filter(|started_ns| *started_ns != 0 && started_ns + STALE_NS < now_ns)
            .collect()
    }

    fn unfollowed(&self) -> Unfollowed {
        let lost = |index: u32| {
            self.lost
                .lookup(&index.to_ne_bytes())
                .map_or(0, |value| u64_at(&value, 0))
        };
        Unfollowed {
            issued_unstarted: lost(program::ISSUED_UNSTARTED),
            ended_unseen: lost(program::ENDED_UNSEEN),
            starts_dropped: lost(program::STARTS_DROPPED),
            skipped_by_kernel: std::array::from_fn(|at| {
                self.attachments
                    .get(at)
                    .and_then(|attached| attached.program().recursion_misses())
                    .unwrap_or(0)
            }),
            processes_dropped: lost(program::PROCESSES_DROPPED),
            outliers_overwritten: 0,
            ends_not_seen: 0,
        }
    }
}

/// A map of counts keyed (dev u32, op u8, role u8, 0, 0) by device (major,
/// minor), operation and role.
fn by_device_op_and_role(map: &bpf::Map) -> BTreeMap<((u32, u32), Op, u8), u64> {
    let mut counts = BTreeMap::new();
    map.for_each(|key, value| {
        if let (Ok(key), true) = (<[u8; 8]>::try_from(key), value.len() >= 8) {
            let device = split_device(u32_at(&key, 0));
            counts.insert((device, Op::of(key[4]), key[5]), u64_at(value, 0));
        }
    });
    counts
}

/// The programs on `tracepoints`, loaded against the kernel's types and
/// attached.
fn attach(
    tracepoints: &[&str],
    (btf, layout): (&btf::Btf, &program::Layout),
    maps: &program::Maps,
) -> Result<Vec<bpf::Attachment>> {
    let mut attachments = Vec::new();
    for &name in tracepoints {
        let insns = match name {
            "block_io_start" => program::start(layout, maps)?,
            "block_rq_issue" => program::issue(layout, maps)?,
            "block_io_done" => program::done(layout, maps)?,
            "block_rq_merge" => program::merge(layout, maps, program::Merged::Request)?,
            _ => program::merge(layout, maps, program::Merged::Bio)?,
        };
        let typedef = format!("btf_trace_{name}");
        let btf_id = btf.typedef_id(&typedef).map_err(|error| {
            anyhow::anyhow!("{error} (Linux 6.5 and later have the block_io_start and block_io_done tracepoints)")
        })?;
        let loaded = bpf::LoadedProgram::load_btf_tracepoint(name, btf_id, &insns)?;
        attachments.push(bpf::attach_raw(loaded, name)?);
    }
    Ok(attachments)
}

/// CLOCK_MONOTONIC, ns: the clock of `bpf_ktime_get_ns`.
pub fn monotonic_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..at + 8)
        .and_then(|bytes| bytes.try_into().ok())
        .map_or(0, u64::from_ne_bytes)
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .and_then(|bytes| bytes.try_into().ok())
        .map_or(0, u32::from_ne_bytes)
}

/// A `comm`: up to its first NUL.
fn command(bytes: &[u8]) -> String {
    let end = bytes
        .iter()
        .position(|byte| *byte == 0)
        .unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// (major, minor) of a dev_t as the kernel keeps it inside (major << 20).
fn split_device(dev: u32) -> (u32, u32) {
    (dev >> 20, dev & ((1 << 20) - 1))
}

/// A map key's series (device, operation, span, role) and bucket.
fn series_key(key: &[u8]) -> Option<(SeriesKey, u16)> {
    let key = <[u8; 8]>::try_from(key).ok()?;
    let (major, minor) = split_device(u32_at(&key, 0));
    let series = SeriesKey {
        major,
        minor,
        op: Op::of(key[4]),
        kind: Kind::of(key[5] & 0b11)?,
        role: key[5] >> 2,
    };
    Some((series, u16::from_ne_bytes([key[6], key[7]])))
}

/// Each kind's count and sum, in the kind's order, of a series' totals
/// (or one CPU's part of them), added to the snapshot's.
fn add_counts_and_sums(snapshot: &mut TraceSnapshot, series_key: SeriesKey, value: &[u8]) {
    for kind in [Kind::Device, Kind::Queue, Kind::Total, Kind::Size] {
        let at = kind as usize * 16;
        let requests = u64_at(value, at);
        if requests > 0 {
            let series = snapshot
                .series
                .entry(SeriesKey { kind, ..series_key })
                .or_default();
            series.requests += requests;
            series.sum += u64_at(value, at + 8);
        }
    }
}

/// A process's totals from each CPU's part of its entry, its name from the
/// part that has one (the CPU that made the entry).
fn process_entry<'a>(
    key: &[u8],
    cpus_parts: impl Iterator<Item = &'a [u8]>,
) -> Option<(ProcessKey, ProcessTotals)> {
    let mut totals = ProcessTotals::default();
    for value in cpus_parts.filter(|value| value.len() >= 48) {
        if totals.command.is_empty() {
            totals.command = command(&value[..16]);
        }
        totals.requests += u64_at(value, 16);
        totals.bytes += u64_at(value, 24);
        totals.device_ns += u64_at(value, 32);
        totals.queue_ns += u64_at(value, 40);
    }
    if key.len() < 10 {
        return None;
    }
    let (major, minor) = split_device(u32_at(key, 4));
    let process = ProcessKey {
        tgid: u32_at(key, 0),
        major,
        minor,
        op: Op::of(key[8]),
        role: key[9],
    };
    Some((process, totals))
}

fn outlier_entry(value: &[u8]) -> Option<IoOutlier> {
    if value.len() < program::OUTLIER_BYTES as usize {
        return None;
    }
    let (major, minor) = split_device(u32_at(value, 16));
    Some(IoOutlier {
        sequence: u64_at(value, 64),
        ended_ns: u64_at(value, 0),
        tgid: u32_at(value, 8),
        command: command(&value[48..64]),
        role: value[12],
        op: Op::of(value[13]),
        major,
        minor,
        sector: u64_at(value, 24),
        bytes: u32_at(value, 20),
        queue_ns: u64_at(value, 32),
        device_ns: u64_at(value, 40),
        thread: u32_at(value, 72),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{FileExt, OpenOptionsExt};

    /// With no program at the end, every request whose structure the
    /// kernel had used before is found still kept at its next start:
    /// counted as an end missed, under its own device and operation.
    #[test]
    fn a_start_still_kept_at_the_next_is_an_end_missed() {
        let device = strata_testkit::loopdev::LoopDevice::attach_in(
            std::path::Path::new("/dev/shm"),
            16 << 20,
            false,
            |_| {},
        );
        let tracer = BlockTracer::start_on(&TRACEPOINTS[..2]).expect("tracing as root");
        let name = device.name();
        let stat = || {
            crate::diskstats::read_diskstats()
                .unwrap()
                .into_iter()
                .find(|disk| disk.name == name)
                .unwrap()
        };
        let before = (tracer.snapshot(), stat());
        let file = std::fs::File::options()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&device.node)
            .unwrap();
        let mut buffer = vec![0u8; 2 * 4096];
        let offset = buffer.as_ptr().align_offset(4096);
        for read in 0..2000u64 {
            file.read_exact_at(&mut buffer[offset..offset + 4096], read % 4096 * 4096)
                .unwrap();
        }
        let after = (tracer.snapshot(), stat());
        let window = after.0.since(&before.0);
        let reads = after.1.read_requests - before.1.read_requests;
        let nr_requests: u64 =
            std::fs::read_to_string(format!("/sys/block/{name}/queue/nr_requests"))
                .unwrap()
                .trim()
                .parse()
                .unwrap();
        let on_device = (after.1.major, after.1.minor);
        let missed = window.ends_missed_of(on_device, Op::Read);
        assert!(
            reads >= 2000 && missed <= reads && missed + nr_requests >= reads,
            "{missed} ends missed of {reads} reads ({nr_requests} requests at most in flight): \
             {:?}",
            window.ends_missed
        );
        assert_eq!(window.ends_missed_of(on_device, Op::Write), 0);
        assert!(window.get(on_device, Op::Read, Kind::Total).is_none());
    }

    #[test]
    fn quantiles_come_from_the_bucket_that_holds_them() {
        let mut buckets = Buckets::default();
        buckets.counts.insert(bucket_of(100), 98);
        buckets.counts.insert(bucket_of(1_000_000), 2);
        buckets.requests = 100;
        buckets.sum = 98 * 100 + 2 * 1_000_000;
        assert_eq!(buckets.quantile(0.5), Some(100.0));
        let p99 = buckets.quantile(0.99).unwrap();
        assert!((p99 - 1_000_000.0).abs() / 1e6 < 0.008, "{p99}");
        assert_eq!(buckets.mean(), Some(20_098.0));
        let earlier = Buckets {
            counts: BTreeMap::from([(bucket_of(100), 90)]),
            requests: 90,
            sum: 9000,
        };
        let since = buckets.since(Some(&earlier));
        assert_eq!(since.count(), 10);
        assert_eq!(since.sum, 800 + 2_000_000);
    }
}
