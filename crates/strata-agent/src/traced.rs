//! The requests a strata agent traced on its host, as it serves them: per
//! device and operation, Prometheus histograms of device time (issue →
//! end) and queue time (start → issue), in seconds, counted since its
//! tracer started. Two scrapes give a window's requests and where in the
//! agent's bounds their times fell; a percentile is known to the bucket
//! it falls in, no finer.
//!
//! Not for: serving them (strata-observe's `block_histograms`), or this
//! host's own tracer (strata-probe).

use crate::text::Series;
use std::collections::BTreeMap;
use strata_recording::names::blocktrace::{
    DEVICE_SECONDS_FAMILY, ENDS_MISSED_FAMILY, QUEUE_SECONDS_FAMILY, SECONDS_FAMILY,
};
use strata_recording::names::layer;

/// One histogram as served: requests at or under each upper bound
/// (seconds; `+Inf` last), their count and the sum of their times.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServedHistogram {
    pub cumulative: Vec<(f64, u64)>,
    pub count: u64,
    pub sum_s: f64,
}

/// A device's requests of one operation, as the agent traced them: those
/// issued to the driver (device time), and of those whose start it saw,
/// the queue time and the time start → end (what /proc/diskstats counts;
/// absent from agents before it was served), and those whose end it
/// missed (absent from agents before it was served).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TracedSeries {
    pub device_time: ServedHistogram,
    pub queue_time: Option<ServedHistogram>,
    pub total_time: Option<ServedHistogram>,
    pub ends_missed: Option<u64>,
}

/// What an agent serves of its tracer: by (device, operation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentTrace {
    pub series: BTreeMap<(String, String), TracedSeries>,
    /// Histograms left out, by `device=NAME,operation=OP`, and why (a value
    /// no counter can hold, a bucket missing its bound).
    pub unreadable: BTreeMap<String, String>,
}

impl ServedHistogram {
    /// The requests between `before` and this; `None` where a count went
    /// down (the agent restarted) or the bounds differ.
    pub fn since(&self, before: &ServedHistogram) -> Option<ServedHistogram> {
        let bounds_agree = before.cumulative.is_empty()
            || (before.cumulative.len() == self.cumulative.len()
                && before
                    .cumulative
                    .iter()
                    .zip(&self.cumulative)
                    .all(|(earlier, now)| earlier.0 == now.0));
        if !bounds_agree || self.count < before.count || self.sum_s < before.sum_s {
            return None;
        }
        let earlier = |at: usize| before.cumulative.get(at).map_or(0, |bucket| bucket.1);
        let cumulative = self
            .cumulative
            .iter()
            .enumerate()
            .map(|(at, (bound, requests))| Some((*bound, requests.checked_sub(earlier(at))?)))
            .collect::<Option<Vec<_>>>()?;
        Some(ServedHistogram {
            cumulative,
            count: self.count - before.count,
            sum_s: self.sum_s - before.sum_s,
        })
    }

    /// The upper bound (seconds) of the bucket the `quantile` falls in:
    /// the least bound with at least that share of the requests at or
    /// under it; the largest finite bound where it falls past them all.
    pub fn quantile_bound_s(&self, quantile: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((quantile * self.count as f64).ceil() as u64).max(1);
        let finite = self
            .cumulative
            .iter()
            .filter(|(bound, _)| bound.is_finite());
        let largest = finite.clone().next_back().map(|(bound, _)| *bound);
        finite
            .clone()
            .find(|(_, requests)| *requests >= rank)
            .map(|(bound, _)| *bound)
            .or(largest)
    }

    /// The upper bound of the highest bucket holding a request.
    pub fn max_bound_s(&self) -> Option<f64> {
        self.quantile_bound_s(1.0)
    }
}

