//! Offset generators: where each request of a group goes. One generator per
//! job, each with its own random stream. Offsets are multiples of the block
//! size from the start of the range, so O_DIRECT alignment holds whenever the
//! range start and block size are aligned.
//!
//! Not for: choosing read or write, or timing.

use crate::spec::{AccessPattern, Distribution};
use strata_core::random::FastRng;

/// The byte range of the target that I/O may touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ByteRange {
    pub start_bytes: u64,
    pub end_bytes: u64,
}

impl ByteRange {
    pub fn len(&self) -> u64 {
        self.end_bytes - self.start_bytes
    }

    pub fn is_empty(&self) -> bool {
        self.end_bytes <= self.start_bytes
    }
}

enum Kind {
    Uniform,
    Zipf {
        sampler: ZipfSampler,
        multiplier: u64,
    },
    Hotspot {
        first_block: u64,
        blocks: u64,
        pct: f64,
    },
    Sequential {
        next_block: u64,
    },
    /// The batch still to read, popped from the end: highest block first
    /// when `ascending` (read lowest first), else in the order drawn.
    Batch {
        batch: u32,
        ascending: bool,
        left: Vec<u64>,
    },
}

pub struct OffsetGenerator {
    kind: Kind,
    rng: FastRng,
    start_bytes: u64,
    blocks: u64,
    block_size: u64,
}

impl OffsetGenerator {
    /// The generator for job `job` of `jobs` in a group.
    pub fn new(
        pattern: &AccessPattern,
        range: ByteRange,
        block_size: u64,
        job: usize,
        jobs: usize,
        seed: u64,
    ) -> Self {
        let blocks = (range.len() / block_size).max(1);
        let kind = match pattern {
            AccessPattern::Sequential => Kind::Sequential {
                next_block: blocks * job as u64 / jobs.max(1) as u64,
            },
            AccessPattern::Random { distribution } => random_kind(distribution, blocks, block_size),
        };
        OffsetGenerator {
            kind,
            rng: FastRng::seeded(seed),
            start_bytes: range.start_bytes,
            blocks,
            block_size,
        }
    }

    #[inline]
    pub fn next_offset(&mut self) -> u64 {
        let block = match &mut self.kind {
            Kind::Uniform => self.rng.below(self.blocks),
            Kind::Zipf {
                sampler,
                multiplier,
            } => {
                let rank = sampler.sample(&mut self.rng) - 1;
                ((u128::from(rank) * u128::from(*multiplier)) % u128::from(self.blocks)) as u64
            }
            Kind::Hotspot {
                first_block,
                blocks,
                pct,
            } => {
                if self.rng.unit_f64() * 100.0 < *pct {
                    *first_block + self.rng.below(*blocks)
                } else {
                    self.rng.below(self.blocks)
                }
            }
            Kind::Batch {
                batch,
                ascending,
                left,
            } => {
                if left.is_empty() {
                    left.extend((0..*batch).map(|_| self.rng.below(self.blocks)));
                    if *ascending {
                        left.sort_unstable_by(|a, b| b.cmp(a));
                    }
                }
                // --distribution refuses a batch below 1, so a refilled
                // batch always has a block; an empty one would read uniform.
                left.pop().unwrap_or_else(|| self.rng.below(self.blocks))
            }
            Kind::Sequential { next_block } => {
                let block = *next_block;
                *next_block = if block + 1 >= self.blocks {
                    0
                } else {
                    block + 1
                };
                block
            }
        };
        self.start_bytes + block * self.block_size
    }

    /// Blocks per batch when requests come in batches (a statement's), so
    /// a worker can time each batch as a whole.
    pub fn batch_blocks(&self) -> Option<u32> {
        match &self.kind {
            Kind::Batch { batch, .. } => Some(*batch),
            _ => None,
        }
    }

    /// A uniform draw in `[0, 100)` from this job's stream, for read/write mixes.
    #[inline]
    pub fn percent_draw(&mut self) -> f64 {
        self.rng.unit_f64() * 100.0
    }
}

fn random_kind(distribution: &Distribution, blocks: u64, block_size: u64) -> Kind {
    match distribution {
        Distribution::Uniform => Kind::Uniform,
        Distribution::Zipf { theta } => Kind::Zipf {
            sampler: ZipfSampler::new(blocks, *theta),
            multiplier: coprime_multiplier(blocks),
        },
        Distribution::Hotspot {
            offset_bytes,
            size_bytes,
            pct,
        } => {
            let first_block = (offset_bytes / block_size).min(blocks - 1);
            let hot_blocks = (size_bytes / block_size).clamp(1, blocks - first_block);
            Kind::Hotspot {
                first_block,
                blocks: hot_blocks,
                pct: *pct,
            }
        }
        Distribution::Sorted { batch } => Kind::Batch {
            batch: (*batch).max(1),
            ascending: true,
            left: Vec::new(),
        },
        Distribution::Batches { batch } => Kind::Batch {
            batch: (*batch).max(1),
            ascending: false,
            left: Vec::new(),
        },
    }
}

/// A multiplier coprime with `blocks`, so `rank × multiplier mod blocks`
/// visits every block once: hot ranks land far apart.
fn coprime_multiplier(blocks: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    if blocks <= 2 {
        return 1;
    }
    let mut candidate = (0x9E37_79B9_7F4A_7C15u64 % blocks).max(1);
    while gcd(candidate, blocks) != 1 {
        candidate = candidate % (blocks - 1) + 1;
    }
    candidate
}

