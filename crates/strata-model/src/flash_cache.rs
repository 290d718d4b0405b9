//! Sizing a second-level flash cache under the database buffer cache
//! (DOMAIN lesson 11): the recommended size, the RAM its metadata costs, and
//! the hit ratio and average read latency expected for a data set and skew.
//!
//! The tiers are exclusive: the buffer cache holds the hottest blocks, the
//! flash cache the next hottest, and the rest are read from disk.
//! Not for: write-back caching or warm-up time.

use crate::{invalid, require_non_negative, require_positive, ModelError};
use serde::Serialize;

/// RAM metadata per cached block: about 100 bytes alone, 200 in a cluster.
pub fn metadata_bytes_per_block(cluster: bool) -> u64 {
    if cluster {
        200
    } else {
        100
    }
}

/// Recommended flash cache: 2× to 10× the buffer cache.
pub fn recommended_range(buffer_cache_bytes: u64) -> (u64, u64) {
    (buffer_cache_bytes * 2, buffer_cache_bytes * 10)
}

pub fn metadata_bytes(flash_bytes: u64, block_bytes: u64, cluster: bool) -> u64 {
    flash_bytes / block_bytes.max(1) * metadata_bytes_per_block(cluster)
}

/// How accesses spread over the data set's blocks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Skew {
    Uniform,
    /// Block of popularity rank i is accessed ∝ 1 / i^θ.
    Zipf {
        theta: f64,
    },
}

/// H(n, θ) = Σ_{i=1..n} i^−θ; summed exactly for the first 100,000 terms and
/// by the midpoint integral beyond (relative error far below 0.1%).
pub fn generalized_harmonic(n: u64, theta: f64) -> f64 {
    const EXACT_TERMS: u64 = 100_000;
    let exact_until = n.min(EXACT_TERMS);
    let exact: f64 = (1..=exact_until).map(|i| (i as f64).powf(-theta)).sum();
    if n <= EXACT_TERMS {
        return exact;
    }
    let (from, to) = (exact_until as f64 + 0.5, n as f64 + 0.5);
    let tail = if (theta - 1.0).abs() < 1e-12 {
        (to / from).ln()
    } else {
        (to.powf(1.0 - theta) - from.powf(1.0 - theta)) / (1.0 - theta)
    };
    exact + tail
}

/// Fraction of accesses that go to the hottest `cached` of `total` blocks.
pub fn hit_fraction(skew: Skew, cached_blocks: u64, total_blocks: u64) -> f64 {
    if total_blocks == 0 || cached_blocks >= total_blocks {
        return 1.0;
    }
    match skew {
        Skew::Uniform => cached_blocks as f64 / total_blocks as f64,
        Skew::Zipf { theta } => {
            generalized_harmonic(cached_blocks, theta) / generalized_harmonic(total_blocks, theta)
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Latencies {
    pub ram_s: f64,
    pub flash_s: f64,
    pub disk_s: f64,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct CacheInput {
    pub buffer_cache_bytes: u64,
    pub flash_bytes: u64,
    pub data_bytes: u64,
    pub block_bytes: u64,
    pub cluster: bool,
    pub skew: Skew,
    pub latencies: Latencies,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct CacheResult {
    pub flash_bytes: u64,
    pub flash_to_buffer_ratio: f64,
    pub metadata_bytes: u64,
    /// Shares of all reads served by each tier (sum to 1).
    pub buffer_hit: f64,
    pub flash_hit: f64,
    pub disk_read: f64,
    pub average_read_s: f64,
}

fn check(input: &CacheInput) -> Result<(), ModelError> {
    if input.block_bytes == 0 {
        return Err(invalid("block-size", "must be above 0"));
    }
    if input.buffer_cache_bytes == 0 {
        return Err(invalid("buffer-cache", "must be above 0"));
    }
    if input.data_bytes == 0 {
        return Err(invalid("data", "must be above 0"));
    }
    if let Skew::Zipf { theta } = input.skew {
        require_positive("skew", theta)?;
    }
    require_non_negative("ram-latency", input.latencies.ram_s)?;
    require_non_negative("flash-latency", input.latencies.flash_s)?;
    require_non_negative("disk-latency", input.latencies.disk_s)?;
    Ok(())
}

/// Hit shares and average read latency = Σ share × tier latency.
pub fn evaluate(input: CacheInput) -> Result<CacheResult, ModelError> {
    check(&input)?;
    let blocks = |bytes: u64| bytes / input.block_bytes;
    let total = blocks(input.data_bytes).max(1);
    let in_buffer = hit_fraction(input.skew, blocks(input.buffer_cache_bytes), total);
    let in_either = hit_fraction(
        input.skew,
        blocks(input.buffer_cache_bytes + input.flash_bytes),
        total,
    );
    let flash_hit = in_either - in_buffer;
    let disk_read = 1.0 - in_either;
    let latency = &input.latencies;
    Ok(CacheResult {
        flash_bytes: input.flash_bytes,
        flash_to_buffer_ratio: input.flash_bytes as f64 / input.buffer_cache_bytes as f64,
        metadata_bytes: metadata_bytes(input.flash_bytes, input.block_bytes, input.cluster),
        buffer_hit: in_buffer,
        flash_hit,
        disk_read,
        average_read_s: in_buffer * latency.ram_s
            + flash_hit * latency.flash_s
            + disk_read * latency.disk_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_core::units::GIB;

    #[test]
    fn uniform_ten_of_a_hundred_gib_hits_ten_percent() {
        assert!((hit_fraction(Skew::Uniform, 10, 100) - 0.1).abs() < 1e-12);
        let result = evaluate(CacheInput {
            buffer_cache_bytes: GIB,
            flash_bytes: 10 * GIB,
            data_bytes: 100 * GIB,
            block_bytes: 8192,
            cluster: false,
            skew: Skew::Uniform,
            latencies: Latencies {
                ram_s: 0.0,
                flash_s: 0.5e-3,
                disk_s: 6e-3,
            },
        })
        .unwrap();
        assert!((result.flash_hit - 0.10).abs() < 1e-9);
        assert!((result.disk_read - 0.89).abs() < 1e-9);
    }

    #[test]
    fn metadata_of_a_hundred_gib_of_eight_kib_blocks() {
        let single = metadata_bytes(100 * GIB, 8192, false);
        assert_eq!(single, 13_107_200 * 100);
        assert!((single as f64 / GIB as f64 - 1.22).abs() < 0.005);
        assert_eq!(metadata_bytes(100 * GIB, 8192, true), 2 * single);
    }

    #[test]
    fn zipf_is_skewed_and_the_harmonic_tail_is_accurate() {
        let exact: f64 = (1..=300_000u64).map(|i| (i as f64).powf(-0.8)).sum();
        assert!((generalized_harmonic(300_000, 0.8) / exact - 1.0).abs() < 1e-6);
        let exact_one: f64 = (1..=300_000u64).map(|i| 1.0 / i as f64).sum();
        assert!((generalized_harmonic(300_000, 1.0) / exact_one - 1.0).abs() < 1e-6);
        let hot = hit_fraction(Skew::Zipf { theta: 1.0 }, 10, 100);
        assert!(hot > 0.5 && hot < 1.0);
    }
}