/// The histograms of a strata agent's answer; `None` where it serves none
/// and its `blocktrace` layer is not up (node_exporter, or an agent that
/// does not trace). An agent that traces and has seen no request yet
/// gives an empty trace.
pub fn agent_trace(series: &[Series]) -> Option<AgentTrace> {
    let tracing = series.iter().any(|one| {
        one.name == layer::UP_FAMILY
            && one.label("layer") == Some(layer::BLOCKTRACE)
            && one.value == 1.0
    });
    let mut trace = AgentTrace::default();
    let mut found = false;
    for family in [DEVICE_SECONDS_FAMILY, QUEUE_SECONDS_FAMILY, SECONDS_FAMILY] {
        for ((device, operation), histogram) in histograms(series, family, &mut trace.unreadable) {
            found = true;
            let entry = trace.series.entry((device, operation)).or_default();
            match family {
                DEVICE_SECONDS_FAMILY => entry.device_time = histogram,
                QUEUE_SECONDS_FAMILY => entry.queue_time = Some(histogram),
                _ => entry.total_time = Some(histogram),
            }
        }
    }
    for one in series.iter().filter(|one| one.name == ENDS_MISSED_FAMILY) {
        let (Some(device), Some(operation)) = (one.label("device"), one.label("operation")) else {
            continue;
        };
        let key = (device.to_string(), operation.to_string());
        match whole(one.value) {
            Some(missed) => trace.series.entry(key).or_default().ends_missed = Some(missed),
            None => {
                let why = format!("{} {} is not a count", one.name, one.value);
                trace
                    .unreadable
                    .insert(format!("device={device},operation={operation}"), why);
            }
        }
    }
    trace
        .series
        .retain(|_, traced| !traced.device_time.cumulative.is_empty());
    (found || tracing).then_some(trace)
}

/// A sample's value as a count: whole, finite, not negative.
fn whole(value: f64) -> Option<u64> {
    (value.is_finite() && value >= 0.0 && value.fract() == 0.0).then_some(value as u64)
}

type Histograms = BTreeMap<(String, String), ServedHistogram>;

/// One family's histograms by (device, operation); one with a value no
/// counter can hold is left out, said in `unreadable`.
fn histograms(
    series: &[Series],
    family: &str,
    unreadable: &mut BTreeMap<String, String>,
) -> Histograms {
    let mut found = Histograms::new();
    let mut bad = BTreeMap::new();
    for one in series {
        let Some(part) = one.name.strip_prefix(family) else {
            continue;
        };
        let (Some(device), Some(operation)) = (one.label("device"), one.label("operation")) else {
            continue;
        };
        let key = (device.to_string(), operation.to_string());
        let histogram = found.entry(key.clone()).or_default();
        let counted = || -> Result<u64, String> {
            whole(one.value).ok_or(format!("{} {} is not a count", one.name, one.value))
        };
        let taken = match part {
            "_bucket" => bucket_bound(one).and_then(|bound| {
                histogram.cumulative.push((bound, counted()?));
                Ok(())
            }),
            "_count" => counted().map(|count| histogram.count = count),
            "_sum" if one.value.is_finite() && one.value >= 0.0 => {
                histogram.sum_s = one.value;
                Ok(())
            }
            "_sum" => Err(format!("{} {} is not a sum of times", one.name, one.value)),
            _ => Ok(()),
        };
        if let Err(why) = taken {
            bad.entry(key).or_insert(why);
        }
    }
    for (key, why) in bad {
        found.remove(&key);
        unreadable.insert(format!("device={},operation={}", key.0, key.1), why);
    }
    for histogram in found.values_mut() {
        histogram
            .cumulative
            .sort_by(|one, other| one.0.total_cmp(&other.0));
    }
    found
}

