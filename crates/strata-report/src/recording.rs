//! Builds a [`Report`] from a Recording written by `strata run`,
//! `strata calibrate` or `strata observe`, for a window of it, and compares
//! Recordings of one kind (`compare`).
//!
//! Every kind of recording is first reduced to one [`measured::Measured`]
//! window (totals per layer), from which the shared sections and the
//! findings' [`crate::findings::WindowFigures`] are made; the run's latency
//! and calibrate's curves come from their own records.
//!
//! Not for: rendering (strata-output) or deciding findings
//! (`crate::findings`).

mod block_requests;
mod calibrate;
mod compare;
mod figures;
mod hosts;
mod latency;
mod layers;
mod measured;
mod nfs_findings;
mod observe;
mod run;
mod samples;
mod sections;
mod shards;
mod sweep;
mod time_series;

pub use compare::{compare, compare_recordings};
pub use samples::TimelineBuilder;

use crate::findings::WindowFigures;
use anyhow::bail;
use measured::Measured;
use samples::Timeline;
use std::path::Path;
use strata_core::verdict::Verdict;
use strata_output::document::{Fact, Report, Section, Window};
use strata_recording::environment::ServerHost;
use strata_recording::{Environment, Kind, Recording};

/// The default threshold for outliers and device await spikes, ms.
pub const DEFAULT_OUTLIER_THRESHOLD_MS: f64 = 500.0;

/// What to report on, beyond the file.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReportOptions {
    /// Seconds from the recording's start; `None`: a run's measured window,
    /// or the whole of a calibrate or observe recording.
    pub window: Option<Window>,
    /// I/Os and device awaits slower than this are outliers, ms; `None`:
    /// calibrate's own `--outlier`, else 500 ms.
    pub outlier_threshold_ms: Option<f64>,
}

/// The report of one Recording, over `window` (seconds from its start) or
/// the whole of it.
pub fn report_from_recording(path: &Path, window: Option<Window>) -> anyhow::Result<Report> {
    report_with(
        path,
        &ReportOptions {
            window,
            outlier_threshold_ms: None,
        },
    )
}

/// The report of one Recording with `options`.
pub fn report_with(path: &Path, options: &ReportOptions) -> anyhow::Result<Report> {
    let recording = Recording::read(path)?;
    let mut report = report_of(&recording, options)?;
    report.source.files = vec![path.display().to_string()];
    Ok(report)
}

/// The report of a Recording already read, or made in memory.
pub fn report_of(recording: &Recording, options: &ReportOptions) -> anyhow::Result<Report> {
    let (timeline, length_s) = timeline_of(recording, options)?;
    report_over(recording, timeline, length_s, options)
}

/// The report of `recording`'s header and the layer samples pushed into
/// `samples` instead of its own (a fleet's, from what a Prometheus server
/// recorded: pushed as they are made, none kept whole).
pub fn report_of_samples(
    recording: &Recording,
    samples: TimelineBuilder,
    options: &ReportOptions,
) -> anyhow::Result<Report> {
    let (timeline, length_s) = checked(recording, samples.timeline(), options)?;
    report_over(recording, timeline, length_s, options)
}

fn report_over(
    recording: &Recording,
    timeline: Timeline,
    length_s: f64,
    options: &ReportOptions,
) -> anyhow::Result<Report> {
    let mut report = match recording.header.kind {
        Kind::Run => run_report(recording, &timeline, options, length_s),
        Kind::Calibrate => calibrate_report(recording, &timeline, options, length_s),
        Kind::Observe => observe_report(recording, &timeline, options, length_s),
    };
    report.problems.extend(recording.truncated.clone());
    let verdict_first = usize::from(
        report
            .about
            .first()
            .is_some_and(|fact| fact.label == "verdict"),
    );
    report.about.splice(
        verdict_first..verdict_first,
        header_facts(recording, length_s),
    );
    Ok(report)
}

/// The figures the findings of one Recording's report rest on (its window's
/// totals per layer), for tools that compute from measured figures, such as
/// `strata model --from`.
pub fn figures_with(path: &Path, options: &ReportOptions) -> anyhow::Result<WindowFigures> {
    let recording = Recording::read(path)?;
    let (timeline, length_s) = timeline_of(&recording, options)?;
    let measured = measured_of(&recording, &timeline, options, length_s);
    Ok(figures::window_figures(&measured))
}

