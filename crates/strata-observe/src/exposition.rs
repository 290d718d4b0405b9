//! A sample in Prometheus's text exposition format (version 0.0.4), named
//! as Prometheus's conventions ask: `strata_<layer>_<name>`, base units in
//! the name and the value (a collector's `read_ms` is served as
//! `read_seconds`, `pgpgin_kib` as `pgpgin_bytes`), `_total` on counters,
//! `# HELP` and `# TYPE` on every family, a `host` label on every series.
//! Counters keep their raw monotonic values: Prometheus takes rates itself.
//! Other hosts' layers (`device@db1`, from `--agent`) are not served: each
//! host's agent serves its own.
//! `docs/observe.md` lists the families.
//!
//! prometheus-client writes OpenMetrics only; this is the 0.0.4 text that
//! promtool lints and node_exporter serves, so a scraper reads both alike.
//!
//! Not for: serving it (`prometheus`) or reading it back (a scraper's job).

use crate::sampler::{LayerSample, Sample};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use strata_core::metrics::MetricKind;
use strata_recording::names::layer::UP_FAMILY;
use strata_recording::names::served;

/// One family's name, type and help, and its series.
struct Family {
    kind: MetricKind,
    help: String,
    series: Vec<String>,
}

fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

pub(crate) fn help_escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// `{host="…",key="value",…}`.
pub(crate) fn labels(host: &str, metric_labels: &BTreeMap<String, String>) -> String {
    let mut all = vec![format!("host=\"{}\"", escape(host))];
    all.extend(
        metric_labels
            .iter()
            .filter(|(key, _)| key.as_str() != "host")
            .map(|(key, value)| format!("{key}=\"{}\"", escape(value))),
    );
    format!("{{{}}}", all.join(","))
}

/// The sample's ticks per second: the cpu layer's gauge, which comes with
/// the only `_ticks` counters there are (100, Linux's USER_HZ, without it).
fn ticks_per_second(sample: &Sample) -> f64 {
    let from_sample = sample.layers.get("cpu").and_then(|layer| match layer {
        LayerSample::Values { metrics, .. } => metrics
            .iter()
            .find(|metric| metric.name == "ticks_per_second")
            .map(|metric| metric.value),
        _ => None,
    });
    from_sample.filter(|ticks| *ticks > 0.0).unwrap_or(100.0)
}

/// The exposition text of one sample taken on `host`.
pub fn exposition(sample: &Sample, host: &str) -> String {
    let ticks = ticks_per_second(sample);
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    let mut up = Vec::new();
    let own_layers = sample
        .layers
        .iter()
        .filter(|(layer, _)| !layer.contains('@'));
    for (layer, data) in own_layers {
        let LayerSample::Values { metrics, .. } = data else {
            up.push(format!(
                "{UP_FAMILY}{} 0",
                labels(host, &layer_label(layer))
            ));
            continue;
        };
        up.push(format!(
            "{UP_FAMILY}{} 1",
            labels(host, &layer_label(layer))
        ));
        for metric in metrics {
            let (name, factor, converted) = served(layer, metric, ticks);
            let help = match converted {
                Some(unit) => format!("{layer} layer: {}, converted from {unit}", metric.name),
                None => format!("{layer} layer: {}", metric.name),
            };
            let line = format!(
                "{name}{} {}",
                labels(host, &metric.labels),
                metric.value * factor
            );
            families
                .entry(name)
                .or_insert_with(|| Family {
                    kind: metric.kind,
                    help,
                    series: Vec::new(),
                })
                .series
                .push(line);
        }
    }
    families.insert(
        UP_FAMILY.to_string(),
        Family {
            kind: MetricKind::Gauge,
            help: "1 when the layer had values in this sample, 0 when it was absent or failed"
                .to_string(),
            series: up,
        },
    );
    families.insert(
        "strata_sample_time_seconds".to_string(),
        Family {
            kind: MetricKind::Gauge,
            help: "when the served sample was taken, Unix seconds".to_string(),
            series: vec![format!(
                "strata_sample_time_seconds{} {}",
                labels(host, &BTreeMap::new()),
                sample.unix_s
            )],
        },
    );
    let mut out = String::new();
    for (name, family) in families {
        write_family(&mut out, &name, &family);
    }
    out
}

