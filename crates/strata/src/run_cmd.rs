//! `strata run` and `strata setup`: their options, and the requests
//! strata-run resolves from them (pgio.conf or slob.conf as a source of
//! defaults); the
//! engine is chosen and started by `engines`.
//!
//! Not for: resolving or checking the options (`strata_run::request`) or
//! printing the result (`strata_run::formats`, through `crate::output`).

use crate::engines;
use crate::{interrupt, progress::RunProgress};
use clap::Args;
use std::path::PathBuf;
use strata_output::args::OutputArgs;
use strata_output::render::Format;
use strata_recording::Existing;
use strata_run::engine::{Capability, EngineKind};
use strata_run::options::{DataRequest, WorkloadRequest};
use strata_run::outcome::{PageCacheChoice, SlobOutcome};
use strata_run::read_path::ReadPathRequest;
use strata_run::recorder::RunRecorder;
use strata_run::request::{self, EngineRequest, ResolvedOptions, ShardRequest};
use strata_run::sweep::{self, SweepRequest};
use strata_slob::conf_file::Defaults;
use strata_slob::session::DriverOptions;

#[derive(Args, Debug)]
pub struct SetupArgs {
    #[command(flatten)]
    data: DataRequest,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    data: DataRequest,
    #[command(flatten)]
    workload: WorkloadRequest,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn setup(mut args: SetupArgs) -> anyhow::Result<i32> {
    request::choose_db(&mut args.data, None)?;
    let agents = &mut args.data.agents;
    args.data.agent_access.apply(agents)?;
    let (kind, conf) = prepare(&args.data)?;
    let defaults = engines::defaults(kind, &args.data);
    let driver = request::setup_driver_options(request::plan(&args.data, &conf, &defaults));
    let job = Job {
        kind,
        conf,
        driver,
        read_path: ReadPathRequest::default(),
        setup_only: true,
        record: None,
        strict: false,
        shard: None,
        sweep: None,
    };
    execute(&args.data, &args.output, job)
}

pub fn run(mut args: RunArgs) -> anyhow::Result<i32> {
    let mut shard = request::shard_request(&args.workload, &|name| std::env::var(name).ok())?;
    request::choose_db(&mut args.data, shard.as_mut())?;
    let agents = &mut args.data.agents;
    args.data.agent_access.apply(agents)?;
    let (kind, conf) = prepare(&args.data)?;
    let defaults = engines::defaults(kind, &args.data);
    let plan = request::plan(&args.data, &conf, &defaults);
    if args.workload.update_pad_bytes.is_some() {
        kind.refuse_without(Capability::UpdatePadding, "--update-pad-bytes")?;
    }
    let mut driver = request::driver_options(&args.workload, plan, &conf)?;
    if let Some(threshold) = args.workload.io_outlier {
        strata_run::block_trace::set_outlier_threshold_ms(threshold.as_secs_f64() * 1e3);
    }
    if let Some(shard) = &shard {
        check_shard(kind, &args.data, shard)?;
        driver.shard = Some(shard.shard);
        driver.seed = args
            .workload
            .seed
            .unwrap_or(request::run_seed(&shard.run_id));
    }
    request::refuse_a_data_set_in_the_cache(&args.data, &conf, &driver.plan, &defaults)?;
    let engine = (kind, defaults.block_bytes);
    let sweep = sweep_request(engine, &args.data, &args.workload, &driver)?;
    let swept = sweep
        .as_ref()
        .and_then(|sweep| sweep.sessions.iter().max().copied());
    let sessions = u32::try_from(strata_slob::session::session_total(&driver)).unwrap_or(u32::MAX);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    request::refuse_more_sessions_than_the_cache_can_hold(
        &args.data,
        kind,
        sessions.max(swept.unwrap_or(0)),
        cpus,
    )?;
    let record = RecordRequest {
        path: args.workload.record.clone(),
        existing: match args.workload.overwrite {
            true => Existing::Replace,
            false => Existing::Refuse,
        },
    };
    let job = Job {
        kind,
        conf,
        driver,
        read_path: ReadPathRequest {
            io_method: args.workload.io_method.clone(),
            direct_io: args.workload.direct_io,
        },
        setup_only: false,
        record: Some(record),
        strict: args.workload.strict,
        shard,
        sweep,
    };
    execute(&args.data, &args.output, job)
}

/// `--sweep-sessions` and its companions, checked before any work: the
/// calibrate Recording read (its reads of the engine's block), the sweep
/// PostgreSQL's or MariaDB's.
fn sweep_request(
    (kind, block_bytes): (EngineKind, u32),
    data: &DataRequest,
    args: &WorkloadRequest,
    driver: &DriverOptions,
) -> anyhow::Result<Option<SweepRequest>> {
    let Some(sessions) = args.sweep_sessions.clone() else {
        return Ok(None);
    };
    kind.refuse_without(Capability::Sweep, "--sweep-sessions")?;
    let predict = args.predict.is_some();
    SweepRequest::check(predict, driver)?;
    if predict && data.db.is_some() {
        anyhow::bail!(
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

/// A shard drives a server every shard reaches: PostgreSQL's, with --db.
fn check_shard(kind: EngineKind, data: &DataRequest, shard: &ShardRequest) -> anyhow::Result<()> {
    let named = format!("--shard {}/{}", shard.shard.index, shard.shard.count);
    kind.refuse_without(Capability::Shards, &named)?;
    if data.db.is_none() {
        anyhow::bail!("{named}: give --db, the server every shard drives (a throwaway cluster is one driver's own)");
    }
    Ok(())
}

/// The engine and pgio.conf's or slob.conf's defaults, once the data
/// options are checked.
fn prepare(data: &DataRequest) -> anyhow::Result<(EngineKind, Defaults)> {
    request::check_data(data)?;
    let conf = strata_slob::config::defaults(data.pgio_conf.as_deref(), data.slob_conf.as_deref())?;
    for note in &conf.notes {
        crate::note!("strata: {note}");
    }
    Ok((engines::engine_kind(data), conf))
}

/// `--record` and `--overwrite`: where the run's Recording goes.
struct RecordRequest {
    /// `None`: a new name in the current directory.
    path: Option<PathBuf>,
    existing: Existing,
}

impl RecordRequest {
    /// The Recording, created with its header before any work.
    fn open(&self, command: &[String], options: &serde_json::Value) -> anyhow::Result<RunRecorder> {
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

/// One resolved `run` or `setup`.
struct Job {
    kind: EngineKind,
    conf: Defaults,
    driver: DriverOptions,
    read_path: ReadPathRequest,
    setup_only: bool,
    record: Option<RecordRequest>,
    strict: bool,
    shard: Option<ShardRequest>,
    sweep: Option<SweepRequest>,
}

fn execute(data: &DataRequest, output: &OutputArgs, job: Job) -> anyhow::Result<i32> {
    let interrupt = interrupt::install();
    let data = DataRequest {
        db: data.db.clone().or(job.conf.db.clone()),
        load_parallel: data.load_parallel.or(job.conf.load_parallel),
        ..data.clone()
    };
    request::refuse_agents_of_a_throwaway_server(&data, job.kind)?;
    let shown_db = engines::shown_db(job.kind, &data)?;
    let options = serde_json::to_value(ResolvedOptions::of(
        job.kind,
        &data,
        shown_db,
        &job.driver,
        &job.read_path,
        job.setup_only,
        job.strict,
    ))?;
    let command = engines::redacted_command_line();
    output.check_writable()?;
    let recorder = match &job.record {
        Some(record) => Some(record.open(&command, &options)?),
        None => None,
    };
    let warmup = job.driver.stop_after.warmup();
    let request = EngineRequest {
        page_cache: data.page_cache_limit.unwrap_or(PageCacheChoice::Auto),
        driver: job.driver,
        read_path: job.read_path,
        setup_only: job.setup_only,
        record: recorder.clone(),
        options: options.clone(),
        command: command.clone(),
        shard: job.shard.clone(),
        sweep: job.sweep,
    };
    let engine = match engines::build(job.kind, &data, request) {
        Ok(engine) => engine,
        Err(error) => {
            if let Some(recorder) = recorder {
                recorder.discard();
            }
            return Err(error);
        }
    };
    start_tracing(&data);
    let mut progress = RunProgress::new(warmup);
    let outcome = engine.run(interrupt, &mut progress);
    progress.finish();
    let interrupted = interrupt.load(std::sync::atomic::Ordering::Relaxed);
    let stop = |reason: &str| {
        if let Some(recorder) = &recorder {
            recorder.stop(progress.phase(), reason);
        }
    };
    let outcome = match outcome {
        Err(error) if interrupted => {
            crate::note!(
                "strata: interrupted ({error:#}); the throwaway cluster or temporary file, if \
                 any, was removed"
            );
            stop(&format!("stopped by {}", interrupt::signal_name()));
            return Ok(interrupt::exit_code());
        }
        Err(error) => {
            stop(&format!("{error:#}"));
            return Err(error);
        }
        Ok(outcome) => outcome,
    };
    let record = recorder
        .as_ref()
        .map(|recorder| recorder.path().to_path_buf());
    print_outcome(output, &outcome, &options, record.as_ref())?;
    let interrupted = interrupt.load(std::sync::atomic::Ordering::Relaxed);
    Ok(exit_code(&outcome, job.strict, interrupted))
}

/// Starts this host's block tracer; where it cannot start, the run's
/// figures say why (block_trace). A server on another host is traced by
/// its agent: this host's requests are not the server's, and their
/// outliers must not be named by its processes.
fn start_tracing(data: &DataRequest) {
    match strata_run::request::server_host_agent(data) {
        Some(_) => strata_run::block_trace::decline(
            "the server is on another host: its requests are traced there by its agent",
        ),
        None => drop(strata_run::block_trace::start()),
    }
}

/// 130/143 when stopped by a signal; else by the verdict: failed 1, not a
/// storage result 3 with `--strict` (else 0), valid 0.
fn exit_code(outcome: &SlobOutcome, strict: bool, interrupted: bool) -> i32 {
    use strata_run::verdict::Verdict;
    match outcome.figures.as_ref().map(|figures| &figures.verdict) {
        _ if interrupted => interrupt::exit_code(),
        Some(Verdict::Failed { .. }) => 1,
        Some(Verdict::NotAStorageResult { .. }) if strict => 3,
        _ => 0,
    }
}

/// The outcome in the format asked for; a run's HTML page is the report
/// of its Recording.
fn print_outcome(
    output: &OutputArgs,
    outcome: &SlobOutcome,
    options: &serde_json::Value,
    record: Option<&PathBuf>,
) -> anyhow::Result<()> {
    if let (Some(path), Some(_)) = (record, &outcome.figures) {
        crate::note!("strata: recording written to {}", path.display());
    }
    let mut printed = strata_run::formats::run_output(outcome, options);
    if let (Format::Html, Some(path), Some(_)) = (output.chosen(), record, &outcome.figures) {
        let report = strata_report::recording::report_with(path, &Default::default())?;
        printed.document = Some(report);
    }
    crate::output::print(output, &printed)
}