/// The recording's window (`options`' or its own) reduced to totals per
/// layer, whatever its kind.
fn measured_of(
    recording: &Recording,
    timeline: &Timeline,
    options: &ReportOptions,
    length_s: f64,
) -> Measured {
    let threshold_ms = threshold(options, recording);
    let window = whole_unless(options.window, length_s);
    match recording.header.kind {
        Kind::Run => run_measured(recording, timeline, options, length_s).0,
        Kind::Calibrate => {
            let points = calibrate::points_in(calibrate::points(recording), window);
            calibrate::measured(recording, timeline, &points, window, threshold_ms)
        }
        Kind::Observe => observe::measured(recording, timeline, window, threshold_ms),
    }
}

/// The recording's timeline and its length in seconds, once the options'
/// window is known to lie within it.
fn timeline_of(recording: &Recording, options: &ReportOptions) -> anyhow::Result<(Timeline, f64)> {
    checked(recording, Timeline::of(recording), options)
}

/// `timeline` and its length, once `options`' window is checked to fall
/// in it.
fn checked(
    recording: &Recording,
    timeline: Timeline,
    options: &ReportOptions,
) -> anyhow::Result<(Timeline, f64)> {
    let length_s = length_s(recording, &timeline);
    if let Some(window) = options.window {
        check_window(window, length_s)?;
    }
    Ok((timeline, length_s))
}

/// `window`, or the whole recording.
fn whole_unless(window: Option<Window>, length_s: f64) -> Window {
    window.unwrap_or(Window {
        from_s: 0.0,
        to_s: length_s,
    })
}

/// How long the recording is, seconds: its last layer sample, or the end
/// of its last measured window.
fn length_s(recording: &Recording, timeline: &Timeline) -> f64 {
    let run_end = run::measured_window(recording).map(|window| window.to_s);
    let points_end = calibrate::points(recording)
        .last()
        .map(|point| point.window.to_s);
    [timeline.length_s(), run_end, points_end]
        .into_iter()
        .flatten()
        .fold(0.0, f64::max)
}

fn check_window(window: Window, length_s: f64) -> anyhow::Result<()> {
    let range = format!("the recording covers 0 to {length_s:.1} s");
    if !(window.from_s >= 0.0 && window.from_s < length_s) {
        bail!(
            "--from {} s is outside the recording: {range}",
            window.from_s
        );
    }
    if !(window.to_s > 0.0 && window.to_s <= length_s + 0.05) {
        bail!("--to {} s is outside the recording: {range}", window.to_s);
    }
    if window.from_s >= window.to_s {
        bail!(
            "--from {} s must be before --to {} s ({range})",
            window.from_s,
            window.to_s
        );
    }
    Ok(())
}

/// The header's facts; a Recording made in memory from a Prometheus
/// server says so, and its host is the one that asked.
fn header_facts(recording: &Recording, length_s: f64) -> Vec<Fact> {
    let header = &recording.header;
    let host = &header.host;
    let (made, host_label) = match &recording.header.environment.prometheus {
        Some(url) => (
            format!("none: made in memory from the answer of Prometheus {url}"),
            "queried from",
        ),
        None => (
            format!("strata {} (strata {})", header.kind, header.strata_version),
            "host",
        ),
    };
    vec![
        Fact::new("recording", made),
        Fact::new("created", header.created.clone()),
        Fact::new(
            host_label,
            format!(
                "{}, Linux {}, {} CPUs, {:.1} GiB memory",
                host.hostname,
                host.kernel,
                host.cpus,
                host.memory_bytes as f64 / (1u64 << 30) as f64
            ),
        ),
        Fact::new("command", header.command.join(" ")),
        Fact::new("recording length", format!("{length_s:.1} s")),
    ]
}

/// `--outlier-threshold`, else the one the recording was made with
/// (calibrate's `--outlier`, a run's chosen threshold), else 500 ms.
fn threshold(options: &ReportOptions, recording: &Recording) -> f64 {
    let recorded = recording
        .header
        .options
        .outlier_us
        .map(|us| us / 1e3)
        .or_else(|| {
            run::result(recording)
                .map(|result| result.outliers.threshold_ms)
                .filter(|threshold_ms| *threshold_ms > 0.0)
        });
    options
        .outlier_threshold_ms
        .or(recorded)
        .unwrap_or(DEFAULT_OUTLIER_THRESHOLD_MS)
}

