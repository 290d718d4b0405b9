//! The filer's own side of a calibration of an `nfs://` target
//! (`--agent`): the agent on the filer host (a strata agent, `strata
//! observe --prometheus ADDR --path EXPORT` there, or node_exporter),
//! reached before any work (a calibration whose agent does not answer, or
//! names no device under the export, is refused), then scraped at each
//! point's window edges: the devices under the export, the host's
//! network interfaces, and the NFS server's own count of the calls on the
//! export where the agent serves one (`--nfs-server ganesha` there),
//! counted over the same window as strata's calls; each operation's round
//! trip split into the server's time and the rest.
//!
//! Not for: scraping an agent or reading its series (strata-agent).

use anyhow::bail;
use std::time::Duration;
use strata_agent::endpoint::Endpoint;
use strata_agent::host::HostCounters;
use strata_agent::nfs_server::NfsServerCalls;
use strata_agent::scrape::scrape_blocking;
use strata_io::nfs::OpTotals;
use strata_probe::diskstats::DeviceDelta;
use strata_recording::calibrate::{
    FilerDeviceFigures, FilerFigures, FilerInterfaceFigures, FilerServerCallFigures,
};

/// The longest a scrape at an edge may take.
const EDGE_TIMEOUT: Duration = Duration::from_secs(5);

/// The filer host's agent, the devices under the export it counts, and
/// the export.
#[derive(Clone, Debug)]
pub struct FilerAgent {
    endpoint: Endpoint,
    host: String,
    devices: Vec<String>,
    export: String,
    /// The NFS server whose own count of the export's calls the agent
    /// serves, if any.
    server: Option<String>,
}

/// The agent's counters at one edge, or why there are none.
pub type FilerEdge = Result<HostCounters, String>;

impl FilerAgent {
    /// The agent at `endpoint`, once it answers with a device under
    /// `export` (the export's path on the filer).
    pub fn reach(endpoint: &Endpoint, export: &str) -> anyhow::Result<FilerAgent> {
        let counters = counters(endpoint).map_err(|error| anyhow::anyhow!("--agent: {error}"))?;
        let devices = counters.devices_under(export);
        if devices.is_empty() {
            bail!(
                "--agent {endpoint}: its host {} counts no device under the export {export} \
                 (run the strata agent there with --path {export}, or node_exporter)",
                counters.host
            );
        }
        let server = (counters.nfs_server.iter())
            .find(|calls| calls.export == export)
            .map(|calls| calls.server.clone());
        Ok(FilerAgent {
            endpoint: endpoint.clone(),
            host: counters.host,
            devices,
            export: export.to_string(),
            server,
        })
    }

    /// What the agent counts, for the target's line.
    pub fn said(&self) -> String {
        let server = match &self.server {
            Some(server) => format!("{server}'s own count of the calls on it"),
            None => "no NFS server's own count of the calls on it (`strata observe \
                     --nfs-server ganesha` there serves nfs-ganesha's)"
                .to_string(),
        };
        format!(
            "its host {} is followed through its agent: {} under the export, its interfaces, and \
             {server}",
            self.host,
            self.devices.join(", ")
        )
    }

    /// The agent's counters now.
    pub fn now(&self) -> FilerEdge {
        counters(&self.endpoint)
    }

    /// The filer over a window from its counters at the two edges, the
    /// server's calls beside `own_calls`, strata's replies and round trips
    /// of each operation over the window.
    pub fn figures(
        &self,
        start: &FilerEdge,
        end: &FilerEdge,
        own_calls: &[(&str, OpTotals)],
    ) -> FilerFigures {
        let mut figures = FilerFigures {
            host: self.host.clone(),
            agent: self.endpoint.to_string(),
            ..FilerFigures::default()
        };
        let (start, end) = match (start, end) {
            (Ok(start), Ok(end)) => (start, end),
            (Err(error), _) | (_, Err(error)) => {
                figures.missing = Some(error.clone());
                return figures;
            }
        };
        let server = self.server_calls(start, end, own_calls);
        match self
            .moved(start, end)
            .and_then(|moved| Ok((moved, server?)))
        {
            Ok(((devices, interfaces), server)) => {
                (figures.devices, figures.interfaces) = (devices, interfaces);
                figures.server = server;
            }
            Err(reset) => figures.missing = Some(format!("{reset}: a gap, not a figure")),
        }
        figures
    }

