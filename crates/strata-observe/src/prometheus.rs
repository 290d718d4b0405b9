//! The Prometheus endpoint: the latest sample in the text exposition format
//! (version 0.0.4) at `/metrics`, so a fleet is scraped by Prometheus and
//! graphed by Grafana. Counters keep their raw monotonic values with a
//! `_total` suffix (Prometheus computes rates itself); gauges as they are.
//!
//! Not for: aggregation across hosts, which is Prometheus's job.

use crate::sampler::{LayerSample, Sample};
use anyhow::Context;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use strata_core::metrics::MetricKind;

fn metric_name(layer: &str, name: &str, kind: MetricKind) -> String {
    let clean: String = format!("strata_{layer}_{name}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    match kind {
        MetricKind::Counter => format!("{clean}_total"),
        MetricKind::Gauge => clean,
    }
}

fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The exposition text of one sample.
pub fn exposition(sample: &Sample) -> String {
    let mut families: BTreeMap<String, (MetricKind, Vec<String>)> = BTreeMap::new();
    for (layer, data) in &sample.layers {
        let LayerSample::Values { metrics, .. } = data else {
            continue;
        };
        for metric in metrics {
            let name = metric_name(layer, &metric.name, metric.kind);
            let labels: Vec<String> = metric
                .labels
                .iter()
                .map(|(key, value)| format!("{key}=\"{}\"", escape(value)))
                .collect();
            let line = if labels.is_empty() {
                format!("{name} {}", metric.value)
            } else {
                format!("{name}{{{}}} {}", labels.join(","), metric.value)
            };
            families
                .entry(name)
                .or_insert_with(|| (metric.kind, Vec::new()))
                .1
                .push(line);
        }
    }
    let mut out = String::new();
    for (name, (kind, lines)) in families {
        let kind = match kind {
            MetricKind::Counter => "counter",
            MetricKind::Gauge => "gauge",
        };
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

/// Serves `/metrics` from `latest` on `address` in a background thread.
pub fn serve(address: &str, latest: Arc<Mutex<String>>) -> anyhow::Result<std::net::SocketAddr> {
    let listener = TcpListener::bind(address).with_context(|| {
        format!(
            "--prometheus {address}: cannot listen there (is the port taken by another program?)"
        )
    })?;
    let bound = listener.local_addr()?;
    std::thread::Builder::new()
        .name("strata-prometheus".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = answer(stream, &latest);
            }
        })?;
    Ok(bound)
}

fn answer(mut stream: TcpStream, latest: &Mutex<String>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
    let mut request_line = String::new();
    let mut reader = BufReader::new(stream.try_clone()?);
    reader.read_line(&mut request_line)?;
    let mut header = String::new();
    while reader.read_line(&mut header)? > 2 {
        header.clear();
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or("");
    let (status, body) = if path == "/metrics" {
        (
            "200 OK",
            latest.lock().map(|text| text.clone()).unwrap_or_default(),
        )
    } else {
        ("404 Not Found", "strata serves /metrics\n".to_string())
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_core::metrics::Metric;

    #[test]
    fn counters_get_total_and_labels_are_escaped() {
        let sample = Sample {
            t_s: 1.0,
            unix_s: 0.0,
            interval_s: 1.0,
            layers: BTreeMap::from([(
                "device".to_string(),
                LayerSample::Values {
                    metrics: vec![
                        Metric::counter("read_requests", 12.0).with_label("device", "vda"),
                        Metric::gauge("in_flight", 2.0).with_label("device", "a\"b"),
                    ],
                    rates: BTreeMap::new(),
                },
            )]),
        };
        let text = exposition(&sample);
        assert!(
            text.contains("# TYPE strata_device_read_requests_total counter\n"),
            "{text}"
        );
        assert!(
            text.contains("strata_device_read_requests_total{device=\"vda\"} 12\n"),
            "{text}"
        );
        assert!(
            text.contains("strata_device_in_flight{device=\"a\\\"b\"} 2\n"),
            "{text}"
        );
    }
}
