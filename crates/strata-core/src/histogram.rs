//! Latency histograms: HDR histograms in nanoseconds, mergeable across
//! workers, points and hosts, and stored losslessly in Recordings as the
//! standard compressed HdrHistogram V2 encoding in base64.
//!
//! Not for: counters or rates; those live in the samples.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest latency the histogram tracks exactly: one hour. Anything slower is
/// clamped to it (and still counted).
const HIGHEST_NS: u64 = 3_600_000_000_000;
const SIGNIFICANT_DIGITS: u8 = 3;

/// A latency histogram in nanoseconds with 3 significant digits.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    inner: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        let inner = Histogram::new_with_bounds(1, HIGHEST_NS, SIGNIFICANT_DIGITS)
            .expect("static histogram bounds are valid");
        Self { inner }
    }

    #[inline]
    pub fn record_ns(&mut self, nanos: u64) {
        self.inner.saturating_record(nanos.clamp(1, HIGHEST_NS));
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.inner
            .add(&other.inner)
            .expect("histograms with the same bounds always merge");
    }

    pub fn count(&self) -> u64 {
        self.inner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    pub fn mean_ns(&self) -> f64 {
        if self.is_empty() {
            0.0
        } else {
            self.inner.mean()
        }
    }

    /// The standard deviation of the recorded latencies.
    pub fn stdev_ns(&self) -> f64 {
        if self.is_empty() {
            0.0
        } else {
            self.inner.stdev()
        }
    }

    pub fn min_ns(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.inner.min()
        }
    }

    pub fn max_ns(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.inner.max()
        }
    }

    /// The latency at `percentile` (0–100), in nanoseconds.
    pub fn percentile_ns(&self, percentile: f64) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.inner.value_at_percentile(percentile)
        }
    }

    /// How many recorded latencies lie in `low_ns..=high_ns` (each value
    /// counted by its 3-significant-digit bucket).
    pub fn count_between_ns(&self, low_ns: u64, high_ns: u64) -> u64 {
        if self.is_empty() || high_ns < low_ns {
            0
        } else {
            self.inner
                .count_between(low_ns.clamp(1, HIGHEST_NS), high_ns.clamp(1, HIGHEST_NS))
        }
    }

    pub fn summary(&self) -> LatencySummary {
        let micros = |nanos: u64| nanos as f64 / 1e3;
        LatencySummary {
            count: self.count(),
            lat_mean_us: self.mean_ns() / 1e3,
            lat_min_us: micros(self.min_ns()),
            lat_p50_us: micros(self.percentile_ns(50.0)),
            lat_p90_us: micros(self.percentile_ns(90.0)),
            lat_p99_us: micros(self.percentile_ns(99.0)),
            lat_p99_9_us: micros(self.percentile_ns(99.9)),
            lat_max_us: micros(self.max_ns()),
        }
    }

    /// The compressed HdrHistogram V2 encoding, in base64.
    pub fn to_base64(&self) -> String {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.inner, &mut bytes)
            .expect("serializing into memory cannot fail");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    pub fn from_base64(text: &str) -> anyhow::Result<Self> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(text)?;
        let decoded: Histogram<u64> = Deserializer::new().deserialize(&mut bytes.as_slice())?;
        let mut histogram = Self::new();
        histogram
            .inner
            .add(&decoded)
            .map_err(|error| anyhow::anyhow!("histogram out of range: {error:?}"))?;
        Ok(histogram)
    }
}

/// Percentiles of one histogram, in microseconds as the field names say.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub lat_mean_us: f64,
    pub lat_min_us: f64,
    pub lat_p50_us: f64,
    pub lat_p90_us: f64,
    pub lat_p99_us: f64,
    pub lat_p99_9_us: f64,
    pub lat_max_us: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_merge() {
        let mut first = LatencyHistogram::new();
        let mut second = LatencyHistogram::new();
        for micros in 1..=100u64 {
            first.record_ns(micros * 1000);
            second.record_ns(micros * 1000 + 100_000);
        }
        first.merge(&second);
        assert_eq!(first.count(), 200);
        let p50 = first.percentile_ns(50.0);
        assert!((99_000..=101_000).contains(&p50), "{p50}");
        assert!((199_000..=201_000).contains(&first.max_ns()));
    }

    #[test]
    fn base64_round_trip_is_lossless() {
        let mut histogram = LatencyHistogram::new();
        for nanos in [900, 85_000, 85_001, 1_200_000, 700_000_000] {
            histogram.record_ns(nanos);
        }
        let decoded = LatencyHistogram::from_base64(&histogram.to_base64()).unwrap();
        assert_eq!(decoded.summary(), histogram.summary());
        assert_eq!(decoded.count(), 5);
    }
}
