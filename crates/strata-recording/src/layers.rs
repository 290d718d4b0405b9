//! Every layer at one moment, as the sampler took it: raw values and the
//! per-second rate of every counter (`strata observe`, and the layers a run
//! or a calibration samples each second).
//!
//! Not for: taking samples (strata-observe's sampler) or reading one
//! layer's figures out of them (strata-report).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use strata_core::metrics::Metric;

/// One layer in one sample.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum LayerSample {
    /// Raw values, and the per-second rate of each counter by series key
    /// (absent in the first sample, which has nothing to compare with).
    Values {
        metrics: Vec<Metric>,
        rates: BTreeMap<String, f64>,
        /// The things (by their labels, `device=vda`; `` for a layer
        /// without labels) whose counters have no rates over this interval,
        /// and why: a counter went down (a reset: the host or its exporter
        /// restarted, a device was made again) or is not a number.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        gaps: BTreeMap<String, String>,
    },
    Absent {
        reason: String,
    },
    /// The collector failed this time (a database went away…).
    Failed {
        error: String,
    },
}

/// Every layer at one moment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the first sample.
    pub t_s: f64,
    /// Wall-clock time, Unix seconds.
    pub unix_s: f64,
    /// Seconds since the previous sample (0 for the first).
    pub interval_s: f64,
    pub layers: BTreeMap<String, LayerSample>,
}

impl Sample {
    /// The metrics and rates of `layer`, when it had values at this moment.
    pub fn values(&self, layer: &str) -> Option<(&[Metric], &BTreeMap<String, f64>)> {
        match self.layers.get(layer)? {
            LayerSample::Values { metrics, rates, .. } => Some((metrics, rates)),
            _ => None,
        }
    }
}
