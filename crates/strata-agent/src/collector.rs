//! An agent's devices, CPU or database as collectors of this machine's
//! sampler: each gives the agent's counters in the names and units
//! strata's own collectors use (`read_requests`, `read_ms`, `user_ticks`,
//! `database_blks_read`), so the layer samples of a remote host read as a
//! local one's. The layers of one agent share its answer: one sampling
//! round scrapes it once.
//!
//! Not for: the edges of a window (the engine scrapes those itself).

use crate::endpoint::Endpoint;
use crate::host::{served_layers, Dialect, HostCounters};
use crate::scrape::{scrape_blocking, Scrape};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};
use strata_core::metrics::{Collected, Collector, Metric};

/// How long a scrape may take before it is given up, whatever the round.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a round waits for an agent it did not ask (its first round,
/// or a collector's round that began no ask).
const DEFAULT_WAIT: Duration = Duration::from_secs(1);

/// How long the first answer of an agent being followed may take.
const FIRST_ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// A round's asks of one agent within this are one ask: its layers are
/// begun one after another, within milliseconds, while the shortest
/// interval between rounds (100 ms) always asks again.
const SAME_ROUND: Duration = Duration::from_millis(50);

/// The layer an [`AgentLayer`] gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    Devices,
    Cpu,
    /// Another layer a strata agent serves: its database's (`postgres`,
    /// `mariadb`), its NFS mounts' (`nfs`), its NFS server's (`nfs_server`).
    Served(&'static str),
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::Devices => "device",
            Layer::Cpu => "cpu",
            Layer::Served(name) => name,
        }
    }
}

/// One agent, asked once a round for all of its layers, on a thread of
/// its own so that a slow agent holds back neither the round's other hosts
/// nor this machine's layers: a round waits for it at most its budget, and
/// an answer that comes later is not used (its counters are not of the
/// round's moment).
#[derive(Clone)]
pub struct Agent {
    endpoint: Endpoint,
    state: Arc<(Mutex<Asking>, Condvar)>,
}

/// The agent's current ask.
#[derive(Default)]
struct Asking {
    /// When the round that wants an answer began, and how long it waits.
    round: Option<(Instant, Duration)>,
    /// When the scrape in flight, or the last one, was sent.
    sent: Option<Instant>,
    in_flight: bool,
    /// The last scrape's answer, and when it was sent.
    answer: Option<(Instant, Result<Scrape, String>)>,
}

impl Agent {
    pub fn new(endpoint: Endpoint) -> Agent {
        Agent {
            endpoint,
            state: Arc::new((Mutex::new(Asking::default()), Condvar::new())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Asking> {
        self.state.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Begins this round's ask (once for all the agent's layers): a scrape
    /// sent now, unless the last one has not answered yet.
    fn ask(&self, wait: Duration) {
        let mut asking = self.lock();
        let now = Instant::now();
        if asking
            .round
            .is_some_and(|(began, _)| now.duration_since(began) < SAME_ROUND)
        {
            return;
        }
        asking.round = Some((now, wait));
        if asking.in_flight {
            return;
        }
        asking.in_flight = true;
        asking.sent = Some(now);
        let (endpoint, state) = (self.endpoint.clone(), self.state.clone());
        std::thread::spawn(move || {
            let answer =
                scrape_blocking(&endpoint, SCRAPE_TIMEOUT).map_err(|error| format!("{error:#}"));
            let (lock, answered) = &*state;
            let mut asking = lock.lock().unwrap_or_else(PoisonError::into_inner);
            asking.in_flight = false;
            asking.answer = Some((now, answer));
            answered.notify_all();
        });
    }

    /// This round's answer: the scrape sent in this round, waited for
    /// until the round's budget is spent.
    fn answer(&self) -> anyhow::Result<Scrape> {
        let mut asking = self.lock();
        let Some((began, wait)) = asking.round else {
            anyhow::bail!("{}: not asked", self.endpoint);
        };
        while asking.in_flight && began.elapsed() < wait {
            let left = wait.saturating_sub(began.elapsed());
            asking = self
                .state
                .1
                .wait_timeout(asking, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        match &asking.answer {
            Some((sent, answer)) if *sent >= began => {
                answer.clone().map_err(|error| anyhow::anyhow!(error))
            }
            _ => match asking.sent {
                Some(sent) if sent < began => anyhow::bail!(
                    "{}: the scrape sent {:.1} s ago, in an earlier round, was still out: this \
                     sample goes without it",
                    self.endpoint,
                    sent.elapsed().as_secs_f64()
                ),
                _ => anyhow::bail!(
                    "{}: no answer within {wait:?}: this sample goes without it",
                    self.endpoint
                ),
            },
        }
    }
}

pub struct AgentLayer {
    agent: Agent,
    layer: Layer,
    /// `device`, `cpu`; `device@HOST` beside this machine's own layers.
    name: String,
    /// The devices to give (those under the server's directories).
    devices: Vec<String>,
    /// Whether this round began with [`Collector::begin`]; a collection
    /// without it (a scrape of this machine's endpoint) asks itself.
    begun: bool,
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
            begun: false,
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

    fn begin(&mut self, wait: Duration) {
        self.agent.ask(wait);
        self.begun = true;
    }

    fn collect(&mut self) -> anyhow::Result<Collected> {
        if !std::mem::take(&mut self.begun) {
            self.agent.ask(DEFAULT_WAIT);
        }
        let scraped = self.agent.answer()?;
        if let Layer::Served(name) = self.layer {
            let metrics = served_layers(&scraped)
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
/// counts), CPU, and the layers a strata agent serves there beyond them,
/// as `device@HOST`, `cpu@HOST`, `postgres@HOST` (or `mariadb@HOST`),
/// `nfs@HOST` and `nfs_server@HOST`.
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
    let scraped = scrape_blocking(endpoint, FIRST_ANSWER_TIMEOUT)
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
    for (served, _) in served_layers(&scraped) {
        let layer = Layer::Served(served);
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
