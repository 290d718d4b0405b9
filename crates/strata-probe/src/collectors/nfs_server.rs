//! The `nfs_server` layer: an NFS server's own count of the calls it
//! served, per export, where the server gives one. nfs-ganesha's is asked
//! over D-Bus the way its `ganesha_stats` tool asks
//! (`org.ganesha.nfsd.exportstats`): for each export and protocol, READ and
//! WRITE calls, errors, bytes requested and transferred, and the time the
//! server spent on them. A client's round trip less that time is the
//! network's share and both stacks'.
//!
//! Not for: the kernel's nfsd (node_exporter's `node_nfsd_*` counts its
//! calls, without their time), or a client's view of its calls (the `nfs`
//! layer).

use anyhow::{bail, Context};
use strata_core::metrics::{Collected, Collector, Metric};
use strata_recording::names::{label, layer, nfs_server};
use zbus::blocking::Connection;

/// ganesha's well-known name, and the object its export statistics are on.
const GANESHA: &str = "org.ganesha.nfsd";
const EXPORT_MANAGER: &str = "/org/ganesha/nfsd/ExportMgr";

/// The `server` label of ganesha's series.
pub const GANESHA_SERVER: &str = "nfs-ganesha";

/// The protocols ganesha counts READ and WRITE calls of, as its
/// `Get<protocol>IO` methods name them.
const PROTOCOLS: [&str; 4] = ["NFSv3", "NFSv40", "NFSv41", "NFSv42"];

/// One export as `ShowExports` lists it: its id, its path, and which
/// protocols it has counted calls of (`(name, counted)`, eight of them).
type ListedExport = (
    u16,
    String,
    (
        (String, bool),
        (String, bool),
        (String, bool),
        (String, bool),
        (String, bool),
        (String, bool),
        (String, bool),
        (String, bool),
    ),
    (u64, u64),
);

/// ganesha's counters of one operation: bytes requested, bytes
/// transferred, calls, errors, nanoseconds spent on them, nanoseconds they
/// waited in its queue.
type IoStats = (u64, u64, u64, u64, u64, u64);

/// nfs-ganesha's per-export counters, from the D-Bus system bus it is on
/// (`DBUS_SYSTEM_BUS_ADDRESS`, else the system's own). Each export gives,
/// for each protocol and for `READ` and `WRITE`, the counters
/// `ops, errors, requested_bytes, transferred_bytes, latency_ns, queue_ns`
/// (labels `server`, `export`, `protocol`, `op`); a protocol ganesha has
/// counted no call of yet gives zeros, which is what it counted.
pub struct GaneshaCollector {
    connection: Connection,
}

impl GaneshaCollector {
    /// Connects to the system bus and asks ganesha for its exports once:
    /// an error names what did not answer.
    pub fn connect() -> anyhow::Result<GaneshaCollector> {
        let connection = Connection::system().context(
            "connecting to the D-Bus system bus (DBUS_SYSTEM_BUS_ADDRESS, else \
             /run/dbus/system_bus_socket)",
        )?;
        let collector = GaneshaCollector { connection };
        collector
            .exports()
            .context("asking nfs-ganesha (org.ganesha.nfsd on the system bus) for its exports")?;
        Ok(collector)
    }

    fn exports(&self) -> anyhow::Result<Vec<(u16, String)>> {
        let reply = self.connection.call_method(
            Some(GANESHA),
            EXPORT_MANAGER,
            Some("org.ganesha.nfsd.exportmgr"),
            "ShowExports",
            &(),
        )?;
        let (_, exports): ((u64, u64), Vec<ListedExport>) = reply.body().deserialize()?;
        Ok(exports
            .into_iter()
            .map(|(id, path, _, _)| (id, path))
            .collect())
    }

    /// The READ and WRITE counters of one export and protocol; zeros when
    /// ganesha says it has counted none.
    fn io(&self, export: u16, protocol: &str) -> anyhow::Result<[IoStats; 2]> {
        let reply = self.connection.call_method(
            Some(GANESHA),
            EXPORT_MANAGER,
            Some("org.ganesha.nfsd.exportstats"),
            format!("Get{protocol}IO").as_str(),
            &(export,),
        )?;
        let body = reply.body();
        if let Ok((true, _, _, read, write)) =
            body.deserialize::<(bool, String, (u64, u64), IoStats, IoStats)>()
        {
            return Ok([read, write]);
        }
        let (_, said): (bool, String) = body.deserialize()?;
        if said.contains("does not have any") {
            return Ok([IoStats::default(); 2]);
        }
        bail!("export {export}, {protocol}: {said}")
    }

    fn metrics(&self) -> anyhow::Result<Vec<Metric>> {
        let mut metrics = Vec::new();
        for (id, path) in self.exports()? {
            for protocol in PROTOCOLS {
                let [read, write] = self.io(id, protocol)?;
                for (op, stats) in [("READ", read), ("WRITE", write)] {
                    let (requested, transferred, calls, errors, latency_ns, queue_ns) = stats;
                    let counters = [
                        (nfs_server::OPS, calls),
                        (nfs_server::ERRORS, errors),
                        (nfs_server::REQUESTED_BYTES, requested),
                        (nfs_server::TRANSFERRED_BYTES, transferred),
                        (nfs_server::LATENCY_NS, latency_ns),
                        (nfs_server::QUEUE_NS, queue_ns),
                    ];
                    metrics.extend(counters.into_iter().map(|(name, value)| {
                        Metric::counter(name, value as f64)
                            .with_label(label::SERVER, GANESHA_SERVER)
                            .with_label(label::EXPORT, &path)
                            .with_label(label::PROTOCOL, protocol)
                            .with_label(label::OP, op)
                    }));
                }
            }
        }
        Ok(metrics)
    }
}

impl Collector for GaneshaCollector {
    fn layer(&self) -> &'static str {
        layer::NFS_SERVER
    }

    fn collect(&mut self) -> anyhow::Result<Collected> {
        Ok(match self.metrics() {
            Ok(metrics) => Collected::Metrics { metrics },
            Err(error) => Collected::Absent {
                reason: format!("nfs-ganesha did not answer over D-Bus: {error:#}"),
            },
        })
    }
}
