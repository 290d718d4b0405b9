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
//! Not for: per-process attribution or outliers yet; a window's figures
//! for a run or a calibration are `shared`'s.

mod bpf;
mod btf;
mod program;
pub mod shared;

use anyhow::Result;
use std::collections::BTreeMap;

/// Sub-buckets per power of two, as bits: 128, so a bucket is at most
/// 1/128 (0.78%) of its value wide.
pub const SUB_BUCKET_BITS: u32 = 7;

const STARTS_IN_FLIGHT: u32 = 65_536;
const BUCKET_ENTRIES: u32 = 262_144;
const SERIES_ENTRIES: u32 = 16_384;

/// What a request was asked to do (from the tracepoint's `rwbs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    Read = 0,
    Write = 1,
    Discard = 2,
    Flush = 3,
    Other = 4,
}

/// Which span of a request's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Issue to the driver → end: the device's time (blktrace's D2C).
    Device = 0,
    /// Start → issue: the host's block layer and scheduler (Q2D).
    Queue = 1,
    /// Start → end: what `/proc/diskstats` times.
    Total = 2,
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
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Device => "device",
            Kind::Queue => "queue",
            Kind::Total => "total",
        }
    }
}

/// One histogram's identity: a device (major, minor), an operation, a span.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeriesKey {
    pub major: u32,
    pub minor: u32,
    pub op: Op,
    pub kind: Kind,
}

/// A histogram of request times: counts by bucket, and the exact count
/// and sum, read apart from the buckets right beside /proc/diskstats.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Buckets {
    pub counts: BTreeMap<u16, u64>,
    pub requests: u64,
    pub sum_ns: u64,
}

/// The lowest value of a bucket and its width, nanoseconds.
pub fn bucket_range(bucket: u16) -> (u64, u64) {
    let linear = 1u64 << (SUB_BUCKET_BITS + 1);
    if u64::from(bucket) < linear {
        return (u64::from(bucket), 1);
    }
    let octave = u64::from(bucket) >> SUB_BUCKET_BITS;
    let sub = u64::from(bucket) & ((1 << SUB_BUCKET_BITS) - 1);
    let shift = octave - 1;
    (((1 << SUB_BUCKET_BITS) + sub) << shift, 1 << shift)
}

/// The bucket of a value, as the kernel program counts it.
pub fn bucket_of(value_ns: u64) -> u16 {
    let bits = SUB_BUCKET_BITS;
    if value_ns < 1 << (bits + 1) {
        return value_ns as u16;
    }
    let msb = 63 - value_ns.leading_zeros();
    let sub = (value_ns >> (msb - bits)) & ((1 << bits) - 1);
    (((u64::from(msb - bits + 1)) << bits) | sub) as u16
}

impl Buckets {
    /// The requests counted, as read beside /proc/diskstats.
    pub fn count(&self) -> u64 {
        self.requests
    }

    pub fn mean_ns(&self) -> Option<f64> {
        (self.requests > 0).then(|| self.sum_ns as f64 / self.requests as f64)
    }

    /// The value under which `quantile` (0–1) of the requests fell: the
    /// middle of the bucket that holds it.
    pub fn quantile_ns(&self, quantile: f64) -> Option<f64> {
        let count: u64 = self.counts.values().sum();
        if count == 0 {
            return None;
        }
        let rank = ((quantile * count as f64).ceil() as u64).clamp(1, count);
        let mut seen = 0;
        for (bucket, bucket_count) in &self.counts {
            seen += bucket_count;
            if seen >= rank {
                let (low, width) = bucket_range(*bucket);
                return Some(low as f64 + (width as f64 - 1.0) / 2.0);
            }
        }
        None
    }

    /// The top of the highest bucket counted: no request took longer.
    pub fn max_ns(&self) -> Option<u64> {
        let (bucket, _) = self.counts.iter().next_back()?;
        let (low, width) = bucket_range(*bucket);
        Some(low + width - 1)
    }

