//! [load_profile] of compared reports: each report's per-second figures
//! (its own load profile's rows) side by side, with each one's change from
//! A. Works on finished reports, so any sources with a load profile
//! compare.
//!
//! Not for: per-operation or per-point figures (`operations`, `points`).

use super::compared::{table, Compared};
use strata_output::document::{Report, Section};

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

/// The section: every row any report has, in the order they first appear.
pub(super) fn section(reports: &[&Report], marks: &[String]) -> Section {
    let each: Vec<Vec<(String, String, Option<f64>)>> = reports
        .iter()
        .map(|report| per_second_rows(report))
        .collect();
    let mut keys: Vec<(String, String)> = Vec::new();
    for (metric, layer, _) in each.iter().flatten() {
        if !keys.iter().any(|key| key.0 == *metric && key.1 == *layer) {
            keys.push((metric.clone(), layer.clone()));
        }
    }
    let rows: Vec<Compared> = keys
        .iter()
        .map(|(metric, layer)| {
            let values = each
                .iter()
                .map(|rows| {
                    rows.iter()
                        .find(|row| row.0 == *metric && row.1 == *layer)
                        .and_then(|row| row.2)
                })
                .collect();
            let unit = metric
                .rsplit_once('(')
                .map_or("", |(_, unit)| unit.trim_end_matches(')'));
            Compared::new(metric.as_str(), layer, unit, values)
        })
        .collect();
    let title = format!("Per second, {}", marks.join(" → "));
    Section::new(
        "load_profile",
        format!("Load profile: {}", marks.join(", ")),
    )
    .table(table(&title, marks, &rows))
}
