//! `strata report`: reads a Recording (or several of one kind, to compare), or asks a
//! Prometheus server what it scraped of a fleet's agents over a window, and
//! prints the report in any output format (`crate::output`).
//!
//! Not for: computing anything; `strata_report::recording` builds the
//! document and the renderers lay it out.

use anyhow::bail;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;
use strata_agent::endpoint::{Access, Endpoint, PROMETHEUS_BASIC_AUTH_ENV};
use strata_agent::query::Range;
use strata_output::args::OutputArgs;
use strata_output::document::Window;
use strata_output::Output;
use strata_report::recording::{compare_recordings, report_of, report_with, ReportOptions};
use strata_run::merge::merge_files;

#[derive(Args)]
pub struct ReportArgs {
    /// The Recording to report on; several: the shards of one run, merged
    #[arg(required_unless_present_any = ["compare", "prometheus"], value_name = "RECORDING")]
    pub recordings: Vec<PathBuf>,
    /// Two or more Recordings of one kind side by side (A, B, C…): the
    /// settings that differ first, then each one's figures with the change
    /// from A, and findings that explain it
    #[arg(long, num_args = 2.., value_names = ["A", "B"], conflicts_with_all = ["recordings", "prometheus"])]
    pub compare: Option<Vec<PathBuf>>,
    /// A Prometheus server (http://HOST:9090) that scrapes strata agents or
    /// node_exporters: report every host's devices and CPU between --from
    /// and --to, from its query API
    #[arg(
        long,
        value_name = "URL",
        conflicts_with = "recordings",
        requires = "from",
        value_parser = strata_agent::query::parse_prometheus
    )]
    pub prometheus: Option<Endpoint>,
    /// With --prometheus: a file holding USER:PASSWORD, sent as HTTP Basic
    /// auth where the URL carries no password [default:
    /// $STRATA_PROMETHEUS_BASIC_AUTH]
    #[arg(long, value_name = "FILE", requires = "prometheus")]
    pub prometheus_basic_auth_file: Option<PathBuf>,
    /// With an https:// --prometheus: certificate authorities (PEM) that
    /// sign its certificate, trusted beside the system's
    #[arg(long, value_name = "FILE", requires = "prometheus")]
    pub prometheus_ca_file: Option<PathBuf>,
    /// With an https:// --prometheus: do not verify its certificate (said
    /// in the report)
    #[arg(long, requires = "prometheus")]
    pub prometheus_insecure: bool,
    /// Start of the window. Of a Recording: from its start, seconds or a
    /// duration (90s, 2m) (default: a run's measured window, or the whole
    /// recording). With --prometheus: a time (2026-11-25T10:00:00Z, Unix
    /// seconds, now-15m)
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub from: Option<String>,
    /// End of the window, as --from gives its start (with --prometheus: now)
    #[arg(
        long,
        value_name = "TIME",
        requires = "from",
        allow_hyphen_values = true
    )]
    pub to: Option<String>,
    /// With --prometheus: the time between two points of the range query
    /// [default: the window ÷ 720, at least 1s; the scrape interval or more
    /// is best]
    #[arg(long, value_name = "DURATION", requires = "prometheus", value_parser = strata_core::input::duration)]
    pub step: Option<Duration>,
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
    let report = match (&args.compare, args.recordings.as_slice(), &args.prometheus) {
        (Some(paths), _, _) => compare_recordings(paths, &options)?,
        (None, [path], _) => report_with(path, &options)?,
        (None, [], Some(prometheus)) => fleet_report(prometheus, &args, &options)?,
        (None, [], None) => bail!("give a RECORDING, --compare A B, or --prometheus URL"),
        (None, shards, _) => {
            let mut report = report_of(&merge_files(shards)?, &options)?;
            report.source.files = shards
                .iter()
                .map(|path| path.display().to_string())
                .collect();
            report
        }
    };
    crate::output::print(&args.output, &Output::document(report))?;
    Ok(0)
}

/// The window of a Recording, seconds from its start (with --prometheus,
/// the whole of the Recording made from the range).
fn window(args: &ReportArgs) -> anyhow::Result<Option<Window>> {
    if args.outlier_threshold.is_some_and(|time| time.is_zero()) {
        bail!("--outlier-threshold 0: give a latency greater than 0 (e.g. 50ms)");
    }
    if args.prometheus.is_some() {
        return Ok(None);
    }
    let offset = |option: &str, text: &str| {
        strata_core::input::duration(text)
            .map(|time| time.as_secs_f64())
            .map_err(|error| {
                anyhow::anyhow!("{option} {text}: {error} (seconds from the recording's start)")
            })
    };
    Ok(match (&args.from, &args.to) {
        (Some(from), Some(to)) => Some(Window {
            from_s: offset("--from", from)?,
            to_s: offset("--to", to)?,
        }),
        (Some(_), None) => bail!("--from: give --to with it (the window's end)"),
        _ => None,
    })
}

/// The report of every host a Prometheus server scraped between --from and
/// --to, reached as --prometheus's options say.
fn fleet_report(
    prometheus: &Endpoint,
    args: &ReportArgs,
    options: &ReportOptions,
) -> anyhow::Result<strata_output::document::Report> {
    let mut prometheus = prometheus.clone();
    Access {
        option: "--prometheus",
        basic_auth_file: args.prometheus_basic_auth_file.clone(),
        basic_auth_env: PROMETHEUS_BASIC_AUTH_ENV,
        ca_file: args.prometheus_ca_file.clone(),
        insecure: args.prometheus_insecure,
    }
    .apply(std::slice::from_mut(&mut prometheus))?;
    let range = Range::of_options(args.from.as_deref(), args.to.as_deref(), args.step)?;
    let command = crate::engines::redacted_command_line();
    strata_observe::fleet_report::report(&prometheus, range, command, options)
}
