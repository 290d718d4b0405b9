//! One resolution step: `strata run`'s and `strata setup`'s parsed options
//! turned into one resolved [`Job`] (engine, pgio.conf's or slob.conf's
//! defaults, plan, sessions, shard, sweep, where the Recording goes, every
//! capability checked), then started: its Recording opened and its engine
//! configured, all before any work.
//!
//! Not for: parsing or printing (the binary), or running the engine
//! (`engine`).

use crate::block_trace;
use crate::engine::{Capability, DatabaseEngine, EngineKind};
use crate::options::{DataRequest, WorkloadRequest};
use crate::outcome::PageCacheChoice;
use crate::read_path::ReadPathRequest;
use crate::recorder::RunRecorder;
use crate::registry::Registry;
use crate::request::{self, EngineRequest, ResolvedOptions, ShardRequest};
use crate::sweep::{self, SweepRequest};
use anyhow::bail;
use std::path::PathBuf;
use std::time::Duration;
use strata_recording::Existing;
use strata_slob::conf_file::Defaults;
use strata_slob::session::DriverOptions;

/// One resolved `run` or `setup`.
pub struct Job {
    pub kind: EngineKind,
    /// The data options with pgio.conf's or slob.conf's `--db` and load
    /// parallelism where the command line gave none.
    pub data: DataRequest,
    pub driver: DriverOptions,
    pub read_path: ReadPathRequest,
    pub setup_only: bool,
    pub record: Option<RecordRequest>,
    pub strict: bool,
    pub shard: Option<ShardRequest>,
    pub sweep: Option<SweepRequest>,
    /// `--db` as it may be shown (no password).
    pub shown_db: Option<String>,
    /// The command line, every secret in it redacted.
    pub command: Vec<String>,
    /// The engine's own options as the Recording's options show them.
    pub engine_options: serde_json::Map<String, serde_json::Value>,
}

/// `--record` and `--overwrite`: where the run's Recording goes.
pub struct RecordRequest {
    /// `None`: a new name in the current directory.
    pub path: Option<PathBuf>,
    pub existing: Existing,
}

/// A job whose Recording is open and whose engine is configured.
pub struct StartedJob {
    pub engine: Box<dyn DatabaseEngine>,
    pub recorder: Option<RunRecorder>,
    /// The warm-up before each measured window.
    pub warmup: Duration,
}

/// What the parts of a job that differ between `run` and `setup` resolve to.
struct Parts {
    kind: EngineKind,
    conf: Defaults,
    driver: DriverOptions,
    read_path: ReadPathRequest,
    record: Option<RecordRequest>,
    strict: bool,
    shard: Option<ShardRequest>,
    sweep: Option<SweepRequest>,
}

/// `strata setup`: load only, no Recording.
pub fn resolve_setup(mut data: DataRequest, registry: Registry) -> anyhow::Result<Job> {
    request::choose_db(&mut data, None)?;
    data.agent_access.apply(&mut data.agents)?;
    let (kind, conf) = prepare(&data, registry)?;
    registry.refuse_given_without(kind, &options_needing_capabilities(&data, None))?;
    let defaults = (registry.entry(kind)?.defaults)(&data);
    let driver = request::setup_driver_options(request::plan(&data, &conf, &defaults));
    let parts = Parts {
        kind,
        conf,
        driver,
        read_path: ReadPathRequest::default(),
        record: None,
        strict: false,
        shard: None,
        sweep: None,
    };
    finish(data, parts, registry)
}

