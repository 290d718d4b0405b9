//! A run's outliers: the statements at least as slow as the outlier
//! threshold, and which threshold that is — `--outlier-threshold` when
//! given, else ten times the window's p99 of all statements or 100 ms,
//! whichever is larger.
//!
//! The sessions keep every statement from the floor on (the threshold
//! given, else 100 ms) while they run, since the p99 is known only after
//! the window; this chooses the threshold and keeps those over it. The
//! Recording keeps all from the floor, so `strata report` can list them
//! down to it.
//!
//! Not for: timing statements (strata-slob's tally), or the device's slow
//! seconds (`strata report` reads those from the device samples).

use strata_core::histogram::LatencyHistogram;
pub use strata_recording::run::OutlierFigures;
use strata_slob::session::RunOutcome;

/// The threshold is at least this many times the window's p99.
pub const P99_MULTIPLE: f64 = 10.0;

/// The threshold, its rule and the statements over it.
pub fn outliers(outcome: &RunOutcome) -> OutlierFigures {
    let floor_ms = outcome.outlier_floor.as_secs_f64() * 1e3;
    let (threshold_ms, threshold_rule) = match outcome.outlier_threshold {
        Some(given) => (given.as_secs_f64() * 1e3, "--outlier-threshold".to_string()),
        None => default_threshold(window_p99_ms(outcome), floor_ms),
    };
    OutlierFigures {
        threshold_ms,
        threshold_rule,
        floor_ms,
        statements: outcome
            .outliers
            .iter()
            .filter(|outlier| outlier.latency_ms >= threshold_ms)
            .cloned()
            .collect(),
        dropped: outcome.outliers_dropped,
    }
}

/// The p99 of every statement the window timed, ms; `None` without any.
fn window_p99_ms(outcome: &RunOutcome) -> Option<f64> {
    let mut all = LatencyHistogram::new();
    for histogram in [
        &outcome.select,
        &outcome.update,
        &outcome.commit,
        &outcome.scan,
    ] {
        all.merge(histogram);
    }
    (!all.is_empty()).then(|| all.percentile_ns(99.0) as f64 / 1e6)
}

fn default_threshold(p99_ms: Option<f64>, floor_ms: f64) -> (f64, String) {
    match p99_ms {
        Some(p99_ms) if p99_ms * P99_MULTIPLE >= floor_ms => (
            p99_ms * P99_MULTIPLE,
            format!("ten times the window's p99 of all statements ({p99_ms:.2} ms)"),
        ),
        Some(p99_ms) => (
            floor_ms,
            format!(
                "the {floor_ms:.0} ms minimum (ten times the window's p99 of {p99_ms:.2} ms is less)"
            ),
        ),
        None => (
            floor_ms,
            format!("the {floor_ms:.0} ms minimum (no statement was timed)"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::default_threshold;

    #[test]
    fn the_default_is_ten_times_the_p99_or_the_floor_and_says_which() {
        let (threshold, rule) = default_threshold(Some(25.0), 100.0);
        assert_eq!(threshold, 250.0);
        assert!(rule.starts_with("ten times the window's p99"), "{rule}");
        let (threshold, rule) = default_threshold(Some(2.0), 100.0);
        assert_eq!(threshold, 100.0);
        assert!(rule.starts_with("the 100 ms minimum"), "{rule}");
        assert_eq!(default_threshold(None, 100.0).0, 100.0);
    }
}
