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
use crate::findings::{CommitFigures, DeviceWindow, OutlierFigures, RateSeries, Stripe};
use serde_json::Value;
use strata_core::recording::Recording;
use strata_output::document::Window;

/// The run's measured window on the recording's timeline: the layer
/// samples start with the sessions, the window after the warmup.
pub(crate) fn measured_window(recording: &Recording) -> Option<Window> {
    let window_s = result(recording)?["window_s"].as_f64()?;
    let warmup_s = warmup_s(&recording.header.options);
    Some(Window {
        from_s: warmup_s,
        to_s: warmup_s + window_s,
    })
}

fn warmup_s(options: &Value) -> f64 {
    let warmup = &options["stop_after"]["Duration"]["warmup"];
    warmup["secs"].as_f64().unwrap_or(0.0) + warmup["nanos"].as_f64().unwrap_or(0.0) / 1e9
}

pub(crate) fn result(recording: &Recording) -> Option<&Value> {
    recording
        .records_of("result")
        .next()
        .map(|record| &record["result"])
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
    measured.devices = result["devices"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|device| device_of_record(device, &recording.header.environment))
        .collect();
    fill_from_layers(&mut measured, recording, &within, threshold_ms);
    if let (Some(cpu), Some(idle)) = (&mut measured.cpu, result["cpu"]["host_idle_pct"].as_f64()) {
        cpu.idle_pct = Some(idle);
    }
    measured.commit = commit(result, measured.database.as_ref());
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
    measured.database = layers::database(&within, innodb_direct(environment));
    measured.devices = device_roles(environment)
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
    measured.outlier_floor_ms =
        result(recording).and_then(|result| result["outliers"]["floor_ms"].as_f64());
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
        .records_of("event")
        .filter(|event| event["event"] == "statement_outlier")
        .filter_map(|event| {
            let outlier = &event["outlier"];
            Some(StatementOutlierEvent {
                t_s: run_window.from_s + outlier["at_s"].as_f64()?,
                session: outlier["session"].as_u64().unwrap_or(0),
                schema: outlier["schema"].as_str().unwrap_or("").to_string(),
                operation: outlier["operation"].as_str().unwrap_or("").to_string(),
                latency_ms: outlier["latency_ms"].as_f64()?,
            })
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
fn workload(recording: &Recording, window: Option<Window>, result: &Value) -> WorkloadTotals {
    let warmup = warmup_s(&recording.header.options);
    let seconds: Vec<(f64, &Value)> = recording
        .records_of("sample")
        .filter(|record| record["layer"] == "workload")
        .filter_map(|record| {
            let second = record["sample"]["second"].as_f64()?;
            Some((warmup + second + 1.0, &record["sample"]))
        })
        .filter(|(t_s, _)| window.map_or(true, |w| t_s - 0.5 >= w.from_s && t_s - 0.5 <= w.to_s))
        .collect();
    let sum = |field: &str| -> f64 { seconds.iter().filter_map(|(_, s)| s[field].as_f64()).sum() };
    let (loops, scans) = match window {
        None => (
            result["workload"]["loops"].as_f64().unwrap_or(0.0),
            result["workload"]["operations"]["scan"]["count"]
                .as_f64()
                .unwrap_or(0.0),
        ),
        Some(_) => (sum("loops"), sum("scans")),
    };
    WorkloadTotals {
        loops,
        scans,
        loops_per_second: seconds
            .iter()
            .filter_map(|(t_s, s)| Some([*t_s, s["loops"].as_f64()?]))
            .collect(),
    }
}

/// `database.blks_read` in the result's counters, asked for as
/// `database_blks_read`.
/// The engine's block (page) size from the environment: `block_bytes`,
/// MariaDB's own `page_bytes`, else PostgreSQL's 8 KiB.
pub(crate) fn block_bytes(environment: &Value) -> f64 {
    environment["block_bytes"]
        .as_f64()
        .or(environment["page_bytes"].as_f64())
        .unwrap_or(BLOCK_BYTES)
}

fn is_mariadb(environment: &Value) -> bool {
    environment["engine"] == "mariadb"
}

/// For a MariaDB run: whether InnoDB opens its data files with O_DIRECT.
fn innodb_direct(environment: &Value) -> bool {
    is_mariadb(environment)
        && environment["flush_method"]
            .as_str()
            .is_some_and(|method| method.starts_with("O_DIRECT"))
}

/// The database's counters over the measured window: PostgreSQL's from the
/// result (with 18's own read requests), InnoDB's from `window_database`.
fn database_of_result(recording: &Recording, result: &Value) -> Option<DatabaseTotals> {
    let environment = &recording.header.environment;
    if is_mariadb(environment) {
        let record = recording
            .records_of("sample")
            .find(|record| record["layer"] == "window_database")?;
        let counters = &record["counters"];
        return DatabaseTotals::from_innodb(
            &|name| counters[format!("{name}{{}}")].as_f64(),
            innodb_direct(environment),
        );
    }
    let mut database =
        DatabaseTotals::from_counters(&|name| counter_of(&result["database"]["counters"], name))?;
    database.read_requests = result["database"]["read_requests"].as_f64();
    database.read_bytes = result["database"]["read_bytes"].as_f64();
    Some(database)
}

fn counter_of(counters: &Value, name: &str) -> Option<f64> {
    counters.as_object()?.iter().find_map(|(key, value)| {
        (key.replace('.', "_") == name)
            .then(|| value.as_f64())
            .flatten()
    })
}

/// The run's COMMIT latency against WAL's write + sync time per sync;
/// `None` when the run committed nothing of its own.
fn commit(result: &Value, database: Option<&DatabaseTotals>) -> Option<CommitFigures> {
    let operation = &result["workload"]["operations"]["commit"];
    if operation["count"].as_f64().unwrap_or(0.0) <= 0.0 {
        return None;
    }
    Some(CommitFigures {
        commits: database.map_or(operation["count"].as_f64()?, |database| database.commits),
        commit_avg_ms: operation["lat_mean_us"].as_f64()? / 1e3,
        commit_label: "strata's COMMIT latency (mean)".to_string(),
        log_write_avg_ms: database.and_then(DatabaseTotals::log_write_avg_ms),
        log_write_label: "WAL write + sync time per sync (pg_stat_wal)".to_string(),
    })
}

/// The data and WAL devices with their roles (`data`, `wal`, `data+wal`).
pub(crate) fn device_roles(environment: &Value) -> Vec<(String, &'static str)> {
    let names = |key: &str| -> Vec<String> {
        environment["devices"][key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|name| name.as_str().map(str::to_string))
            .collect()
    };
    let (data, wal) = (names("data"), names("wal"));
    let mut roles: Vec<(String, &'static str)> = data
        .iter()
        .map(|name| {
            (
                name.clone(),
                if wal.contains(name) {
                    "data+wal"
                } else {
                    "data"
                },
            )
        })
        .collect();
    roles.extend(
        wal.iter()
            .filter(|name| !data.contains(name))
            .map(|name| (name.clone(), "wal")),
    );
    roles
}

/// A `window_device` record (iostat's figures over the window).
pub(crate) fn device_of_record(record: &Value, environment: &Value) -> DeviceWindow {
    let number = |field: &str| record[field].as_f64().unwrap_or(0.0);
    let requests = number("read_requests") + number("write_requests");
    let await_ms = (requests > 0.0).then(|| {
        (number("r_await_ms") * number("read_requests")
            + number("w_await_ms") * number("write_requests"))
            / requests
    });
    let mut device = DeviceWindow {
        name: record["device"].as_str().unwrap_or("").to_string(),
        role: record["role"].as_str().unwrap_or("").to_string(),
        read_requests: number("read_requests"),
        read_bytes: number("read_bytes"),
        write_requests: number("write_requests"),
        write_bytes: number("write_bytes"),
        util_pct: record["util_pct"].as_f64(),
        queue_size: record["aqu_sz"].as_f64(),
        await_ms,
        ..DeviceWindow::default()
    };
    let window_s = requests / (number("r_per_s") + number("w_per_s")).max(f64::MIN_POSITIVE);
    device.service_time_ms = device
        .util_pct
        .filter(|_| requests > 0.0)
        .map(|util| util / 100.0 * window_s * 1e3 / requests);
    describe(&mut device, environment);
    device
}

/// Rotational and md stripe geometry from the recording's device details
/// (a run's `environment.device_details`, calibrate's target).
pub(crate) fn describe(device: &mut DeviceWindow, environment: &Value) {
    let Some(details) = device_details(environment)
        .into_iter()
        .find(|details| details["name"] == device.name.as_str())
    else {
        return;
    };
    device.rotational = details["rotational"].as_bool();
    let kind = &details["kind"];
    if kind["kind"] == "md" {
        device.stripe = Some(Stripe {
            level: kind["level"].as_str().unwrap_or("").to_string(),
            chunk_bytes: kind["chunk_bytes"].as_f64().unwrap_or(0.0),
            member_disks: kind["raid_disks"].as_u64().unwrap_or(0) as u32,
        });
    }
}

fn device_details(environment: &Value) -> Vec<&Value> {
    let mut all: Vec<&Value> = environment["device_details"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let target = &environment["target"];
    all.extend(target["device"].as_object().map(|_| &target["device"]));
    all.extend(target["physical_devices"].as_array().into_iter().flatten());
    all
}
