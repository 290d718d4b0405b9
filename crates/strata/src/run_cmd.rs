//! `strata run` and `strata setup`: their options, the job strata-run
//! resolves from them and starts, its progress on the terminal and its
//! outcome printed.
//!
//! Not for: resolving or checking the options (`strata_run::job`) or
//! laying out the result (`strata_run::formats`, through `crate::output`).

use crate::engines::REGISTRY;
use crate::{interrupt, progress::RunProgress};
use clap::Args;
use std::path::PathBuf;
use strata_output::args::OutputArgs;
use strata_output::render::Format;
use strata_run::engine_options::EngineOptionMatches;
use strata_run::job::{self, Job, StartedJob};
use strata_run::options::{DataRequest, WorkloadRequest};
use strata_run::outcome::SlobOutcome;
use strata_run::request::ResolvedOptions;

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

pub fn setup(mut args: SetupArgs, engine_options: EngineOptionMatches) -> anyhow::Result<i32> {
    args.data.engine_options = engine_options;
    let job = job::resolve_setup(args.data, REGISTRY)?;
    execute(&args.output, job)
}

pub fn run(mut args: RunArgs, engine_options: EngineOptionMatches) -> anyhow::Result<i32> {
    args.data.engine_options = engine_options;
    let job = job::resolve_run(args.data, &args.workload, REGISTRY)?;
    execute(&args.output, job)
}

fn execute(output: &OutputArgs, job: Job) -> anyhow::Result<i32> {
    let interrupt = interrupt::install();
    output.check_writable()?;
    let StartedJob {
        engine,
        recorder,
        warmup,
    } = job.start(REGISTRY)?;
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
    print_outcome(output, &outcome, &job.options(), record.as_ref())?;
    let interrupted = interrupt.load(std::sync::atomic::Ordering::Relaxed);
    Ok(exit_code(&outcome, job.strict, interrupted))
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
    options: &ResolvedOptions,
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
