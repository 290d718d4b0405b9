//! Where each loop of a session goes: which operation (select, update or
//! scan), which schema (its own or the hot one) and which range of keys
//! (uniform, Zipf-skewed, or in the hot spot).
//!
//! Not for: running SQL or timing anything.

use strata_core::random::FastRng;

use super::{AccessDistribution, Hotspot, WorkloadOptions};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operation {
    Select,
    Update,
    Scan,
}

/// One loop's work: `first_key..=last_key` of the chosen schema's `slob`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoopChoice {
    pub operation: Operation,
    pub hot_schema: bool,
    /// The loop's number (1-based): a session with schemas in turn
    /// ([`super::SessionSpec::also`]) takes the next one each loop.
    pub loop_number: u64,
    pub first_key: i64,
    pub last_key: i64,
}

impl LoopChoice {
    /// What belongs to the loop's schema: `hot` when the loop goes to the
    /// hot schema and the session has one, else the next in turn of `own`
    /// and `also` ([`super::SessionSpec::also`]), one loop each.
    pub fn schema_of<'a, T>(&self, own: &'a T, hot: Option<&'a T>, also: &'a [T]) -> &'a T {
        if let (true, Some(hot)) = (self.hot_schema, hot) {
            return hot;
        }
        match (self.loop_number % (also.len() as u64 + 1)) as usize {
            0 => own,
            turn => &also[turn - 1],
        }
    }
}

/// The access pattern of a run, shared by its sessions.
#[derive(Debug)]
pub struct AccessPlan {
    blocks: u64,
    work_unit_keys: u64,
    update_work_unit_keys: u64,
    scan_pct: f64,
    update_pct: f64,
    hotspot: Option<Hotspot>,
    hot_schema_every: Option<u32>,
    zipf: Option<ZipfSampler>,
}

impl AccessPlan {
    pub fn new(blocks: u64, workload: &WorkloadOptions) -> Self {
        let zipf = match workload.distribution {
            AccessDistribution::Uniform => None,
            AccessDistribution::Zipf { theta } => Some(ZipfSampler::new(blocks, theta)),
        };
        AccessPlan {
            blocks,
            work_unit_keys: u64::from(workload.work_unit.max(1)),
            update_work_unit_keys: u64::from(workload.update_work_unit.max(1)),
            scan_pct: workload.scan_pct,
            update_pct: workload.update_pct,
            hotspot: workload.hotspot.clone(),
            hot_schema_every: workload.hot_schema_every,
            zipf,
        }
    }

    /// The work of loop number `loop_number` (1-based) of a session.
    pub fn choose(&self, rng: &mut FastRng, loop_number: u64) -> LoopChoice {
        let roll_pct = rng.unit_f64() * 100.0;
        let operation = if roll_pct < self.scan_pct {
            Operation::Scan
        } else if roll_pct < self.scan_pct + self.update_pct {
            Operation::Update
        } else {
            Operation::Select
        };
        let every = |period: Option<u32>| {
            period.is_some_and(|n| n > 0 && loop_number.is_multiple_of(u64::from(n)))
        };
        let hot_schema = every(self.hot_schema_every);
        let in_hotspot = every(self.hotspot.as_ref().map(|hotspot| hotspot.every));
        let span = match operation {
            Operation::Update => self.update_work_unit_keys,
            _ => self.work_unit_keys,
        }
        .min(self.blocks);
        let first_key = self.first_key(rng, span, in_hotspot);
        LoopChoice {
            operation,
            hot_schema,
            loop_number,
            first_key: first_key as i64,
            last_key: (first_key + span - 1) as i64,
        }
    }

    fn first_key(&self, rng: &mut FastRng, span: u64, in_hotspot: bool) -> u64 {
        let last_start = self.blocks - span + 1;
        if let (true, Some(hotspot)) = (in_hotspot, &self.hotspot) {
            let hot_first = hotspot.offset_blocks.min(self.blocks - 1) + 1;
            let hot_size = hotspot.size_blocks.clamp(1, self.blocks - hot_first + 1);
            let hot_starts = hot_size.saturating_sub(span) + 1;
            return (hot_first + rng.below(hot_starts)).min(last_start);
        }
        match &self.zipf {
            Some(zipf) => zipf.sample(rng).min(last_start),
            None => 1 + rng.below(last_start),
        }
    }
}

