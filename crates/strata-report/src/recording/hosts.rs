//! Other hosts' layers over the window (`device@HOST`, `cpu@HOST`: the
//! agents a run or `strata observe --agent` followed, or what a Prometheus
//! server scraped of them): per host, its devices and CPU, read as this
//! machine's are, and the devices' totals across hosts (a host is one
//! agent's, so no device is summed twice); and, for a host whose strata
//! agent watches its database, the reads at each layer reconciled.
//!
//! Not for: the server host a run accounts with (its agent's counters
//! stand in this machine's layers, in the run's own sections).

use super::layers;
use super::measured::{DatabaseSource, Measured};
use super::run::device_window;
use super::samples::Timeline;
use super::sections::{number, optional, reconciliation};
use super::time_series::{device_series, line};
use crate::findings::{CpuEvidence, DeviceWindow};
use strata_output::document::{Cell, Column, Section, Table, Window};
use strata_recording::names::{device, layer};
use strata_recording::run::OtherHostFigures;
use strata_recording::Environment;

/// InnoDB's default page size, for a host whose page size no agent gives.
const INNODB_PAGE_BYTES: f64 = 16384.0;

/// One host's window, as a [`Measured`] of its own layers.
struct HostWindow {
    host: String,
    cpu_s: f64,
    measured: Measured,
}

/// The section, when the window holds any other host's layers: the
/// devices and CPU of every host, and the reads at each layer of each host
/// whose agent watches a database.
pub(crate) fn section(within: &Timeline) -> Option<Section> {
    let hosts: Vec<HostWindow> = within
        .other_hosts()
        .into_iter()
        .map(|host| host_window(within, host))
        .collect();
    let mut section = laid_out(&hosts)?.note(SAMPLED);
    for host in &hosts {
        let timeline = within.of_host(&host.host);
        let unnamed_arrays = layers::md_arrays_without_members(&timeline);
        if !unnamed_arrays.is_empty() {
            section = section.note(format!(
                "{}: its agent does not name the members of {}: those arrays are not counted, \
                 the disks under them are",
                host.host,
                unnamed_arrays.join(", ")
            ));
        }
        for layer in [layer::DEVICE, layer::CPU] {
            for (thing, gaps) in timeline.gaps(layer) {
                let thing = match thing.is_empty() {
                    true => layer.to_string(),
                    false => thing,
                };
                section = section.note(format!(
                    "{}: {thing} has no rates over {} interval(s), {:.1} s, not counted in its \
                     figures: {}",
                    host.host, gaps.intervals, gaps.seconds, gaps.first
                ));
            }
        }
    }
    Some(section)
}

/// A run's other hosts over its whole measured window, exactly: from its
/// result, its agents' counters at the window's two edges.
pub(crate) fn from_run_result(
    figures: &[OtherHostFigures],
    window_s: f64,
    environment: &Environment,
) -> Option<Section> {
    let hosts: Vec<HostWindow> = figures
        .iter()
        .map(|host| {
            let mut measured = Measured::empty(Window {
                from_s: 0.0,
                to_s: window_s,
            });
            measured.devices = host
                .devices
                .iter()
                .map(|device| device_window(device, environment))
                .collect();
            measured.cpu = Some(CpuEvidence {
                cpus: host.cpus.unwrap_or(f64::NAN),
                idle_pct: host.host_idle_pct,
                procs_running_avg: None,
                run_delay_ms_per_s: None,
                psi_cpu_some_pct: None,
            });
            let covered_s = if host.gap.is_some() { 0.0 } else { window_s };
            measured.window_s = covered_s;
            HostWindow {
                host: host.host.clone(),
                cpu_s: covered_s,
                measured,
            }
        })
        .collect();
    let mut section = laid_out(&hosts)?.note(
        "Each host's figures are its agent's counters at the two edges of the run's measured \
         window, as the server host's are.",
    );
    for host in figures {
        if let Some(gap) = &host.gap {
            section = section.note(format!("{}: no figures: {gap}", host.host));
        }
    }
    Some(section)
}

const SAMPLED: &str = "Each host's figures are its own agent's counters, placed on this \
     recording's clock; \"covered\" is the time its samples span (less than the window where \
     its agent did not answer). Rates are over each host's own covered time.";

fn laid_out(hosts: &[HostWindow]) -> Option<Section> {
    if hosts.is_empty() {
        return None;
    }
    let mut section = Section::new("hosts", "Hosts")
        .table(device_table(hosts))
        .table(cpu_table(hosts));
    for host in hosts.iter().filter(|host| host.measured.database.is_some()) {
        if let Some(mut table) = reconciliation(&host.measured) {
            table.title = table.title.map(|title| format!("{}: {title}", host.host));
            section = section.table(table);
        }
    }
    Some(section)
}

