//! `strata report`: reads a Recording (or two, to compare) and prints the
//! report as text, JSON or a self-contained HTML page.
//!
//! Not for: computing anything; `strata_report::recording` builds the
//! document and the renderers lay it out.

use anyhow::{bail, Context};
use clap::Args;
use std::path::PathBuf;
use strata_report::document::Window;
use strata_report::recording::{compare, report_with, ReportOptions};
use strata_report::render::html::HtmlRenderer;
use strata_report::render::json::JsonRenderer;
use strata_report::render::text::TextRenderer;
use strata_report::render::Renderer;

#[derive(Args)]
pub struct ReportArgs {
    /// The Recording to report on
    #[arg(required_unless_present = "compare")]
    pub recording: Option<PathBuf>,
    /// Two Recordings side by side (A, then B), with the change from A to B
    #[arg(long, num_args = 2, value_names = ["A", "B"], conflicts_with = "recording")]
    pub compare: Option<Vec<PathBuf>>,
    /// Start of the window, seconds from the recording's start (default:
    /// a run's measured window, or the whole recording)
    #[arg(long, value_name = "SECONDS", requires = "to")]
    pub from: Option<f64>,
    /// End of the window, seconds from the recording's start
    #[arg(long, value_name = "SECONDS", requires = "from")]
    pub to: Option<f64>,
    /// I/Os and per-second device awaits slower than this are outliers, ms
    /// (default: calibrate's own --outlier, else 500)
    #[arg(long, value_name = "MS")]
    pub outlier_threshold: Option<f64>,
    /// Print the report as JSON (schema strata.report)
    #[arg(long, conflicts_with = "html")]
    pub json: bool,
    /// Write the report as one self-contained HTML page to FILE
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

pub fn run(args: ReportArgs) -> anyhow::Result<i32> {
    let options = ReportOptions {
        window: window(&args)?,
        outlier_threshold_ms: args.outlier_threshold,
    };
    let report = match (&args.compare, &args.recording) {
        (Some(pair), _) => compare(
            &report_with(&pair[0], &options)?,
            &report_with(&pair[1], &options)?,
        ),
        (None, Some(path)) => report_with(path, &options)?,
        (None, None) => bail!("give a RECORDING, or --compare A B"),
    };
    if let Some(path) = &args.html {
        std::fs::write(path, HtmlRenderer.render(&report))
            .with_context(|| format!("--html: writing {}", path.display()))?;
        eprintln!("strata: report written to {}", path.display());
    } else if args.json {
        print!("{}", JsonRenderer.render(&report));
    } else {
        print!("{}", TextRenderer::default().render(&report));
    }
    Ok(0)
}

fn window(args: &ReportArgs) -> anyhow::Result<Option<Window>> {
    if let Some(ms) = args.outlier_threshold {
        if !(ms.is_finite() && ms > 0.0) {
            bail!("--outlier-threshold {ms}: give a latency in ms greater than 0");
        }
    }
    Ok(match (args.from, args.to) {
        (Some(from_s), Some(to_s)) => Some(Window { from_s, to_s }),
        _ => None,
    })
}
