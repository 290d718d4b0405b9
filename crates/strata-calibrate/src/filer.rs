//! The filer's own side of a calibration of an `nfs://` target
//! (`--agent`): the agent on the filer host (a strata agent, `strata
//! observe --prometheus ADDR --path EXPORT` there, or node_exporter),
//! reached before any work (a calibration whose agent does not answer, or
//! names no device under the export, is refused), then scraped at each
//! point's window edges: the devices under the export and the host's
//! network interfaces, counted over the same window as strata's calls.
//!
//! Not for: scraping an agent or reading its series (strata-agent).

use anyhow::bail;
use std::time::Duration;
use strata_agent::endpoint::Endpoint;
use strata_agent::host::HostCounters;
use strata_agent::scrape::scrape_blocking;
use strata_probe::diskstats::DeviceDelta;
use strata_recording::calibrate::{FilerDeviceFigures, FilerFigures, FilerInterfaceFigures};

/// The longest a scrape at an edge may take.
const EDGE_TIMEOUT: Duration = Duration::from_secs(5);

/// The filer host's agent, and the devices under the export it counts.
#[derive(Clone, Debug)]
pub struct FilerAgent {
    endpoint: Endpoint,
    host: String,
    devices: Vec<String>,
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
        Ok(FilerAgent {
            endpoint: endpoint.clone(),
            host: counters.host,
            devices,
        })
    }

    /// The agent's counters now.
    pub fn now(&self) -> FilerEdge {
        counters(&self.endpoint)
    }

    /// The filer over a window from its counters at the two edges.
    pub fn figures(&self, start: &FilerEdge, end: &FilerEdge) -> FilerFigures {
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
        match self.moved(start, end) {
            Ok((devices, interfaces)) => {
                (figures.devices, figures.interfaces) = (devices, interfaces)
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
}

/// `endpoint`'s counters, or why there are none (naming it).
fn counters(endpoint: &Endpoint) -> FilerEdge {
    let scraped = scrape_blocking(endpoint, EDGE_TIMEOUT).map_err(|error| format!("{error:#}"))?;
    HostCounters::of(&scraped, endpoint.host())
        .ok_or_else(|| format!("{endpoint}: neither a strata agent nor node_exporter"))
}
