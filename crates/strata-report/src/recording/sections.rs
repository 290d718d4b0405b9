//! The sections every kind of recording shares, laid out from one
//! [`Measured`] window: load profile, top waits and CPU, I/O by layer, and
//! outliers. Every number names its unit and its layer.
//!
//! Not for: latency and calibrate's own sections (`latency`, `calibrate`),
//! the charts over time (`time_series`), or computing the totals.

use super::measured::{Measured, StatementOutlierEvent};
use crate::findings::ms_text;
use strata_output::document::{Cell, Column, Section, Table};

/// The layers as the reader knows them.
pub(crate) const WORKLOAD: &str = "workload";
pub(crate) const DATABASE: &str = "database";
pub(crate) const DEVICE: &str = "device";
pub(crate) const PAGE_CACHE: &str = "page cache";
pub(crate) const NFS: &str = "NFS";
pub(crate) const NIC: &str = "NIC";

/// One load-profile line: a total over the window, shown per second and
/// per commit.
struct ProfileRow {
    metric: String,
    unit: &'static str,
    layer: &'static str,
    total: f64,
}

fn profile_rows(measured: &Measured) -> Vec<ProfileRow> {
    let row = |metric: &str, unit, layer, total| ProfileRow {
        metric: metric.to_string(),
        unit,
        layer,
        total,
    };
    let mut rows = Vec::new();
    if let Some(aas) = measured
        .waits
        .as_ref()
        .and_then(|waits| waits.average_active_sessions())
    {
        rows.push(row("DB time", "s", DATABASE, aas * measured.window_s));
    }
    if let Some(workload) = &measured.workload {
        rows.push(row("loops", "loops", WORKLOAD, workload.loops));
    }
    if let Some(database) = &measured.database {
        rows.push(row("commits", "commits", DATABASE, database.commits));
        let blocks = format!("blocks read ({})", measured.block_label());
        rows.push(row(&blocks, "blocks", DATABASE, database.blocks_read));
    }
    if !measured.devices.is_empty() {
        rows.push(row(
            "read requests (IOPS)",
            "requests",
            DEVICE,
            measured.device_read_requests(),
        ));
        rows.push(row(
            "read MB",
            "MB",
            DEVICE,
            measured.device_read_bytes() / 1e6,
        ));
        rows.push(row(
            "write requests",
            "requests",
            DEVICE,
            measured.device_write_requests(),
        ));
        rows.push(row(
            "write MB",
            "MB",
            DEVICE,
            measured.device_write_bytes() / 1e6,
        ));
    }
    if let Some(database) = &measured.database {
        let log = database.source.log_name();
        rows.push(row(
            &format!("{log} MB"),
            "MB",
            DATABASE,
            database.wal_bytes / 1e6,
        ));
        rows.push(row(
            &format!("{log} syncs"),
            "syncs",
            DATABASE,
            database.wal_syncs,
        ));
    }
    if let Some(nfs) = &measured.nfs {
        rows.push(row("NFS READ requests", "requests", NFS, nfs.read_ops));
        rows.push(row("NFS READ MB", "MB", NFS, nfs.read_bytes / 1e6));
    }
    if let Some(nic) = &measured.nic {
        rows.push(row("received MB", "MB", NIC, nic.receive_bytes / 1e6));
        rows.push(row("sent MB", "MB", NIC, nic.transmit_bytes / 1e6));
    }
    rows
}

/// Decimals that keep a figure readable whatever its size.
pub(crate) fn decimals(value: f64) -> usize {
    match value.abs() {
        v if v >= 100.0 => 0,
        v if v >= 1.0 => 1,
        v if v >= 0.01 => 2,
        0.0 => 0,
        _ => 4,
    }
}

pub(crate) fn number(value: f64, unit: &str) -> Cell {
    Cell::number(value, decimals(value), unit)
}

pub(crate) fn optional(value: Option<f64>, unit: &str) -> Cell {
    value
        .filter(|v| v.is_finite())
        .map_or_else(Cell::empty, |v| number(v, unit))
}

