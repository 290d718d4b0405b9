//! Accounting across layers for one measured window: what the sessions did,
//! what PostgreSQL counted, what the block devices under the data and WAL
//! directories did, what the page cache absorbed, and where the CPU went.
//! Every figure names its unit and its layer; "reads" never stands alone.
//!
//! Not for: taking the snapshots (`edge`) or printing (`output`).

use crate::edge::{Edge, HostEdge};
use crate::processes::{groups_between, server_ticks_between};
use strata_core::histogram::LatencyHistogram;
use strata_core::metrics::Collector;
use strata_core::verdict::Verdict;
use strata_probe::collectors::{all_os_collectors, BlockTraceCollector, DeviceFilter};
use strata_probe::diskstats::{find, DeviceDelta, DiskStat, IostatFigures};
pub use strata_recording::environment::RunDevices;
pub use strata_recording::run::{
    Absorption, CpuFigures, DatabaseFigures, OperationFigures, OtherHostFigures, PageCacheHeld,
    RunFigures, SessionFigures, WorkloadFigures,
};
use strata_slob::session::RunOutcome;

pub use strata_recording::run::{ABSORBED_WARNING_PCT, BLOCK_BYTES, CPU_BOUND_IDLE_PCT};

/// Which devices a layer sampler watches: those under the data and WAL
/// directories, each once, or every device when none could be resolved.
pub fn sampler_filter(devices: &RunDevices) -> DeviceFilter {
    let names = devices.each_once();
    match names.is_empty() {
        true => DeviceFilter::All,
        false => DeviceFilter::Names(names),
    }
}

/// The layers a run samples on this host every second: every OS layer of
/// the run's devices (`pids`' run-queue delay when given) and the block
/// tracer's, whose per-second histograms the Recording keeps.
pub fn local_collectors(devices: &RunDevices, pids: Vec<u32>) -> Vec<Box<dyn Collector>> {
    let mut collectors = all_os_collectors(sampler_filter(devices), pids).unwrap_or_default();
    collectors.push(Box::new(BlockTraceCollector::new()));
    collectors
}

/// `count` per second of `seconds`; 0 over no time.
pub fn per_s(count: f64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count / seconds
    } else {
        0.0
    }
}

fn operation(histogram: &LatencyHistogram, seconds: f64) -> OperationFigures {
    OperationFigures {
        per_s: per_s(histogram.count() as f64, seconds),
        latency: histogram.summary(),
    }
}

fn workload(outcome: &RunOutcome, seconds: f64) -> WorkloadFigures {
    let operations = [
        ("select", &outcome.select),
        ("update", &outcome.update),
        ("commit", &outcome.commit),
        ("scan", &outcome.scan),
    ]
    .into_iter()
    .map(|(name, histogram)| (name.to_string(), operation(histogram, seconds)))
    .collect();
    WorkloadFigures {
        loops: outcome.loops,
        loops_per_s: per_s(outcome.loops as f64, seconds),
        sql_statements: outcome.sql_statements,
        sql_per_s: per_s(outcome.sql_statements as f64, seconds),
        rows_selected: outcome.rows_selected,
        rows_updated: outcome.rows_updated,
        operations,
    }
}

fn sessions(outcome: &RunOutcome) -> SessionFigures {
    SessionFigures {
        started: outcome.sessions_started,
        failed: outcome.sessions_failed,
        alive_through_window: outcome.sessions_alive_through_window,
        reconnects: outcome.reconnects,
        first_connection_lost: outcome.first_connection_lost.clone(),
        failures: outcome
            .failures
            .iter()
            .map(|failure| {
                format!(
                    "session {} ({}) failed {:.1} s after the start: {}",
                    failure.session, failure.schema, failure.seconds_from_start, failure.error
                )
            })
            .collect(),
    }
}

/// iostat's figures of each named device found at both edges, with its
/// role, and why each other named device has none (a reset between the
/// edges).
fn deltas(
    start: &[DiskStat],
    end: &[DiskStat],
    named: Vec<(String, &str)>,
    seconds: f64,
) -> (Vec<IostatFigures>, Vec<String>) {
    let mut figures = Vec::new();
    let mut gaps = Vec::new();
    for (name, role) in named {
        let (before, after) = match (find(start, &name), find(end, &name)) {
            (Some(before), Some(after)) => (before, after),
            (None, None) => continue,
            (None, Some(_)) => {
                gaps.push(format!("{name} was not counted at the window's start edge"));
                continue;
            }
            (Some(_), None) => {
                gaps.push(format!("{name} was not counted at the window's end edge"));
                continue;
            }
        };
        match DeviceDelta::between(before, after, seconds) {
            Ok(delta) => figures.push(delta.figures(role)),
            Err(reset) => gaps.push(reset),
        }
    }
    (figures, gaps)
}

