//! One `strata run` or `strata setup` from start to end: provision or
//! connect, check free space, load, run the sessions while taking the two
//! edges of the measured window, account, record, and clean up — also when
//! interrupted, so no server or directory strata made is left behind.
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
use crate::sessions::Driver;
use anyhow::{bail, Context};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;
use strata_agent::endpoint::Endpoint;
use strata_core::metrics::Collector;
use strata_core::units::format_size;
use strata_db::pagecache::{drop_caches, CgroupFiles, PageCacheMethod};
use strata_db::workdir::WorkDir;
use strata_observe::background::SampleClock;
use strata_probe::blockdev::{device_of_path, physical_devices, BlockDevice};
use strata_probe::collectors::ProcessDelayCollector;
use strata_recording::environment::ShardRecord;
use strata_run::accounting::{account, PageCacheHeld, RunDevices, RunFigures};
use strata_run::edge::Edge;
use strata_run::engine::{EngineWindows, Measured, MeasuredPart, MeasuredWindow, WindowPurpose};
use strata_run::outcome::{
    data_set_bytes, KeptInfo, PageCacheChoice, RunEnvironment, RunObserver, SlobOutcome,
};
use strata_run::recorder::RunRecorder;
use strata_run::request::ShardRequest;
use strata_run::server_host::{OtherHostEdges, ServerHostAgent};
use strata_run::sweep::{SweepRequest, WindowBlocks};
use strata_run::verdict::{judge, CacheFit, VerdictFacts};
use strata_slob::schema::{SchemaPlan, BLOCK_BYTES};
use strata_slob::session::{DriverOptions, Progress, RunOutcome, StopAfter};
use tokio::time::Instant;

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

fn allowed_page_cache(choice: PageCacheChoice, plan: &SchemaPlan) -> Option<u64> {
    match choice {
        PageCacheChoice::Auto => Some((data_set_bytes(plan) / 20).max(CacheLimit::WINDOW_HEADROOM)),
        PageCacheChoice::Limit(bytes) => Some(bytes),
        PageCacheChoice::Unlimited => None,
    }
}

/// The page-cache limit of a throwaway cluster, set from measurements, so
/// that the page cache of the server's files stays at its target at any
/// session count, and the server's own memory always has room (a backend
/// past the limit is killed by the kernel, which takes the server down).
///
/// Once the sessions are connected (for the warm-up), every page of the
/// server's shared memory is touched, so that the cgroup holds all of it;
/// then the limit is what the cgroup holds that is not the page cache of
/// files (the processes' private memory, the kernel's memory for them, the
/// shared memory), plus any shared memory PostgreSQL allocated
/// (`pg_shmem_allocations`) and has not touched, plus the page cache
/// allowed, plus 16 MiB and 512 KiB per session.
///
/// From the window's start, every second, from a thread of its own: the
/// same with the page cache allowed (at least 16 MiB) and nothing per
/// session (touching shared memory can never be what the limit refuses:
/// shared memory cannot be reclaimed, so the kernel would kill).
/// The page cache is the room a backend that grows takes (the kernel
/// reclaims it before it kills), until the next second gives it back: so
/// it is never less than what a server may add in a second (an autovacuum
/// worker's 8 MiB `autovacuum_work_mem`, a sort's `work_mem`).
struct CacheLimit<'a> {
    cluster: &'a ThrowawayCluster,
    allowed_bytes: u64,
    sessions: u64,
    /// All shared memory PostgreSQL allocated (`pg_shmem_allocations`),
    /// read once the sessions are connected.
    allocated_shared_bytes: std::cell::Cell<u64>,
    /// What the window's holder saw.
    held_window: std::cell::RefCell<HeldWindow>,
}

