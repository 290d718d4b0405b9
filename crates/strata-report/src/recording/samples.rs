//! Layer samples in observe's shape (`device`, `cpu`, `postgres`, …, one
//! record per layer per interval) read back into a timeline, and the sums a
//! report needs from them: totals over a window (rate × interval), per-second
//! series, gauge averages.
//!
//! Not for: the per-point or per-window records that `run` and `calibrate`
//! write besides these (`window_device`, `workload`, `result`); their
//! builders read those.

use std::collections::BTreeMap;
use strata_core::recording::Recording;
use strata_output::document::Window;

/// One series of one layer sample: the raw value and its rate per second
/// since the previous sample (none in the first sample).
#[derive(Debug, Clone)]
pub(crate) struct SeriesValue {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
    pub rate: Option<f64>,
}

/// One layer's sample: the interval it covers ends at `t_s`.
#[derive(Debug, Clone)]
pub(crate) struct LayerSample {
    pub layer: String,
    pub t_s: f64,
    pub interval_s: f64,
    pub series: Vec<SeriesValue>,
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
        let samples = recording
            .records_of("sample")
            .filter_map(layer_sample)
            .collect();
        Timeline { samples }
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

    pub fn layer<'a>(&'a self, layer: &'a str) -> impl Iterator<Item = &'a LayerSample> + 'a {
        self.samples
            .iter()
            .filter(move |sample| sample.layer == layer)
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

    /// The average of a gauge over the layer's samples.
    pub fn gauge_average(&self, layer: &str, name: &str) -> Option<f64> {
        let values: Vec<f64> = self
            .layer(layer)
            .filter_map(|sample| sample.value(name))
            .collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    }
}

fn layer_sample(record: &serde_json::Value) -> Option<LayerSample> {
    let data = &record["data"];
    if data["status"] != "values" {
        return None;
    }
    let rates = data["rates"].as_object();
    let series = data["metrics"]
        .as_array()?
        .iter()
        .filter_map(|metric| series_value(metric, rates))
        .collect();
    Some(LayerSample {
        layer: record["layer"].as_str()?.to_string(),
        t_s: record["t_s"].as_f64()?,
        interval_s: record["interval_s"].as_f64().unwrap_or(0.0),
        series,
    })
}

fn series_value(
    metric: &serde_json::Value,
    rates: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Option<SeriesValue> {
    let name = metric["name"].as_str()?.to_string();
    let labels: Labels = metric["labels"]
        .as_object()
        .map(|labels| {
            labels
                .iter()
                .map(|(key, value)| (key.clone(), value.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default();
    let key = series_key(&name, &labels);
    let rate = rates
        .and_then(|rates| rates.get(&key))
        .and_then(|rate| rate.as_f64());
    Some(SeriesValue {
        name,
        labels,
        value: metric["value"].as_f64()?,
        rate,
    })
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

    fn sample(t_s: f64, interval_s: f64, rate: f64) -> serde_json::Value {
        serde_json::json!({"type": "sample", "layer": "device", "t_s": t_s, "interval_s": interval_s,
            "data": {"status": "values",
                "metrics": [{"name": "read_requests", "labels": {"device": "vda"}, "kind": "counter", "value": 1.0}],
                "rates": {"read_requests{device=vda}": rate}}})
    }

    #[test]
    fn totals_are_rate_times_interval_within_the_window() {
        let records: Vec<serde_json::Value> = vec![
            sample(1.0, 1.0, 10.0),
            sample(2.0, 1.0, 20.0),
            sample(2.5, 0.5, 40.0),
        ];
        let timeline = Timeline {
            samples: records.iter().filter_map(layer_sample).collect(),
        };
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