/// Shortest span printed as a span: below it, a window is empty.
const EMPTY_SPAN_S: f64 = 0.001;

/// "5.0 to 45.0 s"; with milliseconds when the span is under a second, so
/// that a short window never reads "5.0 to 5.0 s"; "an empty window at
/// 5.0 s" when nothing was measured.
pub(crate) fn span_text(from_s: f64, to_s: f64) -> String {
    let length_s = to_s - from_s;
    if length_s < EMPTY_SPAN_S {
        format!("an empty window at {from_s:.1} s")
    } else if length_s < 1.0 {
        format!("{from_s:.3} to {to_s:.3} s")
    } else {
        format!("{from_s:.1} to {to_s:.1} s")
    }
}

/// "Over 40.0 s." for the notes of rate tables, or that there are no rates.
pub(crate) fn over_text(window_s: f64) -> String {
    if window_s < EMPTY_SPAN_S {
        "No time was measured, so there are no rates (every rate shows 0).".to_string()
    } else if window_s < 1.0 {
        format!("Over {window_s:.3} s.")
    } else {
        format!("Over {window_s:.1} s.")
    }
}

fn window_fact(report: &mut Report, measured: &Measured, what: &str) {
    let window = measured.window;
    report.source.window = Some(window);
    report.about.push(Fact::new(
        "window",
        format!(
            "{} from the recording's start ({what})",
            span_text(window.from_s, window.to_s)
        ),
    ));
}

/// The sections every recording has, around its own `latency` and extra
/// sections, and the findings.
fn assemble(
    mut report: Report,
    measured: &Measured,
    hosts: Option<Section>,
    middle: Vec<Section>,
    time_series: Section,
) -> Report {
    report.sections.push(sections::load_profile(measured));
    report.sections.push(sections::top_waits(measured));
    report.sections.push(sections::io_by_layer(measured));
    report.sections.extend(hosts);
    report.sections.extend(middle);
    report.sections.push(time_series);
    report.sections.push(sections::outliers(measured));
    report.findings = crate::findings::evaluate(&figures::window_figures(measured));
    report
}

/// The run's verdict as its result record holds it: `valid`, `not a
/// storage result: …` or `failed: …` with every reason or cause.
fn run_verdict(recording: &Recording) -> Option<String> {
    Some(verdict_text(&run::result(recording)?.verdict))
}

/// A calibration's verdict, from its summary record; `None` for one that
/// has no summary (interrupted before its end).
fn calibrate_verdict(recording: &Recording) -> Option<String> {
    Some(verdict_text(&recording.summary()?.verdict))
}

/// "valid", or the verdict's name and its reasons or causes.
fn verdict_text(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Valid => "valid".into(),
        verdict => format!("{}: {}", verdict.name(), verdict.details().join("; ")),
    }
}

/// The `stopped` event of a run stopped before its sessions ran, as a line.
fn stopped_before_the_sessions(recording: &Recording) -> Option<String> {
    let stopped = recording.stopped()?;
    Some(format!(
        "the run was stopped while {} ({}): nothing was measured",
        stopped.phase, stopped.reason
    ))
}