impl CacheLimit<'_> {
    const WARMUP_GROWTH_PER_SESSION: u64 = 512 << 10;
    /// The least page cache the window allows: the room a growing server
    /// gets before the next second's limit.
    const WINDOW_HEADROOM: u64 = 16 << 20;

    fn new(cluster: &ThrowawayCluster, allowed_bytes: u64, sessions: u64) -> CacheLimit<'_> {
        CacheLimit {
            cluster,
            allowed_bytes,
            sessions,
            allocated_shared_bytes: Default::default(),
            held_window: Default::default(),
        }
    }

    /// The limit for the warm-up, once the sessions are connected.
    async fn apply(&self, client: &tokio_postgres::Client) -> anyhow::Result<()> {
        let Some(cgroup) = self.cluster.memory_cgroup() else {
            return Ok(());
        };
        let postmaster = self.cluster.postmaster_pid();
        strata_db::shared_memory::touch_shared_memory(postmaster)
            .context("faulting in the server's shared memory")?;
        let row = client
            .query_one(
                "SELECT sum(allocated_size)::bigint FROM pg_shmem_allocations",
                &[],
            )
            .await
            .context("reading pg_shmem_allocations")?;
        let allocated_bytes = row.get::<_, i64>(0).max(0) as u64;
        self.allocated_shared_bytes.set(allocated_bytes);
        let margin = (16 << 20) + self.sessions * Self::WARMUP_GROWTH_PER_SESSION;
        cgroup.set_limit(server_limit(
            cgroup,
            allocated_bytes,
            self.allowed_bytes + margin,
        ))
    }

    /// The page cache the window allows: the allowed, and never less than
    /// the room a growing server needs.
    fn window_target_bytes(&self) -> u64 {
        self.allowed_bytes.max(Self::WINDOW_HEADROOM)
    }

    /// Holds the page cache at its target from `from` (the window's start)
    /// to the window's end: once at `from`, then every second, from a
    /// thread of its own, so that a runtime busy with hundreds of sessions
    /// (which takes the start edge late) never delays it.
    fn hold_through_the_window(&self, from: std::time::Instant) -> Option<PageCacheHolder> {
        let cgroup = self.cluster.memory_cgroup()?;
        let limit = WindowLimit {
            allocated_shared_bytes: self.allocated_shared_bytes.get(),
            allowed_bytes: self.window_target_bytes(),
        };
        Some(PageCacheHolder::start(cgroup.files(), limit, from))
    }

    /// The page cache the window held beside its target.
    fn held(&self) -> Option<PageCacheHeld> {
        let held = self.held_window.borrow();
        let samples = &held.file_cache_samples;
        let max_bytes = *samples.iter().max()?;
        Some(PageCacheHeld {
            target_bytes: self.window_target_bytes(),
            mean_bytes: samples.iter().sum::<u64>() / samples.len() as u64,
            max_bytes,
            samples: samples.len(),
            first_oom_kill_s: held.first_oom_kill_s,
            per_second_bytes: samples.clone(),
        })
    }

    fn method(&self) -> PageCacheMethod {
        self.cluster.memory_cgroup().map_or_else(
            || self.cluster.page_cache().clone(),
            |cgroup| cgroup.method(),
        )
    }
}

/// Private memory a backend uses, which the memory cgroup charges beside
/// the page cache (measured: about 1.5 MiB per idle backend).
const BACKEND_MEMORY_BYTES: u64 = 2 << 20;

/// Memory a loader may use while it builds an index or vacuums
/// (maintenance_work_mem, 64 MiB by default, and its working set).
const LOADER_MEMORY_BYTES: u64 = 192 << 20;

/// What the cgroup allows at start on top of shared_buffers and the server's
/// fixed overhead: the page cache the user allows plus every session's
/// backend and every loader's working memory, so the load and the
/// connecting sessions are never squeezed. `tighten_page_cache` replaces it
/// with a measured limit before the run.
fn page_cache_limit(
    choice: PageCacheChoice,
    plan: &SchemaPlan,
    sessions: u32,
    loaders: usize,
) -> Option<u64> {
    let working = u64::from(sessions) * BACKEND_MEMORY_BYTES + loaders as u64 * LOADER_MEMORY_BYTES;
    allowed_page_cache(choice, plan).map(|allowed| allowed + working)
}