/// Every host's devices' requests/s, second by second (or step by step),
/// as one chart; `None` without other hosts.
pub(crate) fn over_time(within: &Timeline) -> Option<Section> {
    let mut series = Vec::new();
    for host in within.other_hosts() {
        let timeline = within.of_host(&host);
        let names = layers::physical_device_names(&timeline);
        for counter in [device::READ_REQUESTS, device::WRITE_REQUESTS] {
            series.extend(
                device_series(&timeline, &names, counter, 1.0)
                    .into_iter()
                    .map(|mut one| {
                        one.name = format!("{host} {}", one.name);
                        one
                    }),
            );
        }
    }
    let chart = line(
        "hosts_device_iops_over_time",
        "Device requests/s by host (each host's device layer)",
        "requests/s",
        "requests/s",
        series,
    );
    (!chart.series.is_empty()).then(|| Section::new("time_series", "Over time").chart(chart))
}

fn host_window(within: &Timeline, host: String) -> HostWindow {
    let timeline = within.of_host(&host);
    let device_s = timeline.covered_s(layer::DEVICE);
    let mut measured = Measured::empty(Window {
        from_s: 0.0,
        to_s: device_s,
    });
    measured.devices = layers::physical_device_names(&timeline)
        .iter()
        .filter_map(|name| layers::device(&timeline, name, "observed"))
        .collect();
    measured.database = layers::database(&timeline, false);
    if measured
        .database
        .as_ref()
        .is_some_and(|database| database.source == DatabaseSource::InnoDb)
    {
        measured.block_bytes = INNODB_PAGE_BYTES;
    }
    measured.cpu = layers::cpu(&timeline, f64::NAN);
    HostWindow {
        host,
        cpu_s: timeline.covered_s(layer::CPU),
        measured,
    }
}

fn per_s(total: f64, covered_s: f64) -> f64 {
    if covered_s > 0.0 {
        total / covered_s
    } else {
        f64::NAN
    }
}

fn device_table(hosts: &[HostWindow]) -> Table {
    let mut table = Table::new(
        Some("Devices by host (each host's device layer, iostat -x definitions)"),
        vec![
            Column::text("host"),
            Column::text("device"),
            Column::number("covered", Some("s")),
            Column::number("read requests", Some("requests")),
            Column::number("r/s", Some("requests/s")),
            Column::number("rMB/s", Some("MB/s")),
            Column::number("rareq-sz", Some("KiB")),
            Column::number("write requests", Some("requests")),
            Column::number("w/s", Some("requests/s")),
            Column::number("wMB/s", Some("MB/s")),
            Column::number("await", Some("ms")),
            Column::number("%util", Some("%")),
        ],
    );
    let mut all = DeviceWindow::default();
    let (mut read_rate, mut read_mb_rate, mut write_rate, mut write_mb_rate) = (0.0, 0.0, 0.0, 0.0);
    for host in hosts {
        let device_s = host.measured.window_s;
        for device in &host.measured.devices {
            let rate = |total: f64| per_s(total, device_s);
            read_rate += rate(device.read_requests);
            read_mb_rate += rate(device.read_bytes) / 1e6;
            write_rate += rate(device.write_requests);
            write_mb_rate += rate(device.write_bytes) / 1e6;
            all.read_requests += device.read_requests;
            all.read_bytes += device.read_bytes;
            all.write_requests += device.write_requests;
            all.write_bytes += device.write_bytes;
            table.push(vec![
                Cell::text(host.host.as_str()),
                Cell::text(device.name.as_str()),
                number(device_s, "s"),
                number(device.read_requests, "requests"),
                number(rate(device.read_requests), "requests/s"),
                number(rate(device.read_bytes) / 1e6, "MB/s"),
                optional(device.read_request_kib(), "KiB"),
                number(device.write_requests, "requests"),
                number(rate(device.write_requests), "requests/s"),
                number(rate(device.write_bytes) / 1e6, "MB/s"),
                optional(device.await_ms, "ms"),
                optional(device.util_pct, "%"),
            ]);
        }
    }
    table.push(vec![
        Cell::text("all hosts"),
        Cell::text("all devices"),
        Cell::empty(),
        number(all.read_requests, "requests"),
        number(read_rate, "requests/s"),
        number(read_mb_rate, "MB/s"),
        optional(all.read_request_kib(), "KiB"),
        number(all.write_requests, "requests"),
        number(write_rate, "requests/s"),
        number(write_mb_rate, "MB/s"),
        Cell::empty(),
        Cell::empty(),
    ]);
    table
}

fn cpu_table(hosts: &[HostWindow]) -> Table {
    let mut table = Table::new(
        Some("CPU by host (each host's CPU layer)"),
        vec![
            Column::text("host"),
            Column::number("covered", Some("s")),
            Column::number("CPUs", Some("CPUs")),
            Column::number("CPU idle", Some("%")),
            Column::number("runnable tasks (average)", Some("tasks")),
        ],
    );
    for host in hosts {
        let cpu = host.measured.cpu.as_ref();
        table.push(vec![
            Cell::text(host.host.as_str()),
            number(host.cpu_s, "s"),
            optional(
                cpu.map(|cpu| cpu.cpus).filter(|cpus| cpus.is_finite()),
                "CPUs",
            ),
            optional(cpu.and_then(|cpu| cpu.idle_pct), "%"),
            optional(cpu.and_then(|cpu| cpu.procs_running_avg), "tasks"),
        ]);
    }
    table
}
