//! One `strata run` or `strata setup` from start to end: provision or
//! connect, check free space, load, run the sessions while taking the two
//! edges of the measured window, account, record, and clean up — also when
//! interrupted, so no server or directory strata made is left behind.
//! The free space beside the data set is `space`, the throwaway cluster's
//! page cache held at its limit is `page_cache`, and one measured window is
//! `window`.
//!
//! Not for: parsing options or drawing progress (the binary passes resolved
//! settings and an observer).

use crate::cluster::{binaries_version_num, process_tree, ClusterOptions, ThrowawayCluster};
use crate::collector::PostgresCollector;
use crate::connect::{connect, ConnectionTarget};
use crate::counters::server_version_num;
use crate::load::{loads_complete, setup, LoadOptions, LoadReport};
use crate::locality::{locate, Locality};
use crate::read_path::{self, backend_types, read_path_of, ReadPathRequest, ReadPathSettings};
use anyhow::{bail, Context};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, OnceLock, PoisonError};
use strata_agent::endpoint::Endpoint;
use strata_core::metrics::Collector;
use strata_db::pagecache::PageCacheMethod;
use strata_db::workdir::WorkDir;
use strata_observe::background::SampleClock;
use strata_probe::blockdev::{device_of_path, physical_devices, BlockDevice};
use strata_probe::collectors::ProcessDelayCollector;
use strata_run::accounting::RunDevices;
use strata_run::edge::Edge;
use strata_run::engine::{EngineRun, Measured, Skeleton};
use strata_run::outcome::{
    data_set_bytes, KeptInfo, PageCacheChoice, RunEnvironment, RunObserver, SlobOutcome,
};
use strata_run::recorder::RunRecorder;
use strata_run::request::ShardRequest;
use strata_run::server_host::{OtherHostEdges, ServerHostAgent};
use strata_run::sweep::SweepRequest;
use strata_run::verdict::CacheFit;
use strata_slob::session::DriverOptions;

mod page_cache;
mod space;
mod window;

use page_cache::{keep_cache_out, page_cache_limit};
use space::{check_free_space, name_a_full_filesystem};
use window::{Window, WindowContext};

/// Which server the run uses.
pub enum Database {
    /// A throwaway cluster made by initdb in `work_dir`, removed at the end
    /// unless `keep`.
    Embedded(Embedded),
    /// The user's server.
    External { target: Box<ConnectionTarget> },
}

/// What the throwaway cluster is made with.
#[derive(Clone, Debug)]
pub struct Embedded {
    pub work_dir: WorkDir,
    pub os_user: Option<String>,
    pub shared_buffers_bytes: u64,
    pub keep: bool,
    /// The server binaries; `None`: `$STRATA_PG_BIN`, `pg_config`, or the
    /// newest `/usr/lib/postgresql/*/bin`.
    pub bin_dir: Option<PathBuf>,
}

pub struct SlobConfig {
    pub database: Database,
    pub page_cache: PageCacheChoice,
    pub load_parallel: usize,
    pub replace: bool,
    pub driver: DriverOptions,
    /// `--io-method`, `--direct-io`.
    pub read_path: ReadPathRequest,
    pub setup_only: bool,
    /// The run's Recording, open since before any work.
    pub record: Option<RunRecorder>,
    pub command: Vec<String>,
    /// `--agent`: the server's host seen through its agent.
    pub agent: Option<Endpoint>,
    /// `--agent` after the first: other hosts followed beside it.
    pub other_agents: Vec<Endpoint>,
    /// `--shard`: this driver is one shard of a run.
    pub shard: Option<ShardRequest>,
    /// `--sweep-sessions`: one window per session count.
    pub sweep: Option<SweepRequest>,
}