fn cpu(start: &Edge, end: &Edge, edge_seconds: f64) -> CpuFigures {
    CpuFigures {
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        host_idle_pct: end.host_cpu.idle_pct_since(&start.host_cpu),
        host_iowait_pct: end.host_cpu.iowait_pct_since(&start.host_cpu),
        host_cpu_pressure_pct: end
            .host_cpu
            .pressure_pct_since(&start.host_cpu, edge_seconds),
        interval_s: edge_seconds,
        server_cpu_s: server_ticks_between(&start.server, &end.server) as f64
            / strata_probe::cpu::ticks_per_second(),
        strata_cpu_s: end.own_cpu_s - start.own_cpu_s,
        server_processes: groups_between(&start.server, &end.server),
    }
}

fn warnings(figures: &RunFigures, end: &Edge) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(absorption) = &figures.absorption {
        if absorption.absorbed_pct > ABSORBED_WARNING_PCT {
            warnings.push(format!(
                "{:.1}% of the database's block reads ({:.0} of {:.0} blocks) never reached a device: the page \
                 cache absorbed them, so this is not a storage result (limit the page cache: --page-cache-limit)",
                absorption.absorbed_pct, absorption.absorbed_blocks, absorption.database_blocks_read
            ));
        }
    }
    match figures.cpu.host_idle_pct {
        Some(idle) if idle < CPU_BOUND_IDLE_PCT => warnings.push(format!(
            "the host was {idle:.1}% idle: the run was CPU-bound, so it is not a storage result"
        )),
        Some(_) => {}
        None => warnings.push(
            "the host's CPU counters went down between the window's edges (the host \
             restarted?): its CPU shares over the window are not known"
                .to_string(),
        ),
    }
    warnings.extend(writes_without_wal(figures));
    if let Some(error) = &end.database_error {
        warnings.push(format!(
            "database counters at the end of the window are missing: {error}"
        ));
    }
    if figures.sessions.failed > 0 {
        warnings.push(format!(
            "{} of {} sessions failed",
            figures.sessions.failed, figures.sessions.started
        ));
    }
    warnings
}

/// A run that updated nothing while its devices wrote: said, with where
/// the writes came from when PostgreSQL counts it (its backends writing
/// dirty buffers out to make room, `buffers_backend`), since a read-only
/// result should not carry another workload's writes unnamed.
fn writes_without_wal(figures: &RunFigures) -> Option<String> {
    let database = figures.database.as_ref()?;
    let written: u64 = figures
        .devices
        .iter()
        .map(|device| device.write_bytes)
        .sum();
    let requests: u64 = figures
        .devices
        .iter()
        .map(|device| device.write_requests)
        .sum();
    let read_only = figures.workload.rows_updated == 0;
    if !read_only || written < 1 << 20 || database.wal_bytes * 100.0 > written as f64 {
        return None;
    }
    let backend_writes = database
        .counters
        .get("bgwriter.buffers_backend")
        .copied()
        .unwrap_or(0.0);
    let whose = match backend_writes > 0.0 {
        true => format!(
            "PostgreSQL's backends wrote {backend_writes:.0} dirty buffers out themselves to \
             make room (buffers_backend): pages dirtied without WAL (hint bits) and evicted"
        ),
        false => "not the database's WAL: another process, or the kernel writing back dirty \
                  pages"
            .to_string(),
    };
    Some(format!(
        "the run updated nothing, yet its devices wrote {:.1} MB in {requests} requests \
         ({:.0}/s) with {:.1} MB of WAL: {whose}; the device's read figures carry these writes",
        written as f64 / 1e6,
        per_s(requests as f64, figures.window_s),
        database.wal_bytes / 1e6
    ))
}

/// Who did the devices' I/O: the server's processes seen at either edge,
/// strata, and the rest. `None` without devices, or for a server whose
/// processes strata does not know (a PostgreSQL it did not start: its
/// backends would pass for other tenants); SQLite runs inside strata.
fn tenants(
    start: &Edge,
    end: &Edge,
    devices: &[IostatFigures],
    traced: Option<&strata_recording::run::BlockTraceFigures>,
) -> Option<crate::tenants::TenantFigures> {
    let server: std::collections::BTreeSet<u32> = start
        .server
        .by_pid
        .keys()
        .chain(end.server.by_pid.keys())
        .copied()
        .collect();
    let unknown_server = server.is_empty() && end.database.is_some();
    if devices.is_empty() || unknown_server {
        return None;
    }
    // Exact where the block layer is traced; /proc/PID/io where it is not.
    if let Some(traced) = traced.filter(|traced| traced.unavailable.is_none()) {
        let strata = std::process::id();
        return Some(crate::tenants::traced(
            &traced.processes,
            &server,
            strata,
            devices,
        ));
    }
    let names: std::collections::BTreeSet<String> =
        devices.iter().map(|device| device.device.clone()).collect();
    Some(crate::tenants::attribute(
        &start.processes_io,
        &end.processes_io,
        &server,
        std::process::id(),
        devices,
        &|pid| crate::tenants::has_open_file_on(pid, &names),
    ))
}

