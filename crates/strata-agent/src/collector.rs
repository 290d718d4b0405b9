//! An agent's devices, CPU or database as collectors of this machine's
//! sampler: each gives the agent's counters in the names and units
//! strata's own collectors use (`read_requests`, `read_ms`, `user_ticks`,
//! `database_blks_read`), so the layer samples of a remote host read as a
//! local one's. The layers of one agent share its answer: one sampling
//! round scrapes it once.
//!
//! Not for: the edges of a window (the engine scrapes those itself).

use crate::endpoint::Endpoint;
use crate::host::{database_layers, Dialect, HostCounters};
use crate::scrape::{scrape_blocking, Scrape};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use strata_core::metrics::{Collected, Collector, Metric};

/// How long a scrape for a layer sample may take.
const SAMPLE_TIMEOUT: Duration = Duration::from_secs(2);

/// How long one answer serves the layers of one sampling round: they are
/// collected one after another, within milliseconds, and the shortest
/// interval between rounds (100 ms) must always scrape again, or a round
/// would reuse the last one's answer and show no change.
const FRESH: Duration = Duration::from_millis(50);

/// The layer an [`AgentLayer`] gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    Devices,
    Cpu,
    /// A database layer a strata agent serves (`postgres`, `mariadb`).
    Database(&'static str),
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::Devices => "device",
            Layer::Cpu => "cpu",
            Layer::Database(name) => name,
        }
    }
}

/// One agent, and its latest answer, shared by the collectors of its
/// layers.
#[derive(Clone)]
pub struct Agent {
    endpoint: Endpoint,
    latest: Arc<Mutex<Option<(Instant, Scrape)>>>,
}

impl Agent {
    pub fn new(endpoint: Endpoint) -> Agent {
        Agent {
            endpoint,
            latest: Arc::new(Mutex::new(None)),
        }
    }

    /// The agent's answer of this sampling round: the latest when it is
    /// fresh, else a new scrape.
    fn answer(&self) -> anyhow::Result<Scrape> {
        let mut latest = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, scrape)) = latest.as_ref() {
            if at.elapsed() < FRESH {
                return Ok(scrape.clone());
            }
        }
        let scrape = scrape_blocking(&self.endpoint, SAMPLE_TIMEOUT)?;
        *latest = Some((Instant::now(), scrape.clone()));
        Ok(scrape)
    }
}

pub struct AgentLayer {
    agent: Agent,
    layer: Layer,
    /// `device`, `cpu`; `device@HOST` beside this machine's own layers.
    name: String,
    /// The devices to give (those under the server's directories).
    devices: Vec<String>,
}

impl AgentLayer {
    /// The agent's layer in place of this machine's (its name is the
    /// layer's own).
    pub fn new(agent: &Agent, layer: Layer, devices: Vec<String>) -> AgentLayer {
        AgentLayer {
            agent: agent.clone(),
            layer,
            name: layer.name().to_string(),
            devices,
        }
    }

    /// The agent's layer beside this machine's, named `LAYER@HOST`.
    pub fn of_host(agent: &Agent, layer: Layer, devices: Vec<String>, host: &str) -> AgentLayer {
        let mut agent_layer = AgentLayer::new(agent, layer, devices);
        agent_layer.name = format!("{}@{host}", layer.name());
        agent_layer
    }
}

impl Collector for AgentLayer {
    fn layer(&self) -> &str {
        &self.name
    }

    fn collect(&mut self) -> anyhow::Result<Collected> {
        let scraped = self.agent.answer()?;
        if let Layer::Database(name) = self.layer {
            let metrics = database_layers(&scraped)
                .into_iter()
                .find(|(layer, _)| *layer == name)
                .map(|(_, metrics)| metrics)
                .ok_or_else(|| anyhow::anyhow!("the agent serves no {name} layer now"))?;
            return Ok(Collected::Metrics { metrics });
        }
        let endpoint = &self.agent.endpoint;
        let counters = HostCounters::of(&scraped, endpoint.host()).ok_or_else(|| {
            anyhow::anyhow!("{endpoint}: neither a strata agent nor node_exporter")
        })?;
        Ok(host_layer(&counters, self.layer, &self.devices))
    }
}

/// A host's CPU (absent, with why, where its CPU time is not known) or
/// its `devices` (those whose values no counter can hold left out, each
/// with why), in the names and units of strata's own layers.
pub fn host_layer(counters: &HostCounters, layer: Layer, devices: &[String]) -> Collected {
    if layer == Layer::Cpu {
        return match cpu_metrics(counters) {
            Some(metrics) => Collected::Metrics { metrics },
            None => Collected::Absent {
                reason: counters.unreadable.get("").cloned().unwrap_or_default(),
            },
        };
    }
    let unreadable = devices
        .iter()
        .filter_map(|device| {
            let thing = counters.thing(device);
            let why = counters.unreadable.get(&thing)?;
            Some((thing, why.clone()))
        })
        .collect();
    Collected::Partial {
        metrics: device_metrics(counters, devices),
        unreadable,
    }
}

