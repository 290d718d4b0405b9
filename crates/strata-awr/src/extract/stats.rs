//! The Load Profile, Instance Activity Stats (System Statistics (Global) in
//! a RAC report) and the RAC per-instance System Statistics - Per Second.

use std::collections::BTreeMap;

use crate::model::{ActivityStat, AwrReport, ProfileRow};
use crate::number::number;
use crate::table::{cell, RawTable};

pub fn read(tables: &[RawTable], report: &mut AwrReport) {
    for table in tables {
        if is_load_profile(table) && report.load_profile.is_empty() {
            report.load_profile = load_profile(table);
        } else if is_activity(table) {
            activity(table, &mut report.activity);
        } else if table.title.starts_with("System Statistics - Per Second")
            && report.rac_per_second.is_empty()
        {
            report.rac_per_second = per_instance(table);
        }
    }
}

fn is_load_profile(table: &RawTable) -> bool {
    table.titled("load profile")
        && !table.titled("global cache")
        && table.column("Per Second").is_some()
}

fn load_profile(table: &RawTable) -> Vec<ProfileRow> {
    let per_second = table.column("Per Second");
    let per_transaction = table.column("Per Transaction");
    table
        .rows
        .iter()
        .filter_map(|row| {
            let label = cell(row, Some(0)).trim_end_matches(':').trim();
            (!label.is_empty()).then(|| ProfileRow {
                label: label.to_string(),
                per_second: number(cell(row, per_second)),
                per_transaction: number(cell(row, per_transaction)),
            })
        })
        .collect()
}

fn is_activity(table: &RawTable) -> bool {
    (table.titled("activity") || table.titled("System Statistics (Global)"))
        && !table.titled("Messaging")
        && table.has_columns(&["Statistic", "Total", "per Second"])
}

fn activity(table: &RawTable, stats: &mut BTreeMap<String, ActivityStat>) {
    let name = table.column("Statistic");
    let total = table.column_named("Total");
    let per_second = table.column("per Second");
    let per_transaction = table.column("per Trans");
    for row in &table.rows {
        let statistic = cell(row, name);
        if statistic.is_empty() {
            continue;
        }
        stats.entry(statistic.to_string()).or_insert(ActivityStat {
            total: number(cell(row, total)),
            per_second: number(cell(row, per_second)),
            per_transaction: number(cell(row, per_transaction)),
        });
    }
}

fn per_instance(table: &RawTable) -> Vec<(String, BTreeMap<String, f64>)> {
    table
        .rows
        .iter()
        .filter_map(|row| {
            let label = cell(row, Some(0)).to_string();
            let values = table
                .header
                .iter()
                .zip(row.iter())
                .skip(1)
                .filter_map(|(heading, value)| Some((heading.clone(), number(value)?)))
                .collect();
            (!label.is_empty()).then_some((label, values))
        })
        .collect()
}
