//! Host CPU (one host, or each host of a cluster) and init.ora parameters.

use crate::model::{AwrReport, HostCpu};
use crate::number::number;
use crate::table::{cell, RawTable};

pub fn read(tables: &[RawTable], raw: &str, report: &mut AwrReport) {
    report.host_cpu = tables
        .iter()
        .find(|table| table.titled("OS Statistics By Instance"))
        .and_then(cluster_cpu)
        .or_else(|| tables.iter().find(|table| is_host_cpu(table)).map(host_cpu));
    if let Some(cpu) = report.host_cpu.as_mut() {
        if cpu.cpus.is_none() {
            cpu.cpus = os_statistic(tables, "NUM_CPUS")
                .or_else(|| host_table_cpus(tables))
                .or_else(|| cpus_in_text(raw));
        }
    }
    for table in tables {
        if table.has_columns(&["Parameter Name", "Begin value"]) {
            parameters(table, report);
        }
    }
}

fn is_host_cpu(table: &RawTable) -> bool {
    (table.titled("Host CPU") || table.titled("system load statistics"))
        && table.column("Idle").is_some()
}

fn host_cpu(table: &RawTable) -> HostCpu {
    let row = table.rows.first().map(Vec::as_slice).unwrap_or(&[]);
    HostCpu {
        cpus: number(cell(row, table.column_named("CPUs"))),
        idle_pct: number(cell(row, table.column("Idle"))),
        load_begin: number(cell(row, table.column("Begin"))),
        load_end: number(cell(row, table.column("End"))),
    }
}

/// RAC: CPUs summed over the hosts, idle weighted by their CPUs.
fn cluster_cpu(table: &RawTable) -> Option<HostCpu> {
    let cpus_column = table.column("CPUs");
    let idle_column = table.column("Idl");
    let mut cpus = 0.0;
    let mut idle_weighted = 0.0;
    for row in &table.rows {
        if number(cell(row, Some(0))).is_none() {
            continue;
        }
        let host_cpus = number(cell(row, cpus_column))?;
        cpus += host_cpus;
        idle_weighted += host_cpus * number(cell(row, idle_column))?;
    }
    (cpus > 0.0).then(|| HostCpu {
        cpus: Some(cpus),
        idle_pct: Some(idle_weighted / cpus),
        ..HostCpu::default()
    })
}

fn os_statistic(tables: &[RawTable], name: &str) -> Option<f64> {
    tables
        .iter()
        .filter(|table| table.has_columns(&["Statistic", "Value"]))
        .find_map(|table| number(cell(table.row_labelled(name)?, table.column_named("Value"))))
}

fn host_table_cpus(tables: &[RawTable]) -> Option<f64> {
    tables
        .iter()
        .filter(|table| table.column("Host Name").is_some())
        .find_map(|table| number(cell(table.rows.first()?, table.column_named("CPUs"))))
}

/// `Host CPU  (CPUs: 22  Cores: 22 ...)` in STATSPACK and 11g headings.
fn cpus_in_text(raw: &str) -> Option<f64> {
    let at = raw.find("CPUs:")? + "CPUs:".len();
    number(raw[at..].split_whitespace().next()?)
}

fn parameters(table: &RawTable, report: &mut AwrReport) {
    let name = table.column("Parameter Name");
    let value = table.column("Begin value");
    for row in &table.rows {
        let parameter = cell(row, name);
        if !parameter.is_empty() {
            report
                .parameters
                .entry(parameter.to_string())
                .or_insert_with(|| cell(row, value).to_string());
        }
    }
}
