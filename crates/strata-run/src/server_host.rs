//! The server's host seen through its agent (`--agent`): which host, its
//! clock against this one, the devices under the server's data and WAL
//! directories as the agent names them, and the agent's counters put in
//! an edge in place of this machine's, so the window is accounted with the
//! server host's devices and CPU.
//!
//! Every engine uses it, async (PostgreSQL's sessions) or not (MariaDB's).
//!
//! Not for: scraping or reading an agent's series (strata-agent).

use crate::accounting::{RunDevices, RunFigures};
use crate::edge::{Edge, HostEdge};
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use strata_agent::collector::{Agent, AgentLayer, Layer};
use strata_agent::endpoint::Endpoint;
use strata_agent::host::{Dialect, HostCounters};
use strata_agent::scrape::{on_own_runtime, scrape, scrape_blocking, Scrape};
use strata_agent::traced;
use strata_core::metrics::Collector;
use strata_probe::blockdev::BlockDevice;
use strata_recording::environment::ServerHost;

/// How long a scrape at an edge may take before the edge goes without it.
const EDGE_TIMEOUT: Duration = Duration::from_secs(5);

pub struct ServerHostAgent {
    /// The agent, as shown: its password masked.
    pub endpoint: Endpoint,
    /// The agent's host, as it names itself.
    pub host: String,
    /// The agent's clock less this machine's, from its first answer.
    pub clock_offset_s: Option<f64>,
    pub round_trip_s: f64,
    pub dialect: Dialect,
    pub devices: RunDevices,
    /// What the agent did not give at the window's edges, and why.
    gaps: Mutex<EdgeGaps>,
}

/// What an agent did not give at a window's edges.
#[derive(Default)]
struct EdgeGaps {
    /// Each time it did not answer (or answered as no agent).
    unanswered: Vec<String>,
    /// Its CPU time was not known.
    cpu: Vec<String>,
    /// A device under the server's directories could not be counted.
    devices: Vec<String>,
}

impl ServerHostAgent {
    /// The agent's first answer: its host, its clock, and the devices under
    /// the data and WAL directories (as the server shows them) that it
    /// counts.
    pub async fn reach(
        endpoint: &Endpoint,
        data_directory: Option<&Path>,
        wal_directory: Option<&Path>,
    ) -> anyhow::Result<ServerHostAgent> {
        let scraped = scrape(endpoint, EDGE_TIMEOUT).await;
        Self::from_first(endpoint, scraped, data_directory, wal_directory)
    }

    /// [`ServerHostAgent::reach`] from synchronous code.
    pub fn reach_blocking(
        endpoint: &Endpoint,
        data_directory: Option<&Path>,
        wal_directory: Option<&Path>,
    ) -> anyhow::Result<ServerHostAgent> {
        let scraped = scrape_blocking(endpoint, EDGE_TIMEOUT);
        Self::from_first(endpoint, scraped, data_directory, wal_directory)
    }

    fn from_first(
        endpoint: &Endpoint,
        scraped: anyhow::Result<Scrape>,
        data_directory: Option<&Path>,
        wal_directory: Option<&Path>,
    ) -> anyhow::Result<ServerHostAgent> {
        let scraped = scraped.map_err(|error| error.context(format!("--agent {endpoint}")))?;
        scraped.note_unread("--agent");
        let counters = counters(&scraped, endpoint)?;
        let under = |dir: Option<&Path>| {
            let path = dir.map_or(String::new(), |dir| dir.display().to_string());
            counters.devices_under(&path)
        };
        let devices = RunDevices {
            data: under(data_directory),
            wal: under(wal_directory.or(data_directory)),
            unobserved: None,
        };
        if devices.data.is_empty() {
            anyhow::bail!(
                "--agent {endpoint}: the agent on {} counts no device under the server's data \
                 directory{} (a strata agent: start it with --path DATA_DIR)",
                counters.host,
                data_directory.map_or(String::new(), |dir| format!(" {}", dir.display()))
            );
        }
        Ok(ServerHostAgent {
            endpoint: endpoint.clone(),
            host: counters.host.clone(),
            clock_offset_s: scraped.clock_offset_s(),
            round_trip_s: scraped.round_trip_s(),
            dialect: counters.dialect,
            devices,
            gaps: Mutex::new(EdgeGaps::default()),
        })
    }

