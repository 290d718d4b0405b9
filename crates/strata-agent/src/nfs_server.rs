//! An NFS server's own counters as a strata agent serves them (its
//! `nfs_server` layer, `strata observe --nfs-server ganesha` on the filer):
//! per export, protocol and operation, the calls the server counted, their
//! errors and bytes, and the time it spent on them.
//!
//! Not for: collecting them (strata-probe's `GaneshaCollector`).

use crate::host::{count, served_layers};
use crate::scrape::Scrape;
use std::collections::BTreeMap;
use strata_core::metrics::Metric;
use strata_recording::names::{label, layer, nfs_server};

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

/// Every export's calls a strata agent serves (its `nfs_server` layer,
/// read back by `served_layers`); an operation one of whose counters is
/// missing or no count (NaN, an infinity, below 0) is left out.
pub fn nfs_server_calls(scrape: &Scrape) -> Vec<NfsServerCalls> {
    let layers = served_layers(scrape);
    let Some((_, metrics)) = layers.iter().find(|(name, _)| *name == layer::NFS_SERVER) else {
        return Vec::new();
    };
    let mut by_operation: BTreeMap<[&str; 4], Vec<&Metric>> = BTreeMap::new();
    for metric in metrics {
        let key = [label::SERVER, label::EXPORT, label::PROTOCOL, label::OP]
            .map(|name| metric.labels.get(name).map_or("", String::as_str));
        by_operation.entry(key).or_default().push(metric);
    }
    let counted = |([server, export, protocol, op], metrics): ([&str; 4], Vec<&Metric>)| {
        let value = |name: &str| count(metrics.iter().find(|m| m.name == name)?.value).ok();
        Some(NfsServerCalls {
            server: server.to_string(),
            export: export.to_string(),
            protocol: protocol.to_string(),
            op: op.to_string(),
            calls: value(nfs_server::OPS)?,
            errors: value(nfs_server::ERRORS)?,
            transferred_bytes: value(nfs_server::TRANSFERRED_BYTES)?,
            latency_ns: value(nfs_server::LATENCY_NS)?,
        })
    };
    by_operation.into_iter().filter_map(counted).collect()
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
        let scrape = Scrape {
            url: "http://filer:9477/metrics".into(),
            sent_unix_s: 0.0,
            came_back_unix_s: 0.0,
            series: parse(text).series,
            unread: None,
        };
        let calls = nfs_server_calls(&scrape);
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
