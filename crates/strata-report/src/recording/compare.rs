//! Two reports side by side: the load profile's per-second figures of A
//! and B with the change, and both reports' findings, each marked A: or B:.
//!
//! Not for: reading recordings; it works on finished reports, so any two
//! sources with a load profile compare.

use super::sections::number;
use strata_output::document::{Cell, Column, Fact, Finding, Report, Section, Table};

/// (metric with its unit per second, layer, value per second).
fn per_second_rows(report: &Report) -> Vec<(String, String, Option<f64>)> {
    let Some(table) = report
        .section("load_profile")
        .and_then(|section| section.tables().next())
    else {
        return Vec::new();
    };
    let column = |name: &str| table.columns.iter().position(|column| column.name == name);
    let (Some(metric), Some(unit), Some(layer), Some(per_s)) = (
        column("metric"),
        column("unit"),
        column("layer"),
        column("per second"),
    ) else {
        return Vec::new();
    };
    table
        .rows
        .iter()
        .map(|row| {
            let label = format!("{} ({}/s)", row[metric].text, row[unit].text);
            (label, row[layer].text.clone(), row[per_s].value)
        })
        .collect()
}

fn change_pct(before: Option<f64>, after: Option<f64>) -> Option<f64> {
    match (before, after) {
        (Some(a), Some(b)) if a != 0.0 => Some(100.0 * (b - a) / a.abs()),
        _ => None,
    }
}

fn load_profile(before: &Report, after: &Report) -> Section {
    let mut rows = per_second_rows(before);
    for row in per_second_rows(after) {
        if !rows
            .iter()
            .any(|(metric, layer, _)| *metric == row.0 && *layer == row.1)
        {
            rows.push((row.0, row.1, None));
        }
    }
    let after_rows = per_second_rows(after);
    let mut table = Table::new(
        Some("Per second, A → B"),
        vec![
            Column::text("metric"),
            Column::text("layer"),
            Column::number("A", None),
            Column::number("B", None),
            Column::number("change %", Some("%")),
        ],
    );
    for (metric, layer, a) in rows {
        let b = after_rows
            .iter()
            .find(|row| row.0 == metric && row.1 == layer)
            .and_then(|row| row.2);
        let unit = metric
            .rsplit_once('(')
            .map_or("", |(_, unit)| unit.trim_end_matches(')'))
            .to_string();
        let cell = |value: Option<f64>| value.map_or_else(Cell::empty, |v| number(v, &unit));
        table.push(vec![
            Cell::text(metric.as_str()),
            Cell::text(layer),
            cell(a),
            cell(b),
            change_pct(a, b).map_or_else(Cell::empty, |change| Cell::number(change, 1, "%")),
        ]);
    }
    Section::new("load_profile", "Load profile: A and B").table(table)
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

/// `before` (A) and `after` (B) side by side.
pub fn compare(before: &Report, after: &Report) -> Report {
    let files = before
        .source
        .files
        .iter()
        .chain(&after.source.files)
        .cloned()
        .collect();
    let mut report = Report::new("strata report — compare", "compare", files);
    for (mark, side) in [("A", before), ("B", after)] {
        report.about.push(Fact::new(
            mark,
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
    report.sections.push(load_profile(before, after));
    report.findings = marked(&before.findings, "A");
    report.findings.extend(marked(&after.findings, "B"));
    report
}