/// `strata run`: everything checked that needs no work.
pub fn resolve_run(
    mut data: DataRequest,
    workload: &WorkloadRequest,
    registry: Registry,
) -> anyhow::Result<Job> {
    let mut shard = request::shard_request(workload, &|name| std::env::var(name).ok())?;
    request::choose_db(&mut data, shard.as_mut())?;
    data.agent_access.apply(&mut data.agents)?;
    let (kind, conf) = prepare(&data, registry)?;
    let needing = options_needing_capabilities(&data, Some(workload));
    registry.refuse_given_without(kind, &needing)?;
    let defaults = (registry.entry(kind)?.defaults)(&data);
    let plan = request::plan(&data, &conf, &defaults);
    let mut driver = request::driver_options(workload, plan, &conf)?;
    if let Some(threshold) = workload.io_outlier {
        block_trace::set_outlier_threshold_ms(threshold.as_secs_f64() * 1e3);
    }
    if let Some(shard) = &shard {
        check_shard((kind, registry), &data, shard)?;
        driver.shard = Some(shard.shard);
        driver.seed = workload.seed.unwrap_or(request::run_seed(&shard.run_id));
    }
    request::refuse_a_data_set_in_the_cache(&data, &conf, &driver.plan, &defaults)?;
    let sweep = sweep_request(
        (kind, defaults.block_bytes),
        &data,
        (workload, &driver),
        registry,
    )?;
    refuse_more_sessions_than_the_cache_can_hold(&data, kind, &driver, sweep.as_ref())?;
    let record = RecordRequest {
        path: workload.record.clone(),
        existing: match workload.overwrite {
            true => Existing::Replace,
            false => Existing::Refuse,
        },
    };
    let read_path = ReadPathRequest {
        io_method: workload.io_method.clone(),
        direct_io: workload.direct_io,
    };
    let parts = Parts {
        kind,
        conf,
        driver,
        read_path,
        record: Some(record),
        strict: workload.strict,
        shard,
        sweep,
    };
    finish(data, parts, registry)
}

/// The engine and pgio.conf's or slob.conf's defaults, once the data
/// options are checked.
fn prepare(data: &DataRequest, registry: Registry) -> anyhow::Result<(EngineKind, Defaults)> {
    request::check_data(data)?;
    let conf = strata_slob::config::defaults(data.pgio_conf.as_deref(), data.slob_conf.as_deref())?;
    for note in &conf.notes {
        strata_core::note::note(&format!("strata: {note}"));
    }
    let kind = registry.choose(data)?;
    registry.refuse_other_engines_options(kind, &data.engine_options)?;
    Ok((kind, conf))
}