/// Runs `strata run` (or `strata setup` when `setup_only`).
pub fn run_slob(
    config: SlobConfig,
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<SlobOutcome> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match &config.database {
        Database::Embedded(embedded) => {
            on_a_throwaway_cluster(&config, embedded, &runtime, interrupt, observer)
        }
        Database::External { target } => {
            let server = Server {
                target: (**target).clone(),
                kind: "external server",
                work_dir: None,
                data_directory: None,
                wal_directory: None,
                page_cache: PageCacheMethod::Unlimited,
                cluster: None,
                agent: OnceLock::new(),
                other_hosts: Mutex::new(Vec::new()),
                other_edges: OnceLock::new(),
                sample_clock: OnceLock::new(),
            };
            drive(&config, &server, &runtime, interrupt, observer)
        }
    }
}

/// The run on a throwaway cluster: started, driven, then kept (`--keep`)
/// or stopped and removed.
fn on_a_throwaway_cluster(
    config: &SlobConfig,
    embedded: &Embedded,
    runtime: &tokio::runtime::Runtime,
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<SlobOutcome> {
    let Embedded { work_dir, keep, .. } = embedded;
    let plan = &config.driver.plan;
    for removed in crate::cluster::remove_abandoned(&work_dir.path) {
        strata_core::note::note(&removed);
    }
    let free_at_start = check_free_space(&work_dir.path, plan)?;
    let mut cluster = start_cluster(config, embedded, observer)?;
    let read_settings =
        runtime.block_on(read_path::cluster_settings(&cluster, &config.read_path))?;
    read_path::restart_with(&mut cluster, &read_settings)?;
    let target = ConnectionTarget::parse(&cluster.connection_string())?;
    let server = Server {
        target,
        kind: "throwaway cluster",
        work_dir: Some(work_dir.clone()),
        data_directory: Some(cluster.data_dir().to_path_buf()),
        wal_directory: Some(cluster.wal_dir()),
        page_cache: cluster.page_cache().clone(),
        cluster: Some(&cluster),
        agent: OnceLock::new(),
        other_hosts: Mutex::new(Vec::new()),
        other_edges: OnceLock::new(),
        sample_clock: OnceLock::new(),
    };
    let mut outcome = drive(config, &server, runtime, interrupt, observer)
        .map_err(|error| name_a_full_filesystem(error, &work_dir.path, free_at_start, plan))?;
    if *keep {
        let kept = cluster.keep();
        outcome.kept = Some(KeptInfo {
            connection_string: kept.connection_string.clone(),
            data_directory: kept.data_dir.clone(),
            how_to_connect: kept.how_to_connect(),
            how_to_stop: kept.how_to_stop(),
        });
    } else {
        observer.phase("stopping and removing the throwaway cluster");
        cluster.stop_and_remove()?;
    }
    Ok(outcome)
}

/// The throwaway cluster, started with room for the run's most sessions
/// and its page-cache limit, once its binaries can give the read path asked.
fn start_cluster(
    config: &SlobConfig,
    embedded: &Embedded,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<ThrowawayCluster> {
    let binaries = binaries_version_num(embedded.bin_dir.as_deref())?;
    crate::read_path::check_version(binaries, &config.read_path)?;
    observer.phase("starting a throwaway PostgreSQL cluster");
    ThrowawayCluster::start(&ClusterOptions {
        parent_dir: embedded.work_dir.path.clone(),
        os_user: embedded.os_user.clone(),
        shared_buffers_bytes: embedded.shared_buffers_bytes,
        settings: vec![(
            "max_connections".into(),
            (most_sessions(config) + 20).to_string(),
        )],
        page_cache_limit_bytes: page_cache_limit(
            config.page_cache,
            &config.driver.plan,
            most_sessions(config),
            config.load_parallel,
        ),
        bin_dir: embedded.bin_dir.clone(),
        survives_strata: embedded.keep,
    })
}

/// The most sessions any window of the run connects (a sweep's last point).
fn most_sessions(config: &SlobConfig) -> u32 {
    let driver = &config.driver;
    let run = u32::try_from(strata_slob::session::session_total(driver)).unwrap_or(u32::MAX);
    let sweep = config
        .sweep
        .as_ref()
        .and_then(|sweep| sweep.sessions.last());
    run.max(sweep.copied().unwrap_or(0))
}

struct Server<'a> {
    target: ConnectionTarget,
    kind: &'static str,
    work_dir: Option<WorkDir>,
    data_directory: Option<PathBuf>,
    wal_directory: Option<PathBuf>,
    page_cache: PageCacheMethod,
    cluster: Option<&'a ThrowawayCluster>,
    /// `--agent`, once reached: the server's host seen through it.
    agent: OnceLock<ServerHostAgent>,
    /// The collectors of the other hosts followed, until the layer sampler
    /// takes them.
    other_hosts: Mutex<Vec<Box<dyn Collector>>>,
    /// The other hosts' agents, for the window's edges.
    other_edges: OnceLock<OtherHostEdges>,
    /// The layer sampler's, once it runs: the window's start, each of its
    /// seconds and its end are samples' ends too.
    sample_clock: OnceLock<SampleClock>,
}

impl Server<'_> {
    fn pids(&self) -> Vec<u32> {
        self.cluster
            .map(|cluster| cluster.server_pids())
            .unwrap_or_default()
    }

    /// Every layer now, the server host's devices and CPU from its agent
    /// when there is one; an agent that does not answer leaves a gap it
    /// names.
    async fn take_edge(&self, client: &tokio_postgres::Client, version_num: u32) -> Edge {
        let mut edge = crate::edge::take(client, version_num, &self.pids()).await;
        let none = OtherHostEdges::default();
        let others = self.other_edges.get().unwrap_or(&none);
        match self.agent.get() {
            Some(agent) => agent.onto(&mut edge, others).await,
            None => edge.other_hosts = others.take().await,
        }
        edge
    }
}