/// [load_profile] per second and per transaction (per commit).
pub(crate) fn load_profile(measured: &Measured) -> Section {
    let commits = measured
        .database
        .as_ref()
        .map_or(0.0, |database| database.commits);
    let mut table = Table::new(
        None,
        vec![
            Column::text("metric"),
            Column::text("unit"),
            Column::text("layer"),
            Column::number("per second", None),
            Column::number("per transaction", None),
        ],
    );
    for row in profile_rows(measured) {
        let per_commit = (commits > 0.0).then(|| row.total / commits);
        table.push(vec![
            Cell::text(row.metric),
            Cell::text(row.unit),
            Cell::text(row.layer),
            number(measured.per_s(row.total), &format!("{}/s", row.unit)),
            optional(per_commit, &format!("{}/commit", row.unit)),
        ]);
    }
    let mut section = Section::new("load_profile", "Load profile").table(table);
    if let Some(sizes) = request_sizes(measured) {
        section = section.table(sizes);
    }
    let note = match measured.database {
        Some(_) => {
            "Per transaction = per commit (database layer, xact_commit). MB = 10^6 bytes; \
                    device figures are /proc/diskstats requests, database figures 8 KiB blocks."
        }
        None => {
            "No database layer: no commits, so no per-transaction figures. MB = 10^6 bytes; \
                 device figures are /proc/diskstats requests."
        }
    };
    section.note(format!("{} {note}", super::over_text(measured.window_s)))
}

fn request_sizes(measured: &Measured) -> Option<Table> {
    let reads = measured.device_read_requests();
    let writes = measured.device_write_requests();
    if reads + writes <= 0.0 {
        return None;
    }
    let mut table = Table::new(
        Some("Average request size"),
        vec![
            Column::text("metric"),
            Column::text("layer"),
            Column::number("size", Some("KiB")),
        ],
    );
    let size = |bytes: f64, requests: f64| (requests > 0.0).then(|| bytes / requests / 1024.0);
    table.push(vec![
        Cell::text("read request size"),
        Cell::text(DEVICE),
        optional(size(measured.device_read_bytes(), reads), "KiB"),
    ]);
    table.push(vec![
        Cell::text("write request size"),
        Cell::text(DEVICE),
        optional(size(measured.device_write_bytes(), writes), "KiB"),
    ]);
    Some(table)
}

/// [top_waits] sampled wait events, and the CPU and run-queue share.
pub(crate) fn top_waits(measured: &Measured) -> Section {
    let mut section = Section::new("top_waits", "Top wait events and CPU");
    match &measured.waits {
        Some(waits) if waits.active_session_samples > 0.0 => {
            let mut table = Table::new(
                Some("Wait events (database layer, pg_stat_activity sampled at 10 Hz)"),
                vec![
                    Column::text("wait event"),
                    Column::text("class"),
                    Column::number("share of active time", Some("%")),
                    Column::number("samples", None),
                ],
            );
            for (event, class, samples) in waits.events.iter().filter(|event| event.2 > 0.0) {
                table.push(vec![
                    Cell::text(event.as_str()),
                    Cell::text(class.as_str()),
                    Cell::number(100.0 * samples / waits.active_session_samples, 1, "%"),
                    Cell::number(*samples, 0, "samples"),
                ]);
            }
            section = section.table(table).note(
                "\"CPU or run queue\" is an active session with no wait event: on a CPU or waiting for one.",
            );
        }
        _ => {
            section =
                section.note("No wait events were sampled in this window (no database layer).")
        }
    }
    match cpu_table(measured) {
        Some(table) => section.table(table),
        None => section.note("No CPU samples in this window."),
    }
}

fn cpu_table(measured: &Measured) -> Option<Table> {
    let cpu = measured.cpu.as_ref()?;
    let mut table = Table::new(
        Some("CPU and run queue"),
        vec![
            Column::text("metric"),
            Column::text("layer"),
            Column::number("value", None),
            Column::text("unit"),
        ],
    );
    let mut push = |metric: &str, layer: &str, value: Option<f64>, unit: &str| {
        if let Some(value) = value {
            table.push(vec![
                Cell::text(metric),
                Cell::text(layer),
                number(value, unit),
                Cell::text(unit),
            ]);
        }
    };
    push("host CPU idle", "CPU", cpu.idle_pct, "%");
    push(
        "runnable tasks (procs_running, average)",
        "CPU",
        cpu.procs_running_avg,
        "tasks",
    );
    push("CPUs", "CPU", Some(cpu.cpus), "CPUs");
    push(
        "PSI cpu some (a task waited for a CPU)",
        "CPU",
        cpu.psi_cpu_some_pct,
        "% of time",
    );
    push(
        "run-queue delay of the server's processes",
        "process",
        cpu.run_delay_ms_per_s,
        "ms/s",
    );
    Some(table)
}

