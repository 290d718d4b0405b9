//! `strata report`: reads a Recording (or two, to compare) and prints the
//! report in any output format (`crate::output`).
//!
//! Not for: computing anything; `strata_report::recording` builds the
//! document and the renderers lay it out.

use anyhow::bail;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;
use strata_output::args::OutputArgs;
use strata_output::document::Window;
use strata_output::Output;
use strata_report::recording::{compare, report_with, ReportOptions};

#[derive(Args)]
pub struct ReportArgs {
    /// The Recording to report on
    #[arg(required_unless_present = "compare")]
    pub recording: Option<PathBuf>,
    /// Two Recordings side by side (A, then B), with the change from A to B
    #[arg(long, num_args = 2, value_names = ["A", "B"], conflicts_with = "recording")]
    pub compare: Option<Vec<PathBuf>>,
    /// Start of the window from the recording's start: seconds, or a duration
    /// (90s, 2m) (default: a run's measured window, or the whole recording)
    #[arg(long, value_name = "TIME", requires = "to", value_parser = strata_core::input::duration)]
    pub from: Option<Duration>,
    /// End of the window from the recording's start: seconds, or a duration
    #[arg(long, value_name = "TIME", requires = "from", value_parser = strata_core::input::duration)]
    pub to: Option<Duration>,
    /// I/Os and per-second device awaits slower than this are outliers (50ms)
    /// [default: calibrate's own --outlier, else 500ms]
    #[arg(long, value_name = "TIME", value_parser = strata_core::input::duration)]
    pub outlier_threshold: Option<Duration>,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run(args: ReportArgs) -> anyhow::Result<i32> {
    let options = ReportOptions {
        window: window(&args)?,
        outlier_threshold_ms: args.outlier_threshold.map(|time| time.as_secs_f64() * 1e3),
    };
    let report = match (&args.compare, &args.recording) {
        (Some(pair), _) => compare(
            &report_with(&pair[0], &options)?,
            &report_with(&pair[1], &options)?,
        ),
        (None, Some(path)) => report_with(path, &options)?,
        (None, None) => bail!("give a RECORDING, or --compare A B"),
    };
    crate::output::print(&args.output, &Output::document(report))?;
    Ok(0)
}

fn window(args: &ReportArgs) -> anyhow::Result<Option<Window>> {
    if args.outlier_threshold.is_some_and(|time| time.is_zero()) {
        bail!("--outlier-threshold 0: give a latency greater than 0 (e.g. 50ms)");
    }
    Ok(match (args.from, args.to) {
        (Some(from), Some(to)) => Some(Window {
            from_s: from.as_secs_f64(),
            to_s: to.as_secs_f64(),
        }),
        _ => None,
    })
}
