//! `strata calibrate`: its options, and the request strata-calibrate
//! resolves from them; the result goes through `crate::output`.
//!
//! Not for: resolving the options (`strata_calibrate::request`) or laying
//! out the result (`strata_calibrate::output`).

use crate::{interrupt, progress::CalibrateProgress};
use clap::Args;
use strata_calibrate::calibration::{
    Calibration, CalibrationConfig, CalibrationOutcome, ResolvedOptions,
};
use strata_calibrate::options::CalibrateRequest;
use strata_calibrate::output;
use strata_calibrate::request;
use strata_core::verdict::Verdict;
use strata_output::args::{OutputArgs, RecordingPath};
use strata_output::render::Format;

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct CalibrateArgs {
    #[command(flatten)]
    request: CalibrateRequest,
    #[command(flatten)]
    output: OutputArgs,
}

const AFTER_HELP: &str = "\
Units: sizes take bytes or k/m/g/t = KiB/MiB/GiB/TiB (like fio and dd); KB/MB/GB/TB are
powers of 1000. Durations take ns, us, ms, s, m, h (a bare number is seconds).
Output: IOPS are requests/s; MB/s is decimal (10^6 bytes/s); latencies carry their unit.

Examples:
  strata calibrate                                  # short profile on a 1 GiB temp file
  strata calibrate --workload small-random-read --qd 32 --duration 30s
  strata calibrate --sweep --max-qd 64 --max-streams 4 --csv orion/
  strata calibrate --workload log-write --bs 4k --sync dsync
  strata calibrate --target /dev/nvme0n1 --range 0-50% --workload small-random-read --qd 16";

pub fn run(args: CalibrateArgs) -> anyhow::Result<i32> {
    let interrupt = interrupt::install();
    let recording = RecordingPath::for_output(args.request.record.clone(), args.output.chosen())?;
    let resolved = request::resolve(&args.request, recording.path(), std::env::args().collect())?;
    for note in &resolved.notes {
        crate::note!("strata: {note}");
    }
    check_outputs(&args, &resolved.config)?;
    let options = resolved.config.options.clone();
    let stop_rule = resolved.config.stop_rule;
    let mut calibration = Calibration::check(resolved.config)?;
    match args.request.no_block_trace {
        true => strata_probe::blocktrace::shared::decline("--no-block-trace was given"),
        // Where it cannot start, each point's figures say why.
        false => drop(strata_probe::blocktrace::shared::start()),
    }
    let outlier = args
        .request
        .outlier
        .unwrap_or(std::time::Duration::from_millis(500));
    strata_probe::blocktrace::shared::set_outlier_threshold_ms(outlier.as_secs_f64() * 1e3);
    let mut progress = CalibrateProgress::new(stop_rule);
    let outcome = calibration.run(interrupt, &mut progress);
    progress.finish();
    drop(calibration);
    let outcome = match outcome {
        Err(error) if interrupt.load(std::sync::atomic::Ordering::Relaxed) => {
            crate::note!(
                "strata: interrupted before any point ran ({error:#}); nothing was measured"
            );
            return Ok(interrupt::exit_code());
        }
        outcome => outcome?,
    };
    print_outcome(
        &args,
        &outcome,
        &options,
        options.outlier_us,
        recording.path().as_deref(),
    )?;
    Ok(exit_code(&outcome, args.request.strict))
}

/// Every file the calibration writes at its end, checked before any work:
/// `--record`, `--output`/`--html`, `--csv`'s directory.
fn check_outputs(args: &CalibrateArgs, config: &CalibrationConfig) -> anyhow::Result<()> {
    args.output.check_writable()?;
    if let (Some(path), Some(_)) = (&config.record, &args.request.record) {
        strata_recording::format::check_path(path, config.record_existing)
            .map_err(|error| error.context("--record"))?;
    }
    let Some(csv) = &args.request.csv else {
        return Ok(());
    };
    let nearest = csv
        .ancestors()
        .find(|dir| dir.as_os_str().is_empty() || dir.exists());
    match nearest {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => anyhow::bail!(
            "--csv {}: {} is not a directory",
            csv.display(),
            dir.display()
        ),
        _ => Ok(()),
    }
}

fn exit_code(outcome: &CalibrationOutcome, strict: bool) -> i32 {
    match &outcome.summary.verdict {
        Verdict::Failed { .. } => 1,
        _ if outcome.interrupted => interrupt::exit_code(),
        Verdict::NotAStorageResult { .. } if strict => 3,
        _ => 0,
    }
}

/// The outcome in the format asked for; the HTML page is the report of
/// the Recording (`recording`: `--record`'s, or a temporary one).
fn print_outcome(
    args: &CalibrateArgs,
    outcome: &CalibrationOutcome,
    options: &ResolvedOptions,
    outlier_us: f64,
    recording: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    if let Some(dir) = &args.request.csv {
        for path in output::write_csv(dir, &outcome.points)? {
            crate::note!("strata: wrote {}", path.display());
        }
    }
    if let Some(path) = &args.request.record {
        crate::note!("strata: recording written to {}", path.display());
    }
    let mut printed = output::calibration_output(outcome, options, outlier_us);
    if let (Format::Html, Some(path)) = (args.output.chosen(), recording) {
        printed.document = Some(strata_report::recording::report_with(
            path,
            &Default::default(),
        )?);
    }
    crate::output::print(&args.output, &printed)
}
