//! The sampler: one collection of every layer per interval, with the rate of
//! every counter since the previous collection. A counter that went down
//! is a reset (Prometheus's `rate()` rule: the host or its exporter
//! restarted, a device was made again) and one that is not a number is
//! unreadable: either way the thing it is about (its labels: a device, a
//! mount) has no rates over that interval, a gap named with why, never a
//! number.
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

/// The change of a raw counter, or why there is none: it went down (a
/// reset).
pub fn counter_change(before: f64, after: f64) -> Result<f64, String> {
    match after >= before {
        true => Ok(after - before),
        false => Err(format!(
            "went down from {before} to {after}: a reset (the host or its exporter restarted, or \
             what it counts was made again: a device, a process)"
        )),
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
        let wait = round_wait(interval_s);
        for collector in collectors.iter_mut() {
            collector.begin(wait);
        }
        let mut layers = BTreeMap::new();
        for collector in collectors.iter_mut() {
            let layer = collector.layer().to_string();
            let sample = self.rates.sample(&layer, collector.collect(), interval_s);
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

/// How long a round waits for a collector that asks another host: half
/// the interval between rounds (so that the next round begins on time),
/// 50 ms to 2 s; 1 s in the first round.
fn round_wait(interval_s: f64) -> std::time::Duration {
    match interval_s > 0.0 {
        true => std::time::Duration::from_secs_f64((interval_s / 2.0).clamp(0.05, 2.0)),
        false => std::time::Duration::from_secs(1),
    }
}

/// The value of every counter of every layer at its latest sample, to give
/// the next sample its rates: a series (or a layer) missing from a sample
/// has no rate at the next, rather than the change of two intervals over
/// one.
#[derive(Default)]
pub struct Rates {
    previous: HashMap<String, HashMap<String, f64>>,
}

impl Rates {
    /// What a collector of `layer` gave, with its rates; a layer absent or
    /// failed now has no rates at its next sample.
    pub fn sample(
        &mut self,
        layer: &str,
        collected: anyhow::Result<Collected>,
        interval_s: f64,
    ) -> LayerSample {
        match raw(collected) {
            LayerSample::Values { metrics, gaps, .. } => self.of(layer, metrics, gaps, interval_s),
            other => {
                self.forget(layer);
                other
            }
        }
    }

    /// `metrics` of `layer` with the rate of each counter over the
    /// `interval_s` since its value at the layer's previous sample; the
    /// things in `unreadable` (left out by the collector, with why) and
    /// those with a counter that went down or is not a number are the
    /// sample's gaps.
    pub fn of(
        &mut self,
        layer: &str,
        metrics: Vec<Metric>,
        unreadable: BTreeMap<String, String>,
        interval_s: f64,
    ) -> LayerSample {
        let before = self.previous.remove(layer).unwrap_or_default();
        let mut now = HashMap::new();
        let mut rates = BTreeMap::new();
        let mut things = BTreeMap::new();
        let mut gaps = unreadable;
        let (metrics, not_numbers): (Vec<Metric>, Vec<Metric>) = metrics
            .into_iter()
            .partition(|metric| metric.value.is_finite());
        for metric in not_numbers {
            gaps.entry(metric.labels_key())
                .or_insert(format!("{} is {}, not a number", metric.name, metric.value));
        }
        for metric in metrics
            .iter()
            .filter(|metric| metric.kind == MetricKind::Counter)
        {
            let key = metric.series_key();
            now.insert(key.clone(), metric.value);
            let Some(&before) = before.get(&key).filter(|_| interval_s > 0.0) else {
                continue;
            };
            let thing = metric.labels_key();
            match counter_change(before, metric.value) {
                Ok(change) => {
                    rates.insert(key.clone(), change / interval_s);
                    things.insert(key, thing);
                }
                Err(why) => {
                    gaps.entry(thing)
                        .or_insert(format!("{} {why}", metric.name));
                }
            }
        }
        rates.retain(|key, _| !gaps.contains_key(&things[key]));
        self.previous.insert(layer.to_string(), now);
        LayerSample::Values {
            metrics,
            rates,
            gaps,
        }
    }

    /// Forgets `layer`'s values: after a gap, its next sample has no rates
    /// rather than the gap's change spread over one interval.
    pub fn forget(&mut self, layer: &str) {
        self.previous.remove(layer);
    }
}

/// A collector's layer now, raw values without rates.
fn raw(collected: anyhow::Result<Collected>) -> LayerSample {
    match collected {
        Ok(Collected::Metrics { metrics }) => LayerSample::Values {
            metrics,
            rates: BTreeMap::new(),
            gaps: BTreeMap::new(),
        },
        Ok(Collected::Partial {
            metrics,
            unreadable,
        }) => LayerSample::Values {
            metrics,
            rates: BTreeMap::new(),
            gaps: unreadable,
        },
        Ok(Collected::Absent { reason }) => LayerSample::Absent { reason },
        Err(error) => LayerSample::Failed {
            error: format!("{error:#}"),
        },
    }
}

/// Every layer now, raw values without rates: what a scrape gets
/// (`t_s` and `interval_s` are 0), with `beside_first` run right after the
/// first collector (observe's device layer, /proc/diskstats), so that what
/// it reads is of the same moment.
pub fn collect_now_beside_first<T>(
    collectors: &SharedCollectors,
    beside_first: impl FnOnce() -> T,
) -> (Sample, T) {
    let mut collectors = collectors
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let unix_s = strata_core::time::unix_now_s();
    let mut layers = BTreeMap::new();
    let mut each = collectors.iter_mut();
    for collector in each.by_ref().take(1) {
        layers.insert(collector.layer().to_string(), raw(collector.collect()));
    }
    let beside = beside_first();
    for collector in each {
        layers.insert(collector.layer().to_string(), raw(collector.collect()));
    }
    let sample = Sample {
        t_s: 0.0,
        unix_s,
        interval_s: 0.0,
        layers,
    };
    (sample, beside)
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
        let LayerSample::Values { rates, metrics, .. } = &second.layers["test"] else {
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
        assert!(
            rates_of(&sampler.sample()).is_empty(),
            "sda came back: its 10 → 30 spans two intervals, not this one"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        let fourth = sampler.sample();
        let rate = rates_of(&fourth)["read_requests{device=sda}"];
        assert!(
            (rate - 10.0 / fourth.interval_s).abs() < 1e-6 * rate.max(1.0),
            "sda: 30 → 40 over this interval"
        );
    }

    #[test]
    fn a_counter_that_goes_down_or_is_not_a_number_leaves_its_thing_a_named_gap() {
        assert_eq!(counter_change(5.0, 15.0), Ok(10.0));
        assert!(counter_change(4_294_967_290.0, 5.0)
            .unwrap_err()
            .contains("a reset"));
        let device = |name: &str, reads: f64, ms: f64| {
            vec![
                Metric::counter("read_requests", reads).with_label("device", name),
                Metric::counter("read_ms", ms).with_label("device", name),
            ]
        };
        let mut rates = Rates::default();
        let none = BTreeMap::new;
        let first = [device("vda", 100.0, 10.0), device("vdb", 50.0, 5.0)].concat();
        rates.of("device", first, none(), 1.0);
        let rebooted = [device("vda", 3.0, 11.0), device("vdb", 60.0, f64::NAN)].concat();
        let LayerSample::Values {
            metrics,
            rates: got,
            gaps,
        } = rates.of("device", rebooted, none(), 1.0)
        else {
            panic!("values");
        };
        assert!(
            got.is_empty(),
            "nothing of vda, nor of vdb with its NaN: {got:?}"
        );
        assert!(gaps["device=vda"].starts_with("read_requests went down from 100 to 3"));
        assert!(gaps["device=vdb"].starts_with("read_ms is NaN"), "{gaps:?}");
        assert!(
            metrics.iter().all(|metric| metric.value.is_finite()),
            "{metrics:?}"
        );
        let after = [device("vda", 13.0, 12.0), device("vdb", 70.0, 6.0)].concat();
        let LayerSample::Values {
            rates: got, gaps, ..
        } = rates.of("device", after, none(), 2.0)
        else {
            panic!("values");
        };
        assert!(gaps.is_empty(), "{gaps:?}");
        assert_eq!(
            got["read_requests{device=vda}"], 5.0,
            "from the reset's value on"
        );
        assert!(
            !got.contains_key("read_ms{device=vdb}"),
            "no base since the NaN"
        );
        assert_eq!(got["read_requests{device=vdb}"], 5.0);
        let unreadable = BTreeMap::from([("device=vda".to_string(), "its reads are +Inf".into())]);
        let later = device("vdb", 80.0, 7.0);
        let LayerSample::Values { gaps, .. } = rates.of("device", later, unreadable, 1.0) else {
            panic!("values");
        };
        assert_eq!(
            gaps["device=vda"], "its reads are +Inf",
            "the collector's gap is kept"
        );
        let back = [device("vda", 20.0, 13.0), device("vdb", 90.0, 8.0)].concat();
        let LayerSample::Values { rates: got, .. } = rates.of("device", back, none(), 1.0) else {
            panic!("values");
        };
        assert!(
            !got.contains_key("read_requests{device=vda}"),
            "no rate over two intervals: {got:?}"
        );
    }
}
