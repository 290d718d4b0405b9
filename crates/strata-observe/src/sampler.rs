//! The sampler: one collection of every layer per interval, with the rate of
//! every counter since the previous collection. Counters that go backwards
//! are a 32-bit wrap when the previous value fit in 32 bits, and a reset
//! (rate 0) otherwise.
//!
//! Not for: printing or storing samples.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use strata_core::metrics::{Collected, Collector, Metric, MetricKind};
pub use strata_recording::layers::{LayerSample, Sample};

/// Collectors the sampler and the Prometheus endpoint both read.
pub type SharedCollectors = Arc<Mutex<Vec<Box<dyn Collector>>>>;

pub struct Sampler {
    collectors: SharedCollectors,
    rates: Rates,
    started: Option<Instant>,
    last: Option<Instant>,
}

/// The change of a raw counter: a wrap of a 32-bit counter is undone, a
/// reset counts as no change.
pub fn counter_delta(before: f64, after: f64) -> f64 {
    const WRAP: f64 = 4_294_967_296.0;
    if after >= before {
        after - before
    } else if before < WRAP {
        after + WRAP - before
    } else {
        0.0
    }
}

impl Sampler {
    pub fn new(collectors: Vec<Box<dyn Collector>>) -> Self {
        Sampler {
            collectors: Arc::new(Mutex::new(collectors)),
            rates: Rates::default(),
            started: None,
            last: None,
        }
    }

    pub fn sample(&mut self) -> Sample {
        let now = Instant::now();
        let started = *self.started.get_or_insert(now);
        let interval_s = self.last.map_or(0.0, |last| (now - last).as_secs_f64());
        self.last = Some(now);
        let collectors = self.collectors.clone();
        let mut collectors = collectors
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut layers = BTreeMap::new();
        for collector in collectors.iter_mut() {
            let layer = collector.layer().to_string();
            let sample = match collected(collector.as_mut()) {
                LayerSample::Values { metrics, .. } => self.rates.of(&layer, metrics, interval_s),
                other => other,
            };
            layers.insert(layer, sample);
        }
        Sample {
            t_s: (now - started).as_secs_f64(),
            unix_s: strata_core::time::unix_now_s(),
            interval_s,
            layers,
        }
    }

    /// The collectors, for a reader that takes its own samples (the
    /// Prometheus endpoint, at each scrape).
    pub fn collectors(&self) -> SharedCollectors {
        self.collectors.clone()
    }
}

/// The last value of every counter of every layer, to give each new
/// sample its rates.
#[derive(Default)]
pub struct Rates {
    previous: HashMap<(String, String), f64>,
}

impl Rates {
    /// `metrics` of `layer` with the rate of each counter over the
    /// `interval_s` since its previous value.
    pub fn of(&mut self, layer: &str, metrics: Vec<Metric>, interval_s: f64) -> LayerSample {
        let mut rates = BTreeMap::new();
        for metric in metrics
            .iter()
            .filter(|metric| metric.kind == MetricKind::Counter)
        {
            let key = metric.series_key();
            let previous = self
                .previous
                .insert((layer.to_string(), key.clone()), metric.value);
            if let (Some(before), true) = (previous, interval_s > 0.0) {
                rates.insert(key, counter_delta(before, metric.value) / interval_s);
            }
        }
        LayerSample::Values { metrics, rates }
    }

    /// Forgets `layer`'s values: after a gap, its next sample has no rates
    /// rather than the gap's change spread over one interval.
    pub fn forget(&mut self, layer: &str) {
        self.previous.retain(|(of, _), _| of != layer);
    }
}

/// One collector's layer now, raw values without rates.
fn collected(collector: &mut dyn Collector) -> LayerSample {
    match collector.collect() {
        Ok(Collected::Metrics { metrics }) => LayerSample::Values {
            metrics,
            rates: BTreeMap::new(),
        },
        Ok(Collected::Absent { reason }) => LayerSample::Absent { reason },
        Err(error) => LayerSample::Failed {
            error: format!("{error:#}"),
        },
    }
}

/// Every layer now, raw values without rates: what a scrape gets
/// (`t_s` and `interval_s` are 0).
pub fn collect_now(collectors: &SharedCollectors) -> Sample {
    let mut collectors = collectors
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let unix_s = strata_core::time::unix_now_s();
    let layers = collectors
        .iter_mut()
        .map(|collector| (collector.layer().to_string(), collected(collector.as_mut())))
        .collect();
    Sample {
        t_s: 0.0,
        unix_s,
        interval_s: 0.0,
        layers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Counting {
        value: f64,
    }

    impl Collector for Counting {
        fn layer(&self) -> &'static str {
            "test"
        }

        fn collect(&mut self) -> anyhow::Result<Collected> {
            self.value += 100.0;
            Ok(Collected::Metrics {
                metrics: vec![
                    Metric::counter("ops", self.value),
                    Metric::gauge("level", 7.0),
                ],
            })
        }
    }

    #[test]
    fn counters_become_rates_from_the_second_sample_on() {
        let mut sampler = Sampler::new(vec![Box::new(Counting { value: 0.0 })]);
        let first = sampler.sample();
        let LayerSample::Values { rates, .. } = &first.layers["test"] else {
            panic!()
        };
        assert!(rates.is_empty());
        std::thread::sleep(std::time::Duration::from_millis(100));
        let second = sampler.sample();
        let LayerSample::Values { rates, metrics } = &second.layers["test"] else {
            panic!()
        };
        let rate = rates["ops{}"];
        assert!((rate - 100.0 / second.interval_s).abs() < 1e-6, "{rate}");
        assert!(!rates.contains_key("level{}"), "gauges have no rate");
        assert_eq!(metrics[1].value, 7.0);
    }

    struct Appearing {
        calls: u32,
    }

    impl Collector for Appearing {
        fn layer(&self) -> &'static str {
            "device"
        }

        fn collect(&mut self) -> anyhow::Result<Collected> {
            self.calls += 1;
            let name = if self.calls == 2 { "sdb" } else { "sda" };
            let metric = Metric::counter("read_requests", f64::from(self.calls) * 10.0)
                .with_label("device", name);
            Ok(Collected::Metrics {
                metrics: vec![metric],
            })
        }
    }

    #[test]
    fn devices_that_appear_or_vanish_get_no_rate_until_seen_twice() {
        let mut sampler = Sampler::new(vec![Box::new(Appearing { calls: 0 })]);
        let rates_of = |sample: &Sample| match &sample.layers["device"] {
            LayerSample::Values { rates, .. } => rates.clone(),
            other => panic!("{other:?}"),
        };
        sampler.sample();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(
            rates_of(&sampler.sample()).is_empty(),
            "sdb is new, sda vanished"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        let third = sampler.sample();
        let rate = rates_of(&third)["read_requests{device=sda}"];
        assert!(
            (rate - 20.0 / third.interval_s).abs() < 1e-6 * rate.max(1.0),
            "sda: 10 → 30 across its gap"
        );
    }

    #[test]
    fn wraps_and_resets() {
        assert_eq!(counter_delta(4_294_967_290.0, 5.0), 11.0);
        assert_eq!(counter_delta(10_000_000_000.0, 5.0), 0.0);
        assert_eq!(counter_delta(5.0, 15.0), 10.0);
    }
}