fn run_report(
    recording: &Recording,
    timeline: &Timeline,
    options: &ReportOptions,
    length_s: f64,
) -> Report {
    let mut report = Report::new("strata report — run", "run", Vec::new());
    let (measured, whole) = run_measured(recording, timeline, options, length_s);
    if !whole && options.window.is_none() {
        report
            .problems
            .push(match stopped_before_the_sessions(recording) {
                Some(stopped) => stopped,
                None => "the run has no result record (interrupted?): reporting its layer samples"
                    .into(),
            });
    }
    window_fact(
        &mut report,
        &measured,
        &run_window_meaning(recording, options, whole),
    );
    report
        .about
        .extend(run_facts(&recording.header.environment));
    let within = timeline.within(measured.window);
    let held = run::result(recording)
        .filter(|_| whole)
        .and_then(|result| result.page_cache_held.as_ref())
        .and_then(|held| time_series::page_cache_held(held, measured.window.from_s));
    let series = time_series::section(&within, &measured, held.into_iter().collect());
    let latency = run_latency(recording, options);
    let exact_hosts = run::result(recording)
        .filter(|result| whole && !result.other_hosts.is_empty())
        .map(|result| &result.other_hosts[..]);
    let hosts = match exact_hosts {
        Some(figures) => {
            hosts::from_run_result(figures, measured.window_s, &recording.header.environment)
        }
        None => hosts::section(&within),
    };
    let mut middle = vec![latency];
    if let Some(merged) = &recording.header.environment.merged_shards {
        report.about.extend(shards::facts(merged));
        middle.push(shards::section(merged));
    }
    if let Some(summary) = recording.sweep() {
        report.about.extend(sweep::facts(summary));
        middle.insert(0, sweep::section(summary));
    }
    let mut report = assemble(report, &measured, hosts, middle, series);
    if let Some(verdict) = run_verdict(recording) {
        report.about.insert(0, Fact::new("verdict", verdict));
    }
    report
}

/// A run's measured figures, and whether they are its result record's (the
/// whole measured window) rather than its layer samples'.
fn run_measured(
    recording: &Recording,
    timeline: &Timeline,
    options: &ReportOptions,
    length_s: f64,
) -> (Measured, bool) {
    let threshold_ms = threshold(options, recording);
    let whole = options
        .window
        .is_none()
        .then(|| run::whole(recording, timeline, threshold_ms))
        .flatten();
    match whole {
        Some(measured) => (measured, true),
        None => {
            let window = options.window.unwrap_or(Window {
                from_s: 0.0,
                to_s: length_s,
            });
            let measured = run::windowed(recording, timeline, window, threshold_ms);
            (measured, false)
        }
    }
}

fn run_window_meaning(recording: &Recording, options: &ReportOptions, whole: bool) -> String {
    let samples = "the layer samples whose interval's middle falls in it";
    match (options.window, run::measured_window(recording)) {
        (None, _) if whole => {
            "the run's measured window, figures from its result record".to_string()
        }
        (None, _) => format!("the whole recording (no result record), {samples}"),
        (Some(_), Some(run_window)) => format!(
            "{samples}; the run measured {}",
            span_text(run_window.from_s, run_window.to_s)
        ),
        (Some(_), None) => samples.to_string(),
    }
}

fn run_facts(environment: &Environment) -> Vec<Fact> {
    let engine = environment.engine_label();
    let version = match &environment.server_version {
        Some(version) => version.clone(),
        None => environment
            .server_version_num
            .map_or("?".to_string(), |number| {
                format!("{}.{}", number / 10_000, number % 10_000)
            }),
    };
    let server = format!(
        "{engine} {version} ({})",
        environment.server.as_deref().unwrap_or("")
    );
    let page_cache = environment
        .page_cache
        .as_ref()
        .map_or("unknown".to_string(), |page_cache| page_cache.in_words());
    let mut facts = vec![
        Fact::new("database", server),
        Fact::new("page cache", page_cache),
    ];
    if let Some(host) = &environment.server_host {
        facts.push(Fact::new("server host", followed_host(host)));
    }
    if !environment.other_hosts.is_empty() {
        let hosts: Vec<String> = environment.other_hosts.iter().map(followed_host).collect();
        facts.push(Fact::new("other hosts", hosts.join("; ")));
    }
    if let Some(note) = &environment.device_note {
        facts.push(Fact::new("devices", note.clone()));
    }
    facts
}

/// "db1 through its strata agent http://… (https, Basic auth as mon;
/// clock offset +0.3 ms, round trip 0.4 ms)".
fn followed_host(host: &ServerHost) -> String {
    let offset = host
        .clock_offset_ms
        .map_or("unknown".to_string(), |offset| format!("{offset:+.1} ms"));
    let transport = host
        .transport
        .as_ref()
        .map_or(String::new(), |transport| format!("{transport}; "));
    format!(
        "{} through its {} agent {} ({transport}clock offset {offset}, round trip {:.1} ms)",
        host.name, host.agent_kind, host.agent, host.round_trip_ms
    )
}

