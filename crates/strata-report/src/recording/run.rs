//! A `strata run` Recording as a [`Measured`] window: without a window,
//! exactly the run's result record (its measured window), with the layer
//! samples of that window for what the result does not hold (wait events,
//! run-queue delay, PSI, NICs); with a window, the layer samples and
//! per-second workload samples that fall in it.
//!
//! Not for: laying the figures out (`sections`, `latency`).

use super::layers;
use super::measured::{
    DatabaseTotals, Measured, StatementOutlierEvent, WorkloadTotals, BLOCK_BYTES,
};
use super::samples::Timeline;
use crate::findings::{
    CommitFigures, CommitTail, DeviceWindow, OutlierFigures, OutlierSubmitters, RateSeries, Stripe,
};
use std::collections::BTreeMap;
use strata_core::log_linear;
use strata_output::document::Window;
use strata_recording::device::IostatFigures;
use strata_recording::run::RunFigures;
use strata_recording::{Environment, Recording};

/// The run's measured window on the recording's timeline, from when the
/// sessions' window began (a sweep's: its last point's); Recordings that do
/// not say are taken to begin it `warmup_s` after the first sample.
pub(crate) fn measured_window(recording: &Recording) -> Option<Window> {
    let window_s = result(recording)?.window_s;
    let from_s = window_start_s(recording);
    Some(Window {
        from_s,
        to_s: from_s + window_s,
    })
}

/// Where the window of the run's result begins on the timeline.
fn window_start_s(recording: &Recording) -> f64 {
    let last_point = recording.sweep().and_then(|sweep| sweep.points.last());
    let start_unix_s = result(recording)
        .and_then(|figures| figures.window_start_unix_s)
        .or(last_point.map(|point| point.window_start_unix_s));
    let first_sample = recording.layers().next();
    match (start_unix_s, first_sample) {
        (Some(start_unix_s), Some(sample)) => start_unix_s - sample.unix_s,
        _ => recording.header.options.warmup_s(),
    }
}

pub(crate) fn result(recording: &Recording) -> Option<&RunFigures> {
    recording.run_result().map(|result| &result.figures)
}

/// The run's figures over its own measured window, from its result record.
pub(crate) fn whole(
    recording: &Recording,
    timeline: &Timeline,
    threshold_ms: f64,
) -> Option<Measured> {
    let result = result(recording)?;
    let window = measured_window(recording)?;
    let within = timeline.within(window);
    let mut measured = Measured::empty(window);
    measured.workload = Some(workload(recording, None, result));
    measured.block_bytes = block_bytes(&recording.header.environment);
    measured.database = database_of_result(recording, result);
    measured.devices = result
        .devices
        .iter()
        .map(|device| device_window(device, &recording.header.environment))
        .collect();
    fill_from_layers(&mut measured, recording, &within, threshold_ms);
    if let Some(cpu) = &mut measured.cpu {
        cpu.idle_pct = result.cpu.host_idle_pct;
    }
    measured.commit = commit(result, measured.database.as_ref());
    measured.outlier_submitters = outlier_submitters(result);
    Some(measured)
}

/// The run's figures over `window`, from the samples that fall in it.
pub(crate) fn windowed(
    recording: &Recording,
    timeline: &Timeline,
    window: Window,
    threshold_ms: f64,
) -> Measured {
    let within = timeline.within(window);
    let mut measured = Measured::empty(window);
    if let Some(result) = result(recording) {
        measured.workload = Some(workload(recording, Some(window), result));
    }
    let environment = &recording.header.environment;
    measured.block_bytes = block_bytes(environment);
    measured.database = layers::database(&within, environment.innodb_direct());
    measured.devices = environment
        .devices
        .roles()
        .into_iter()
        .filter_map(|(name, role)| {
            let mut device = layers::device(&within, &name, role)?;
            describe(&mut device, environment);
            Some(device)
        })
        .collect();
    fill_from_layers(&mut measured, recording, &within, threshold_ms);
    measured
}

fn fill_from_layers(
    measured: &mut Measured,
    recording: &Recording,
    within: &Timeline,
    threshold_ms: f64,
) {
    measured.nfs = layers::nfs(within);
    measured.nic = layers::nic(within);
    measured.waits = layers::waits(within);
    measured.cpu = layers::cpu(within, recording.header.host.cpus as f64);
    let names: Vec<String> = measured
        .devices
        .iter()
        .map(|device| device.name.clone())
        .collect();
    measured.statement_outliers = statement_outliers(recording, measured.window, threshold_ms);
    measured.outlier_floor_ms = result(recording)
        .map(|result| result.outliers.floor_ms)
        .filter(|floor_ms| *floor_ms > 0.0);
    let recorded = measured.outlier_floor_ms.is_some();
    measured.outliers = OutlierFigures {
        threshold_ms,
        count: recorded.then_some(measured.statement_outliers.len() as u64),
        worst_ms: measured
            .statement_outliers
            .iter()
            .map(|outlier| outlier.latency_ms)
            .reduce(f64::max),
        statements: true,
        device_spikes: layers::await_spikes(within, &names, threshold_ms),
    };
    measured.steadiness = measured.workload.as_ref().map(|workload| RateSeries {
        name: "loops/s (workload)".to_string(),
        values: workload
            .loops_per_second
            .iter()
            .map(|point| point[1])
            .collect(),
    });
}

