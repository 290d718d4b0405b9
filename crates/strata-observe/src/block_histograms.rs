//! The block tracer's requests as Prometheus histograms: per device and
//! operation, the time start → end (blktrace's Q2C: what /proc/diskstats
//! times and counts), the device time (issue → end, D2C) and the queue
//! time (start → issue, Q2D), in seconds, with `_bucket`, `_sum` and
//! `_count`, so that a fleet's Prometheus takes p99 per disk with
//! `histogram_quantile`. The tracer's fine buckets (128 per power of two)
//! are folded into fixed bounds from 10 µs to 10 s: a request is counted
//! under the first bound at or above the top of its fine bucket, so a bound
//! is exact to 0.8%. Beside them, a counter of the requests whose end the
//! tracer missed (`strata_block_request_ends_missed_total`), which
//! /proc/diskstats counts and the histograms do not.
//!
//! Not for: the per-second percentiles of the `blocktrace` layer (a
//! collector), or tracing.

use crate::exposition::{help_escape, labels};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use strata_probe::blocktrace::{bucket_range, shared, Buckets, Kind, Op, TraceSnapshot};
use strata_probe::diskstats::read_diskstats;
use strata_recording::names::blocktrace;

/// The time histograms' upper bounds, seconds (Prometheus's `le`).
pub const BOUNDS_S: [f64; 19] = [
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The size histogram's upper bounds, bytes: powers of two, 512 B to
/// 16 MiB.
pub const BOUNDS_BYTES: [f64; 16] = [
    512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0, 262144.0, 524288.0,
    1048576.0, 2097152.0, 4194304.0, 8388608.0, 16777216.0,
];

/// One histogram family: the tracer's series it folds, its bounds and its
/// unit.
struct Family {
    kind: Kind,
    name: &'static str,
    help: &'static str,
    bounds: &'static [f64],
    /// The family's unit per unit the tracer counts (seconds per ns, 1 for
    /// bytes).
    scale: f64,
}

const FAMILIES: [Family; 4] = [
    Family {
        kind: Kind::Total,
        name: blocktrace::SECONDS_FAMILY,
        help: "block requests' time from start to end (blktrace's Q2C, what /proc/diskstats times and counts), of requests whose start was traced one by one with BPF, seconds",
        bounds: &BOUNDS_S,
        scale: 1e-9,
    },
    Family {
        kind: Kind::Device,
        name: blocktrace::DEVICE_SECONDS_FAMILY,
        help: "block requests' device time (issue to the driver -> end, blktrace's D2C), traced one by one with BPF, seconds",
        bounds: &BOUNDS_S,
        scale: 1e-9,
    },
    Family {
        kind: Kind::Queue,
        name: blocktrace::QUEUE_SECONDS_FAMILY,
        help: "block requests' queue time in the host (start -> issue to the driver, blktrace's Q2D), traced one by one with BPF, seconds",
        bounds: &BOUNDS_S,
        scale: 1e-9,
    },
    Family {
        kind: Kind::Size,
        name: "strata_block_request_size_bytes",
        help: "block requests' size as issued to the driver, traced one by one with BPF, bytes",
        bounds: &BOUNDS_BYTES,
        scale: 1.0,
    },
];

/// The histogram families of everything traced since the tracer started;
/// nothing where it is not running (the `blocktrace` layer's
/// `strata_layer_up` says why). A scrape only reads the tracer: it leaves
/// the outlier floor to the sampler and never waits for it.
pub fn families(host: &str) -> String {
    let Some(snapshot) = shared::peek() else {
        return String::new();
    };
    let names: BTreeMap<(u32, u32), String> = read_diskstats()
        .unwrap_or_default()
        .into_iter()
        .map(|disk| ((disk.major, disk.minor), disk.name))
        .collect();
    let mut out = String::new();
    for family in &FAMILIES {
        let _ = writeln!(out, "# HELP {} {}", family.name, help_escape(family.help));
        let _ = writeln!(out, "# TYPE {} histogram", family.name);
        for ((device, op), buckets) in snapshot.by_device(family.kind) {
            let Some(name) = names.get(&device) else {
                continue;
            };
            let series_labels = BTreeMap::from([
                ("device".to_string(), name.clone()),
                ("operation".to_string(), op.name().to_string()),
            ]);
            write_histogram(&mut out, family, &labels(host, &series_labels), &buckets);
        }
    }
    out += &ends_missed(host, &snapshot, &names);
    out
}

/// The ends missed by device and operation: every pair the histograms
/// hold, 0 where none was missed.
fn ends_missed(
    host: &str,
    snapshot: &TraceSnapshot,
    names: &BTreeMap<(u32, u32), String>,
) -> String {
    let name = blocktrace::ENDS_MISSED_FAMILY;
    let mut out = format!(
        "# HELP {name} {}\n# TYPE {name} counter\n",
        help_escape(
            "block requests whose start was traced and whose end the tracer's BPF program did not \
             see, found when the kernel reused the request: counted by /proc/diskstats, not in the \
             strata_block_request histograms"
        )
    );
    let mut pairs: BTreeSet<((u32, u32), Op)> =
        snapshot.by_device(Kind::Device).into_keys().collect();
    pairs.extend(
        snapshot
            .ends_missed
            .keys()
            .map(|(device, op, _)| (*device, *op)),
    );
    for (device, op) in pairs {
        let Some(device_name) = names.get(&device) else {
            continue;
        };
        let series_labels = BTreeMap::from([
            ("device".to_string(), device_name.clone()),
            ("operation".to_string(), op.name().to_string()),
        ]);
        let missed = snapshot.ends_missed_of(device, op);
        let _ = writeln!(out, "{name}{} {missed}", labels(host, &series_labels));
    }
    out
}

/// `_bucket` lines (cumulative, ending with `+Inf`), `_sum`, `_count`. The
/// count is the buckets' own, so that `+Inf` equals it. A time is counted
/// by the top of its fine bucket; a size by its lowest (sizes are whole
/// sectors: exact to 64 KiB).
fn write_histogram(out: &mut String, family: &Family, labels: &str, buckets: &Buckets) {
    let with_le = |le: &str| format!("{},le=\"{le}\"}}", labels.trim_end_matches('}'));
    let mut per_bound = vec![0u64; family.bounds.len()];
    let mut count = 0u64;
    for (bucket, requests) in &buckets.counts {
        let (low, width) = bucket_range(*bucket);
        let value = match family.kind {
            Kind::Size => low,
            _ => low + width - 1,
        } as f64
            * family.scale;
        if let Some(at) = family.bounds.iter().position(|bound| value <= *bound) {
            per_bound[at] += requests;
        }
        count += requests;
    }
    let name = family.name;
    let mut cumulative = 0;
    for (bound, requests) in family.bounds.iter().zip(per_bound) {
        cumulative += requests;
        let _ = writeln!(
            out,
            "{name}_bucket{} {cumulative}",
            with_le(&bound.to_string())
        );
    }
    let _ = writeln!(out, "{name}_bucket{} {count}", with_le("+Inf"));
    let sum = buckets.sum as f64 * family.scale;
    let _ = writeln!(out, "{name}_sum{labels} {sum}");
    let _ = writeln!(out, "{name}_count{labels} {count}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_probe::blocktrace::bucket_of;

    #[test]
    fn fine_buckets_fold_into_cumulative_bounds_that_end_with_the_count() {
        let mut buckets = Buckets::default();
        buckets.counts.insert(bucket_of(40_000), 3); // 40 µs
        buckets.counts.insert(bucket_of(2_000_000), 2); // 2 ms
        buckets.counts.insert(bucket_of(20_000_000_000), 1); // 20 s
        buckets.sum = 3 * 40_000 + 2 * 2_000_000 + 20_000_000_000;
        let family = Family {
            name: "f",
            ..FAMILIES[1]
        };
        let mut out = String::new();
        write_histogram(&mut out, &family, "{host=\"h\"}", &buckets);
        assert!(
            out.contains("f_bucket{host=\"h\",le=\"0.000025\"} 0\n"),
            "{out}"
        );
        assert!(
            out.contains("f_bucket{host=\"h\",le=\"0.00005\"} 3\n"),
            "{out}"
        );
        assert!(
            out.contains("f_bucket{host=\"h\",le=\"0.0025\"} 5\n"),
            "{out}"
        );
        assert!(out.contains("f_bucket{host=\"h\",le=\"10\"} 5\n"), "{out}");
        assert!(
            out.contains("f_bucket{host=\"h\",le=\"+Inf\"} 6\n"),
            "{out}"
        );
        assert!(out.contains("f_count{host=\"h\"} 6\n"), "{out}");
        assert!(out.contains("f_sum{host=\"h\"} 20.00412\n"), "{out}");
    }

    #[test]
    fn a_size_is_counted_under_the_first_bound_at_or_over_it() {
        let mut buckets = Buckets::default();
        buckets.counts.insert(bucket_of(4096), 5);
        buckets.counts.insert(bucket_of(4096 + 512), 1);
        buckets.sum = 5 * 4096 + 4608;
        let family = Family {
            name: "s",
            ..FAMILIES[3]
        };
        let mut out = String::new();
        write_histogram(&mut out, &family, "{host=\"h\"}", &buckets);
        assert!(
            out.contains("s_bucket{host=\"h\",le=\"4096\"} 5\n"),
            "{out}"
        );
        assert!(
            out.contains("s_bucket{host=\"h\",le=\"8192\"} 6\n"),
            "{out}"
        );
        assert!(out.contains("s_sum{host=\"h\"} 25088\n"), "{out}");
    }
}
