//! Fast, seedable pseudo-random numbers for offsets and for incompressible
//! data (xoshiro256++, seeded through SplitMix64). Not cryptographic and not
//! for anything that must be unpredictable.

#[derive(Clone, Debug)]
pub struct FastRng {
    state: [u64; 4],
}

impl FastRng {
    pub fn seeded(seed: u64) -> Self {
        let mut mix = seed;
        let mut next = || {
            mix = mix.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = mix;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        FastRng {
            state: [next(), next(), next(), next()],
        }
    }

    /// Seeded from the clock and a per-call counter: different every time.
    pub fn from_entropy() -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static CALLS: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos() as u64);
        let call = CALLS.fetch_add(1, Ordering::Relaxed);
        Self::seeded(
            nanos ^ call.wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ u64::from(std::process::id()),
        )
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let [s0, s1, s2, s3] = &mut self.state;
        let result = s0.wrapping_add(*s3).rotate_left(23).wrapping_add(*s0);
        let t = *s1 << 17;
        *s2 ^= *s0;
        *s3 ^= *s1;
        *s1 ^= *s2;
        *s0 ^= *s3;
        *s2 ^= t;
        *s3 = s3.rotate_left(45);
        result
    }

    /// A uniform integer in `0..bound` (Lemire's multiply-shift; `bound` > 0).
    #[inline]
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// A uniform float in `[0, 1)`.
    #[inline]
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Fills `bytes` with random data (incompressible, not deduplicable).
    pub fn fill(&mut self, bytes: &mut [u8]) {
        let mut chunks = bytes.chunks_exact_mut(8);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let tail = chunks.into_remainder();
        let last = self.next_u64().to_le_bytes();
        tail.copy_from_slice(&last[..tail.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_bounds_and_covers_them() {
        let mut rng = FastRng::seeded(7);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            seen[rng.below(10) as usize] += 1;
        }
        assert!(
            seen.iter().all(|&count| (800..1200).contains(&count)),
            "{seen:?}"
        );
    }

    #[test]
    fn filled_data_does_not_compress_into_repeats() {
        let mut bytes = vec![0u8; 1 << 16];
        FastRng::seeded(1).fill(&mut bytes);
        let distinct: std::collections::HashSet<&[u8]> = bytes.chunks(8).collect();
        assert_eq!(distinct.len(), bytes.len() / 8);
    }
}