/// The run's `statement_outlier` events at or over `threshold_ms` that
/// finished inside `window` (their `at_s` counts from the run's measured
/// window).
fn statement_outliers(
    recording: &Recording,
    window: Window,
    threshold_ms: f64,
) -> Vec<StatementOutlierEvent> {
    let Some(run_window) = measured_window(recording) else {
        return Vec::new();
    };
    recording
        .statement_outliers()
        .map(|outlier| StatementOutlierEvent {
            t_s: run_window.from_s + outlier.at_s,
            session: u64::from(outlier.session),
            schema: outlier.schema.clone(),
            operation: outlier.operation.clone(),
            latency_ms: outlier.latency_ms,
        })
        .filter(|outlier| {
            outlier.latency_ms >= threshold_ms
                && outlier.t_s >= window.from_s
                && outlier.t_s <= window.to_s
        })
        .collect()
}

/// The per-second workload samples (in `window` when given); second `k`
/// of the measured window ends at warmup + k + 1 on the timeline.
fn workload(recording: &Recording, window: Option<Window>, result: &RunFigures) -> WorkloadTotals {
    let warmup = window_start_s(recording);
    let seconds: Vec<(f64, f64, f64)> = recording
        .run_seconds()
        .map(|second| {
            let t_s = warmup + second.second as f64 + 1.0;
            (t_s, second.loops as f64, second.scans as f64)
        })
        .filter(|(t_s, ..)| window.map_or(true, |w| t_s - 0.5 >= w.from_s && t_s - 0.5 <= w.to_s))
        .collect();
    let (loops, scans) = match window {
        None => (
            result.workload.loops as f64,
            operation_count(result, "scan"),
        ),
        Some(_) => (
            seconds.iter().map(|second| second.1).sum(),
            seconds.iter().map(|second| second.2).sum(),
        ),
    };
    WorkloadTotals {
        loops,
        scans,
        loops_per_second: seconds
            .iter()
            .map(|(t_s, loops, _)| [*t_s, *loops])
            .collect(),
    }
}

/// How many `operation` statements the run's window completed.
fn operation_count(result: &RunFigures, operation: &str) -> f64 {
    result
        .workload
        .operations
        .get(operation)
        .map_or(0.0, |figures| figures.latency.count as f64)
}

/// The engine's block (page) size from the environment: `block_bytes`,
/// MariaDB's own `page_bytes`, else PostgreSQL's 8 KiB.
pub(crate) fn block_bytes(environment: &Environment) -> f64 {
    environment
        .block_bytes
        .or(environment.page_bytes)
        .unwrap_or(BLOCK_BYTES)
}

/// The database's counters over the measured window: PostgreSQL's from the
/// result (with 18's own read requests), InnoDB's from `window_database`.
fn database_of_result(recording: &Recording, result: &RunFigures) -> Option<DatabaseTotals> {
    let environment = &recording.header.environment;
    if environment.innodb_counters() {
        let counters = &recording.window_database()?.counters;
        return DatabaseTotals::from_innodb(
            &|name| counters.get(&format!("{name}{{}}")).copied(),
            environment.innodb_direct(),
        );
    }
    let figures = result.database.as_ref()?;
    let mut database = DatabaseTotals::from_counters(&|name| counter_of(&figures.counters, name))?;
    database.read_requests = figures.read_requests;
    database.read_bytes = figures.read_bytes;
    Some(database)
}

/// `database.blks_read` in the result's counters, asked for as
/// `database_blks_read`.
fn counter_of(counters: &BTreeMap<String, f64>, name: &str) -> Option<f64> {
    counters
        .iter()
        .find_map(|(key, value)| (key.replace('.', "_") == name).then_some(*value))
}

/// The run's COMMIT latency against WAL's write + sync time per sync;
/// `None` when the run committed nothing of its own.
fn commit(result: &RunFigures, database: Option<&DatabaseTotals>) -> Option<CommitFigures> {
    let operation = result.workload.commits()?;
    let count = operation.latency.count as f64;
    Some(CommitFigures {
        commits: database.map_or(count, |database| database.commits),
        commit_avg_ms: operation.latency.lat_mean_us / 1e3,
        commit_label: "strata's COMMIT latency (mean)".to_string(),
        log_write_avg_ms: database.and_then(DatabaseTotals::log_write_avg_ms),
        log_write_label: "WAL write + sync time per sync (pg_stat_wal)".to_string(),
        tail: commit_tail(result, operation.latency.lat_p99_us / 1e3),
    })
}