    /// Puts the server's host in `environment` in place of this machine:
    /// its devices, none of this machine's details, the note saying where
    /// they are read, and the host itself.
    pub fn replace_this_machine(&self, environment: &mut impl ServerHostPlace) {
        let (devices, details, note, host) = environment.server_host_place();
        *devices = self.devices.clone();
        details.clear();
        *note = Some(self.note());
        *host = Some(self.server_host());
    }

    /// The host as the run's environment and Recording keep it.
    pub fn server_host(&self) -> ServerHost {
        described(
            &self.host,
            &self.endpoint,
            self.dialect,
            self.clock_offset_s,
            self.round_trip_s,
        )
    }

    /// What the run's environment says of the devices' source (whether an
    /// edge then had them is the figures' to say: their warnings and
    /// `devices_unobserved`).
    pub fn note(&self) -> String {
        let offset = self.clock_offset_s.map_or("unknown".to_string(), |offset| {
            format!("{:+.1} ms", offset * 1e3)
        });
        format!(
            "the server's host {} is observed through its agent {} ({}; clock offset \
             {offset}, round trip {:.1} ms): its devices and CPU are read there at the \
             window's edges and each second",
            self.host,
            self.endpoint,
            self.endpoint.transport(),
            self.round_trip_s * 1e3
        )
    }

    /// Puts the agent's counters of now into `edge` in place of this
    /// machine's devices, CPU and OOM kills (and no process of this machine
    /// stands for the server host's tenants), and `others`' counters beside
    /// them. When an agent does not answer, the edge keeps no device of its
    /// host and the gap is kept.
    ///
    /// The tracer (which carries its own diskstats) is asked first; then
    /// every agent's `/metrics` at once, so that a device two agents watch
    /// is read at one moment, not one scrape after the other while other
    /// programs' requests fall between them.
    pub async fn onto(&self, edge: &mut Edge, others: &OtherHostEdges) {
        let traced = match self.dialect {
            Dialect::Strata => Some(traced::fetch(&self.endpoint, EDGE_TIMEOUT).await),
            Dialect::NodeExporter => None,
        };
        let (scraped, other_hosts) =
            futures_util::future::join(scrape(&self.endpoint, EDGE_TIMEOUT), others.take()).await;
        self.put(scraped, traced, edge);
        edge.other_hosts = other_hosts;
    }

    /// [`ServerHostAgent::onto`] from synchronous code, on a runtime of
    /// its own.
    pub fn onto_blocking(&self, edge: &mut Edge, others: &OtherHostEdges) {
        if let Err(error) = on_own_runtime(self.onto(edge, others)) {
            self.put(Err(error), None, edge);
            edge.other_hosts = others.take_blocking();
        }
    }

    fn put(
        &self,
        scraped: anyhow::Result<Scrape>,
        traced: Option<anyhow::Result<traced::AgentTrace>>,
        edge: &mut Edge,
    ) {
        edge.processes_io = Default::default();
        edge.block_trace = None;
        edge.agent_block_trace = None;
        match answered(scraped, &self.endpoint) {
            Ok(counters) => {
                edge.agent_block_trace = Some(crate::edge::AgentBlockTrace {
                    host: self.host.clone(),
                    trace: match traced {
                        Some(traced) => traced.map_err(|error| format!("{error:#}")),
                        None => Err(format!(
                            "its agent {} is node_exporter, which serves no requests traced one \
                             by one (a strata agent does, where it runs as root with BPF)",
                            self.endpoint
                        )),
                    },
                });
                let mut gaps = self.gaps();
                for device in self.devices.each_once() {
                    if let Some(why) = counters.unreadable.get(&counters.thing(&device)) {
                        gaps.devices.push(format!("{device}: {why}"));
                    }
                }
                if counters.cpu.is_none() {
                    let why = counters.unreadable.get("").cloned().unwrap_or_default();
                    gaps.cpu.push(why);
                }
                edge.disks = counters.disks;
                edge.host_cpu = counters.cpu.unwrap_or_default();
                edge.oom_kills = counters.oom_kills;
            }
            Err(error) => {
                edge.disks = Vec::new();
                edge.oom_kills = None;
                self.gaps().unanswered.push(error);
            }
        }
    }