    /// The devices' and interfaces' counts between the edges; why not,
    /// when a counter went down (the agent's host restarted, or a device
    /// was made again).
    fn moved(
        &self,
        start: &HostCounters,
        end: &HostCounters,
    ) -> Result<(Vec<FilerDeviceFigures>, Vec<FilerInterfaceFigures>), String> {
        let mut devices = Vec::new();
        for device in &self.devices {
            let before = start.disks.iter().find(|disk| &disk.name == device);
            let after = end.disks.iter().find(|disk| &disk.name == device);
            let (Some(before), Some(after)) = (before, after) else {
                continue;
            };
            let delta = DeviceDelta::between(before, after, 0.0)?;
            devices.push(FilerDeviceFigures {
                device: delta.device,
                read_requests: delta.read_requests,
                read_bytes: delta.read_bytes,
                write_requests: delta.write_requests,
                write_bytes: delta.write_bytes,
            });
        }
        let mut interfaces = Vec::new();
        for after in &end.interfaces {
            let before = start
                .interfaces
                .iter()
                .find(|before| before.interface == after.interface);
            let Some(before) = before else {
                continue;
            };
            let went_down = || {
                format!(
                    "{}'s bytes went down: its counters were reset",
                    after.interface
                )
            };
            interfaces.push(FilerInterfaceFigures {
                interface: after.interface.clone(),
                receive_bytes: (after.receive_bytes.checked_sub(before.receive_bytes))
                    .ok_or_else(went_down)?,
                transmit_bytes: (after.transmit_bytes.checked_sub(before.transmit_bytes))
                    .ok_or_else(went_down)?,
            });
        }
        Ok((devices, interfaces))
    }

    /// Each operation the server counted calls of on the export between
    /// the edges, with strata's round trip of it split; why not, when a
    /// count went down (the server restarted, or its statistics were
    /// reset).
    fn server_calls(
        &self,
        start: &HostCounters,
        end: &HostCounters,
        own_calls: &[(&str, OpTotals)],
    ) -> Result<Vec<FilerServerCallFigures>, String> {
        let mut figures = Vec::new();
        let on_export = |calls: &&NfsServerCalls| calls.export == self.export;
        for after in end.nfs_server.iter().filter(on_export) {
            let same = |before: &&NfsServerCalls| {
                (&before.server, &before.protocol, &before.op)
                    == (&after.server, &after.protocol, &after.op)
            };
            let Some(before) = start.nfs_server.iter().filter(on_export).find(same) else {
                continue;
            };
            let went_down = || {
                format!(
                    "{}'s count of {} {} calls went down: its statistics were reset",
                    after.server, after.protocol, after.op
                )
            };
            let moved = |now: u64, was: u64| now.checked_sub(was).ok_or_else(went_down);
            let calls = moved(after.calls, before.calls)?;
            let latency_ns = moved(after.latency_ns, before.latency_ns)?;
            if calls == 0 {
                continue;
            }
            let server_mean_us = latency_ns as f64 / 1e3 / calls as f64;
            let own = own_calls.iter().find(|(op, _)| *op == after.op);
            let round_trip_mean_us = own
                .filter(|(_, own)| own.ops > 0)
                .map(|(_, own)| own.round_trip_ns as f64 / 1e3 / own.ops as f64);
            figures.push(FilerServerCallFigures {
                server: after.server.clone(),
                protocol: after.protocol.clone(),
                op: after.op.clone(),
                calls,
                errors: moved(after.errors, before.errors)?,
                bytes: moved(after.transferred_bytes, before.transferred_bytes)?,
                server_mean_us,
                round_trip_mean_us,
                outside_server_us: round_trip_mean_us.map(|round_trip| round_trip - server_mean_us),
            });
        }
        Ok(figures)
    }
}

/// `endpoint`'s counters, or why there are none (naming it).
fn counters(endpoint: &Endpoint) -> FilerEdge {
    let scraped = scrape_blocking(endpoint, EDGE_TIMEOUT).map_err(|error| format!("{error:#}"))?;
    HostCounters::of(&scraped, endpoint.host())
        .ok_or_else(|| format!("{endpoint}: neither a strata agent nor node_exporter"))
}