/// Refuses a data set that would not fit (heap plus ~10% for indexes);
/// returns the free bytes it found.
fn check_free_space(dir: &Path, plan: &SchemaPlan) -> anyhow::Result<u64> {
    let needed = needed_bytes(plan);
    let free = strata_io::target::free_bytes(dir)?;
    if needed > free {
        bail!(
            "--scale: the data set needs about {} but {} has {} free; choose a smaller --scale or --schemas",
            format_size(needed),
            dir.display(),
            format_size(free)
        );
    }
    Ok(free)
}

fn needed_bytes(plan: &SchemaPlan) -> u64 {
    data_set_bytes(plan) + data_set_bytes(plan) / 10
}

/// A server error that says its filesystem filled up (PostgreSQL's
/// SQLSTATE 53100, or ENOSPC), given the figures the user needs: what was
/// free when the run started and what the data set needs. The Recording's
/// own full filesystem is named by its writer, not blamed on this one.
fn name_a_full_filesystem(
    error: anyhow::Error,
    dir: &Path,
    free: u64,
    plan: &SchemaPlan,
) -> anyhow::Error {
    let text = format!("{error:#}");
    let servers = text.contains("53100") || text.contains("No space left on device");
    if !servers || text.contains("writing recording ") {
        return error;
    }
    error.context(format!(
        "the filesystem of {} is full: it had {} free when the run started, and the data set \
         needs about {} plus the cluster's own files (catalogs, WAL); give --work-dir a \
         directory with more space, or choose a smaller --scale or --schemas",
        dir.display(),
        format_size(free),
        format_size(needed_bytes(plan))
    ))
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
            runtime.block_on(drive(&config, &server, interrupt, observer))
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
    let mut outcome = runtime
        .block_on(drive(config, &server, interrupt, observer))
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
        if let Some(agent) = self.agent.get() {
            agent.onto(&mut edge).await;
        }
        if let Some(others) = self.other_edges.get() {
            edge.other_hosts = others.take().await;
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

async fn drive(
    config: &SlobConfig,
    server: &Server<'_>,
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<SlobOutcome> {
    let client = connect(&server.target).await?;
    let version_num = server_version_num(&client).await?;
    let read_settings = ReadPathSettings::read(&client, version_num).await?;
    if server.cluster.is_none() {
        read_settings.check_unchanged(&config.read_path, &server.target.redacted())?;
    }
    let mut environment = environment(config, server, &client, &read_settings).await;
    follow_hosts(config, server, &client, &mut environment).await?;
    if server.cluster.is_none() {
        if let Some(dir) = &environment.data_directory {
            check_free_space(dir, &config.driver.plan)?;
        }
        if !config.setup_only {
            if let Some(fit) = shared_buffers_fit(&client, &config.driver.plan).await {
                fit.warn_before_the_run();
            }
        }
    }
    let pg_config = server.target.config();
    let load = load_if_needed(config, server, &pg_config, interrupt, observer).await?;
    if config.setup_only {
        return Ok(SlobOutcome {
            environment,
            load,
            figures: None,
            kept: None,
            engine_figures: None,
            sweep: None,
        });
    }
    let connected = (&client, version_num);
    measure_and_record(
        config,
        server,
        connected,
        (environment, load),
        interrupt,
        observer,
    )
    .await
}

/// The measured part of the run on the loaded data set: the page cache
/// kept out, the windows with PostgreSQL's edges, and the Recording.
async fn measure_and_record(
    config: &SlobConfig,
    server: &Server<'_>,
    (client, version_num): (&tokio_postgres::Client, u32),
    (mut environment, load): (RunEnvironment, Option<LoadReport>),
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<SlobOutcome> {
    environment.page_cache = match server.cluster.is_none() && environment.data_directory.is_none()
    {
        true => PageCacheMethod::OtherHost,
        false => keep_cache_out(config.page_cache, &server.page_cache, observer)?,
    };
    let kinds = match &config.record {
        Some(_) => backend_types(client).await.unwrap_or_default(),
        None => BTreeMap::new(),
    };
    let context = WindowContext {
        config,
        server,
        client,
        version_num,
        devices: &environment.devices,
        shared_buffers: shared_buffers_bytes(client).await,
    };
    let part = MeasuredPart {
        record: config.record.as_ref(),
        driver: &config.driver,
        sweep: config.sweep.as_ref(),
    };
    let collectors = || layer_collectors(server, &environment.devices, kinds);
    let windows = |clock: Option<SampleClock>| {
        if let Some(clock) = clock {
            let _ = server.sample_clock.set(clock);
        }
        Ok(&context)
    };
    let measured = tokio::task::block_in_place(|| {
        part.measure(
            (&environment, load.as_ref()),
            collectors,
            windows,
            interrupt,
            observer,
        )
    });
    let mut measured = measured?;
    environment.shard = measured.window.shard.take();
    if let Some(method) = measured.window.page_cache.take() {
        environment.page_cache = method;
    }
    measured.record(config.record.as_ref(), &environment)?;
    let Measured { window, sweep } = measured;
    Ok(SlobOutcome {
        environment,
        load,
        figures: Some(window.figures),
        kept: None,
        engine_figures: None,
        sweep: sweep.map(|(_, summary)| summary),
    })
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

/// The verdict on a PostgreSQL window: what the figures say, plus
/// shared_buffers beside the data set and a throwaway server that died or
/// restarted (also the first warning).
fn judge_postgres(
    figures: &mut RunFigures,
    config: &SlobConfig,
    server: &Server<'_>,
    shared_buffers: Option<u64>,
    edges: [&Edge; 2],
) {
    let server_death = server.cluster.and_then(|cluster| {
        cluster.death().or_else(|| {
            cluster
                .restart_in_log()
                .map(|lines| format!("PostgreSQL restarted its processes in the run: {lines}"))
        })
    });
    if let Some(death) = &server_death {
        figures.warnings.insert(0, death.clone());
    }
    let server_restart = strata_run::edge::restart_between(edges[0], edges[1]);
    let crash_recovery = figures
        .sessions
        .first_connection_lost
        .as_ref()
        .is_some_and(|(_, why)| why.contains("crash of another server process"));
    let first_in_window_s = figures
        .page_cache_held
        .as_ref()
        .and_then(|held| held.first_oom_kill_s);
    let cgroup = server
        .cluster
        .and_then(ThrowawayCluster::memory_cgroup)
        .map(|cgroup| strata_run::edge::CgroupOomKills {
            path: cgroup.path(),
            limit_bytes: cgroup.limit_bytes(),
            kills: cgroup.oom_kills().unwrap_or(0),
            first_in_window_s,
        });
    let oom_kill = strata_run::edge::oom_cause(cgroup);
    if server_death.is_some() || server_restart.is_some() || crash_recovery {
        leave_out_counters_across_a_restart(figures);
    }
    let facts = VerdictFacts {
        cache: shared_buffers.map(|cache_bytes| CacheFit {
            setting: "shared_buffers",
            cache_bytes,
            data_set_bytes: data_set_bytes(&config.driver.plan),
        }),
        server_death,
        server_restart,
        oom_kill,
        tolerate_failures: config.driver.tolerate_failures,
        missing_counters: edges.iter().find_map(|edge| edge.database_error.clone()),
    };
    figures.verdict = judge(figures, &facts);
}

/// A restart resets or rebuilds the server's counters: the two edges'
/// counters are not one run's, so they are never subtracted.
fn leave_out_counters_across_a_restart(figures: &mut RunFigures) {
    if figures.database.take().is_some() {
        figures.absorption = None;
        figures.warnings.push(
            "the database's counters are left out: the server restarted inside the window, and \
             counters from both sides of a restart are not one run"
                .to_string(),
        );
    }
}

/// shared_buffers beside the data set, when the server says its size.
async fn shared_buffers_fit(
    client: &tokio_postgres::Client,
    plan: &SchemaPlan,
) -> Option<CacheFit> {
    Some(CacheFit {
        setting: "shared_buffers",
        cache_bytes: shared_buffers_bytes(client).await?,
        data_set_bytes: data_set_bytes(plan),
    })
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

/// Makes sure the page cache does not hold the data set when the run starts.
fn keep_cache_out(
    choice: PageCacheChoice,
    method: &PageCacheMethod,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<PageCacheMethod> {
    match (choice, method) {
        (PageCacheChoice::Unlimited, _) => Ok(PageCacheMethod::Unlimited),
        (_, PageCacheMethod::CgroupV1 { .. } | PageCacheMethod::CgroupV2 { .. }) => {
            Ok(method.clone())
        }
        _ => {
            observer.phase(
                "dropping the page cache before the run (no memory cgroup limits this server)",
            );
            drop_caches().context("--page-cache-limit: cannot limit this server's page cache with a cgroup, and dropping caches failed; run as root or use --page-cache-limit none")?;
            Ok(PageCacheMethod::DropCaches)
        }
    }
}

/// What every window of a run shares: the run, its server, the
/// connection the edges are taken on, and the devices accounted.
struct WindowContext<'a> {
    config: &'a SlobConfig,
    server: &'a Server<'a>,
    client: &'a tokio_postgres::Client,
    version_num: u32,
    devices: &'a RunDevices,
    shared_buffers: Option<u64>,
}

/// One measured window, accounted for and judged.
struct Window {
    figures: RunFigures,
    outcome: RunOutcome,
    /// How the page cache was kept out, when the window limited it.
    page_cache: Option<PageCacheMethod>,
    /// `--shard`: this shard's part of the rendezvous.
    shard: Option<ShardRecord>,
    /// When the measured window began, Unix seconds.
    start_unix_s: f64,
}

impl WindowContext<'_> {
    /// Connects `options`' sessions, limits the page cache (`limit_cache`),
    /// meets the other shards, runs the window and accounts for it.
    async fn window(
        &self,
        options: DriverOptions,
        limit_cache: bool,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<Window> {
        let (config, server, client) = (self.config, self.server, self.client);
        observer.phase("connecting the sessions");
        let stop_after = options.stop_after.clone();
        let driver = Driver::connect(&server.target.config(), options).await?;
        let allowed = allowed_page_cache(config.page_cache, &config.driver.plan);
        let cache_limit = match (server.cluster, allowed.filter(|_| limit_cache)) {
            (Some(cluster), Some(allowed_bytes)) => Some(CacheLimit::new(
                cluster,
                allowed_bytes,
                driver.session_count() as u64,
            )),
            _ => None,
        };
        if let Some(limit) = &cache_limit {
            limit.apply(client).await?;
        }
        let joined = match &config.shard {
            Some(shard) => {
                observer.phase("waiting for the other shards at the rendezvous");
                let warmup = stop_after.warmup();
                Some(
                    crate::rendezvous::join(client, &server.target, shard, warmup, interrupt)
                        .await?,
                )
            }
            None => None,
        };
        let sessions_start = joined.as_ref().map_or_else(
            || Instant::now() + Duration::from_millis(200),
            |joined| joined.start,
        );
        let limit = cache_limit.as_ref();
        let (outcome, start, end, queries) = measure(
            driver,
            (client, self.version_num),
            server,
            limit,
            (sessions_start, &stop_after),
            interrupt,
            observer,
        )
        .await;
        let shard = match joined {
            Some(joined) => Some(joined.record().await),
            None => None,
        };
        let start_unix_s = strata_core::time::unix_s_at(start.at);
        let held = limit.and_then(CacheLimit::held);
        let figures = self
            .accounted([&start, &end], &outcome, queries, held)
            .await;
        Ok(Window {
            figures,
            outcome,
            page_cache: limit.map(CacheLimit::method),
            shard,
            start_unix_s,
        })
    }

    /// The window between `edges` accounted for across the layers, its
    /// traced outliers named (sessions, statements, files), and judged.
    async fn accounted(
        &self,
        [start, end]: [&Edge; 2],
        outcome: &RunOutcome,
        queries: strata_run::outlier_queries::Named,
        page_cache_held: Option<PageCacheHeld>,
    ) -> RunFigures {
        let server = self.server;
        let database = crate::figures::database_figures(start, end);
        let mut figures = account(start, end, database, outcome, self.devices);
        if let Some(traced) = figures.block_trace.as_mut() {
            strata_run::block_trace::name_sessions(traced, start, outcome);
            queries.onto(traced);
            if let Some(dir) = &server.data_directory {
                crate::outlier_files::name(self.client, dir, traced).await;
            }
        }
        figures.page_cache_held = page_cache_held;
        if let Some(agent) = server.agent.get() {
            agent.mark_gaps(&mut figures);
        }
        let shared_buffers = self.shared_buffers;
        judge_postgres(
            &mut figures,
            self.config,
            server,
            shared_buffers,
            [start, end],
        );
        figures
    }
}

impl MeasuredWindow for Window {
    fn figures(&self) -> &RunFigures {
        &self.figures
    }

    fn blocks(&self) -> WindowBlocks {
        WindowBlocks::of_postgresql(&self.figures)
    }

    fn outcome(&self) -> &RunOutcome {
        &self.outcome
    }

    fn start_unix_s(&self) -> f64 {
        self.start_unix_s
    }

    fn database_counters(&self) -> Option<BTreeMap<String, f64>> {
        let database = self.figures.database.as_ref()?;
        Some(database.counters.clone())
    }
}

/// The windows for strata-run's loop, each run to its end on the run's
/// runtime (the loop is synchronous, the sessions are not). The cached
/// window is not limited: its data set is in shared_buffers on purpose.
impl EngineWindows for &WindowContext<'_> {
    type Window = Window;

    fn window(
        &mut self,
        driver: DriverOptions,
        purpose: WindowPurpose,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<Window> {
        let limit_cache = purpose == WindowPurpose::Measured;
        let window = WindowContext::window(self, driver, limit_cache, interrupt, observer);
        tokio::runtime::Handle::current().block_on(window)
    }

    fn cache_and_block_bytes(&self) -> (u64, u64) {
        (self.shared_buffers.unwrap_or(32 << 20), BLOCK_BYTES)
    }

    fn prefetches(&mut self) -> bool {
        tokio::runtime::Handle::current().block_on(prefetches(self.client))
    }
}

/// Whether the server reads ahead of its bitmap heap scans: an
/// effective_io_concurrency above 0 (PostgreSQL's default on Linux is 1;
/// unreadable counts as none).
async fn prefetches(client: &tokio_postgres::Client) -> bool {
    let shown = client
        .query_one("SHOW effective_io_concurrency", &[])
        .await
        .ok()
        .and_then(|row| row.try_get::<_, String>(0).ok());
    shown
        .and_then(|value| value.trim().parse::<u32>().ok())
        .is_some_and(|pages| pages > 0)
}

/// The warm-up before the measured window (none in batch mode).
async fn measure(
    driver: Driver,
    (client, version_num): (&tokio_postgres::Client, u32),
    server: &Server<'_>,
    cache_limit: Option<&CacheLimit<'_>>,
    (start, stop_after): (Instant, &StopAfter),
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> (RunOutcome, Edge, Edge, strata_run::outlier_queries::Named) {
    let (window_start, expected) = match stop_after {
        StopAfter::Duration { warmup, duration } => (start + *warmup, Some(*warmup + *duration)),
        StopAfter::WorkLoops(_) => (start, None),
    };
    let clock = server.sample_clock.get();
    if let (Some(clock), Some(expected)) = (clock, expected) {
        clock.sample_at(window_start.into_std());
        clock.sample_at((start + expected).into_std());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let progress = Arc::new(Progress::default());
    let holder =
        cache_limit.and_then(|limit| limit.hold_through_the_window(window_start.into_std()));
    let mut start_edge = match stop_after {
        StopAfter::WorkLoops(_) => {
            clock.inspect(|clock| clock.sample_now());
            Some(server.take_edge(client, version_num).await)
        }
        StopAfter::Duration { .. } => None,
    };
    let watcher =
        crate::outlier_queries::Watcher::start(&server.target, driver.backend_pids()).await;
    observer.phase("running");
    let run = driver.run(start, stop.clone(), progress.clone());
    tokio::pin!(run);
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let outcome = loop {
        tokio::select! {
            outcome = &mut run => break outcome,
            _ = tokio::time::sleep_until(window_start), if start_edge.is_none() => {
                start_edge = Some(server.take_edge(client, version_num).await);
            }
            _ = tick.tick() => {
                if interrupt.load(Ordering::Relaxed) {
                    stop.store(true, Ordering::Relaxed);
                }
                let loops = progress.loops.load(Ordering::Relaxed);
                let alive = progress.sessions_alive.load(Ordering::Relaxed);
                observer.running(start.elapsed(), expected, loops, alive);
            }
        }
    };
    if let (Some(clock), None) = (clock, expected) {
        clock.sample_now();
    }
    if let (Some(holder), Some(limit)) = (holder, cache_limit) {
        *limit.held_window.borrow_mut() = holder.finish();
    }
    let start_edge = match start_edge {
        Some(edge) => edge,
        None => server.take_edge(client, version_num).await,
    };
    let throwaway_died = server
        .cluster
        .is_some_and(|cluster| cluster.death().is_some());
    let reconnected = match client.is_closed() && !throwaway_died {
        true => reconnect(&server.target).await,
        false => None,
    };
    let edge_client = reconnected.as_ref().unwrap_or(client);
    wait_for_sessions_to_exit(edge_client).await;
    let end_edge = server.take_edge(edge_client, version_num).await;
    let queries = match watcher {
        Some(watcher) => watcher.finish().await,
        None => Default::default(),
    };
    (outcome, start_edge, end_edge, queries)
}

/// The window's limit: all shared memory and the page cache allowed beside
/// the cgroup's private memory ([`server_limit`]), measured again each
/// second. No room per session beside the target: that room would become
/// page cache (41.5 MiB for a 25.6 MiB target at 1,000 sessions); a backend
/// that grows within a second takes it from the page cache, which the next
/// second gives back.
struct WindowLimit {
    allocated_shared_bytes: u64,
    allowed_bytes: u64,
}

impl WindowLimit {
    /// Sets the limit from what the cgroup holds now; returns the page cache
    /// of files it then holds.
    fn apply(&self, cgroup: &CgroupFiles) -> anyhow::Result<u64> {
        cgroup.set_limit(server_limit(
            cgroup,
            self.allocated_shared_bytes,
            self.allowed_bytes,
        ))?;
        Ok(cgroup.file_cache_bytes().unwrap_or(0))
    }
}

/// A cgroup limit that leaves `room_bytes` for the page cache of files:
/// what the cgroup holds besides that page cache (private memory, the
/// kernel's memory for it, and the shared memory touched), plus the shared
/// memory PostgreSQL allocated and has not touched (touching it can never
/// be what the limit refuses: the kernel cannot reclaim shared memory, so
/// it would kill), plus `room_bytes`. [`CacheLimit::apply`] touches all of
/// it first, so that no untouched room becomes page cache (it did: 29.0 MiB
/// for a 25.6 MiB target at 32 sessions).
fn server_limit(cgroup: &CgroupFiles, allocated_shared_bytes: u64, room_bytes: u64) -> u64 {
    let usage_bytes = cgroup.usage_bytes().unwrap_or(0);
    let held_bytes = usage_bytes.saturating_sub(cgroup.file_cache_bytes().unwrap_or(0));
    let untouched_bytes = allocated_shared_bytes.saturating_sub(cgroup.shmem_bytes().unwrap_or(0));
    held_bytes + untouched_bytes + room_bytes
}

/// Applies `limit` and keeps the page cache it holds; says once when it
/// cannot.
fn hold_once(limit: &WindowLimit, cgroup: &CgroupFiles, samples: &mut Vec<u64>, warned: &mut bool) {
    match limit.apply(cgroup) {
        Ok(bytes) => samples.push(bytes),
        Err(error) if !std::mem::replace(warned, true) => {
            let _ = std::io::Write::write_fmt(
                &mut std::io::stderr().lock(),
                format_args!("strata: warning: could not hold the page-cache limit: {error:#}\n"),
            );
        }
        Err(_) => {}
    }
}

/// The thread that holds the page cache through the window, and the page
/// cache it saw each second.
struct PageCacheHolder {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<HeldWindow>,
}

/// What the holder saw: the page cache each second, and when the cgroup's
/// OOM kill count first grew.
#[derive(Default)]
struct HeldWindow {
    file_cache_samples: Vec<u64>,
    first_oom_kill_s: Option<f64>,
}

impl PageCacheHolder {
    /// Applies the limit at `from`, then each second after it until
    /// `finish`, all from its own thread: lowering a cgroup v1 limit below
    /// what the cgroup holds reclaims in the writer until it wins the race
    /// with the sessions' reads (seconds, seen here), which must never hold
    /// up the runtime that takes the window's edges.
    fn start(cgroup: CgroupFiles, limit: WindowLimit, from: std::time::Instant) -> PageCacheHolder {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            // Ahead of a thousand sessions on two CPUs, or the limit is set
            // seconds apart and the page cache fills what they free between.
            unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, -20) };
            // True once `moment` has come, even when the window ended at
            // the same instant (its last second is held and sampled);
            // false when stopped before it.
            let wait_until = |moment: std::time::Instant| {
                while std::time::Instant::now() < moment && !stopped.load(Ordering::Relaxed) {
                    std::thread::park_timeout(
                        moment.saturating_duration_since(std::time::Instant::now()),
                    );
                }
                std::time::Instant::now() >= moment
            };
            let mut held = HeldWindow::default();
            let mut warned = false;
            let mut next = from;
            if !wait_until(next) {
                return held;
            }
            let kills_at_start = cgroup.oom_kills();
            while wait_until(next) {
                hold_once(&limit, &cgroup, &mut held.file_cache_samples, &mut warned);
                if held.first_oom_kill_s.is_none() && cgroup.oom_kills() > kills_at_start {
                    held.first_oom_kill_s = Some(from.elapsed().as_secs_f64());
                }
                next += Duration::from_secs(1);
            }
            held
        });
        PageCacheHolder { stop, thread }
    }

    fn finish(self) -> HeldWindow {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.thread().unpark();
        self.thread.join().unwrap_or_default()
    }
}

/// A new connection for the end edge when the server dropped the first one:
/// waits up to 15 s for a restarting server (crash recovery), so that a
/// restart is named as one rather than as missing counters.
async fn reconnect(target: &ConnectionTarget) -> Option<tokio_postgres::Client> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        match connect(target).await {
            Ok(client) => return Some(client),
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await
            }
            Err(_) => return None,
        }
    }
}

/// PostgreSQL backends publish their statistics at most once a second while
/// busy and at exit; the end edge waits until the sessions' backends have
/// exited (up to 5 s), so their last work is in the counters.
async fn wait_for_sessions_to_exit(client: &tokio_postgres::Client) {
    const OTHERS: &str =
        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' \
                          AND pid <> pg_backend_pid() AND application_name = 'strata slob'";
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        match client.query_one(OTHERS, &[]).await {
            Ok(row) if row.get::<_, i64>(0) == 0 => return,
            Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(_) => return,
        }
    }
}