    /// An agent's gaps at the window's edges, each said in the warnings:
    /// where it did not answer, no device figures and the host's CPU
    /// shares unknown; where its CPU time was not known, the CPU shares
    /// unknown; a device it could not count is not in the figures (the
    /// accounting says so). No process of this machine stands for the
    /// server host's tenants.
    pub fn mark_gaps(&self, figures: &mut RunFigures) {
        figures.tenants = None;
        let gaps = self.gaps();
        let host = &self.host;
        if let Some(first) = gaps.unanswered.first() {
            figures.devices_not_observed(format!(
                "the agent of the server's host {host} did not answer at an edge of the window \
                 ({first})"
            ));
        }
        if !gaps.unanswered.is_empty() || !gaps.cpu.is_empty() {
            figures.cpu.host_idle_pct = None;
            figures.cpu.host_iowait_pct = None;
        }
        for gap in &gaps.unanswered {
            figures.warnings.push(format!(
                "the agent of the server's host {host} did not answer at an edge of the window \
                 ({gap}): its devices and CPU are not in these figures"
            ));
        }
        for gap in &gaps.cpu {
            figures.warnings.push(format!(
                "the agent of the server's host {host} gave no CPU time at an edge of the window \
                 ({gap}): the host's CPU shares are not in these figures"
            ));
        }
        for gap in &gaps.devices {
            figures.warnings.push(format!(
                "the agent of the server's host {host} gave a device no counter can hold at an \
                 edge of the window ({gap}): it is not in these figures"
            ));
        }
    }

    /// The gaps so far; a thread that panicked holding them left them whole.
    fn gaps(&self) -> std::sync::MutexGuard<'_, EdgeGaps> {
        self.gaps.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The agent's devices and CPU, sampled each second with the run.
    pub fn collectors(&self) -> Vec<Box<dyn Collector>> {
        let devices = self.devices.each_once();
        let agent = Agent::new(self.endpoint.clone());
        vec![
            Box::new(AgentLayer::new(&agent, Layer::Devices, devices)),
            Box::new(AgentLayer::new(&agent, Layer::Cpu, Vec::new())),
        ]
    }
}

/// The other hosts a run follows beside the server's (`--agent` after the
/// first): each as the run's environment keeps it, and the collectors of
/// its devices and CPU (`device@HOST`, `cpu@HOST`) for the run's sampler.
/// An agent that does not answer now is an error before the run starts.
pub fn follow_others(endpoints: &[Endpoint]) -> anyhow::Result<OtherHosts> {
    let mut hosts = Vec::new();
    let mut collectors = Vec::new();
    let mut agents = Vec::new();
    for endpoint in endpoints {
        let followed = strata_agent::collector::follow(endpoint)?;
        agents.push(OtherAgent {
            host: followed.host.clone(),
            endpoint: endpoint.clone(),
            disks: followed.disks.clone(),
        });
        hosts.push(described(
            &followed.host,
            endpoint,
            followed.dialect,
            followed.clock_offset_s,
            followed.round_trip_s,
        ));
        collectors.extend(followed.collectors);
    }
    Ok(OtherHosts {
        hosts,
        collectors,
        edges: OtherHostEdges { agents },
    })
}

/// The other hosts a run follows, the collectors of their layers, and
/// their agents for the window's edges.
pub struct OtherHosts {
    pub hosts: Vec<ServerHost>,
    pub collectors: Vec<Box<dyn Collector>>,
    pub edges: OtherHostEdges,
}

/// Where an engine's environment keeps the server's host: its devices,
/// their details, the note on where they are read, and the host.
pub trait ServerHostPlace {
    fn server_host_place(&mut self) -> HostPlace<'_>;
}