/// The server's host through `--agent`: its devices replace those of this
/// machine in the environment.
async fn reach_agent(
    endpoint: &Endpoint,
    client: &tokio_postgres::Client,
    environment: &mut RunEnvironment,
) -> anyhow::Result<ServerHostAgent> {
    let shown = client
        .query_one("SHOW data_directory", &[])
        .await
        .ok()
        .map(|row| PathBuf::from(row.get::<_, String>(0)));
    let data = environment.data_directory.clone().or(shown);
    let wal = data.as_ref().map(|dir| dir.join("pg_wal"));
    let agent = ServerHostAgent::reach(endpoint, data.as_deref(), wal.as_deref()).await?;
    agent.replace_this_machine(environment);
    Ok(agent)
}

/// The run on `server`, by strata-run's skeleton, on `runtime` (the
/// skeleton is synchronous, the connections are not).
fn drive(
    config: &SlobConfig,
    server: &Server<'_>,
    runtime: &tokio::runtime::Runtime,
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<SlobOutcome> {
    let _entered = runtime.enter();
    let skeleton = Skeleton {
        record: config.record.as_ref(),
        driver: &config.driver,
        sweep: config.sweep.as_ref(),
        setup_only: config.setup_only,
    };
    let run = PostgresRun {
        config,
        server,
        runtime,
        reached: None,
        environment: None,
        backend_types: BTreeMap::new(),
    };
    skeleton.run(run, interrupt, observer)
}

/// The run on one server, as strata-run's skeleton calls it.
struct PostgresRun<'a> {
    config: &'a SlobConfig,
    server: &'a Server<'a>,
    runtime: &'a tokio::runtime::Runtime,
    reached: Option<Reached>,
    /// Found when the server was reached, until the skeleton takes it.
    environment: Option<RunEnvironment>,
    /// Each server process's backend type, for the Recording's sampler.
    backend_types: BTreeMap<u32, String>,
}

/// The connection the edges are taken on, the server's version, and its
/// shared_buffers in bytes when it says them.
struct Reached {
    client: tokio_postgres::Client,
    version_num: u32,
    shared_buffers: Option<u64>,
}