/// The run's listed block request outliers by who submitted them; `None`
/// where it traced none.
fn outlier_submitters(result: &RunFigures) -> Option<OutlierSubmitters> {
    let listed = &result.block_trace.as_ref()?.outliers.as_ref()?.listed;
    let mut queries: BTreeMap<&str, u64> = BTreeMap::new();
    for query in listed.iter().filter_map(|outlier| outlier.query.as_deref()) {
        *queries.entry(query).or_default() += 1;
    }
    Some(OutlierSubmitters {
        listed: listed.len() as u64,
        by_sessions: listed
            .iter()
            .filter(|outlier| outlier.session.is_some())
            .count() as u64,
        in_named_queries: queries.values().sum(),
        commonest_query: queries
            .into_iter()
            .max_by_key(|(_, count)| *count)
            .map(|(query, count)| (query.to_string(), count)),
    })
}

/// The processes that write PostgreSQL's WAL: the committing backends and
/// the WAL writer.
const WAL_WRITER_ROLES: [&str; 2] = ["client backend", "walwriter"];

/// The WAL device's traced write and flush p99 beside the commits' p99,
/// where the run traced its block requests and wrote to that device: the
/// writes of the WAL's writers where the trace knows the roles, else every
/// write of the device.
fn commit_tail(result: &RunFigures, commit_p99_ms: f64) -> Option<CommitTail> {
    let traced = result.block_trace.as_ref()?;
    let device = traced
        .devices
        .iter()
        .find(|device| device.role.split('+').any(|role| role == "wal"))?;
    let of_device = |operation: &str| {
        device
            .operations
            .iter()
            .find(|op| op.operation == operation)
            .map(|op| op.device_time.p99_ms)
    };
    let mut writers: Vec<(u16, u64)> = device
        .by_role
        .iter()
        .filter(|role| role.operation == "write" && WAL_WRITER_ROLES.contains(&role.role.as_str()))
        .flat_map(|role| role.device_time_buckets.iter().copied())
        .collect();
    writers.sort_unstable();
    let (write_p99_ms, write_label) = match log_linear::quantile_ns(&writers, 0.99) {
        Some(ns) => (ns / 1e6, "writes by the backends and the WAL writer"),
        None => (of_device("write")?, "every write"),
    };
    let shares_data = device.role.split('+').any(|role| role == "data");
    Some(CommitTail {
        commit_p99_ms,
        wal_device: device.device.clone(),
        write_label: match shares_data {
            true => format!("{write_label} (the device holds data too)"),
            false => write_label.to_string(),
        },
        write_p99_ms: Some(write_p99_ms),
        flush_p99_ms: of_device("flush"),
    })
}

/// A device's iostat figures over a window, as the findings read them.
pub(crate) fn device_window(figures: &IostatFigures, environment: &Environment) -> DeviceWindow {
    let read_requests = figures.read_requests as f64;
    let write_requests = figures.write_requests as f64;
    let requests = read_requests + write_requests;
    let await_ms = (requests > 0.0).then(|| {
        (figures.r_await_ms * read_requests + figures.w_await_ms * write_requests) / requests
    });
    let mut device = DeviceWindow {
        name: figures.device.clone(),
        role: figures.role.clone(),
        read_requests,
        read_bytes: figures.read_bytes as f64,
        write_requests,
        write_bytes: figures.write_bytes as f64,
        util_pct: Some(figures.util_pct),
        queue_size: Some(figures.aqu_sz),
        await_ms,
        ..DeviceWindow::default()
    };
    let window_s = requests / (figures.r_per_s + figures.w_per_s).max(f64::MIN_POSITIVE);
    device.service_time_ms = device
        .util_pct
        .filter(|_| requests > 0.0)
        .map(|util| util / 100.0 * window_s * 1e3 / requests);
    describe(&mut device, environment);
    device
}

/// Rotational and md stripe geometry from the recording's device details
/// (a run's `environment.device_details`, calibrate's target).
pub(crate) fn describe(device: &mut DeviceWindow, environment: &Environment) {
    let Some(details) = environment
        .devices_described()
        .find(|details| details.name == device.name)
    else {
        return;
    };
    device.rotational = details.rotational;
    if let Some((level, chunk_bytes, raid_disks)) = details.kind.md() {
        device.stripe = Some(Stripe {
            level: level.to_string(),
            chunk_bytes: chunk_bytes as f64,
            member_disks: raid_disks,
        });
    }
}
