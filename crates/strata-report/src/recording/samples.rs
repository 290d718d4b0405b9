//! Layer samples in observe's shape (`device`, `cpu`, `postgres`, …, one
//! record per layer per interval) read back into a timeline, and the sums a
//! report needs from them: totals over a window (rate × interval), per-second
//! series, gauge averages.
//!
//! Not for: the per-point or per-window records that `run` and `calibrate`
//! write besides these (`window_device`, `workload`, `result`); their
//! builders read those.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use strata_output::document::Window;
use strata_recording::layers::{LayerSample as RecordedLayer, Sample};
use strata_recording::Recording;

/// What a series is: its name and labels, held once for all its samples.
#[derive(Debug)]
pub(crate) struct SeriesId {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// `name{key=value,…}`, as the sampler keys its rates.
    key: String,
}

/// One series of one layer sample: the raw value and its rate per second
/// since the previous sample (none in the first sample). Its name and
/// labels are its [`SeriesId`]'s, shared: a fleet's timeline holds
/// millions of these.
#[derive(Debug, Clone)]
pub(crate) struct SeriesValue {
    pub id: Arc<SeriesId>,
    pub value: f64,
    pub rate: Option<f64>,
}

impl std::ops::Deref for SeriesValue {
    type Target = SeriesId;

    fn deref(&self) -> &SeriesId {
        &self.id
    }
}

/// One layer's sample: the interval it covers ends at `t_s`.
#[derive(Debug, Clone)]
pub(crate) struct LayerSample {
    pub layer: String,
    pub t_s: f64,
    pub interval_s: f64,
    pub series: Vec<SeriesValue>,
    /// The things with no rates over this interval, and why (the
    /// sampler's `gaps`: a reset, a value that is not a number).
    pub gaps: BTreeMap<String, String>,
}

/// A thing's gaps in one layer over a timeline.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Gaps {
    pub intervals: usize,
    pub seconds: f64,
    /// Why, the first time.
    pub first: String,
}

impl LayerSample {
    /// The middle of the interval, seconds from the recording's start.
    pub fn middle_s(&self) -> f64 {
        self.t_s - self.interval_s / 2.0
    }

    /// Σ rate over the series called `name` whose labels pass `select`,
    /// per second; `None` when no such series has a rate.
    pub fn rate(&self, name: &str, select: &dyn Fn(&Labels) -> bool) -> Option<f64> {
        self.series
            .iter()
            .filter(|series| series.name == name && select(&series.labels))
            .filter_map(|series| series.rate)
            .fold(None, |sum, rate| Some(sum.unwrap_or(0.0) + rate))
    }

    /// The raw value of the first series called `name` (a gauge).
    pub fn value(&self, name: &str) -> Option<f64> {
        self.series
            .iter()
            .find(|series| series.name == name)
            .map(|series| series.value)
    }
}

pub(crate) type Labels = BTreeMap<String, String>;

/// Every series, whatever its labels.
pub(crate) fn any(_: &Labels) -> bool {
    true
}

/// The layer samples of a recording, in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Timeline {
    pub samples: Vec<LayerSample>,
}

impl Timeline {
    /// The observe-shaped samples of `recording` (those with a `t_s` and a
    /// `data` object); samples whose source was absent or failed are skipped.
    pub fn of(recording: &Recording) -> Timeline {
        let mut timeline = TimelineBuilder::default();
        for sample in recording.layers() {
            timeline.push(sample);
        }
        timeline.timeline()
    }

    /// The last sample's end, seconds from the recording's start.
    pub fn length_s(&self) -> Option<f64> {
        self.samples
            .iter()
            .map(|sample| sample.t_s)
            .reduce(f64::max)
    }

    /// The samples whose interval's middle falls in `window`.
    pub fn within(&self, window: Window) -> Timeline {
        let samples = self
            .samples
            .iter()
            .filter(|sample| {
                sample.interval_s > 0.0
                    && sample.middle_s() >= window.from_s
                    && sample.middle_s() <= window.to_s
            })
            .cloned()
            .collect();
        Timeline { samples }
    }

    /// Whether any layer is this machine's own (not `LAYER@HOST`).
    pub fn has_own_layers(&self) -> bool {
        self.samples
            .iter()
            .any(|sample| !sample.layer.contains('@'))
    }

    /// The hosts whose agents gave layers beside this machine's
    /// (`device@HOST`), in name order.
    pub fn other_hosts(&self) -> Vec<String> {
        let mut hosts: Vec<String> = self
            .samples
            .iter()
            .filter_map(|sample| Some(sample.layer.split_once('@')?.1.to_string()))
            .collect();
        hosts.sort();
        hosts.dedup();
        hosts
    }

    /// Another host's layers under their own names (`device@db1` as
    /// `device`), so that they are read as this machine's are.
    pub fn of_host(&self, host: &str) -> Timeline {
        let samples = self
            .samples
            .iter()
            .filter_map(|sample| {
                let (layer, of) = sample.layer.split_once('@')?;
                (of == host).then(|| LayerSample {
                    layer: layer.to_string(),
                    ..sample.clone()
                })
            })
            .collect();
        Timeline { samples }
    }