/// Zipf over `1..=n` by rejection-inversion (Hörmann and Derflinger, 1996),
/// constant time per draw whatever `n` is.
struct ZipfSampler {
    n: f64,
    exponent: f64,
    total: f64,
    inverse_exponent: f64,
}

impl ZipfSampler {
    fn new(n: u64, exponent: f64) -> Self {
        let n = n as f64;
        let total = if exponent != 1.0 {
            (n.powf(1.0 - exponent) - exponent) / (1.0 - exponent)
        } else {
            1.0 + n.ln()
        };
        let inverse_exponent = if exponent != 1.0 {
            1.0 / (1.0 - exponent)
        } else {
            0.0
        };
        ZipfSampler {
            n,
            exponent,
            total,
            inverse_exponent,
        }
    }

    fn inverse_cdf(&self, probability: f64) -> f64 {
        let scaled = probability * self.total;
        if scaled <= 1.0 {
            scaled
        } else if self.exponent != 1.0 {
            (scaled * (1.0 - self.exponent) + self.exponent).powf(self.inverse_exponent)
        } else {
            (scaled - 1.0).exp()
        }
    }

    fn sample(&self, rng: &mut FastRng) -> u64 {
        loop {
            let inverse = self.inverse_cdf(rng.unit_f64());
            let candidate = (inverse + 1.0).floor();
            let mut ratio = candidate.powf(-self.exponent);
            if candidate > 1.0 {
                ratio *= inverse.powf(self.exponent);
            }
            if rng.unit_f64() < ratio && candidate <= self.n {
                return candidate as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RANGE: ByteRange = ByteRange {
        start_bytes: 1 << 20,
        end_bytes: 9 << 20,
    };

    fn uniform() -> AccessPattern {
        AccessPattern::Random {
            distribution: Distribution::Uniform,
        }
    }

    #[test]
    fn offsets_stay_aligned_inside_the_range() {
        let mut generator = OffsetGenerator::new(&uniform(), RANGE, 8192, 0, 1, 1);
        for _ in 0..10_000 {
            let offset = generator.next_offset();
            assert!(offset >= RANGE.start_bytes && offset + 8192 <= RANGE.end_bytes);
            assert_eq!((offset - RANGE.start_bytes) % 8192, 0);
        }
    }

    #[test]
    fn unsorted_batches_are_timed_as_batches_but_not_sorted() {
        let batches = AccessPattern::Random {
            distribution: Distribution::Batches { batch: 64 },
        };
        let mut generator = OffsetGenerator::new(&batches, RANGE, 8192, 0, 1, 5);
        assert_eq!(generator.batch_blocks(), Some(64));
        let falls = (0..100)
            .map(|_| {
                (0..64)
                    .map(|_| generator.next_offset())
                    .collect::<Vec<u64>>()
            })
            .filter(|batch| batch.windows(2).any(|pair| pair[0] > pair[1]))
            .count();
        assert_eq!(falls, 100, "every batch of 64 uniform blocks has a fall");
        assert_eq!(
            OffsetGenerator::new(&uniform(), RANGE, 8192, 0, 1, 5).batch_blocks(),
            None
        );
    }

    #[test]
    fn sorted_batches_rise_and_cover_the_range() {
        let sorted = AccessPattern::Random {
            distribution: Distribution::Sorted { batch: 64 },
        };
        let mut generator = OffsetGenerator::new(&sorted, RANGE, 8192, 0, 1, 5);
        let mut batches = Vec::new();
        for _ in 0..100 {
            let batch: Vec<u64> = (0..64).map(|_| generator.next_offset()).collect();
            assert!(batch.windows(2).all(|pair| pair[0] <= pair[1]), "{batch:?}");
            batches.push(batch);
        }
        let distinct: std::collections::HashSet<&Vec<u64>> = batches.iter().collect();
        assert_eq!(distinct.len(), 100, "each batch is drawn anew");
        let highest = batches.iter().map(|b| b[63]).max().unwrap();
        assert!(
            highest >= RANGE.end_bytes - (1 << 20),
            "uniform over the range"
        );
    }

    #[test]
    fn sequential_jobs_start_apart_and_wrap() {
        let pattern = AccessPattern::Sequential;
        let mut second = OffsetGenerator::new(&pattern, RANGE, 1 << 20, 1, 2, 1);
        let offsets: Vec<u64> = (0..5).map(|_| second.next_offset()).collect();
        let mib = 1 << 20;
        assert_eq!(offsets, vec![5 * mib, 6 * mib, 7 * mib, 8 * mib, mib]);
    }

    #[test]
    fn zipf_concentrates_and_hotspot_obeys_its_share() {
        let zipf = AccessPattern::Random {
            distribution: Distribution::Zipf { theta: 1.2 },
        };
        let mut generator = OffsetGenerator::new(&zipf, RANGE, 8192, 0, 1, 3);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..20_000 {
            *counts.entry(generator.next_offset()).or_insert(0u32) += 1;
        }
        let hottest = counts.values().max().copied().unwrap();
        assert!(
            hottest > 20_000 / 10,
            "zipf:1.2's top block should take >10%, got {hottest}"
        );

        let hot = Distribution::Hotspot {
            offset_bytes: 0,
            size_bytes: 1 << 20,
            pct: 90.0,
        };
        let pattern = AccessPattern::Random { distribution: hot };
        let mut generator = OffsetGenerator::new(&pattern, RANGE, 8192, 0, 1, 4);
        let inside = (0..10_000)
            .filter(|_| generator.next_offset() < RANGE.start_bytes + (1 << 20))
            .count();
        assert!(
            (9_000..9_400).contains(&inside),
            "90% + 10%/8 expected, got {inside}"
        );
    }
}
