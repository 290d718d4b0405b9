//! [operations] of compared runs: per operation (select, update, commit,
//! scan) the latency percentiles p50, p99 and p99.9 of each run with the
//! change from A; then what each layer did (the database's waits and block
//! read time, the data devices' r/s, request sizes, r_await and aqu-sz, the
//! host's and the database processes' CPU, run-queue delay), and each
//! run's verdict. Figures from each run's result record (its measured
//! window); waits and run-queue delay from its layer samples there.
//!
//! Not for: the settings (`settings`) or the charts (`charts`).

use super::compared::{table, Compared};
use super::Side;
use crate::recording::sections::{DATABASE, DEVICE, WORKLOAD};
use strata_output::document::{Cell, Column, Figure, Section, Table};
use strata_recording::run::{CpuFigures, DatabaseFigures, RunFigures};

/// The operations a run's result times, in the order they are shown.
pub(super) const OPERATIONS: [&str; 4] = ["select", "update", "commit", "scan"];

/// (heading, figure name part, µs of the latency summary).
const PERCENTILES: [(&str, &str); 3] = [("p50", "p50"), ("p99", "p99"), ("p99.9", "p99_9")];

pub(super) fn result(side: &Side) -> Option<&RunFigures> {
    crate::recording::run::result(&side.recording)
}

/// An operation's percentile in ms, `None` when the run timed none of it.
pub(super) fn percentile_ms(side: &Side, operation: &str, heading: &str) -> Option<f64> {
    let latency = &result(side)?.workload.operations.get(operation)?.latency;
    if latency.count == 0 {
        return None;
    }
    let us = match heading {
        "p50" => latency.lat_p50_us,
        "p99" => latency.lat_p99_us,
        _ => latency.lat_p99_9_us,
    };
    Some(us / 1e3)
}

/// The data devices (every device not only the WAL's) over the window,
/// together: iostat -x's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct DataDevices {
    pub r_per_s: f64,
    pub w_per_s: f64,
    pub read_kib: Option<f64>,
    pub write_kib: Option<f64>,
    pub r_await_ms: Option<f64>,
    pub w_await_ms: Option<f64>,
    pub aqu_sz: f64,
    pub util_pct: f64,
}

pub(super) fn data_devices(side: &Side) -> Option<DataDevices> {
    let devices: Vec<_> = result(side)?
        .devices
        .iter()
        .filter(|device| device.role != "wal")
        .collect();
    if devices.is_empty() {
        return None;
    }
    let sum = |figure: &dyn Fn(&&strata_recording::device::IostatFigures) -> f64| {
        devices.iter().map(figure).sum::<f64>()
    };
    let reads = sum(&|device| device.read_requests as f64);
    let writes = sum(&|device| device.write_requests as f64);
    let per = |total: f64, count: f64| (count > 0.0).then(|| total / count);
    Some(DataDevices {
        r_per_s: sum(&|device| device.r_per_s),
        w_per_s: sum(&|device| device.w_per_s),
        read_kib: per(sum(&|device| device.read_bytes as f64) / 1024.0, reads),
        write_kib: per(sum(&|device| device.write_bytes as f64) / 1024.0, writes),
        r_await_ms: per(sum(&|d| d.r_await_ms * d.read_requests as f64), reads),
        w_await_ms: per(sum(&|d| d.w_await_ms * d.write_requests as f64), writes),
        aqu_sz: sum(&|device| device.aqu_sz),
        util_pct: devices
            .iter()
            .map(|device| device.util_pct)
            .fold(0.0, f64::max),
    })
}