/// Zipf-distributed integers in `1..=elements` with P(k) ∝ k^-theta, by
/// rejection-inversion (Hörmann and Derflinger 1996): O(1) per sample and
/// no table, whatever the number of elements.
#[derive(Debug)]
pub(crate) struct ZipfSampler {
    elements: f64,
    exponent: f64,
    h_integral_x1: f64,
    h_integral_elements: f64,
    squeeze: f64,
}

impl ZipfSampler {
    pub(crate) fn new(elements: u64, exponent: f64) -> Self {
        let mut sampler = ZipfSampler {
            elements: elements.max(1) as f64,
            exponent,
            h_integral_x1: 0.0,
            h_integral_elements: 0.0,
            squeeze: 0.0,
        };
        sampler.h_integral_x1 = sampler.h_integral(1.5) - 1.0;
        sampler.h_integral_elements = sampler.h_integral(sampler.elements + 0.5);
        sampler.squeeze =
            2.0 - sampler.h_integral_inverse(sampler.h_integral(2.5) - sampler.h(2.0));
        sampler
    }

    pub(crate) fn sample(&self, rng: &mut FastRng) -> u64 {
        loop {
            let u = self.h_integral_elements
                + rng.unit_f64() * (self.h_integral_x1 - self.h_integral_elements);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(1.0, self.elements);
            if k - x <= self.squeeze || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }

    fn h(&self, x: f64) -> f64 {
        (-self.exponent * x.ln()).exp()
    }

    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        expm1_over_x((1.0 - self.exponent) * log_x) * log_x
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.exponent)).max(-1.0);
        (ln1p_over_x(t) * x).exp()
    }
}

fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn workload() -> WorkloadOptions {
        WorkloadOptions {
            work_unit: 256,
            update_pct: 0.0,
            update_work_unit: 8,
            update_pad_bytes: 0,
            scan_pct: 0.0,
            think_time: None::<(Duration, Duration)>,
            think_every: 1,
            hotspot: None,
            hot_schema_every: None,
            distribution: AccessDistribution::Uniform,
        }
    }

    #[test]
    fn zipf_with_theta_one_halves_from_rank_one_to_two() {
        let sampler = ZipfSampler::new(1000, 1.0);
        let mut rng = FastRng::seeded(3);
        let mut counts = [0u32; 3];
        for _ in 0..200_000 {
            let k = sampler.sample(&mut rng);
            assert!((1..=1000).contains(&k));
            if k <= 2 {
                counts[k as usize] += 1;
            }
        }
        let ratio = f64::from(counts[1]) / f64::from(counts[2]);
        assert!((1.9..2.1).contains(&ratio), "{ratio}");
    }

    #[test]
    fn ranges_stay_inside_the_table_and_the_hot_spot() {
        let mut options = workload();
        options.hotspot = Some(Hotspot {
            offset_blocks: 90,
            size_blocks: 50,
            every: 2,
        });
        options.work_unit = 20;
        let plan = AccessPlan::new(100, &options);
        let mut rng = FastRng::seeded(5);
        for loop_number in 1..2000 {
            let choice = plan.choose(&mut rng, loop_number);
            assert!(
                choice.first_key >= 1 && choice.last_key <= 100,
                "{choice:?}"
            );
            assert_eq!(choice.last_key - choice.first_key, 19);
            if loop_number % 2 == 0 {
                assert!(choice.first_key >= 81, "{choice:?}");
            }
        }
    }

    #[test]
    fn operations_follow_the_percentages() {
        let mut options = workload();
        options.update_pct = 30.0;
        options.scan_pct = 10.0;
        let plan = AccessPlan::new(1000, &options);
        let mut rng = FastRng::seeded(9);
        let mut counts = [0u32; 3];
        for loop_number in 1..=10_000 {
            counts[plan.choose(&mut rng, loop_number).operation as usize] += 1;
        }
        assert!((5600..6400).contains(&counts[0]), "{counts:?}");
        assert!((2600..3400).contains(&counts[1]), "{counts:?}");
        assert!((800..1200).contains(&counts[2]), "{counts:?}");
    }
}
