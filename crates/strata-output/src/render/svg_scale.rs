//! Chart scales for the SVG charts: the range an axis covers, its tick
//! values (1, 2, 5 × 10ⁿ steps, or powers of ten on a log axis), and where a
//! value falls in pixels.
//!
//! Not for: drawing; `svg` does that.

/// Maps values of one axis to pixels between `start` and `end`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub low: f64,
    pub high: f64,
    pub log: bool,
    pub start: f64,
    pub end: f64,
}

impl Scale {
    /// The pixel of `value`; on a log axis, values at or below zero sit at
    /// the bottom of the axis (see [`Scale::is_off_scale`]).
    pub fn position(&self, value: f64) -> f64 {
        let (low, high, value) = if self.log {
            (
                self.low.log10(),
                self.high.log10(),
                value.max(self.low).log10(),
            )
        } else {
            (self.low, self.high, value)
        };
        let fraction = if high > low {
            (value - low) / (high - low)
        } else {
            0.5
        };
        self.start + fraction * (self.end - self.start)
    }

    /// True for a value a log axis cannot show (zero or negative).
    pub fn is_off_scale(&self, value: f64) -> bool {
        self.log && value <= 0.0
    }
}

/// Tick values covering every finite value in `values` (those above zero
/// on a log axis), about `target` of them on a linear axis. The first and
/// last tick are the ends of the axis. `include_zero` makes a linear axis
/// start (or end) at zero.
pub fn ticks(values: &[f64], log: bool, include_zero: bool, target: usize) -> Vec<f64> {
    let usable = values
        .iter()
        .copied()
        .filter(|value| value.is_finite() && (!log || *value > 0.0));
    let (low, high) = usable.fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), value| {
        (low.min(value), high.max(value))
    });
    if log {
        let (low, high) = if low.is_finite() {
            (low, high)
        } else {
            (1.0, 10.0)
        };
        log_ticks(low, high, target >= 4)
    } else {
        let (low, high) = if low.is_finite() {
            (low, high)
        } else {
            (0.0, 1.0)
        };
        let (low, high) = if include_zero {
            (low.min(0.0), high.max(0.0))
        } else {
            (low, high)
        };
        linear_ticks(low, high, target.max(1))
    }
}

fn linear_ticks(low: f64, high: f64, target: usize) -> Vec<f64> {
    let (low, high) = if high > low {
        (low, high)
    } else if low == 0.0 {
        (0.0, 1.0)
    } else {
        let pad = low.abs() * 0.1;
        (low - pad, high + pad)
    };
    if !(high - low).is_finite() {
        return vec![low, high];
    }
    let (nice, exponent) = nice_step((high - low) / target as f64);
    let step = tick_value(1, nice, exponent);
    let (first, last) = ((low / step).floor(), (high / step).ceil());
    // A span too small (subnormal) or too large (near f64::MAX) for steps
    // of 1, 2 or 5 × 10ⁿ: the axis is just its two ends.
    if !(step.is_normal() && first.is_finite() && last.is_finite() && last - first <= 1000.0) {
        return vec![low, high];
    }
    let ticks: Vec<f64> = (first as i64..=last as i64)
        .map(|index| tick_value(index, nice, exponent))
        .collect();
    match ticks.iter().all(|tick| tick.is_finite()) {
        true => ticks,
        false => vec![low, high],
    }
}

/// The 1, 2 or 5 × 10ⁿ step at or above `raw`, as (1, 2 or 5; n).
fn nice_step(raw: f64) -> (f64, i32) {
    let exponent = raw.log10().floor() as i32;
    let fraction = raw / 10f64.powi(exponent);
    match fraction {
        f if f <= 1.0 => (1.0, exponent),
        f if f <= 2.0 => (2.0, exponent),
        f if f <= 5.0 => (5.0, exponent),
        _ => (1.0, exponent + 1),
    }
}

/// `index` steps of `nice` × 10^`exponent`, dividing for negative
/// exponents so that 0.1 steps give 0.3, not 0.30000000000000004.
fn tick_value(index: i64, nice: f64, exponent: i32) -> f64 {
    let steps = index as f64 * nice;
    if exponent >= 0 {
        steps * 10f64.powi(exponent)
    } else {
        steps / 10f64.powi(-exponent)
    }
}

/// Powers of ten from below `low` to above `high` (every other one, or
/// fewer, past ten decades); with `minor`, also 2× and 5× when the axis
/// spans at most two decades.
fn log_ticks(low: f64, high: f64, minor: bool) -> Vec<f64> {
    // 10⁻³⁰⁷ is the smallest normal power of ten; below it ticks would be 0.
    let first = (low.log10().floor() as i32).clamp(-307, 307);
    let decades = ((high.log10().ceil() as i32).min(308) - first).max(1);
    let stride = (decades + 9) / 10;
    let last = first + (decades + stride - 1) / stride * stride;
    let mut ticks = Vec::new();
    for exponent in (first..=last.min(308)).step_by(stride as usize) {
        let power = 10f64.powi(exponent);
        ticks.push(power);
        if minor && last - first <= 2 && exponent < last {
            ticks.extend([2.0 * power, 5.0 * power]);
        }
    }
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_step_by_one_two_or_five() {
        assert_eq!(
            ticks(&[3.0, 97.0], false, false, 5),
            [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(
            ticks(&[12.0, 18.0], false, true, 4),
            [0.0, 5.0, 10.0, 15.0, 20.0]
        );
        assert_eq!(ticks(&[], false, false, 5), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    }

    #[test]
    fn log_ticks_are_powers_of_ten() {
        assert_eq!(
            ticks(&[0.3, 45.0, 0.0, f64::NAN], true, false, 6),
            [0.1, 1.0, 10.0, 100.0]
        );
        let wide = ticks(&[1e-3, 1e20], true, false, 6);
        let decades = (wide[0].log10().round(), wide[8].log10().round());
        assert_eq!((wide.len(), decades), (9, (-3.0, 21.0)));
        assert_eq!(
            ticks(&[2.0, 30.0], true, false, 6),
            [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        );
    }

    #[test]
    fn positions_run_from_start_to_end() {
        let linear = Scale {
            low: 0.0,
            high: 100.0,
            log: false,
            start: 300.0,
            end: 20.0,
        };
        assert_eq!(linear.position(50.0), 160.0);
        let log = Scale {
            low: 1.0,
            high: 1000.0,
            log: true,
            start: 0.0,
            end: 300.0,
        };
        assert!((log.position(10.0) - 100.0).abs() < 1e-9);
        assert_eq!(log.position(0.0), 0.0);
        assert!(log.is_off_scale(0.0) && !linear.is_off_scale(0.0));
    }

    #[test]
    fn numbers_of_any_magnitude_give_finite_ticks() {
        for values in [
            vec![0.0, 1e-310],
            vec![-0.0, 0.0],
            vec![f64::MAX, -f64::MAX],
            vec![1e308, 1.7e308],
            vec![5e-324],
            vec![f64::NAN, f64::INFINITY],
        ] {
            for log in [false, true] {
                let ticks = ticks(&values, log, false, 6);
                assert!(
                    !ticks.is_empty() && ticks.len() <= 1001,
                    "{values:?} {log}: {ticks:?}"
                );
                assert!(
                    ticks.iter().all(|tick| tick.is_finite()),
                    "{values:?}: {ticks:?}"
                );
                assert!(
                    !log || ticks.iter().all(|tick| *tick > 0.0),
                    "{values:?}: {ticks:?}"
                );
            }
        }
    }
}