    /// The counts since `earlier` (a histogram read before from the same
    /// tracer).
    pub fn since(&self, earlier: Option<&Buckets>) -> Buckets {
        let Some(earlier) = earlier else {
            return self.clone();
        };
        let counts = self
            .counts
            .iter()
            .map(|(bucket, count)| {
                let before = earlier.counts.get(bucket).copied().unwrap_or(0);
                (*bucket, count.saturating_sub(before))
            })
            .filter(|(_, count)| *count > 0)
            .collect();
        Buckets {
            counts,
            requests: self.requests.saturating_sub(earlier.requests),
            sum_ns: self.sum_ns.saturating_sub(earlier.sum_ns),
        }
    }
}

/// Requests the programs could not follow, since the tracer started.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
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
}

/// Everything the tracer counted since it started.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceSnapshot {
    pub series: BTreeMap<SeriesKey, Buckets>,
    pub unfollowed: Unfollowed,
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
        let (now, before) = (self.unfollowed, earlier.unfollowed);
        TraceSnapshot {
            series,
            unfollowed: Unfollowed {
                issued_unstarted: now.issued_unstarted.saturating_sub(before.issued_unstarted),
                ended_unseen: now.ended_unseen.saturating_sub(before.ended_unseen),
                starts_dropped: now.starts_dropped.saturating_sub(before.starts_dropped),
                skipped_by_kernel: std::array::from_fn(|at| {
                    now.skipped_by_kernel[at].saturating_sub(before.skipped_by_kernel[at])
                }),
            },
        }
    }

    /// The histogram of one device (major, minor), operation and span.
    pub fn get(&self, device: (u32, u32), op: Op, kind: Kind) -> Option<&Buckets> {
        self.series.get(&SeriesKey {
            major: device.0,
            minor: device.1,
            op,
            kind,
        })
    }
}

/// The block tracer: its programs attached to the three tracepoints while
/// it lives.
pub struct BlockTracer {
    buckets: bpf::Map,
    totals: bpf::Map,
    lost: bpf::Map,
    attachments: Vec<bpf::Attachment>,
}

const TRACEPOINTS: [&str; 3] = ["block_io_start", "block_rq_issue", "block_io_done"];

impl BlockTracer {
    /// Loads and attaches the programs; the error says why tracing cannot
    /// run here (not root, no BPF, no BTF, a kernel before 6.5).
    pub fn start() -> Result<BlockTracer> {
        let layout = program::Layout::of(&btf::Btf::of_the_kernel()?)?;
        // Least recently used starts make way: a request whose end the
        // kernel skipped is never taken out.
        let starts = bpf::Map::create(bpf::MAP_TYPE_LRU_HASH, 8, 16, STARTS_IN_FLIGHT)?;
        let buckets = bpf::Map::create(bpf::MAP_TYPE_HASH, 8, 8, BUCKET_ENTRIES)?;
        let totals = bpf::Map::create(bpf::MAP_TYPE_HASH, 8, 16, SERIES_ENTRIES)?;
        let lost = bpf::Map::create(bpf::MAP_TYPE_ARRAY, 4, 8, 3)?;
        let mut attachments = Vec::new();
        for name in TRACEPOINTS {
            let insns = match name {
                "block_io_start" => program::start(&starts, &lost)?,
                "block_rq_issue" => program::issue(&starts, &lost)?,
                _ => program::done(&layout, &starts, (&buckets, &totals), &lost)?,
            };
            let loaded = bpf::LoadedProgram::load_raw_tracepoint(name, &insns)?;
            attachments.push(bpf::attach_raw(loaded, name)?);
        }
        drop(starts);
        Ok(BlockTracer {
            buckets,
            totals,
            lost,
            attachments,
        })
    }

