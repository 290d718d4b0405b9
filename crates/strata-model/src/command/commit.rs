//! `strata model commit`: an average commit wait broken into log write I/O,
//! the log writer's CPU and the remainder (waking the session, the run
//! queue), from the waits given or those measured.
//!
//! Not for: the breakdown arithmetic itself ([`crate::commit`]) or reading
//! the measured waits (strata-awr's `measured`).

use super::{ms, number, Page};
use crate::commit::{self, CommitBreakdown};
use anyhow::Context;
use std::time::Duration;
use strata_output::document::{Cell, Column, Figure};
use strata_output::Output;

/// What `strata model commit` was asked.
#[derive(Debug, Clone, Default)]
pub struct CommitRequest {
    /// Average commit wait; `None` takes the measured one.
    pub commit_wait: Option<Duration>,
    /// Average log write I/O time; `None` takes the measured one.
    pub log_write_io: Option<Duration>,
    /// The log writer's own CPU time per write.
    pub log_writer_cpu: Duration,
    /// The waits measured, when they were read.
    pub measured: Option<MeasuredCommit>,
    pub explain: bool,
}

/// The average commit wait and log write time as measured, with what the
/// source calls each one.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredCommit {
    pub commit_wait_ms: f64,
    pub commit_label: String,
    pub log_write_ms: f64,
    pub log_write_label: String,
}

/// Runs `strata model commit`.
pub fn run(request: &CommitRequest) -> anyhow::Result<Output> {
    let measured = request.measured.as_ref();
    let from_ms = |ms: f64| Duration::from_secs_f64(ms / 1e3);
    let commit_wait = request
        .commit_wait
        .or(measured.map(|inputs| from_ms(inputs.commit_wait_ms)))
        .context("--commit-wait: give the average commit wait")?;
    let log_write_io = request
        .log_write_io
        .or(measured.map(|inputs| from_ms(inputs.log_write_ms)))
        .context("--log-write-io: give the average log write time")?;
    let result = commit::breakdown(
        commit_wait.as_secs_f64(),
        log_write_io.as_secs_f64(),
        request.log_writer_cpu.as_secs_f64(),
    )?;
    let columns = vec![
        Column::text("part"),
        number("time", "ms"),
        number("share", "%"),
    ];
    let mut page = Page::new("Commit wait breakdown", columns);
    if let Some(inputs) = measured {
        measured_waits(&mut page, inputs);
    }
    print_breakdown(&mut page, &result);
    if request.explain {
        page.note(format!(
            "  remainder = wait − I/O − CPU = {:.3} − {:.3} − {:.3} ms = {:.3} ms",
            ms(commit_wait.as_secs_f64()),
            ms(log_write_io.as_secs_f64()),
            ms(request.log_writer_cpu.as_secs_f64()),
            ms(result.remainder_s)
        ));
    }
    page.finish(&result)
}

fn measured_waits(page: &mut Page, inputs: &MeasuredCommit) {
    page.note(format!(
        "measured: {} {:.3} ms; {} {:.3} ms",
        inputs.commit_label, inputs.commit_wait_ms, inputs.log_write_label, inputs.log_write_ms
    ));
    let waits = [
        (
            "commit_wait_ms",
            inputs.commit_wait_ms,
            &inputs.commit_label,
        ),
        ("log_write_ms", inputs.log_write_ms, &inputs.log_write_label),
    ];
    for (name, value, label) in waits {
        let mut figure = Figure::new(name, value, "ms", "database");
        figure.source_label = Some(label.clone());
        page.figure(figure);
    }
}

fn print_breakdown(page: &mut Page, result: &CommitBreakdown) {
    page.line(format!("commit wait {:.3} ms:", ms(result.commit_wait_s)));
    page.line(format!(
        "  log write I/O     {:>9.3} ms  {:>5.1}%",
        ms(result.log_write_io_s),
        result.log_write_io_percent
    ));
    page.line(format!(
        "  log writer CPU    {:>9.3} ms  {:>5.1}%",
        ms(result.log_writer_cpu_s),
        result.log_writer_cpu_percent
    ));
    page.line(format!(
        "  remainder (CPU scheduling, run queue) {:.3} ms  {:.1}%",
        ms(result.remainder_s),
        result.remainder_percent
    ));
    let parts = [
        ("commit wait", result.commit_wait_s, 100.0),
        (
            "log write I/O",
            result.log_write_io_s,
            result.log_write_io_percent,
        ),
        (
            "log writer CPU",
            result.log_writer_cpu_s,
            result.log_writer_cpu_percent,
        ),
        (
            "remainder (CPU scheduling, run queue)",
            result.remainder_s,
            result.remainder_percent,
        ),
    ];
    for (part, seconds, percent) in parts {
        page.row(vec![
            Cell::text(part),
            Cell::number(ms(seconds), 3, "ms"),
            Cell::number(percent, 1, "%"),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remainder_is_what_io_and_cpu_leave() {
        let request = CommitRequest {
            commit_wait: Some(Duration::from_millis(101)),
            log_write_io: Some(Duration::from_millis(37)),
            log_writer_cpu: Duration::from_micros(2300),
            measured: None,
            explain: true,
        };
        let output = run(&request).unwrap();
        let text = output.text.unwrap();
        assert!(text.starts_with("commit wait 101.000 ms:\n"), "{text}");
        assert!(
            text.contains("= 101.000 − 37.000 − 2.300 ms = 61.700 ms"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&output.json.unwrap()).unwrap();
        assert!((json["remainder_s"].as_f64().unwrap() - 0.0617).abs() < 1e-9);
    }

    #[test]
    fn measured_waits_fill_what_is_not_given_and_come_first() {
        let request = CommitRequest {
            measured: Some(MeasuredCommit {
                commit_wait_ms: 36.11,
                commit_label: "log file sync (average)".into(),
                log_write_ms: 32.35,
                log_write_label: "log file parallel write (average)".into(),
            }),
            ..CommitRequest::default()
        };
        let output = run(&request).unwrap();
        assert!(output
            .text
            .unwrap()
            .starts_with("measured: log file sync (average) 36.110 ms;"));
        assert_eq!(output.document.unwrap().figures.len(), 2);
        let Err(missing) = run(&CommitRequest::default()) else {
            panic!("ran without a commit wait");
        };
        assert_eq!(
            missing.to_string(),
            "--commit-wait: give the average commit wait"
        );
    }
}