fn latency_rows(sides: &[Side]) -> Vec<Compared> {
    let mut rows = Vec::new();
    for operation in OPERATIONS {
        for (heading, _) in PERCENTILES {
            let values = sides
                .iter()
                .map(|side| percentile_ms(side, operation, heading))
                .collect();
            rows.push(Compared::new(
                format!("{operation} {heading}"),
                WORKLOAD,
                "ms",
                values,
            ));
        }
        let per_s = sides
            .iter()
            .map(|side| {
                let figures = result(side)?.workload.operations.get(operation)?;
                (figures.latency.count > 0).then_some(figures.per_s)
            })
            .collect();
        rows.push(Compared::new(
            format!("{operation}s"),
            WORKLOAD,
            "statements/s",
            per_s,
        ));
    }
    rows
}

/// Each run's figure, `None` where it has none.
fn each(sides: &[Side], figure: impl Fn(&Side) -> Option<f64>) -> Vec<Option<f64>> {
    sides.iter().map(figure).collect()
}

/// The wait events among any run's three most sampled, as % of active time.
fn wait_rows(sides: &[Side]) -> Vec<Compared> {
    let mut events: Vec<(String, String)> = Vec::new();
    for side in sides {
        let Some(waits) = &side.measured.waits else {
            continue;
        };
        for (event, class, _) in waits.events.iter().filter(|event| event.2 > 0.0).take(3) {
            if !events
                .iter()
                .any(|known| known.0 == *event && known.1 == *class)
            {
                events.push((event.clone(), class.clone()));
            }
        }
    }
    let mut rows = vec![Compared::new(
        "average active sessions (sampled)",
        DATABASE,
        "sessions",
        each(sides, |side| {
            side.measured.waits.as_ref()?.average_active_sessions()
        }),
    )];
    rows.extend(events.iter().map(|(event, class)| {
        let share = |side: &Side| {
            let waits = side.measured.waits.as_ref()?;
            let samples = waits
                .events
                .iter()
                .find(|e| e.0 == *event && e.1 == *class)?
                .2;
            (waits.active_session_samples > 0.0)
                .then(|| 100.0 * samples / waits.active_session_samples)
        };
        Compared::new(
            format!("wait: {class} {event}"),
            DATABASE,
            "% of active time",
            each(sides, share),
        )
    }));
    rows
}

fn database(side: &Side) -> Option<&DatabaseFigures> {
    result(side)?.database.as_ref()
}

fn cpu(side: &Side) -> Option<(&CpuFigures, f64)> {
    result(side).map(|result| (&result.cpu, result.window_s))
}

fn database_rows(sides: &[Side]) -> Vec<Compared> {
    let window_s = |side: &Side| result(side).map_or(f64::NAN, |result| result.window_s);
    let mut rows = wait_rows(sides);
    rows.extend([
        Compared::new(
            "blocks read",
            DATABASE,
            "blocks/s",
            each(sides, |s| Some(database(s)?.blocks_read_per_s)),
        ),
        Compared::new(
            "buffer hit",
            DATABASE,
            "%",
            each(sides, |s| Some(database(s)?.buffer_hit_pct)),
        ),
        Compared::new(
            "block read time",
            DATABASE,
            "ms/s",
            each(sides, |s| {
                Some(database(s)?.block_read_time_ms / window_s(s))
            }),
        ),
        Compared::new(
            "block read time per block read",
            DATABASE,
            "µs",
            each(sides, |s| Some(database(s)?.block_read_time_us_per_block)),
        ),
    ]);
    rows
}

/// The data devices' figures: (metric, unit, figure).
type DeviceFigure = (&'static str, &'static str, fn(&DataDevices) -> Option<f64>);

const DEVICE_FIGURES: [DeviceFigure; 8] = [
    ("r/s", "requests/s", |d| Some(d.r_per_s)),
    ("w/s", "requests/s", |d| Some(d.w_per_s)),
    ("read request size (rareq-sz)", "KiB", |d| d.read_kib),
    ("write request size (wareq-sz)", "KiB", |d| d.write_kib),
    ("r_await", "ms", |d| d.r_await_ms),
    ("w_await", "ms", |d| d.w_await_ms),
    ("aqu-sz", "requests", |d| Some(d.aqu_sz)),
    ("%util (busiest)", "%", |d| Some(d.util_pct)),
];

