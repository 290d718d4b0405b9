//! The report of a fleet over a past window: the samples `fleet` makes
//! from a Prometheus server's range query, reported by strata-report as a
//! Recording's are, with the query's own facts beside them.
//!
//! Not for: the query or the samples (`fleet`) or the report's figures
//! (strata-report).

use std::time::Duration;
use strata_agent::endpoint::Endpoint;
use strata_agent::query::Range;
use strata_output::document::{Fact, Report};
use strata_report::recording::{report_of_samples, ReportOptions, TimelineBuilder};

/// The report of every host `prometheus` scraped over `range`, with the
/// query's facts: its server, its window on that server's clock, and each
/// host with the steps it has no sample at.
pub fn report(
    prometheus: &Endpoint,
    range: Range,
    command: Vec<String>,
    options: &ReportOptions,
) -> anyhow::Result<Report> {
    let series = crate::fleet::query(prometheus, range)?;
    let (mut samples, mut steps) = (TimelineBuilder::default(), 0);
    let fleet = crate::fleet::fleet(&series, &mut |sample| {
        samples.push(&sample);
        steps += 1;
    });
    drop(series);
    let recording = crate::fleet::recording(prometheus, range, &fleet, command)?;
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

/// Unix seconds as RFC 3339 UTC, to the second.
fn utc(unix_s: f64) -> String {
    let time = std::time::UNIX_EPOCH + Duration::from_secs_f64(unix_s.max(0.0));
    humantime::format_rfc3339_seconds(time).to_string()
}
