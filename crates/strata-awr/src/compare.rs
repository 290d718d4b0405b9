//! Two reports side by side: the headline figures of each, the change, the
//! key wait averages, and each report's findings and problems marked A or B.
//!
//! Not for: more than two reports (see `series`).

use crate::build::KEY_EVENTS;
use crate::figures::LoadFigures;
use crate::model::AwrReport;
use strata_output::document::{Cell, Column, Fact, Report, Section, Table};

/// A headline figure: its label, unit and value in one report.
pub struct Headline {
    pub label: &'static str,
    pub unit: &'static str,
    pub value: Option<f64>,
}

/// The figures compared and charted, in order.
pub fn headlines(awr: &AwrReport) -> Vec<Headline> {
    let load = LoadFigures::of(awr);
    let per_s = |rate: &Option<crate::figures::Rate>, scale: f64| {
        rate.as_ref().map(|rate| rate.per_second / scale)
    };
    let average = |name: &str| {
        awr.foreground_event(name)
            .and_then(|event| event.average_ms())
    };
    let log_write = awr
        .background_event("log file parallel write")
        .and_then(|event| event.average_ms());
    let single_block =
        average("db file sequential read").or_else(|| average("cell single block physical read"));
    let line = |label, unit, value| Headline { label, unit, value };
    vec![
        line(
            "Read requests/s",
            "requests/s",
            per_s(&load.read_requests, 1.0),
        ),
        line("Blocks read/s", "blocks/s", per_s(&load.blocks_read, 1.0)),
        line("Read MB/s", "MB/s", per_s(&load.read_bytes, 1e6)),
        line(
            "Write requests/s",
            "requests/s",
            per_s(&load.write_requests, 1.0),
        ),
        line("Write MB/s", "MB/s", per_s(&load.write_bytes, 1e6)),
        line("Redo MB/s", "MB/s", per_s(&load.redo_bytes, 1e6)),
        line("Commits/s", "commits/s", per_s(&load.commits, 1.0)),
        line("log file sync", "ms", average("log file sync")),
        line("log file parallel write", "ms", log_write),
        line("single-block read", "ms", single_block),
    ]
}

/// Reports `a` and `b` compared.
pub fn report(a: &AwrReport, b: &AwrReport) -> Report {
    let mut report = Report::new(
        format!("strata awr — compare {} with {}", a.name, b.name),
        "compare",
        vec![a.name.clone(), b.name.clone()],
    );
    for (mark, awr) in [("A", a), ("B", b)] {
        report.about.push(Fact::new(mark, describe(awr)));
        let figures = crate::figures::named_figures(awr, Some(mark));
        report.figures.extend(figures);
    }
    report.sections.push(load_profile(a, b));
    report.sections.push(key_waits(a, b));
    for (mark, awr) in [("A", a), ("B", b)] {
        for mut finding in crate::build::findings(awr) {
            finding.title = format!("{mark}: {}", finding.title);
            report.findings.push(finding);
        }
        let problems = awr
            .problems
            .iter()
            .map(|problem| format!("{mark} ({}): {problem}", awr.name));
        report.problems.extend(problems);
    }
    report
}

fn describe(awr: &AwrReport) -> String {
    let header = &awr.header;
    let end = header
        .end_snap
        .as_ref()
        .map(|snap| snap.time.clone())
        .unwrap_or_default();
    format!(
        "{} — {} {} {}",
        awr.name,
        header.database.as_deref().unwrap_or("?"),
        header.release.as_deref().unwrap_or(""),
        end
    )
}

fn comparison_table() -> Table {
    Table::new(
        None,
        vec![
            Column::text("Figure"),
            Column::number("A", None),
            Column::number("B", None),
            Column::number("Change", Some("%")),
            Column::text("Unit"),
        ],
    )
}

fn push_pair(table: &mut Table, label: &str, unit: &str, a: Option<f64>, b: Option<f64>) {
    let cell =
        |value: Option<f64>| value.map_or_else(Cell::empty, |value| Cell::number(value, 3, unit));
    let change = match (a, b) {
        (Some(a), Some(b)) if a != 0.0 => Cell::number((b - a) / a * 100.0, 1, "%"),
        _ => Cell::empty(),
    };
    table.push(vec![
        Cell::text(label),
        cell(a),
        cell(b),
        change,
        Cell::text(unit),
    ]);
}

fn load_profile(a: &AwrReport, b: &AwrReport) -> Section {
    let mut table = comparison_table();
    for (first, second) in headlines(a).into_iter().zip(headlines(b)) {
        push_pair(
            &mut table,
            first.label,
            first.unit,
            first.value,
            second.value,
        );
    }
    Section::new("load_profile", "Load profile, A and B")
        .table(table)
        .note(
            "Change is (B − A) ÷ A. Requests are I/O calls, blocks are database blocks, \
         MB = 10^6 bytes.",
        )
}

fn key_waits(a: &AwrReport, b: &AwrReport) -> Section {
    let mut table = comparison_table();
    let average = |awr: &AwrReport, name: &str| {
        let event = if name.starts_with("log file parallel") {
            awr.background_event(name)
        } else {
            awr.foreground_event(name)
        };
        event.and_then(|event| event.average_ms())
    };
    for name in KEY_EVENTS {
        let (first, second) = (average(a, name), average(b, name));
        if first.is_some() || second.is_some() {
            push_pair(&mut table, name, "ms", first, second);
        }
    }
    Section::new("top_waits", "I/O and commit wait averages, A and B").table(table)
}