fn device_rows(sides: &[Side]) -> Vec<Compared> {
    let devices: Vec<Option<DataDevices>> = sides.iter().map(data_devices).collect();
    DEVICE_FIGURES
        .iter()
        .map(|(metric, unit, figure)| {
            let values = devices
                .iter()
                .map(|d| d.as_ref().and_then(figure))
                .collect();
            Compared::new(*metric, DEVICE, unit, values)
        })
        .collect()
}

fn cpu_rows(sides: &[Side]) -> Vec<Compared> {
    vec![
        Compared::new(
            "host CPU busy",
            "CPU",
            "%",
            each(sides, |s| Some(100.0 - cpu(s)?.0.host_idle_pct?)),
        ),
        Compared::new(
            "host iowait",
            "CPU",
            "%",
            each(sides, |s| cpu(s)?.0.host_iowait_pct),
        ),
        Compared::new(
            "database processes' CPU",
            "process",
            "CPUs",
            each(sides, |s| {
                cpu(s).and_then(|(cpu, w)| cpu.cpus_used(cpu.server_cpu_s, w))
            }),
        ),
        Compared::new(
            "strata's CPU",
            "process",
            "CPUs",
            each(sides, |s| {
                cpu(s).and_then(|(cpu, w)| cpu.cpus_used(cpu.strata_cpu_s, w))
            }),
        ),
        Compared::new(
            "run-queue delay of the database processes",
            "process",
            "ms/s",
            each(sides, |s| s.measured.cpu.as_ref()?.run_delay_ms_per_s),
        ),
        Compared::new(
            "PSI cpu some",
            "CPU",
            "% of time",
            each(sides, |s| s.measured.cpu.as_ref()?.psi_cpu_some_pct),
        ),
    ]
}

fn verdicts(sides: &[Side]) -> Table {
    let mut table = Table::new(
        Some("Verdicts"),
        vec![Column::text("run"), Column::text("verdict")],
    );
    for side in sides {
        let verdict = super::super::run_verdict(&side.recording)
            .unwrap_or_else(|| "no result record".to_string());
        table.push(vec![Cell::text(side.mark.as_str()), Cell::text(verdict)]);
    }
    table
}

/// The section: latency by operation, then by layer, then the verdicts.
pub(super) fn section(sides: &[Side]) -> Section {
    let marks: Vec<String> = sides.iter().map(|side| side.mark.clone()).collect();
    let mut layers = database_rows(sides);
    layers.extend(device_rows(sides));
    layers.extend(cpu_rows(sides));
    let loops = Compared::new(
        "loops",
        WORKLOAD,
        "loops/s",
        each(sides, |side| Some(result(side)?.workload.loops_per_s)),
    );
    layers.insert(0, loops);
    Section::new("operations", "Per operation and per layer")
        .table(table(
            "Latency by operation (workload layer)",
            &marks,
            &latency_rows(sides),
        ))
        .table(table("Database, devices and CPU", &marks, &layers))
        .table(verdicts(sides))
        .note(
            "Each run over its own measured window, from its result record; the wait events \
             and run-queue delay from its layer samples of that window. Devices: the data \
             devices (all but the WAL's alone), together.",
        )
}

/// Every run's percentiles by name (`select_lat_p99_ms`), scoped by its
/// mark, for programs.
pub(super) fn figures(sides: &[Side]) -> Vec<Figure> {
    let mut figures = Vec::new();
    for side in sides {
        for operation in OPERATIONS {
            for (heading, name) in PERCENTILES {
                let Some(ms) = percentile_ms(side, operation, heading) else {
                    continue;
                };
                let mut figure =
                    Figure::new(&format!("{operation}_lat_{name}_ms"), ms, "ms", WORKLOAD);
                figure.scope = Some(side.mark.clone());
                figures.push(figure);
            }
        }
    }
    figures
}
