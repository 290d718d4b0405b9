//! Samples as a machine-readable stream, one sample at a time as it is
//! taken: JSON lines (one object per interval: `t_s`, `unix_s`,
//! `interval_s`, every layer with its raw metrics and per-second rates,
//! and with `--top N` the busiest processes as `top`;
//! docs/observe.schema.json) or CSV rows (one per metric per sample, the
//! rate beside the raw value).
//!
//! Not for: the text for people (`view`) or the Recording (`record`).

use crate::sampler::{LayerSample, Sample};
use crate::top::TopProcesses;
use strata_core::metrics::MetricKind;
use strata_output::render::csv::csv_text;

/// One line of the JSON stream: the sample's members, and `top` beside
/// them when there is one.
#[derive(serde::Serialize)]
struct JsonLine<'a> {
    #[serde(flatten)]
    sample: &'a Sample,
    #[serde(skip_serializing_if = "Option::is_none")]
    top: Option<&'a TopProcesses>,
}

/// One interval as one line of JSON; an error names the interval that
/// could not be written.
pub fn json_line(sample: &Sample, top: Option<&TopProcesses>) -> anyhow::Result<String> {
    let mut line = serde_json::to_string(&JsonLine { sample, top }).map_err(|error| {
        anyhow::anyhow!(
            "writing the sample at t = {} s as JSON: {error}",
            sample.t_s
        )
    })?;
    line.push('\n');
    Ok(line)
}

/// The heading of the CSV stream.
pub const CSV_HEADING: [&str; 9] = [
    "unix_s",
    "t_s",
    "interval_s",
    "layer",
    "name",
    "labels",
    "kind",
    "value",
    "rate_per_s",
];

/// The CSV rows of one sample: every metric of every layer with values,
/// its labels as `key=value;…`, and its rate per second where there is one
/// (none in the first sample, none for gauges).
pub fn csv_rows(sample: &Sample) -> String {
    let mut rows = Vec::new();
    for (layer, data) in &sample.layers {
        let LayerSample::Values { metrics, rates, .. } = data else {
            continue;
        };
        for metric in metrics {
            let labels: Vec<String> = metric
                .labels
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect();
            let rate = rates
                .get(&metric.series_key())
                .map(|rate| format!("{rate}"));
            let kind = match metric.kind {
                MetricKind::Counter => "counter",
                MetricKind::Gauge => "gauge",
            };
            rows.push(vec![
                format!("{}", sample.unix_s),
                format!("{}", sample.t_s),
                format!("{}", sample.interval_s),
                layer.clone(),
                metric.name.clone(),
                labels.join(";"),
                kind.to_string(),
                format!("{}", metric.value),
                rate.unwrap_or_default(),
            ]);
        }
    }
    csv_text(&rows)
}

/// The heading line of the CSV stream.
pub fn csv_heading() -> String {
    format!("{}\n", CSV_HEADING.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use strata_core::metrics::Metric;

    fn sample() -> Sample {
        let metric = Metric {
            name: "read_requests".into(),
            labels: [("device".to_string(), "vda".to_string())].into(),
            kind: MetricKind::Counter,
            value: 120.0,
        };
        let rates = [(metric.series_key(), 40.0)].into();
        Sample {
            t_s: 3.0,
            unix_s: 1_700_000_000.5,
            interval_s: 1.0,
            layers: BTreeMap::from([(
                "device".to_string(),
                LayerSample::Values {
                    metrics: vec![metric],
                    rates,
                    gaps: BTreeMap::new(),
                },
            )]),
        }
    }

    #[test]
    fn a_csv_row_carries_the_raw_value_and_its_rate() {
        assert_eq!(
            csv_rows(&sample()),
            "1700000000.5,3,1,device,read_requests,device=vda,counter,120,40\n"
        );
        assert_eq!(csv_heading().split(',').count(), 9);
    }

    #[test]
    fn a_json_line_reads_back_as_the_sample() {
        let line = json_line(&sample(), None).unwrap();
        assert!(line.ends_with('\n') && !line.trim_end().contains('\n'));
        let back: Sample = serde_json::from_str(&line).unwrap();
        assert_eq!(back, sample());
    }

    #[test]
    fn a_json_line_carries_the_top_processes_beside_the_layers() {
        let top = TopProcesses {
            t_s: 3.0,
            interval_s: 1.0,
            limit: 5,
            processes_seen: 1,
            io_unreadable: 1,
            processes: vec![crate::top::TopProcess {
                pid: 42,
                start_ticks: 7,
                command: "dd".into(),
                database: None,
                role: None,
                read_mb_per_s: None,
                write_mb_per_s: None,
                read_syscalls_per_s: None,
                write_syscalls_per_s: None,
                cpu_pct: 1.0,
                run_delay_ms_per_s: Some(0.0),
                traced_read_requests_per_s: None,
                traced_write_requests_per_s: None,
                traced_device_time_mean_ms: None,
            }],
            ranked_by: String::new(),
        };
        let line: serde_json::Value =
            serde_json::from_str(&json_line(&sample(), Some(&top)).unwrap()).unwrap();
        assert_eq!(line["layers"]["device"]["status"], "values");
        assert_eq!(line["top"]["processes"][0]["pid"], 42);
        assert!(line["top"]["processes"][0]["read_mb_per_s"].is_null());
        assert!(line["top"]["processes"][0].get("role").is_none());
    }
}
