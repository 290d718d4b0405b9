//! Many reports as a time series: one row per snapshot interval (ordered
//! by end snapshot time), charts of the headline figures over time, and
//! each interval's findings.
//!
//! Not for: one or two reports (see `build`, `compare`).

use crate::compare::headlines;
use crate::model::AwrReport;
use strata_output::document::{
    Axis, Cell, Chart, ChartKind, Column, Report, Section, Series, Table,
};

/// The reports as one time series.
pub fn report(reports: &[AwrReport]) -> Report {
    let mut ordered: Vec<&AwrReport> = reports.iter().collect();
    ordered.sort_by(|a, b| end_time(a).total_cmp(&end_time(b)));
    let files = ordered.iter().map(|awr| awr.name.clone()).collect();
    let mut report = Report::new(
        format!("strata awr — series of {} reports", ordered.len()),
        "series",
        files,
    );
    for awr in &ordered {
        let figures = crate::figures::named_figures(awr, Some(&awr.name));
        report.figures.extend(figures);
    }
    report.sections.push(intervals(&ordered));
    report.sections.push(charts(&ordered));
    report
        .sections
        .push(findings_per_interval(&ordered, &mut report.findings));
    for awr in &ordered {
        let problems = awr
            .problems
            .iter()
            .map(|problem| format!("{}: {problem}", awr.name));
        report.problems.extend(problems);
    }
    report
}

fn end_time(awr: &AwrReport) -> f64 {
    awr.header
        .end_snap
        .as_ref()
        .and_then(|snap| snap.epoch_s)
        .unwrap_or(f64::MAX)
}

fn interval_label(awr: &AwrReport) -> String {
    awr.header
        .end_snap
        .as_ref()
        .map(|snap| snap.time.clone())
        .filter(|time| !time.is_empty())
        .unwrap_or_else(|| awr.name.clone())
}

fn intervals(reports: &[&AwrReport]) -> Section {
    let Some(first) = reports.first() else {
        return Section::new("time_series", "Per interval");
    };
    let mut columns = vec![
        Column::text("Interval end"),
        Column::number("Elapsed", Some("s")),
    ];
    columns.extend(
        headlines(first)
            .iter()
            .map(|line| Column::number(line.label, Some(line.unit))),
    );
    columns.push(Column::text("Top wait"));
    let mut table = Table::new(None, columns);
    for awr in reports {
        table.push(interval_row(awr));
    }
    Section::new("time_series", "Per interval").table(table)
}

fn interval_row(awr: &AwrReport) -> Vec<Cell> {
    let mut row = vec![Cell::text(interval_label(awr))];
    row.push(
        awr.header
            .elapsed_s
            .map_or_else(Cell::empty, |s| Cell::number(s, 0, "s")),
    );
    for line in headlines(awr) {
        row.push(
            line.value
                .map_or_else(Cell::empty, |v| Cell::number(v, 3, line.unit)),
        );
    }
    let top = awr
        .top_events
        .iter()
        .find(|event| event.waits.is_some())
        .map(|event| event.name.clone())
        .unwrap_or_default();
    row.push(Cell::text(top));
    row
}

/// One chart per unit, x = hours since the first interval's end.
fn charts(reports: &[&AwrReport]) -> Section {
    let mut section = Section::new("time_series_charts", "Over time");
    let start = reports.first().map(|awr| end_time(awr)).unwrap_or(0.0);
    let groups = [
        ("requests_over_time", "I/O requests", "requests/s"),
        ("throughput_over_time", "Throughput", "MB/s"),
        ("wait_averages_over_time", "Wait averages", "ms"),
    ];
    for (id, title, unit) in groups {
        section = section.chart(chart(reports, start, id, title, unit));
    }
    section
}

fn chart(reports: &[&AwrReport], start: f64, id: &str, title: &str, unit: &str) -> Chart {
    let mut series: Vec<Series> = Vec::new();
    for awr in reports {
        let x = (end_time(awr) - start) / 3600.0;
        if !x.is_finite() || x.abs() > 1e9 {
            continue;
        }
        for line in headlines(awr).into_iter().filter(|line| line.unit == unit) {
            let Some(y) = line.value else { continue };
            match series
                .iter_mut()
                .find(|existing| existing.name == line.label)
            {
                Some(existing) => existing.points.push([x, y]),
                None => series.push(Series {
                    name: line.label.to_string(),
                    points: vec![[x, y]],
                }),
            }
        }
    }
    Chart {
        id: id.to_string(),
        title: title.to_string(),
        kind: ChartKind::Line,
        x: Axis {
            label: "snapshot end, hours after the first".to_string(),
            unit: "h".to_string(),
            log: false,
        },
        y: Axis {
            label: title.to_string(),
            unit: unit.to_string(),
            log: false,
        },
        series,
        marks: Vec::new(),
    }
}

fn findings_per_interval(
    reports: &[&AwrReport],
    all: &mut Vec<strata_output::document::Finding>,
) -> Section {
    let mut table = Table::new(
        None,
        vec![Column::text("Interval end"), Column::text("Findings")],
    );
    for awr in reports {
        let label = interval_label(awr);
        let found = crate::build::findings(awr);
        let ids: Vec<&str> = found.iter().map(|finding| finding.id.as_str()).collect();
        table.push(vec![Cell::text(&label), Cell::text(ids.join(", "))]);
        for mut finding in found {
            finding.title = format!("{label}: {}", finding.title);
            all.push(finding);
        }
    }
    Section::new("findings_per_interval", "Findings per interval").table(table)
}
