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
use strata_agent::query::{Range, MOST_POINTS};
use strata_output::args::OutputArgs;
use strata_output::document::{Fact, Window};
use strata_output::Output;
use strata_report::recording::{
    compare_recordings, report_of, report_of_samples, report_with, ReportOptions, TimelineBuilder,
};
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
/// --to.
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
    let range = prometheus_range(args)?;
    let command = crate::engines::redacted_command_line();
    let series = strata_observe::fleet::query(&prometheus, range)?;
    let (mut samples, mut steps) = (TimelineBuilder::default(), 0);
    let fleet = strata_observe::fleet::fleet(&series, &mut |sample| {
        samples.push(&sample);
        steps += 1;
    });
    drop(series);
    let recording = strata_observe::fleet::recording(&prometheus, range, &fleet, command)?;
    let mut report = report_of_samples(&recording, samples, options)?;
    report.source.files = vec![prometheus.to_string()];
    let hosts: Vec<String> = fleet
        .hosts
        .iter()
        .map(|(host, chosen)| {
            let missing = match chosen.missing_steps {
                0 => String::new(),
                missing => format!(", no sample at {missing} of {steps} steps"),
            };
            format!("{host} ({} {}{missing})", chosen.agent_kind, chosen.target)
        })
        .collect();
    report.about.extend([
        Fact::new(
            "Prometheus",
            format!(
                "{prometheus} ({}): range query from {} to {} UTC, step {:.3} s (the \
                 Prometheus server's clock; values as it scraped them)",
                prometheus.transport(),
                utc(range.start_unix_s),
                utc(range.end_unix_s),
                range.step_s
            ),
        ),
        Fact::new("hosts", hosts.join(", ")),
    ]);
    report.problems.extend(fleet.notes);
    Ok(report)
}

/// --from, --to and --step as a range query Prometheus accepts.
fn prometheus_range(args: &ReportArgs) -> anyhow::Result<Range> {
    let instant = |option: &str, text: Option<&str>| {
        strata_core::input::instant(text.unwrap_or("now"))
            .map_err(|error| anyhow::anyhow!("{option}: {error}"))
    };
    let start_unix_s = instant("--from", args.from.as_deref())?;
    let end_unix_s = instant("--to", args.to.as_deref())?;
    let length_s = end_unix_s - start_unix_s;
    if length_s <= 0.0 {
        bail!("--from must be before --to (the window is {length_s:.3} s)");
    }
    let step_s = match args.step {
        Some(step) => step.as_secs_f64(),
        None => (length_s / 720.0).max(1.0),
    };
    if step_s <= 0.0 || length_s / step_s > MOST_POINTS {
        bail!(
            "--step {step_s} s: give a step above 0 that divides the {length_s:.0} s window \
             into at most {MOST_POINTS} points (Prometheus's limit)"
        );
    }
    Ok(Range {
        start_unix_s,
        end_unix_s,
        step_s,
    })
}

/// Unix seconds as RFC 3339 UTC, to the second.
fn utc(unix_s: f64) -> String {
    let time = std::time::UNIX_EPOCH + Duration::from_secs_f64(unix_s.max(0.0));
    humantime::format_rfc3339_seconds(time).to_string()
}