/// The options every engine's run takes that need a capability: each as
/// the user writes it, whether it was given, and what it needs.
fn options_needing_capabilities(
    data: &DataRequest,
    workload: Option<&WorkloadRequest>,
) -> [(&'static str, bool, Capability); 8] {
    let asked = |given: fn(&WorkloadRequest) -> bool| workload.is_some_and(given);
    [
        (
            "--pgio-conf",
            data.pgio_conf.is_some(),
            Capability::ConfFiles,
        ),
        (
            "--slob-conf",
            data.slob_conf.is_some(),
            Capability::ConfFiles,
        ),
        (
            "--load-parallel",
            data.load_parallel.is_some(),
            Capability::LoadParallel,
        ),
        ("--agent", !data.agents.is_empty(), Capability::Agents),
        (
            "--page-cache-limit",
            data.page_cache_limit.is_some(),
            Capability::PageCacheLimit,
        ),
        (
            "--io-method",
            asked(|args| args.io_method.is_some()),
            Capability::ReadPath,
        ),
        (
            "--direct-io",
            asked(|args| args.direct_io),
            Capability::ReadPath,
        ),
        (
            "--update-pad-bytes",
            asked(|args| args.update_pad_bytes.is_some()),
            Capability::UpdatePadding,
        ),
    ]
}

/// The most sessions of the run or its sweep, against what a limited page
/// cache can hold on this host's CPUs.
fn refuse_more_sessions_than_the_cache_can_hold(
    data: &DataRequest,
    kind: EngineKind,
    driver: &DriverOptions,
    sweep: Option<&SweepRequest>,
) -> anyhow::Result<()> {
    let swept = sweep.and_then(|sweep| sweep.sessions.iter().max().copied());
    let sessions = u32::try_from(strata_slob::session::session_total(driver)).unwrap_or(u32::MAX);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let most = sessions.max(swept.unwrap_or(0));
    request::refuse_more_sessions_than_the_cache_can_hold(data, kind, most, cpus)
}

/// `--sweep-sessions` and its companions, checked before any work: the
/// calibrate Recording read (its reads of the engine's block), the sweep
/// an engine's that has one.
fn sweep_request(
    (kind, block_bytes): (EngineKind, u32),
    data: &DataRequest,
    (args, driver): (&WorkloadRequest, &DriverOptions),
    registry: Registry,
) -> anyhow::Result<Option<SweepRequest>> {
    let Some(sessions) = args.sweep_sessions.clone() else {
        return Ok(None);
    };
    registry.refuse_without(kind, Capability::Sweep, "--sweep-sessions")?;
    let predict = args.predict.is_some();
    SweepRequest::check(predict, driver)?;
    if predict && data.db.is_some() {
        bail!(
            "--predict measures the database's CPU per block on strata's throwaway server (its \
             processes' CPU time); with --db, use --calibration, and strata model predict \
             --cpu-per-block"
        );
    }
    let storage = match args.predict.as_ref().or(args.calibration.as_ref()) {
        Some(path) => Some(sweep::Storage::read(path, u64::from(block_bytes))?),
        None => None,
    };
    Ok(Some(SweepRequest {
        sessions,
        latency_target: args.latency_target.unwrap_or(sweep::DEFAULT_LATENCY_TARGET),
        storage,
        predict,
    }))
}

/// A shard drives a server every shard reaches: an engine with shards,
/// with --db.
fn check_shard(
    (kind, registry): (EngineKind, Registry),
    data: &DataRequest,
    shard: &ShardRequest,
) -> anyhow::Result<()> {
    let named = format!("--shard {}/{}", shard.shard.index, shard.shard.count);
    registry.refuse_without(kind, Capability::Shards, &named)?;
    if data.db.is_none() {
        bail!("{named}: give --db, the server every shard drives (a throwaway cluster is one driver's own)");
    }
    Ok(())
}

/// The job with the conf file's defaults merged, the agents checked and
/// its options and command line as the Recording shows them.
fn finish(data: DataRequest, parts: Parts, registry: Registry) -> anyhow::Result<Job> {
    let data = DataRequest {
        db: data.db.clone().or(parts.conf.db.clone()),
        load_parallel: data.load_parallel.or(parts.conf.load_parallel),
        ..data
    };
    request::refuse_agents_of_a_throwaway_server(&data, parts.kind)?;
    let shown_db = match &data.db {
        Some(db) => Some(registry.shown_db(parts.kind, db)?),
        None => None,
    };
    let engine_options =
        crate::engine_options::recorded_options(&parts.kind.0.options, &data.engine_options)?;
    Ok(Job {
        kind: parts.kind,
        data,
        driver: parts.driver,
        read_path: parts.read_path,
        setup_only: parts.record.is_none(),
        record: parts.record,
        strict: parts.strict,
        shard: parts.shard,
        sweep: parts.sweep,
        shown_db,
        command: redacted_command_line(registry),
        engine_options,
    })
}

impl Job {
    /// The options as the JSON document and the Recording show them.
    pub fn options(&self) -> ResolvedOptions<'_> {
        let (data, driver) = (&self.data, &self.driver);
        let run = !self.setup_only;
        ResolvedOptions {
            command: if run { "run" } else { "setup" },
            engine: self.kind,
            db: self.shown_db.clone(),
            plan: &driver.plan,
            page_cache_limit: data.page_cache_limit.unwrap_or(PageCacheChoice::Auto),
            load_parallel: data.load_parallel.unwrap_or(2),
            replace: data.replace,
            workload: run.then_some(&driver.workload),
            threads_per_schema: driver.threads_per_schema,
            sessions: driver.sessions,
            stop_after: run.then_some(&driver.stop_after),
            tolerate_failures: driver.tolerate_failures,
            outlier_threshold_ms: driver
                .outlier_threshold
                .map(|threshold| threshold.as_secs_f64() * 1e3),
            strict: self.strict,
            read_path: &self.read_path,
            engine_options: &self.engine_options,
        }
    }

    /// Opens the Recording with its header, configures the engine (a
    /// Recording opened for an engine then refused is removed) and starts
    /// this host's block tracer where the server is.
    pub fn start(&self, registry: Registry) -> anyhow::Result<StartedJob> {
        let recorder = match &self.record {
            Some(record) => Some(record.open(&self.command, &self.options())?),
            None => None,
        };
        let request = EngineRequest {
            page_cache: self.data.page_cache_limit.unwrap_or(PageCacheChoice::Auto),
            driver: self.driver.clone(),
            read_path: self.read_path.clone(),
            setup_only: self.setup_only,
            record: recorder.clone(),
            command: self.command.clone(),
            shard: self.shard.clone(),
            sweep: self.sweep.clone(),
        };
        let engine = match self.configure(registry, request) {
            Ok(engine) => engine,
            Err(error) => {
                if let Some(recorder) = recorder {
                    recorder.discard();
                }
                return Err(error);
            }
        };
        start_tracing(&self.data);
        Ok(StartedJob {
            engine,
            recorder,
            warmup: self.driver.stop_after.warmup(),
        })
    }

    fn configure(
        &self,
        registry: Registry,
        request: EngineRequest,
    ) -> anyhow::Result<Box<dyn DatabaseEngine>> {
        (registry.entry(self.kind)?.configure)(&self.data, request)
    }
}

