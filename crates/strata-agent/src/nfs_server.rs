//! An NFS server's own counters as a strata agent serves them (its
//! `nfs_server` layer, `strata observe --nfs-server ganesha` on the filer):
//! per export, protocol and operation, the calls the server counted, their
//! errors and bytes, and the time it spent on them.
//!
//! Not for: collecting them (strata-probe's `GaneshaCollector`).

use crate::text::Series;
use std::collections::BTreeMap;
use strata_core::metrics::Metric;
use strata_recording::names::{label, layer, nfs_server, served};

/// One export's calls of one operation by one protocol, as the server
/// counted them so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NfsServerCalls {
    /// The server (`nfs-ganesha`).
    pub server: String,
    /// The export's path on the server.
    pub export: String,
    /// `NFSv3`, `NFSv40`, …
    pub protocol: String,
    /// `READ` or `WRITE`.
    pub op: String,
    pub calls: u64,
    pub errors: u64,
    /// The data the calls carried.
    pub transferred_bytes: u64,
    /// The server's own time on the calls, added up.
    pub latency_ns: u64,
}

/// The family a strata agent serves `metric` of the `nfs_server` layer
/// under, and the factor from the served value back to the collector's.
fn family(metric: &str) -> (String, f64) {
    let (name, factor, _) = served(layer::NFS_SERVER, &Metric::counter(metric, 0.0), 100.0);
    (name, 1.0 / factor)
}

/// Every export's calls a strata agent serves; a series whose value is no
/// count (NaN, an infinity, below 0) leaves its export's operation out.
pub fn nfs_server_calls(series: &[Series]) -> Vec<NfsServerCalls> {
    let (ops_family, _) = family(nfs_server::OPS);
    let mut found: BTreeMap<[String; 4], NfsServerCalls> = BTreeMap::new();
    for calls in series.iter().filter(|series| series.name == ops_family) {
        let key = [label::SERVER, label::EXPORT, label::PROTOCOL, label::OP]
            .map(|name| calls.label(name).unwrap_or_default().to_string());
        let [server, export, protocol, op] = key.clone();
        found.insert(
            key,
            NfsServerCalls {
                server,
                export,
                protocol,
                op,
                ..NfsServerCalls::default()
            },
        );
    }
    found
        .into_values()
        .filter_map(|calls| counted(series, calls))
        .collect()
}

/// `calls` with its counters read from `series`; `None` when one is not
/// there or is no count.
fn counted(series: &[Series], mut calls: NfsServerCalls) -> Option<NfsServerCalls> {
    let value = |metric: &str| {
        let (name, factor) = family(metric);
        let found = series.iter().find(|series| {
            series.name == name
                && series.label(label::SERVER) == Some(calls.server.as_str())
                && series.label(label::EXPORT) == Some(calls.export.as_str())
                && series.label(label::PROTOCOL) == Some(calls.protocol.as_str())
                && series.label(label::OP) == Some(calls.op.as_str())
        })?;
        let value = (found.value * factor).round();
        (value.is_finite() && value >= 0.0 && value < u64::MAX as f64).then_some(value as u64)
    };
    calls.calls = value(nfs_server::OPS)?;
    calls.errors = value(nfs_server::ERRORS)?;
    calls.transferred_bytes = value(nfs_server::TRANSFERRED_BYTES)?;
    calls.latency_ns = value(nfs_server::LATENCY_NS)?;
    Some(calls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse;

    #[test]
    fn an_agent_s_ganesha_series_read_back_as_counts() {
        let text = "\
strata_nfs_server_ops_total{host=\"filer\",export=\"/export\",op=\"READ\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 2048
strata_nfs_server_errors_total{host=\"filer\",export=\"/export\",op=\"READ\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 0
strata_nfs_server_transferred_bytes_total{host=\"filer\",export=\"/export\",op=\"READ\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 16777216
strata_nfs_server_latency_seconds_total{host=\"filer\",export=\"/export\",op=\"READ\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 0.041234567
strata_nfs_server_ops_total{host=\"filer\",export=\"/export\",op=\"WRITE\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 3
strata_nfs_server_errors_total{host=\"filer\",export=\"/export\",op=\"WRITE\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} NaN
strata_nfs_server_transferred_bytes_total{host=\"filer\",export=\"/export\",op=\"WRITE\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 8192
strata_nfs_server_latency_seconds_total{host=\"filer\",export=\"/export\",op=\"WRITE\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 0.001
";
        let series = parse(text).series;
        let calls = nfs_server_calls(&series);
        assert_eq!(
            calls,
            [NfsServerCalls {
                server: "nfs-ganesha".into(),
                export: "/export".into(),
                protocol: "NFSv3".into(),
                op: "READ".into(),
                calls: 2048,
                errors: 0,
                transferred_bytes: 16_777_216,
                latency_ns: 41_234_567,
            }],
            "the WRITE series with a NaN count is left out, never a number"
        );
    }
}