fn run_latency(recording: &Recording, options: &ReportOptions) -> Section {
    let latency = match recording.run_result() {
        Some(result) => latency::run_section(result),
        None => Section::new("latency", "Latency").note("No result record: no latency histograms."),
    };
    match options.window {
        Some(_) => latency.note(
            "Latency and commit figures are for the run's whole measured window, not the chosen one.",
        ),
        None => latency,
    }
}

fn calibrate_report(
    recording: &Recording,
    timeline: &Timeline,
    options: &ReportOptions,
    length_s: f64,
) -> Report {
    let window = whole_unless(options.window, length_s);
    let points = calibrate::points_in(calibrate::points(recording), window);
    let measured = calibrate::measured(
        recording,
        timeline,
        &points,
        window,
        threshold(options, recording),
    );
    let mut report = Report::new("strata report — calibrate", "calibrate", Vec::new());
    window_fact(
        &mut report,
        &measured,
        &format!(
            "{} points; each placed after the previous one's ramp and window",
            points.len()
        ),
    );
    let target = recording.header.environment.target.as_ref();
    report.about.push(Fact::new(
        "target",
        format!(
            "{} ({})",
            target.map_or("?", |target| target.path.as_str()),
            target.map_or("?", |target| target.kind.as_str())
        ),
    ));
    let middle = vec![
        calibrate::latency_section(&points),
        calibrate::section(recording, &points),
    ];
    let extra = vec![calibrate::latency_over_time(recording, &points)];
    let within = timeline.within(window);
    let series = time_series::section(&within, &measured, extra);
    let mut report = assemble(report, &measured, hosts::section(&within), middle, series);
    report.findings.extend(nfs_findings::findings(&points));
    if let Some(verdict) = calibrate_verdict(recording) {
        report.about.insert(0, Fact::new("verdict", verdict));
    }
    report
}

fn observe_report(
    recording: &Recording,
    timeline: &Timeline,
    options: &ReportOptions,
    length_s: f64,
) -> Report {
    let window = whole_unless(options.window, length_s);
    let measured = observe::measured(recording, timeline, window, threshold(options, recording));
    if !timeline.has_own_layers() {
        return hosts_report(timeline, &measured);
    }
    let mut report = Report::new("strata report — observe", "observe", Vec::new());
    window_fact(
        &mut report,
        &measured,
        "the samples whose interval's middle falls in it",
    );
    let hosts: Vec<String> = recording
        .header
        .environment
        .other_hosts
        .iter()
        .map(followed_host)
        .collect();
    if !hosts.is_empty() {
        report
            .about
            .push(Fact::new("other hosts", hosts.join("; ")));
    }
    let latency = Section::new("latency", "Latency")
        .note("observe times no requests of its own: the devices' await is in I/O by layer.");
    let within = timeline.within(window);
    let series = time_series::section(&within, &measured, Vec::new());
    assemble(
        report,
        &measured,
        hosts::section(&within),
        vec![latency],
        series,
    )
}

/// An observe Recording of other hosts alone (a fleet from a Prometheus
/// server): their devices and CPU, and their devices over time.
fn hosts_report(timeline: &Timeline, measured: &Measured) -> Report {
    let mut report = Report::new("strata report — hosts", "observe", Vec::new());
    window_fact(
        &mut report,
        measured,
        "the samples whose interval's middle falls in it",
    );
    let within = timeline.within(measured.window);
    report.sections.extend(hosts::section(&within));
    report.sections.extend(hosts::over_time(&within));
    report
}

#[cfg(test)]
mod tests {
    use super::{over_text, span_text};

    /// Partial figures once read "5.0 to 5.0 s" and "Over -0.0 s".
    #[test]
    fn short_and_empty_windows_say_what_they_are() {
        assert_eq!(span_text(5.0, 45.0), "5.0 to 45.0 s");
        assert_eq!(span_text(5.0, 5.02), "5.000 to 5.020 s");
        assert_eq!(span_text(5.0, 5.0), "an empty window at 5.0 s");
        assert_eq!(over_text(40.0), "Over 40.0 s.");
        assert!(over_text(-0.0001).starts_with("No time was measured"));
    }
}