impl RecordRequest {
    /// The Recording, created with its header before any work.
    fn open(&self, command: &[String], options: &ResolvedOptions) -> anyhow::Result<RunRecorder> {
        match &self.path {
            Some(path) => RunRecorder::create(path, command, options, self.existing)
                .map_err(|error| error.context("--record")),
            None => {
                let stamp = strata_core::time::utc_now_rfc3339().replace([':', '-'], "");
                RunRecorder::create_unique(std::path::Path::new(""), &stamp, command, options)
            }
        }
    }
}

/// Starts this host's block tracer; where it cannot start, the run's
/// figures say why (block_trace). A server on another host is traced by
/// its agent: this host's requests are not the server's, and their
/// outliers must not be named by its processes.
fn start_tracing(data: &DataRequest) {
    match request::server_host_agent(data) {
        Some(_) => block_trace::decline(
            "the server is on another host: its requests are traced there by its agent",
        ),
        None => drop(block_trace::start()),
    }
}

/// Options whose values are connection strings or URLs that may hold a
/// password.
const SECRET_OPTIONS: [&str; 4] = ["--db", "--mariadb", "--agent", "--prometheus"];

/// A connection string as the engine whose it is shows it, or `***` when
/// it does not parse; an agent's or Prometheus's URL with its password
/// `***`.
fn redact(option: &str, value: &str, registry: Registry) -> String {
    if matches!(option, "--agent" | "--prometheus") {
        return strata_agent::endpoint::masked(value);
    }
    let Registry(entries) = registry;
    let claimed = entries.iter().find(|entry| (entry.claims_db)(value));
    let Some(entry) = claimed.or(entries.first()) else {
        return "***".into();
    };
    (entry.shown_db)(value).unwrap_or_else(|_| "***".into())
}

/// The command line with the values of `--db`, `--mariadb`, `--agent`
/// and `--prometheus` redacted.
pub fn redacted_command_line(registry: Registry) -> Vec<String> {
    let mut redact_next: Option<String> = None;
    std::env::args()
        .map(|argument| {
            if let Some(option) = redact_next.take() {
                return redact(&option, &argument, registry);
            }
            if SECRET_OPTIONS.contains(&argument.as_str()) {
                redact_next = Some(argument.clone());
                return argument;
            }
            match argument.split_once('=') {
                Some((option, value)) if SECRET_OPTIONS.contains(&option) => {
                    format!("{option}={}", redact(option, value, registry))
                }
                _ => argument,
            }
        })
        .collect()
}