/// Another host followed beside this machine: its name, its agent and that
/// agent's clock, and collectors of its devices (every disk its agent
/// counts), CPU, and the database a strata agent watches there, as
/// `device@HOST`, `cpu@HOST` and `postgres@HOST` (or `mariadb@HOST`).
pub struct FollowedHost {
    pub host: String,
    pub endpoint: Endpoint,
    pub dialect: Dialect,
    /// The disks followed there.
    pub disks: Vec<String>,
    /// The agent's clock less this machine's at its first answer, seconds.
    pub clock_offset_s: Option<f64>,
    pub round_trip_s: f64,
    pub collectors: Vec<Box<dyn Collector>>,
}

/// The host whose agent answers at `endpoint`; its first scrape names it.
pub fn follow(endpoint: &Endpoint) -> anyhow::Result<FollowedHost> {
    let scraped = scrape_blocking(endpoint, SAMPLE_TIMEOUT)
        .map_err(|error| error.context(format!("--agent {endpoint}")))?;
    scraped.note_unread("--agent");
    let counters = HostCounters::of(&scraped, endpoint.host()).ok_or_else(|| {
        anyhow::anyhow!(
            "--agent {endpoint}: answers, but as neither a strata agent nor node_exporter"
        )
    })?;
    let disks = followed_disks(&counters);
    let host = counters.host;
    let agent = Agent::new(endpoint.clone());
    let mut collectors: Vec<Box<dyn Collector>> = vec![
        Box::new(AgentLayer::of_host(
            &agent,
            Layer::Devices,
            disks.clone(),
            &host,
        )),
        Box::new(AgentLayer::of_host(&agent, Layer::Cpu, Vec::new(), &host)),
    ];
    for (database, _) in database_layers(&scraped) {
        let layer = Layer::Database(database);
        collectors.push(Box::new(AgentLayer::of_host(
            &agent,
            layer,
            Vec::new(),
            &host,
        )));
    }
    Ok(FollowedHost {
        host,
        endpoint: endpoint.clone(),
        dialect: counters.dialect,
        disks,
        clock_offset_s: scraped.clock_offset_s(),
        round_trip_s: scraped.round_trip_s(),
        collectors,
    })
}

/// The disks of another host worth following: a strata agent's disks,
/// every device node_exporter counts; those whose values no counter could
/// hold too, so that their gaps are named.
pub fn followed_disks(counters: &HostCounters) -> Vec<String> {
    let mut disks = match counters.dialect {
        Dialect::Strata => counters.devices_under("/"),
        Dialect::NodeExporter => counters
            .disks
            .iter()
            .map(|disk| disk.name.clone())
            .collect(),
    };
    let whole = |device: &&str| {
        counters.dialect == Dialect::NodeExporter || ["disk", "md"].contains(&counters.kind(device))
    };
    disks.extend(
        counters
            .unreadable_devices()
            .filter(whole)
            .map(str::to_string),
    );
    disks.sort();
    disks
}

/// `devices`' counters in the names and units of strata's device layer.
pub fn device_metrics(counters: &HostCounters, devices: &[String]) -> Vec<Metric> {
    let mut metrics = Vec::new();
    for disk in counters
        .disks
        .iter()
        .filter(|disk| devices.contains(&disk.name))
    {
        let kind = counters.kind(&disk.name);
        let counter = |name: &str, value: u64| {
            Metric::counter(name, value as f64)
                .with_label("device", &disk.name)
                .with_label("kind", kind)
        };
        metrics.extend([
            counter("read_requests", disk.read_requests),
            counter("read_merges", disk.read_merges),
            counter("read_bytes", disk.read_sectors * 512),
            counter("read_ms", disk.read_ms),
            counter("write_requests", disk.write_requests),
            counter("write_merges", disk.write_merges),
            counter("write_bytes", disk.write_sectors * 512),
            counter("write_ms", disk.write_ms),
            counter("busy_ms", disk.busy_ms),
            counter("weighted_ms", disk.weighted_ms),
        ]);
        if disk.field_count >= 17 {
            metrics.push(counter("flush_requests", disk.flush_requests));
        }
        metrics.push(
            Metric::gauge("in_flight", disk.in_flight as f64)
                .with_label("device", &disk.name)
                .with_label("kind", kind),
        );
    }
    metrics
}

/// The CPU's time by mode in ticks of 100 a second, as `/proc/stat` gives
/// it on Linux; `None` where the host's CPU time is not known.
pub fn cpu_metrics(counters: &HostCounters) -> Option<Vec<Metric>> {
    let cpu = counters.cpu.as_ref()?;
    let levels = [
        ("procs_running", counters.procs_running),
        ("cpus", counters.cpus),
    ];
    let mut metrics = vec![
        Metric::counter("user_ticks", cpu.user as f64),
        Metric::counter("nice_ticks", cpu.nice as f64),
        Metric::counter("system_ticks", cpu.system as f64),
        Metric::counter("idle_ticks", cpu.idle as f64),
        Metric::counter("iowait_ticks", cpu.iowait as f64),
        Metric::counter("irq_ticks", cpu.irq as f64),
        Metric::counter("softirq_ticks", cpu.softirq as f64),
        Metric::counter("steal_ticks", cpu.steal as f64),
        Metric::gauge("ticks_per_second", 100.0),
    ];
    metrics.extend(
        levels
            .into_iter()
            .filter_map(|(name, value)| Some(Metric::gauge(name, value?))),
    );
    Some(metrics)
}
