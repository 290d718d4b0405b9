//! Recordings of one kind side by side (A, B, C…), so that a reader sees
//! what changed and why: first the settings that differ (engine, data set,
//! sessions, caches, window, host, device), then the figures with each
//! Recording's change from A (per operation and per layer for runs, point
//! by point for calibrations, the load profile for every kind), findings
//! that explain the change, and the runs' per-second series and latency
//! histograms on shared charts.
//!
//! Not for: one Recording's report (`super`), the findings of one window
//! (`crate::findings`; compare's own are in `explain`), or rendering.

mod charts;
mod compared;
mod explain;
mod operations;
mod points;
mod profile;
mod settings;

use super::measured::Measured;
use super::{measured_of, report_of, timeline_of, ReportOptions};
use anyhow::bail;
use std::path::PathBuf;
use strata_output::document::{Fact, Finding, Report};
use strata_recording::{Kind, Recording};

/// One compared Recording: its mark, what it holds, its own report and its
/// window's totals per layer.
pub(super) struct Side {
    /// `A`, `B`, `C`…
    pub mark: String,
    pub recording: Recording,
    pub report: Report,
    pub measured: Measured,
}

/// `A` for the first Recording, `B` for the second…
fn mark(index: usize) -> String {
    match u8::try_from(index).ok().filter(|index| *index < 26) {
        Some(index) => char::from(b'A' + index).to_string(),
        None => format!("#{}", index + 1),
    }
}

/// Every Recording is of one kind, or the error names each one's.
fn check_one_kind(recordings: &[Recording]) -> anyhow::Result<Kind> {
    let kind = recordings[0].header.kind;
    if recordings
        .iter()
        .all(|recording| recording.header.kind == kind)
    {
        return Ok(kind);
    }
    let kinds: Vec<String> = recordings
        .iter()
        .enumerate()
        .map(|(index, recording)| {
            let kind = recording.header.kind;
            let article = match kind {
                Kind::Observe => "an",
                Kind::Run | Kind::Calibrate => "a",
            };
            format!(
                "{} {} is {article} {kind} Recording",
                mark(index),
                recording.path.display(),
            )
        })
        .collect();
    bail!(
        "--compare compares Recordings of one kind (runs with runs, calibrations with \
         calibrations): {}",
        kinds.join(", ")
    )
}

fn side(index: usize, recording: Recording, options: &ReportOptions) -> anyhow::Result<Side> {
    let (timeline, length_s) = timeline_of(&recording, options)
        .map_err(|error| error.context(recording.path.display().to_string()))?;
    let mut report = report_of(&recording, options)?;
    report.source.files = vec![recording.path.display().to_string()];
    let measured = measured_of(&recording, &timeline, options, length_s);
    Ok(Side {
        mark: mark(index),
        recording,
        report,
        measured,
    })
}

/// The Recordings, once they are two or more of one kind, each with its
/// report and measured window.
fn read_sides(paths: &[PathBuf], options: &ReportOptions) -> anyhow::Result<(Kind, Vec<Side>)> {
    if paths.len() < 2 {
        bail!("--compare needs two or more Recordings (A B …)");
    }
    let recordings = paths
        .iter()
        .map(|path| Recording::read(path))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let kind = check_one_kind(&recordings)?;
    let sides = recordings
        .into_iter()
        .enumerate()
        .map(|(index, recording)| side(index, recording, options))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok((kind, sides))
}

/// Two or more Recordings of one kind compared, A (the first) against each
/// of the others.
pub fn compare_recordings(paths: &[PathBuf], options: &ReportOptions) -> anyhow::Result<Report> {
    let (kind, sides) = read_sides(paths, options)?;
    let files = paths
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    let mut report = Report::new(
        format!("strata report — compare ({kind})"),
        "compare",
        files,
    );
    let reports: Vec<&Report> = sides.iter().map(|side| &side.report).collect();
    about(&mut report, &reports, &marks(&sides));
    report.sections.push(settings::section(&sides));
    match kind {
        Kind::Run => {
            report.sections.push(operations::section(&sides));
            report.figures = operations::figures(&sides);
        }
        Kind::Calibrate => report.sections.push(points::section(&sides)),
        Kind::Observe => {}
    }
    report
        .sections
        .push(profile::section(&reports, &marks(&sides)));
    if kind == Kind::Run {
        report.sections.extend(charts::sections(&sides));
    }
    report.findings = explain::findings(&sides);
    for side in &sides {
        report
            .findings
            .extend(marked(&side.report.findings, &side.mark));
    }
    Ok(report)
}

fn marks(sides: &[Side]) -> Vec<String> {
    sides.iter().map(|side| side.mark.clone()).collect()
}

/// Each report's file and facts, and its problems, marked `A:`, `B:`…
fn about(report: &mut Report, reports: &[&Report], marks: &[String]) {
    for (mark, side) in marks.iter().zip(reports) {
        report.about.push(Fact::new(
            mark.as_str(),
            format!("{} ({})", side.source.files.join(", "), side.title),
        ));
        for fact in &side.about {
            report.about.push(Fact::new(
                format!("{mark}: {}", fact.label),
                fact.value.clone(),
            ));
        }
        report.problems.extend(
            side.problems
                .iter()
                .map(|problem| format!("{mark}: {problem}")),
        );
    }
}

fn marked(findings: &[Finding], mark: &str) -> Vec<Finding> {
    findings
        .iter()
        .map(|finding| Finding {
            title: format!("{mark}: {}", finding.title),
            ..finding.clone()
        })
        .collect()
}

/// `before` (A) and `after` (B), two finished reports of any source with a
/// load profile, side by side: their per-second figures and findings.
pub fn compare(before: &Report, after: &Report) -> Report {
    let files = before
        .source
        .files
        .iter()
        .chain(&after.source.files)
        .cloned()
        .collect();
    let mut report = Report::new("strata report — compare", "compare", files);
    let marks = ["A".to_string(), "B".to_string()];
    about(&mut report, &[before, after], &marks);
    report
        .sections
        .push(profile::section(&[before, after], &marks));
    report.findings = marked(&before.findings, "A");
    report.findings.extend(marked(&after.findings, "B"));
    report
}