/// An environment's devices, their details, the note on where they are
/// read, and the server's host.
pub type HostPlace<'a> = (
    &'a mut RunDevices,
    &'a mut Vec<BlockDevice>,
    &'a mut Option<String>,
    &'a mut Option<ServerHost>,
);

impl ServerHostPlace for crate::outcome::RunEnvironment {
    fn server_host_place(&mut self) -> HostPlace<'_> {
        (
            &mut self.devices,
            &mut self.device_details,
            &mut self.device_note,
            &mut self.server_host,
        )
    }
}

/// The other hosts' agents, scraped at the window's two edges.
#[derive(Clone, Default)]
pub struct OtherHostEdges {
    agents: Vec<OtherAgent>,
}

#[derive(Clone)]
struct OtherAgent {
    host: String,
    endpoint: Endpoint,
    disks: Vec<String>,
}

impl OtherHostEdges {
    /// Every other host's counters now, all asked at once.
    pub async fn take(&self) -> Vec<HostEdge> {
        let scrapes = self
            .agents
            .iter()
            .map(|agent| scrape(&agent.endpoint, EDGE_TIMEOUT));
        let scraped = futures_util::future::join_all(scrapes).await;
        self.agents
            .iter()
            .zip(scraped)
            .map(|(agent, scraped)| agent.edge(scraped))
            .collect()
    }

    /// [`OtherHostEdges::take`] from synchronous code, on a runtime of its
    /// own.
    pub fn take_blocking(&self) -> Vec<HostEdge> {
        on_own_runtime(self.take()).unwrap_or_else(|error| {
            let error = format!("{error:#}");
            self.agents
                .iter()
                .map(|agent| agent.edge(Err(anyhow::anyhow!("{error}"))))
                .collect()
        })
    }
}

impl OtherAgent {
    fn edge(&self, scraped: anyhow::Result<Scrape>) -> HostEdge {
        match answered(scraped, &self.endpoint) {
            Ok(counters) => HostEdge {
                host: self.host.clone(),
                disks: counters
                    .disks
                    .into_iter()
                    .filter(|disk| self.disks.contains(&disk.name))
                    .collect(),
                host_cpu: counters.cpu.unwrap_or_default(),
                cpus: counters.cpus,
                missing: None,
            },
            Err(error) => HostEdge {
                host: self.host.clone(),
                disks: Vec::new(),
                host_cpu: Default::default(),
                cpus: None,
                missing: Some(error),
            },
        }
    }
}

fn described(
    host: &str,
    endpoint: &Endpoint,
    dialect: Dialect,
    clock_offset_s: Option<f64>,
    round_trip_s: f64,
) -> ServerHost {
    ServerHost {
        name: host.to_string(),
        agent: endpoint.to_string(),
        transport: Some(endpoint.transport()),
        agent_kind: dialect.name().to_string(),
        clock_offset_ms: clock_offset_s.map(|offset| offset * 1e3),
        round_trip_ms: round_trip_s * 1e3,
    }
}

/// What a run against a server not proved to be on this machine says of
/// the server's host.
pub fn not_observed_note(reason: &str) -> String {
    format!(
        "the server's host is not observed ({reason}): its devices, CPU and page cache are not \
         in these figures; to observe them, run `strata observe --prometheus ADDR --path \
         DATA_DIR` there (or use its node_exporter) and pass --agent http://HOST:PORT"
    )
}

/// An edge's scrape as counters, or why it gave none (the agent did not
/// answer, or answered as neither agent), for the gap.
fn answered(scraped: anyhow::Result<Scrape>, endpoint: &Endpoint) -> Result<HostCounters, String> {
    scraped
        .map_err(|error| format!("{error:#}"))
        .and_then(|scraped| counters(&scraped, endpoint).map_err(|error| error.to_string()))
}

fn counters(scraped: &Scrape, endpoint: &Endpoint) -> anyhow::Result<HostCounters> {
    HostCounters::of(scraped, endpoint.host()).ok_or_else(|| {
        anyhow::anyhow!("{endpoint} answers, but as neither a strata agent nor node_exporter")
    })
}