impl PostgresRun<'_> {
    fn reached(&self) -> anyhow::Result<&Reached> {
        self.reached.as_ref().context("the server was not reached")
    }

    /// Connects, reads the read path, finds the environment and follows
    /// the hosts; on the user's server, checks the free space beside the
    /// data set and warns when shared_buffers holds it.
    async fn reach(&self) -> anyhow::Result<(Reached, RunEnvironment)> {
        let (config, server) = (self.config, self.server);
        let client = connect(&server.target).await?;
        let version_num = server_version_num(&client).await?;
        let read_settings = ReadPathSettings::read(&client, version_num).await?;
        if server.cluster.is_none() {
            read_settings.check_unchanged(&config.read_path, &server.target.redacted())?;
        }
        let mut environment = environment(config, server, &client, &read_settings).await;
        follow_hosts(config, server, &client, &mut environment).await?;
        let shared_buffers = shared_buffers_bytes(&client).await;
        if server.cluster.is_none() {
            if let Some(dir) = &environment.data_directory {
                check_free_space(dir, &config.driver.plan)?;
            }
            if let Some(cache_bytes) = shared_buffers.filter(|_| !config.setup_only) {
                let fit = CacheFit {
                    setting: "shared_buffers",
                    cache_bytes,
                    data_set_bytes: data_set_bytes(&config.driver.plan),
                };
                fit.warn_before_the_run();
            }
        }
        let reached = Reached {
            client,
            version_num,
            shared_buffers,
        };
        Ok((reached, environment))
    }
}

impl EngineRun for PostgresRun<'_> {
    type Environment = RunEnvironment;
    type Window = Window;
    type Outcome = SlobOutcome;
    type Windows<'a>
        = WindowContext<'a>
    where
        Self: 'a;

    fn reach(&mut self, _: &mut dyn RunObserver) -> anyhow::Result<()> {
        let (reached, environment) = self.runtime.block_on(PostgresRun::reach(self))?;
        self.reached = Some(reached);
        self.environment = Some(environment);
        Ok(())
    }

    fn load(
        &mut self,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<Option<LoadReport>> {
        let (config, server) = (self.config, self.server);
        let pg_config = server.target.config();
        let load = load_if_needed(config, server, &pg_config, interrupt, observer);
        self.runtime.block_on(load)
    }

    fn environment(&mut self) -> anyhow::Result<RunEnvironment> {
        self.environment
            .take()
            .context("the server was not reached")
    }

    /// The page cache kept out, and the server processes' backend types
    /// for the Recording's sampler.
    fn before_windows(
        &mut self,
        environment: &mut RunEnvironment,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<()> {
        let (config, server) = (self.config, self.server);
        let unobserved = server.cluster.is_none() && environment.data_directory.is_none();
        environment.page_cache = match unobserved {
            true => PageCacheMethod::OtherHost,
            false => keep_cache_out(config.page_cache, &server.page_cache, observer)?,
        };
        if config.record.is_some() {
            let client = &self.reached()?.client;
            let kinds = self.runtime.block_on(backend_types(client));
            self.backend_types = kinds.unwrap_or_default();
        }
        Ok(())
    }

    fn collectors(&mut self, environment: &RunEnvironment) -> Vec<Box<dyn Collector>> {
        let backend_types = std::mem::take(&mut self.backend_types);
        layer_collectors(self.server, &environment.devices, backend_types)
    }

    fn windows<'a>(
        &'a mut self,
        environment: &'a RunEnvironment,
        clock: Option<SampleClock>,
    ) -> anyhow::Result<WindowContext<'a>> {
        if let Some(clock) = clock {
            let _ = self.server.sample_clock.set(clock);
        }
        let reached = self.reached()?;
        Ok(WindowContext {
            config: self.config,
            server: self.server,
            client: &reached.client,
            version_num: reached.version_num,
            devices: &environment.devices,
            shared_buffers: reached.shared_buffers,
        })
    }

    /// A shard's part of the rendezvous, and how the window kept the page
    /// cache out when it limited it.
    fn after_windows(&mut self, environment: &mut RunEnvironment, window: Option<&mut Window>) {
        let Some(window) = window else {
            return;
        };
        environment.shard = window.shard.take();
        if let Some(method) = window.page_cache.take() {
            environment.page_cache = method;
        }
    }

    fn outcome(
        self,
        environment: RunEnvironment,
        load: Option<LoadReport>,
        measured: Option<Measured<Window>>,
    ) -> SlobOutcome {
        let (figures, sweep) = match measured {
            Some(Measured { window, sweep }) => (Some(window.figures), sweep),
            None => (None, None),
        };
        SlobOutcome {
            environment,
            load,
            figures,
            kept: None,
            engine_figures: None,
            sweep: sweep.map(|(_, summary)| summary),
        }
    }
}