fn layer_label(layer: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("layer".to_string(), layer.to_string())])
}

fn write_family(out: &mut String, name: &str, family: &Family) {
    let kind = match family.kind {
        MetricKind::Counter => "counter",
        MetricKind::Gauge => "gauge",
    };
    let _ = writeln!(out, "# HELP {name} {}", help_escape(&family.help));
    let _ = writeln!(out, "# TYPE {name} {kind}");
    for line in &family.series {
        let _ = writeln!(out, "{line}");
    }
}

/// The agent's wall clock when a scrape's request came and when it was
/// answered, Unix seconds: with the scraper's own clock when it sent the
/// request and when the answer came, the agent's offset as NTP measures it.
pub fn clock_families(host: &str, received_unix_s: f64, answered_unix_s: f64) -> String {
    let mut out = String::new();
    let host_only = labels(host, &BTreeMap::new());
    for (name, help, unix_s) in [
        (
            "strata_agent_received_seconds",
            "the agent's wall clock when this scrape's request came, Unix seconds",
            received_unix_s,
        ),
        (
            "strata_agent_answered_seconds",
            "the agent's wall clock when it answered this scrape, Unix seconds",
            answered_unix_s,
        ),
    ] {
        let family = Family {
            kind: MetricKind::Gauge,
            help: help.to_string(),
            series: vec![format!("{name}{host_only} {unix_s}")],
        };
        write_family(&mut out, name, &family);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_core::metrics::Metric;

    fn sample(layer: &str, metrics: Vec<Metric>) -> Sample {
        Sample {
            t_s: 1.0,
            unix_s: 1_700_000_000.5,
            interval_s: 1.0,
            layers: BTreeMap::from([(
                layer.to_string(),
                LayerSample::Values {
                    metrics,
                    rates: BTreeMap::new(),
                    gaps: BTreeMap::new(),
                },
            )]),
        }
    }

    #[test]
    fn names_are_in_base_units_with_help_type_and_host() {
        let text = exposition(
            &sample(
                "device",
                vec![
                    Metric::counter("read_requests", 12.0).with_label("device", "vda"),
                    Metric::counter("read_ms", 1500.0).with_label("device", "vda"),
                    Metric::gauge("in_flight", 2.0).with_label("device", "a\"b"),
                ],
            ),
            "db1",
        );
        for line in [
            "# HELP strata_device_read_requests_total device layer: read_requests\n",
            "# TYPE strata_device_read_requests_total counter\n",
            "strata_device_read_requests_total{host=\"db1\",device=\"vda\"} 12\n",
            "# HELP strata_device_read_seconds_total device layer: read_ms, converted from ms\n",
            "strata_device_read_seconds_total{host=\"db1\",device=\"vda\"} 1.5\n",
            "strata_device_in_flight{host=\"db1\",device=\"a\\\"b\"} 2\n",
            "strata_layer_up{host=\"db1\",layer=\"device\"} 1\n",
            "strata_sample_time_seconds{host=\"db1\"} 1700000000.5\n",
        ] {
            assert!(text.contains(line), "no {line:?} in\n{text}");
        }
    }

    #[test]
    fn ticks_become_seconds_at_the_sample_s_own_rate() {
        let text = exposition(
            &sample(
                "cpu",
                vec![
                    Metric::counter("user_ticks", 250.0),
                    Metric::gauge("ticks_per_second", 100.0),
                    Metric::counter("pressure_some_us", 2_000_000.0),
                ],
            ),
            "db1",
        );
        assert!(
            text.contains("strata_cpu_user_seconds_total{host=\"db1\"} 2.5\n"),
            "{text}"
        );
        assert!(
            text.contains("strata_cpu_pressure_some_seconds_total{host=\"db1\"} 2\n"),
            "{text}"
        );
    }
}
