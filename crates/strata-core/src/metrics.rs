//! The collector plug-in point: a collector reads one layer (block devices,
//! NFS, NICs, CPU, memory, processes, a database) and returns its raw values
//! as named metrics. The sampler (`strata-observe`) turns counters into rates
//! in one place, records them, and serves them to Prometheus.
//!
//! Not for: computing rates or printing; a collector only reads.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `cpu` layer's time counters, in the order of `/proc/stat`'s `cpu`
/// line (USER_HZ ticks summed over CPUs); their sum is all the time there was.
pub const CPU_TICK_COUNTERS: [&str; 8] = [
    "user_ticks",
    "nice_ticks",
    "system_ticks",
    "idle_ticks",
    "iowait_ticks",
    "irq_ticks",
    "softirq_ticks",
    "steal_ticks",
];

/// Whether a value only grows (a counter, turned into a rate between two
/// samples) or is a level (a gauge, shown as it is).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    Counter,
    Gauge,
}

/// One raw value. `name` carries the unit (`read_requests`, `read_bytes`,
/// `busy_ms`, `run_delay_ns`); `labels` say which thing it is about
/// (`device=vda`, `mount=/data`, `op=READ`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    pub kind: MetricKind,
    pub value: f64,
}

impl Metric {
    pub fn counter(name: &str, value: f64) -> Self {
        Metric {
            name: name.to_string(),
            labels: BTreeMap::new(),
            kind: MetricKind::Counter,
            value,
        }
    }

    pub fn gauge(name: &str, value: f64) -> Self {
        Metric {
            name: name.to_string(),
            labels: BTreeMap::new(),
            kind: MetricKind::Gauge,
            value,
        }
    }

    pub fn with_label(mut self, key: &str, value: &str) -> Self {
        self.labels.insert(key.to_string(), value.to_string());
        self
    }

    /// `name{key=value,…}`: the identity of a series across samples.
    pub fn series_key(&self) -> String {
        format!("{}{{{}}}", self.name, self.labels_key())
    }

    /// `key=value,…`: the thing the series is about (a device, a mount),
    /// the same for every series of it.
    pub fn labels_key(&self) -> String {
        let labels: Vec<String> = self
            .labels
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
        labels.join(",")
    }
}

/// What one collection found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Collected {
    Metrics {
        metrics: Vec<Metric>,
    },
    /// The source does not exist here (no NFS mount, no PSI, no permission):
    /// shown once as absent, never as zeros.
    Absent {
        reason: String,
    },
    /// Metrics, and the things (by their labels, `device=vda,kind=disk`)
    /// the source gave values of that no counter can hold (another host's
    /// exporter: a NaN, an infinity), left out, each with why.
    Partial {
        metrics: Vec<Metric>,
        unreadable: BTreeMap<String, String>,
    },
}

/// A source of metrics for one layer.
pub trait Collector: Send {
    /// `device`, `nfs`, `net`, `cpu`, `memory`, `process`, `postgres`,
    /// `mariadb`; another host's layer as `LAYER@HOST` (`device@db1`).
    fn layer(&self) -> &str;
    /// Called on every collector of a round before any is collected, with
    /// how long the round may wait for one: a collector that asks another
    /// host asks now, so that hosts are asked at once and a slow one holds
    /// back no other.
    fn begin(&mut self, _wait: std::time::Duration) {}
    fn collect(&mut self) -> anyhow::Result<Collected>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_keys_are_stable_and_labelled() {
        let metric = Metric::counter("read_requests", 5.0)
            .with_label("device", "vda")
            .with_label("a", "b");
        assert_eq!(metric.series_key(), "read_requests{a=b,device=vda}");
        let json = serde_json::to_string(&Collected::Metrics {
            metrics: vec![metric.clone()],
        })
        .unwrap();
        let back: Collected = serde_json::from_str(&json).unwrap();
        assert_eq!(
            back,
            Collected::Metrics {
                metrics: vec![metric]
            }
        );
    }
}