fn bucket_bound(series: &Series) -> Result<f64, String> {
    let le = series
        .label("le")
        .ok_or(format!("{} has no le", series.name))?;
    match le {
        "+Inf" => Ok(f64::INFINITY),
        bound => bound
            .parse::<f64>()
            .ok()
            .filter(|bound| bound.is_finite() && *bound >= 0.0)
            .ok_or(format!("{} le=\"{bound}\" is not a bound", series.name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse;

    const SERVED: &str = "\
# TYPE strata_block_request_device_seconds histogram
strata_block_request_device_seconds_bucket{device=\"vda\",host=\"db1\",operation=\"read\",le=\"0.0001\"} 90
strata_block_request_device_seconds_bucket{device=\"vda\",host=\"db1\",operation=\"read\",le=\"0.001\"} 99
strata_block_request_device_seconds_bucket{device=\"vda\",host=\"db1\",operation=\"read\",le=\"0.01\"} 100
strata_block_request_device_seconds_bucket{device=\"vda\",host=\"db1\",operation=\"read\",le=\"+Inf\"} 100
strata_block_request_device_seconds_sum{device=\"vda\",host=\"db1\",operation=\"read\"} 0.02
strata_block_request_device_seconds_count{device=\"vda\",host=\"db1\",operation=\"read\"} 100
strata_block_request_device_seconds_bucket{device=\"vdb\",host=\"db1\",operation=\"read\",le=\"0.0001\"} NaN
strata_block_request_device_seconds_bucket{device=\"vdb\",host=\"db1\",operation=\"read\",le=\"+Inf\"} 3
strata_block_request_device_seconds_count{device=\"vdb\",host=\"db1\",operation=\"read\"} 3
# TYPE strata_block_request_ends_missed_total counter
strata_block_request_ends_missed_total{device=\"vda\",host=\"db1\",operation=\"read\"} 2
strata_block_request_ends_missed_total{device=\"vdb\",host=\"db1\",operation=\"write\"} -1
";

    #[test]
    fn a_served_histogram_reads_by_device_and_operation_and_a_bad_one_is_named() {
        let trace = agent_trace(&parse(SERVED).series).unwrap();
        let vda = &trace.series[&("vda".to_string(), "read".to_string())];
        assert_eq!(vda.device_time.count, 100);
        assert_eq!(vda.device_time.cumulative.len(), 4);
        assert_eq!(vda.device_time.quantile_bound_s(0.5), Some(0.0001));
        assert_eq!(vda.device_time.quantile_bound_s(0.99), Some(0.001));
        assert_eq!(vda.device_time.max_bound_s(), Some(0.01));
        assert!(vda.queue_time.is_none());
        assert_eq!(vda.ends_missed, Some(2));
        assert!(trace.unreadable["device=vdb,operation=write"].contains("-1 is not a count"));
        assert!(!trace
            .series
            .contains_key(&("vdb".to_string(), "read".to_string())));
        assert!(
            trace.unreadable["device=vdb,operation=read"].contains("NaN is not a count"),
            "{:?}",
            trace.unreadable
        );
        assert!(agent_trace(&parse("node_load1 0.5\n").series).is_none());
        let idle = "strata_layer_up{host=\"db1\",layer=\"blocktrace\"} 1\n";
        assert_eq!(
            agent_trace(&parse(idle).series),
            Some(AgentTrace::default())
        );
    }

    #[test]
    fn a_window_is_the_difference_and_a_restart_is_none() {
        let histogram = |counts: [u64; 2], sum_s: f64| ServedHistogram {
            cumulative: vec![(0.001, counts[0]), (f64::INFINITY, counts[1])],
            count: counts[1],
            sum_s,
        };
        let window = histogram([15, 20], 0.5).since(&histogram([5, 8], 0.1));
        assert_eq!(window, Some(histogram([10, 12], 0.4)));
        assert_eq!(window.unwrap().quantile_bound_s(0.99), Some(0.001));
        assert_eq!(histogram([1, 2], 0.0).since(&histogram([5, 8], 0.1)), None);
        let new_series = histogram([3, 4], 0.2).since(&ServedHistogram::default());
        assert_eq!(new_series, Some(histogram([3, 4], 0.2)));
    }
}
