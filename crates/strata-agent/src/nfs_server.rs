//! An NFS server's own counters as a strata agent serves them (its
//! `nfs_server` layer, `strata observe --nfs-server ganesha` on the filer):
//! per export, protocol and operation, the calls the server counted, their
//! errors and bytes, and the time it spent on them.
//!
//! Not for: collecting them (strata-probe's `GaneshaCollector`).

use crate::text::count;
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

/// Every export's calls a strata agent serves, from the layers it serves
/// (`host::served_layers`: its `nfs_server` layer); an operation one of
/// whose counters is missing or no count (NaN, an infinity, below 0) is
/// left out.
pub fn nfs_server_calls(layers: &[(&str, Vec<Metric>)]) -> Vec<NfsServerCalls> {
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