/// [io_by_layer] database → page cache → devices (→ NFS, NICs), the
/// reconciliation of the three read counts, and each device.
pub(crate) fn io_by_layer(measured: &Measured) -> Section {
    let mut section = Section::new("io_by_layer", "I/O by layer");
    if let Some(table) = reconciliation(measured) {
        section = section.table(table);
    }
    if !measured.devices.is_empty() {
        section = section.table(device_table(measured));
    }
    if let Some(table) = network_table(measured) {
        section = section.table(table);
    }
    let requests = "A device read request may carry many blocks (read-ahead, merging, scans).";
    match &measured.database {
        Some(database) => section.note(format!(
            "Database blocks are {} {}. {requests}",
            measured.block_label(),
            database.source.blocks_meaning()
        )),
        None => section.note(requests),
    }
}

pub(crate) fn reconciliation(measured: &Measured) -> Option<Table> {
    let blocks = measured
        .database
        .as_ref()
        .map(|database| database.blocks_read);
    if blocks.is_none() && measured.devices.is_empty() {
        return None;
    }
    let mut table = Table::new(
        Some("Reads at each layer (the three read counts reconciled)"),
        vec![
            Column::text("layer"),
            Column::text("count"),
            Column::number("total", None),
            Column::number("per second", None),
            Column::number("% of database blocks", Some("%")),
        ],
    );
    let share = |value: f64| blocks.filter(|b| *b > 0.0).map(|b| 100.0 * value / b);
    let mut push = |layer: &str, count: &str, unit: &str, value: f64| {
        table.push(vec![
            Cell::text(layer),
            Cell::text(count),
            number(value, unit),
            number(measured.per_s(value), &format!("{unit}/s")),
            optional(share(value), "%"),
        ]);
    };
    let device_blocks = measured.device_read_bytes() / measured.block_bytes;
    let block = measured.block_label();
    if let Some(blocks) = blocks {
        push(
            DATABASE,
            &format!("blocks read ({block})"),
            "blocks",
            blocks,
        );
        if !measured.devices.is_empty() {
            push(
                PAGE_CACHE,
                &format!("blocks no device read ({block})"),
                "blocks",
                (blocks - device_blocks).max(0.0),
            );
        }
    }
    if !measured.devices.is_empty() {
        push(
            DEVICE,
            "read requests",
            "requests",
            measured.device_read_requests(),
        );
        push(
            DEVICE,
            &format!("read bytes / {block} (blocks' worth)"),
            "blocks",
            device_blocks,
        );
    }
    Some(table)
}

fn device_table(measured: &Measured) -> Table {
    let mut table = Table::new(
        Some("Devices (device layer, /proc/diskstats, iostat -x definitions)"),
        vec![
            Column::text("device"),
            Column::text("role"),
            Column::number("r/s", Some("requests/s")),
            Column::number("rMB/s", Some("MB/s")),
            Column::number("rareq-sz", Some("KiB")),
            Column::number("w/s", Some("requests/s")),
            Column::number("wMB/s", Some("MB/s")),
            Column::number("await", Some("ms")),
            Column::number("aqu-sz", Some("requests")),
            Column::number("%util", Some("%")),
        ],
    );
    for device in &measured.devices {
        let size = device.read_request_kib();
        table.push(vec![
            Cell::text(device.name.as_str()),
            Cell::text(device.role.as_str()),
            number(measured.per_s(device.read_requests), "requests/s"),
            number(measured.per_s(device.read_bytes) / 1e6, "MB/s"),
            optional(size, "KiB"),
            number(measured.per_s(device.write_requests), "requests/s"),
            number(measured.per_s(device.write_bytes) / 1e6, "MB/s"),
            optional(device.await_ms, "ms"),
            optional(device.queue_size, "requests"),
            optional(device.util_pct, "%"),
        ]);
    }
    table
}

fn network_table(measured: &Measured) -> Option<Table> {
    if measured.nfs.is_none() && measured.nic.is_none() {
        return None;
    }
    let mut table = Table::new(
        Some("Network"),
        vec![
            Column::text("layer"),
            Column::text("metric"),
            Column::number("per second", None),
        ],
    );
    if let Some(nfs) = &measured.nfs {
        let rows = [
            ("READ requests", "requests/s", nfs.read_ops),
            ("READ MB", "MB/s", nfs.read_bytes / 1e6),
            ("WRITE requests", "requests/s", nfs.write_ops),
            ("WRITE MB", "MB/s", nfs.write_bytes / 1e6),
        ];
        for (metric, unit, total) in rows {
            table.push(vec![
                Cell::text(NFS),
                Cell::text(format!("{metric} ({unit})")),
                number(measured.per_s(total), unit),
            ]);
        }
    }
    if let Some(nic) = &measured.nic {
        for (metric, total) in [
            ("received MB", nic.receive_bytes),
            ("sent MB", nic.transmit_bytes),
        ] {
            let value = measured.per_s(total) / 1e6;
            table.push(vec![
                Cell::text(NIC),
                Cell::text(format!("{metric} (MB/s)")),
                number(value, "MB/s"),
            ]);
        }
    }
    Some(table)
}