    /// Everything counted since the tracer started: the buckets first, the
    /// requests not followed, then the counts and sums, last, so that they
    /// are read right before a caller reads /proc/diskstats.
    pub fn snapshot(&self) -> TraceSnapshot {
        let mut snapshot = TraceSnapshot::default();
        for (key, value) in self.buckets.entries() {
            let Some((series_key, bucket)) = series_key(&key) else {
                continue;
            };
            let Ok(value) = <[u8; 8]>::try_from(value) else {
                continue;
            };
            let series = snapshot.series.entry(series_key).or_default();
            series.counts.insert(bucket, u64::from_ne_bytes(value));
        }
        let lost = |index: u32| {
            self.lost
                .lookup(&index.to_ne_bytes())
                .and_then(|value| <[u8; 8]>::try_from(value).ok())
                .map_or(0, u64::from_ne_bytes)
        };
        snapshot.unfollowed = Unfollowed {
            issued_unstarted: lost(program::ISSUED_UNSTARTED),
            ended_unseen: lost(program::ENDED_UNSEEN),
            starts_dropped: lost(program::STARTS_DROPPED),
            skipped_by_kernel: std::array::from_fn(|at| {
                self.attachments
                    .get(at)
                    .and_then(|attached| attached.program().recursion_misses())
                    .unwrap_or(0)
            }),
        };
        for (key, value) in self.totals.entries() {
            let (Some((series_key, _)), Ok(value)) =
                (series_key(&key), <[u8; 16]>::try_from(value))
            else {
                continue;
            };
            let series = snapshot.series.entry(series_key).or_default();
            series.requests = u64::from_ne_bytes(value[..8].try_into().unwrap_or_default());
            series.sum_ns = u64::from_ne_bytes(value[8..].try_into().unwrap_or_default());
        }
        snapshot
    }
}

/// A map key's series (device, operation, span) and bucket.
fn series_key(key: &[u8]) -> Option<(SeriesKey, u16)> {
    let key = <[u8; 8]>::try_from(key).ok()?;
    let dev = u32::from_ne_bytes([key[0], key[1], key[2], key[3]]);
    let series = SeriesKey {
        major: dev >> 20,
        minor: dev & ((1 << 20) - 1),
        op: Op::of(key[4]),
        kind: Kind::of(key[5])?,
    };
    Some((series, u16::from_ne_bytes([key[6], key[7]])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_low_and_within_a_128th_above() {
        for value in [0u64, 1, 200, 255] {
            assert_eq!(bucket_range(bucket_of(value)), (value, 1));
        }
        for value in [
            256u64,
            257,
            511,
            512,
            100_000,
            123_456_789,
            3_600_000_000_000,
        ] {
            let (low, width) = bucket_range(bucket_of(value));
            assert!(
                low <= value && value < low + width,
                "{value}: [{low}, +{width})"
            );
            assert!(
                width as f64 <= low as f64 / 128.0,
                "{value}: width {width} of {low}"
            );
        }
        assert_eq!(bucket_of(256), 256);
        assert_eq!(bucket_of(511), 383);
        assert_eq!(bucket_of(512), 384);
    }

    #[test]
    fn quantiles_come_from_the_bucket_that_holds_them() {
        let mut buckets = Buckets::default();
        buckets.counts.insert(bucket_of(100), 98);
        buckets.counts.insert(bucket_of(1_000_000), 2);
        buckets.requests = 100;
        buckets.sum_ns = 98 * 100 + 2 * 1_000_000;
        assert_eq!(buckets.quantile_ns(0.5), Some(100.0));
        let p99 = buckets.quantile_ns(0.99).unwrap();
        assert!((p99 - 1_000_000.0).abs() / 1e6 < 0.008, "{p99}");
        assert_eq!(buckets.mean_ns(), Some(20_098.0));
        let earlier = Buckets {
            counts: BTreeMap::from([(bucket_of(100), 90)]),
            requests: 90,
            sum_ns: 9000,
        };
        let since = buckets.since(Some(&earlier));
        assert_eq!(since.count(), 10);
        assert_eq!(since.sum_ns, 800 + 2_000_000);
    }
}