    pub fn layer<'a>(&'a self, layer: &'a str) -> impl Iterator<Item = &'a LayerSample> + 'a {
        self.samples
            .iter()
            .filter(move |sample| sample.layer == layer)
    }

    /// Each thing of `layer` that had gaps (by its labels), how many
    /// intervals and seconds they were, and the first one's why.
    pub fn gaps(&self, layer: &str) -> BTreeMap<String, Gaps> {
        let mut gaps: BTreeMap<String, Gaps> = BTreeMap::new();
        for sample in self.layer(layer) {
            for (thing, why) in &sample.gaps {
                let gap = gaps.entry(thing.clone()).or_insert(Gaps {
                    intervals: 0,
                    seconds: 0.0,
                    first: why.clone(),
                });
                gap.intervals += 1;
                gap.seconds += sample.interval_s;
            }
        }
        gaps
    }

    /// Seconds covered by the layer's samples that carry rates.
    pub fn covered_s(&self, layer: &str) -> f64 {
        self.layer(layer)
            .filter(|sample| sample.series.iter().any(|series| series.rate.is_some()))
            .map(|sample| sample.interval_s)
            .sum()
    }

    /// Σ rate × interval of the matching series: the counter's change over
    /// the timeline. `None` when the layer never had such a series.
    pub fn total(&self, layer: &str, name: &str, select: &dyn Fn(&Labels) -> bool) -> Option<f64> {
        self.layer(layer)
            .filter_map(|sample| {
                sample
                    .rate(name, select)
                    .map(|rate| rate * sample.interval_s)
            })
            .fold(None, |sum, change| Some(sum.unwrap_or(0.0) + change))
    }

    /// (t_s, Σ rate) for each sample of the layer that has the series.
    pub fn per_second(
        &self,
        layer: &str,
        name: &str,
        select: &dyn Fn(&Labels) -> bool,
    ) -> Vec<[f64; 2]> {
        self.layer(layer)
            .filter_map(|sample| sample.rate(name, select).map(|rate| [sample.t_s, rate]))
            .collect()
    }

    /// (t_s, value) of the first series called `name` whose labels pass
    /// `select` (a gauge), in each sample of the layer that has it.
    pub fn gauge_series(
        &self,
        layer: &str,
        name: &str,
        select: &dyn Fn(&Labels) -> bool,
    ) -> Vec<[f64; 2]> {
        self.layer(layer)
            .filter_map(|sample| {
                let series = sample
                    .series
                    .iter()
                    .find(|series| series.name == name && select(&series.labels))?;
                Some([sample.t_s, series.value])
            })
            .collect()
    }

    /// The average of a gauge over the layer's samples.
    pub fn gauge_average(&self, layer: &str, name: &str) -> Option<f64> {
        let values: Vec<f64> = self
            .layer(layer)
            .filter_map(|sample| sample.value(name))
            .collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    }
}

/// A timeline made sample by sample, each series' name and labels held
/// once: a source of samples that are not kept (a fleet's, from
/// Prometheus) pushes each as it is made.
#[derive(Default)]
pub struct TimelineBuilder {
    samples: Vec<LayerSample>,
    /// Each series seen, by its labels and then its name.
    ids: HashMap<Labels, HashMap<String, Arc<SeriesId>>>,
}

impl TimelineBuilder {
    /// Each layer of `sample` that has values (absent and failed layers
    /// have none), with each series' rate.
    pub fn push(&mut self, sample: &Sample) {
        for (layer, recorded) in &sample.layers {
            let RecordedLayer::Values {
                metrics,
                rates,
                gaps,
            } = recorded
            else {
                continue;
            };
            let series = metrics
                .iter()
                .map(|metric| {
                    let id = self.id(&metric.name, &metric.labels);
                    SeriesValue {
                        rate: rates.get(&id.key).copied(),
                        id,
                        value: metric.value,
                    }
                })
                .collect();
            self.samples.push(LayerSample {
                layer: layer.clone(),
                t_s: sample.t_s,
                interval_s: sample.interval_s,
                series,
                gaps: gaps.clone(),
            });
        }
    }

    fn id(&mut self, name: &str, labels: &Labels) -> Arc<SeriesId> {
        if let Some(id) = self.ids.get(labels).and_then(|names| names.get(name)) {
            return id.clone();
        }
        let id = Arc::new(SeriesId {
            name: name.to_string(),
            labels: labels.clone(),
            key: series_key(name, labels),
        });
        self.ids
            .entry(labels.clone())
            .or_default()
            .insert(name.to_string(), id.clone());
        id
    }

    pub(crate) fn timeline(self) -> Timeline {
        Timeline {
            samples: self.samples,
        }
    }
}

/// `name{key=value,…}`, as the sampler keys its rates.
fn series_key(name: &str, labels: &Labels) -> String {
    let labels: Vec<String> = labels
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    format!("{name}{{{}}}", labels.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t_s: f64, interval_s: f64, rate: f64) -> Sample {
        let metric =
            strata_core::metrics::Metric::counter("read_requests", 1.0).with_label("device", "vda");
        let values = RecordedLayer::Values {
            metrics: vec![metric],
            rates: BTreeMap::from([("read_requests{device=vda}".to_string(), rate)]),
            gaps: BTreeMap::new(),
        };
        Sample {
            t_s,
            unix_s: 0.0,
            interval_s,
            layers: BTreeMap::from([("device".to_string(), values)]),
        }
    }

    #[test]
    fn totals_are_rate_times_interval_within_the_window() {
        let records: Vec<Sample> = vec![
            sample(1.0, 1.0, 10.0),
            sample(2.0, 1.0, 20.0),
            sample(2.5, 0.5, 40.0),
        ];
        let mut builder = TimelineBuilder::default();
        for record in &records {
            builder.push(record);
        }
        let timeline = builder.timeline();
        assert_eq!(timeline.total("device", "read_requests", &any), Some(50.0));
        let window = Window {
            from_s: 1.0,
            to_s: 3.0,
        };
        assert_eq!(
            timeline
                .within(window)
                .total("device", "read_requests", &any),
            Some(40.0)
        );
        assert_eq!(timeline.total("device", "write_requests", &any), None);
    }
}