/// Accounts for one window; `database` is what the engine's own counters
/// gave between the two edges (PostgreSQL's), `None` for engines whose
/// figures go to `SlobOutcome::engine_figures`. The verdict is left for
/// the engine to judge with what it knows (`verdict::judge`).
pub fn account(
    start: &Edge,
    end: &Edge,
    database: Option<DatabaseFigures>,
    outcome: &RunOutcome,
    run_devices: &RunDevices,
) -> RunFigures {
    let seconds = (outcome.window_end - outcome.window_start).as_secs_f64();
    let edge_seconds = (end.at - start.at).as_secs_f64();
    let (devices, device_gaps) =
        deltas(&start.disks, &end.disks, run_devices.roles(), edge_seconds);
    let absorption = database
        .as_ref()
        .map(|database| Absorption::of(database, &devices));
    let mut figures = RunFigures {
        window_s: seconds,
        interrupted: outcome.interrupted,
        sessions: sessions(outcome),
        workload: workload(outcome, seconds),
        database,
        devices,
        absorption,
        cpu: cpu(start, end, edge_seconds),
        per_second: outcome.per_second.clone(),
        warnings: Vec::new(),
        tenants: None,
        verdict: Verdict::Valid,
        page_cache_held: None,
        outliers: crate::outliers::outliers(outcome),
        start_edge_late_s: start
            .at
            .saturating_duration_since(outcome.window_start.into_std())
            .as_secs_f64(),
        other_hosts: other_host_figures(&start.other_hosts, &end.other_hosts, edge_seconds),
        devices_unobserved: None,
        block_trace: None,
        window_start_unix_s: Some(strata_core::time::unix_s_at(
            outcome.window_start.into_std(),
        )),
    };
    figures.block_trace = Some(crate::block_trace::figures(start, end, &figures.devices));
    figures.tenants = tenants(start, end, &figures.devices, figures.block_trace.as_ref());
    if let Some(why) = &run_devices.unobserved {
        figures.devices_not_observed(why.clone());
    }
    if !device_gaps.is_empty() {
        let gaps = device_gaps.join("; ");
        figures.devices_not_observed(format!("{gaps}: no figure spans the window"));
    }
    figures.warnings = warnings(&figures, end);
    figures
        .warnings
        .extend(crate::edge::host_oom_warning(start, end));
    figures
}

/// Each other host over the window, from its counters at the two edges:
/// its disks iostat's way and its CPU's idle share, or the gap where its
/// agent did not answer at an edge.
pub fn other_host_figures(
    start: &[HostEdge],
    end: &[HostEdge],
    seconds: f64,
) -> Vec<OtherHostFigures> {
    start
        .iter()
        .zip(end)
        .map(|(start, end)| {
            let gap = start.missing.clone().or_else(|| end.missing.clone());
            let (devices, resets) = match gap {
                Some(_) => (Vec::new(), Vec::new()),
                None => {
                    let observed = start
                        .disks
                        .iter()
                        .map(|disk| (disk.name.clone(), "observed"));
                    deltas(&start.disks, &end.disks, observed.collect(), seconds)
                }
            };
            let gap = gap
                .map(|error| format!("its agent did not answer at an edge of the window ({error})"))
                .or_else(|| (!resets.is_empty()).then(|| resets.join("; ")));
            OtherHostFigures {
                host: start.host.clone(),
                devices,
                cpus: end.cpus,
                host_idle_pct: match gap {
                    None => end.host_cpu.idle_pct_since(&start.host_cpu),
                    Some(_) => None,
                },
                gap,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::HostEdge;
    use strata_probe::cpu::HostCpu;
    use strata_probe::diskstats::DiskStat;

    #[test]
    fn the_sampler_watches_each_data_and_wal_device_once() {
        let devices = RunDevices {
            data: vec!["sda".into(), "sdb".into()],
            wal: vec!["sda".into(), "nvme0n1".into()],
            unobserved: None,
        };
        assert_eq!(
            sampler_filter(&devices),
            DeviceFilter::Names(vec!["sda".into(), "sdb".into(), "nvme0n1".into()])
        );
        assert_eq!(sampler_filter(&RunDevices::default()), DeviceFilter::All);
    }

    fn edge(host: &str, read_requests: u64, idle: u64, missing: Option<&str>) -> HostEdge {
        HostEdge {
            host: host.into(),
            disks: vec![DiskStat {
                name: "vdb".into(),
                read_requests,
                field_count: 17,
                ..DiskStat::default()
            }],
            host_cpu: HostCpu {
                idle,
                user: 100,
                ..HostCpu::default()
            },
            cpus: Some(4.0),
            missing: missing.map(str::to_string),
        }
    }

    #[test]
    fn another_host_s_window_is_its_edges_difference_or_a_named_gap() {
        let start = [edge("nfs1", 100, 100, None), edge("db2", 5, 0, None)];
        let end = [
            edge("nfs1", 300, 300, None),
            edge("db2", 0, 0, Some("connection refused")),
        ];
        let figures = other_host_figures(&start, &end, 2.0);
        assert_eq!(figures[0].devices[0].read_requests, 200);
        assert_eq!(figures[0].devices[0].r_per_s, 100.0);
        assert_eq!(figures[0].host_idle_pct, Some(100.0));
        assert!(figures[1].devices.is_empty());
        assert_eq!(figures[1].host_idle_pct, None);
        assert!(figures[1]
            .gap
            .as_deref()
            .unwrap()
            .contains("connection refused"));
    }
}