/// `--agent`: the server's host through its agent, and the other hosts
/// followed beside it.
async fn follow_hosts(
    config: &SlobConfig,
    server: &Server<'_>,
    client: &tokio_postgres::Client,
    environment: &mut RunEnvironment,
) -> anyhow::Result<()> {
    if let Some(url) = &config.agent {
        let agent = reach_agent(url, client, environment).await?;
        let _ = server.agent.set(agent);
    }
    let urls = config.other_agents.clone();
    let others = tokio::task::spawn_blocking(move || strata_run::server_host::follow_others(&urls))
        .await??;
    environment.other_hosts = others.hosts;
    *server
        .other_hosts
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = others.collectors;
    let _ = server.other_edges.set(others.edges);
    Ok(())
}

/// Every layer sampled each second during the run, for the Recording: the
/// devices under the data and WAL directories, the server's processes (their
/// run-queue delay, each labelled with its backend type or `postmaster`,
/// once none is between states; those it starts later, the sessions'
/// backends, join by their titles), and PostgreSQL
/// itself with its wait events at 10 Hz.
fn layer_collectors(
    server: &Server<'_>,
    devices: &RunDevices,
    backend_types: BTreeMap<u32, String>,
) -> Vec<Box<dyn Collector>> {
    let mut collectors = match server.agent.get() {
        Some(agent) => agent.collectors(),
        None => strata_run::accounting::local_collectors(devices, Vec::new()),
    };
    let pids = server.pids();
    if !pids.is_empty() {
        let (pids, mut backend_types) = strata_run::processes::settled(&pids, backend_types);
        let postmaster = pids.first().copied();
        backend_types.extend(postmaster.map(|pid| (pid, "postmaster".to_string())));
        let processes = ProcessDelayCollector::new(pids)
            .with_backend_types(backend_types)
            .with_newcomers(move |watched| {
                let tree = postmaster.map(process_tree).unwrap_or_default();
                strata_run::processes::named_by_title(&tree, watched)
            });
        collectors.push(Box::new(processes));
    }
    if let Ok(postgres) = PostgresCollector::start(&server.target) {
        collectors.push(Box::new(postgres));
    }
    collectors.append(
        &mut server
            .other_hosts
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    );
    collectors
}

async fn environment(
    config: &SlobConfig,
    server: &Server<'_>,
    client: &tokio_postgres::Client,
    read_settings: &ReadPathSettings,
) -> RunEnvironment {
    let (data_directory, not_observed) = match &server.data_directory {
        Some(dir) => (Some(dir.clone()), None),
        None => match locate(client).await {
            Locality::Local { data_directory, .. } => (Some(data_directory), None),
            Locality::Remote { reason } => (None, Some(reason)),
        },
    };
    let wal_directory = server
        .wal_directory
        .clone()
        .or_else(|| data_directory.as_ref().map(|dir| dir.join("pg_wal")))
        .map(|dir| std::fs::canonicalize(&dir).unwrap_or(dir));
    let (devices, device_details, device_note) = match not_observed {
        Some(reason) => (
            RunDevices::unobserved(&format!("the server's host is not observed ({reason})")),
            Vec::new(),
            Some(strata_run::server_host::not_observed_note(&reason)),
        ),
        None => resolve_devices(data_directory.as_deref(), wal_directory.as_deref()),
    };
    RunEnvironment {
        engine: crate::kind::KIND,
        block_bytes: strata_slob::schema::BLOCK_BYTES as u32,
        server_version: crate::read_path::version_text(read_settings.version_num),
        server: server.kind,
        connection: server.target.redacted(),
        server_version_num: read_settings.version_num,
        work_directory: server.work_dir.clone(),
        data_directory,
        wal_directory,
        devices,
        device_details,
        device_note,
        page_cache: server.page_cache.clone(),
        read_path: read_path_of(read_settings),
        plan: config.driver.plan.clone(),
        server_host: None,
        other_hosts: Vec::new(),
        shard: None,
    }
}