/// [outliers] individual I/Os over the threshold, and device await spikes.
pub(crate) fn outliers(measured: &Measured) -> Section {
    let threshold = ms_text(measured.outliers.threshold_ms);
    let mut section = Section::new("outliers", "Outliers");
    let items = match measured.outliers.statements {
        true => "statement",
        false => "I/O",
    };
    if !measured.outlier_events.is_empty() {
        section = section.table(outlier_table(measured));
    } else if !measured.statement_outliers.is_empty() {
        section = section.table(statement_table(measured));
    } else if measured.outliers.count.is_some() {
        section = section.note(format!(
            "No {items} took longer than {threshold} ms (workload layer)."
        ));
    }
    let floor = measured
        .outlier_floor_ms
        .filter(|floor| measured.outliers.threshold_ms < *floor);
    if let Some(floor) = floor.map(ms_text) {
        section = section.note(format!(
            "The recording kept {items}s one by one only from {floor} ms on: any between \
             {threshold} ms and {floor} ms were not kept and cannot be listed."
        ));
    }
    if measured.outliers.device_spikes.is_empty() {
        return section.note(format!(
            "No second in which a device's average await went over {threshold} ms (device layer)."
        ));
    }
    let mut table = Table::new(
        Some("Device await spikes (device layer, per second)"),
        vec![
            Column::number("t", Some("s")),
            Column::text("device"),
            Column::number("await", Some("ms")),
        ],
    );
    for spike in &measured.outliers.device_spikes {
        table.push(vec![
            Cell::number(spike.t_s, 1, "s"),
            Cell::text(spike.device.as_str()),
            Cell::number(spike.await_ms, 1, "ms"),
        ]);
    }
    section.table(table)
}

/// A report lists at most this many statements: the slowest, in time order.
const STATEMENTS_SHOWN: usize = 200;

fn statement_table(measured: &Measured) -> Table {
    let all = measured.statement_outliers.len();
    let which = match all > STATEMENTS_SHOWN {
        true => format!("; the {STATEMENTS_SHOWN} slowest of {all}"),
        false => String::new(),
    };
    let mut table = Table::new(
        Some(&format!(
            "Statements slower than {} ms (workload layer, strata's sessions{which})",
            ms_text(measured.outliers.threshold_ms)
        )),
        vec![
            Column::number("t", Some("s")),
            Column::number("session", None),
            Column::text("schema"),
            Column::text("operation"),
            Column::number("latency", Some("ms")),
        ],
    );
    let mut shown: Vec<&StatementOutlierEvent> = measured.statement_outliers.iter().collect();
    if shown.len() > STATEMENTS_SHOWN {
        shown.sort_by(|a, b| b.latency_ms.total_cmp(&a.latency_ms));
        shown.truncate(STATEMENTS_SHOWN);
        shown.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    }
    for outlier in shown {
        table.push(vec![
            Cell::number(outlier.t_s, 2, "s"),
            Cell::number(outlier.session as f64, 0, ""),
            Cell::text(outlier.schema.as_str()),
            Cell::text(outlier.operation.as_str()),
            Cell::number(outlier.latency_ms, 1, "ms"),
        ]);
    }
    table
}

fn outlier_table(measured: &Measured) -> Table {
    let mut table = Table::new(
        Some(&format!(
            "I/Os slower than {} ms (workload layer, strata's own requests)",
            ms_text(measured.outliers.threshold_ms)
        )),
        vec![
            Column::text("point"),
            Column::number("t", Some("s")),
            Column::text("group"),
            Column::text("operation"),
            Column::number("offset", Some("bytes")),
            Column::number("size", Some("KiB")),
            Column::number("latency", Some("ms")),
        ],
    );
    for event in &measured.outlier_events {
        table.push(vec![
            Cell::text(event.point.as_str()),
            Cell::number(event.t_s, 2, "s"),
            Cell::text(event.group.as_str()),
            Cell::text(event.operation.as_str()),
            Cell::number(event.offset_bytes, 0, "bytes"),
            Cell::number(event.size_bytes / 1024.0, 0, "KiB"),
            Cell::number(event.latency_ms, 1, "ms"),
        ]);
    }
    table
}
