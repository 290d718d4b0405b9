//! Log-linear buckets of nanoseconds, as the block tracer counts requests
//! in the kernel and a Recording keeps them: exact below 256 ns, then 128
//! per power of two, so a bucket is at most 1/128 (0.78%) of its value
//! wide. Counts of the same bucket add exactly across windows and hosts.
//!
//! Not for: statement latencies (HdrHistogram's, `histogram`).

/// Sub-buckets per power of two, as bits: 128.
pub const SUB_BUCKET_BITS: u32 = 7;

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

/// The doubling bucket of microseconds (biolatency's) that a fine bucket
/// of nanoseconds folds into, by its lowest value: its upper bound, µs
/// (1 for under 1 µs, 2 for [1, 2) µs, 4 for [2, 4) µs, …). The same fine
/// bucket always folds into the same doubling one, so folded counts add
/// exactly across intervals and hosts.
pub fn doubling_us_bound(bucket: u16) -> u64 {
    let (low_ns, _) = bucket_range(bucket);
    1 << (64 - (low_ns / 1000).leading_zeros())
}

/// Fine buckets' counts folded into doubling ones ([`doubling_us_bound`]):
/// requests by upper bound, µs.
pub fn doubling_us<I>(counts: I) -> std::collections::BTreeMap<u64, u64>
where
    I: IntoIterator<Item = (u16, u64)>,
{
    let mut doubled = std::collections::BTreeMap::new();
    for (bucket, count) in counts {
        *doubled.entry(doubling_us_bound(bucket)).or_default() += count;
    }
    doubled
}

/// The bucket that holds the value under which `quantile` (0–1) of the
/// counted values fell, from (bucket, count) pairs in bucket order; `None`
/// with nothing counted.
pub fn quantile_bucket<I>(buckets: I, quantile: f64) -> Option<u16>
where
    I: IntoIterator<Item = (u16, u64)>,
    I::IntoIter: Clone,
{
    let buckets = buckets.into_iter();
    let count: u64 = buckets.clone().map(|(_, count)| count).sum();
    if count == 0 {
        return None;
    }
    let rank = ((quantile * count as f64).ceil() as u64).clamp(1, count);
    let mut seen = 0;
    for (bucket, bucket_count) in buckets {
        seen += bucket_count;
        if seen >= rank {
            return Some(bucket);
        }
    }
    None
}

/// The value under which `quantile` (0–1) of the counted values fell: the
/// middle of the bucket that holds it ([`quantile_bucket`]).
pub fn quantile_ns(buckets: &[(u16, u64)], quantile: f64) -> Option<f64> {
    let (low, width) = bucket_range(quantile_bucket(buckets.iter().copied(), quantile)?);
    Some(low as f64 + (width as f64 - 1.0) / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quantile_is_the_middle_of_the_bucket_that_holds_it() {
        let buckets = [(bucket_of(100), 98), (bucket_of(1_000_000), 2)];
        assert_eq!(quantile_ns(&buckets, 0.5), Some(100.0));
        let p99 = quantile_ns(&buckets, 0.99).unwrap();
        assert!((p99 - 1_000_000.0).abs() / 1e6 < 0.008, "{p99}");
        assert_eq!(quantile_ns(&[], 0.99), None);
    }

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
}