/// `shared_buffers` in bytes, as the server has it; `None` when it cannot
/// be read.
async fn shared_buffers_bytes(client: &tokio_postgres::Client) -> Option<u64> {
    let row = client
        .query_one(
            "SELECT pg_size_bytes(current_setting('shared_buffers'))",
            &[],
        )
        .await
        .ok()?;
    u64::try_from(row.get::<_, i64>(0)).ok()
}

fn resolve_devices(
    data: Option<&Path>,
    wal: Option<&Path>,
) -> (RunDevices, Vec<BlockDevice>, Option<String>) {
    let mut details: Vec<BlockDevice> = Vec::new();
    let mut notes = Vec::new();
    let mut physical_names = |dir: Option<&Path>| -> Vec<String> {
        let Some(dir) = dir else {
            notes.push(strata_run::server_host::not_observed_note(
                "its data directory is not known here",
            ));
            return Vec::new();
        };
        match device_of_path(dir).and_then(|device| physical_devices(&device)) {
            Ok(devices) => {
                let names = devices.iter().map(|device| device.name.clone()).collect();
                details.extend(devices);
                names
            }
            Err(error) => {
                notes.push(format!("{}: {error:#}", dir.display()));
                Vec::new()
            }
        }
    };
    let data_devices = physical_names(data);
    let wal_devices = physical_names(wal);
    details.sort_by(|a, b| a.name.cmp(&b.name));
    details.dedup_by(|a, b| a.name == b.name);
    notes.dedup();
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    let unobserved = data
        .is_none()
        .then(|| "the server's host is not observed (its data directory is not known here)".into());
    (
        RunDevices {
            data: data_devices,
            wal: wal_devices,
            unobserved,
        },
        details,
        note,
    )
}

async fn load_if_needed(
    config: &SlobConfig,
    server: &Server<'_>,
    pg_config: &tokio_postgres::Config,
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<Option<LoadReport>> {
    let plan = &config.driver.plan;
    if server.cluster.is_none() && !config.setup_only {
        if loads_complete(pg_config, plan).await? {
            return Ok(None);
        }
        bail!(
            "the schemas for this plan are not loaded (or a load was interrupted) on {}: run `strata setup` with the same --db, --schemas and --scale first",
            server.target.redacted()
        );
    }
    observer.phase("loading the SLOB schemas");
    let options = LoadOptions {
        plan: plan.clone(),
        parallel: config.load_parallel,
        replace: config.replace,
    };
    let observer_cell = std::sync::Mutex::new(observer);
    let report = setup(
        pg_config,
        &options,
        &|progress| {
            if let Ok(mut observer) = observer_cell.lock() {
                observer.loading(&progress);
            }
        },
        interrupt,
    )
    .await?;
    if report.rows_loaded > 0 {
        checkpoint_the_load(&server.target).await;
    }
    Ok(Some(report))
}

/// A CHECKPOINT after a load: its dirty pages (the rows, and the hint bits
/// VACUUM set) are written and synced now, not by the checkpointer or the
/// kernel's writeback in a later window, where a read-only run would show
/// device writes with no WAL. Refused (a `--db` role without
/// `pg_checkpoint`), it is said, and the load still counts.
async fn checkpoint_the_load(target: &ConnectionTarget) {
    let done = match connect(target).await {
        Ok(client) => client
            .batch_execute("CHECKPOINT")
            .await
            .map_err(|error| anyhow::anyhow!(crate::pg::describe(&error))),
        Err(error) => Err(error),
    };
    if let Err(error) = done {
        strata_core::note::note(&format!(
            "strata: CHECKPOINT after the load failed ({error:#}): the load's dirty pages may \
             be written during the next window"
        ));
    }
}
