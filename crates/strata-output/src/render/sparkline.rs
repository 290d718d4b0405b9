//! Sparklines: a series of values as one line of block characters
//! (`▁▂▃▄▅▆▇█`), for the text renderer's charts.
//!
//! Not for: reading values off; the text renderer prints min, max and last
//! beside each sparkline.

/// The eight heights, lowest first.
pub const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// `values` as at most `width` block characters, scaled between the lowest
/// and highest finite value (on a log scale when `log`; values ≤ 0 then take
/// the lowest height). Non-finite values are left out. With more values
/// than `width`, each character stands for a run of neighbours and shows
/// the highest of them, so that a spike stays visible. A flat series is
/// drawn at mid height.
pub fn sparkline(values: &[f64], width: usize, log: bool) -> String {
    let scaled: Vec<f64> = values
        .iter()
        .copied()
        .filter(|value| value.is_finite())
        .map(|value| scale(value, log))
        .collect();
    let buckets = bucket_maxima(&scaled, width);
    let finite = buckets.iter().copied().filter(|value| value.is_finite());
    let low = finite.clone().fold(f64::INFINITY, f64::min);
    let high = finite.fold(f64::NEG_INFINITY, f64::max);
    buckets
        .iter()
        .map(|&value| LEVELS[level(value, low, high)])
        .collect()
}

fn scale(value: f64, log: bool) -> f64 {
    match (log, value > 0.0) {
        (false, _) => value,
        (true, true) => value.log10(),
        (true, false) => f64::NEG_INFINITY,
    }
}

/// The highest value of each of at most `width` runs of neighbours.
fn bucket_maxima(values: &[f64], width: usize) -> Vec<f64> {
    let count = values.len();
    let buckets = count.min(width);
    (0..buckets)
        .map(|bucket| {
            let start = bucket * count / buckets;
            let end = ((bucket + 1) * count / buckets).max(start + 1);
            values[start..end]
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect()
}

fn level(value: f64, low: f64, high: f64) -> usize {
    if !value.is_finite() {
        return 0;
    }
    if high <= low {
        return LEVELS.len() / 2 - 1;
    }
    let fraction = (value - low) / (high - low);
    ((fraction * (LEVELS.len() - 1) as f64).round() as usize).min(LEVELS.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rises_from_lowest_to_highest_block() {
        let values: Vec<f64> = (0..8).map(f64::from).collect();
        assert_eq!(sparkline(&values, 20, false), "▁▂▃▄▅▆▇█");
    }

    #[test]
    fn a_flat_series_sits_at_mid_height() {
        assert_eq!(sparkline(&[5.0, 5.0, 5.0], 10, false), "▄▄▄");
    }

    #[test]
    fn skips_values_that_are_not_finite() {
        assert_eq!(
            sparkline(&[0.0, f64::NAN, 7.0, f64::INFINITY], 10, false),
            "▁█"
        );
        assert_eq!(sparkline(&[], 10, false), "");
    }

    #[test]
    fn narrows_to_width_keeping_spikes() {
        let mut values = vec![1.0; 100];
        values[57] = 50.0;
        let line = sparkline(&values, 10, false);
        assert_eq!(line.chars().count(), 10);
        assert_eq!(line, "▁▁▁▁▁█▁▁▁▁");
    }

    #[test]
    fn log_scale_spreads_decades_evenly() {
        let line = sparkline(&[0.0, 1.0, 10.0, 100.0, 1000.0], 10, true);
        assert_eq!(line, "▁▁▃▆█");
    }
}
