//! Each layer's window totals from a [`Timeline`] of observe-shaped samples:
//! PostgreSQL's counters and wait events, devices, NFS, NICs, CPU and the
//! server processes' run-queue delay, and device await spikes.
//!
//! Not for: choosing the window (the callers cut the timeline first) or
//! the run's and calibrate's own window records.

use super::measured::{DatabaseTotals, NfsTotals, NicTotals, WaitSamples};
use super::samples::{any, Labels, Timeline};
use crate::findings::{AwaitSpike, CpuEvidence, DeviceWindow, Stripe};
use strata_core::metrics::CPU_TICK_COUNTERS;
use strata_recording::names::{cpu, device, label, layer, net, nfs, postgres, process};

/// The database's counters over the timeline: PostgreSQL's, else InnoDB's
/// (`innodb_direct`: its data files are opened with O_DIRECT); `None`
/// without samples of either.
pub(crate) fn database(timeline: &Timeline, innodb_direct: bool) -> Option<DatabaseTotals> {
    if timeline.covered_s(layer::POSTGRES) > 0.0 {
        return DatabaseTotals::from_counters(&|name| timeline.total(layer::POSTGRES, name, &any));
    }
    if timeline.covered_s(layer::MARIADB) > 0.0 {
        return DatabaseTotals::from_innodb(
            &|name| timeline.total(layer::MARIADB, name, &any),
            innodb_direct,
        );
    }
    None
}

/// The sampled wait events over the timeline.
pub(crate) fn waits(timeline: &Timeline) -> Option<WaitSamples> {
    let polls = timeline.total(layer::POSTGRES, postgres::SAMPLES, &any)?;
    let active = timeline.total(layer::POSTGRES, postgres::ACTIVE_SESSION_SAMPLES, &any)?;
    let mut events: Vec<(String, String, f64)> = Vec::new();
    for sample in timeline.layer(layer::POSTGRES) {
        for series in &sample.series {
            let (Some(rate), true) = (series.rate, series.name == postgres::WAIT_EVENT_SAMPLES)
            else {
                continue;
            };
            let event = series
                .labels
                .get(label::WAIT_EVENT)
                .cloned()
                .unwrap_or_default();
            let class = series
                .labels
                .get(label::WAIT_EVENT_TYPE)
                .cloned()
                .unwrap_or_default();
            match events
                .iter_mut()
                .find(|(e, c, _)| *e == event && *c == class)
            {
                Some(entry) => entry.2 += rate * sample.interval_s,
                None => events.push((event, class, rate * sample.interval_s)),
            }
        }
    }
    events.sort_by(|a, b| b.2.total_cmp(&a.2));
    Some(WaitSamples {
        polls,
        active_session_samples: active,
        events,
    })
}

/// The md arrays of the device layer whose members its source does not
/// name (node_exporter's): a total counts the disks under them instead.
pub(crate) fn md_arrays_without_members(timeline: &Timeline) -> Vec<String> {
    let mut named = Vec::new();
    let mut arrays = Vec::new();
    for series in timeline
        .layer(layer::DEVICE)
        .flat_map(|sample| sample.series.iter())
    {
        let Some(name) = series.labels.get(label::DEVICE) else {
            continue;
        };
        if series.labels.get(label::KIND).map(String::as_str) == Some("md") {
            match series.labels.contains_key(label::MD_MEMBERS) {
                true => named.push(name.clone()),
                false => arrays.push(name.clone()),
            }
        }
    }
    arrays.sort();
    arrays.dedup();
    arrays.retain(|array| !named.contains(array));
    arrays
}

/// The devices an observe recording should count: disks that are not
/// members of an md array in the samples, and the md arrays whose members
/// they name (a strata agent's `md_members`); the loop devices where there
/// are none of those (an agent pointed at loop devices).
pub(crate) fn physical_device_names(timeline: &Timeline) -> Vec<String> {
    let mut loops = Vec::new();
    let mut disks = Vec::new();
    let mut members = Vec::new();
    for sample in timeline.layer(layer::DEVICE) {
        for series in &sample.series {
            let Some(name) = series.labels.get(label::DEVICE) else {
                continue;
            };
            let known_members = series.labels.contains_key(label::MD_MEMBERS);
            match series.labels.get(label::KIND).map(String::as_str) {
                Some("disk") => disks.push(name.clone()),
                // An array whose members are not named (node_exporter's)
                // is not counted: its disks are.
                Some("md") if known_members => disks.push(name.clone()),
                Some("loop") => loops.push(name.clone()),
                _ => {}
            }
            if let Some(list) = series.labels.get(label::MD_MEMBERS) {
                members.extend(list.split(',').map(str::to_string));
            }
        }
    }
    if disks.is_empty() {
        disks = loops;
    }
    disks.sort();
    disks.dedup();
    disks.retain(|name| !members.contains(name));
    disks
}

/// One device's totals over the timeline, iostat's way; `None` when the
/// device never appears.
pub(crate) fn device(timeline: &Timeline, name: &str, role: &str) -> Option<DeviceWindow> {
    let this = |labels: &Labels| labels.get(label::DEVICE).map(String::as_str) == Some(name);
    let total = |counter: &str| timeline.total(layer::DEVICE, counter, &this);
    let read_requests = total(device::READ_REQUESTS)?;
    let mut device = DeviceWindow {
        name: name.to_string(),
        role: role.to_string(),
        read_requests,
        read_bytes: total(device::READ_BYTES).unwrap_or(0.0),
        write_requests: total(device::WRITE_REQUESTS).unwrap_or(0.0),
        write_bytes: total(device::WRITE_BYTES).unwrap_or(0.0),
        ..DeviceWindow::default()
    };
    let covered_ms = timeline.covered_s(layer::DEVICE) * 1000.0;
    let requests = device.read_requests + device.write_requests;
    let busy_ms = total(device::BUSY_MS);
    device.util_pct = busy_ms.map(|busy| 100.0 * busy / covered_ms);
    device.queue_size = total(device::WEIGHTED_MS).map(|weighted| weighted / covered_ms);
    if requests > 0.0 {
        let io_ms = total(device::READ_MS).unwrap_or(0.0) + total(device::WRITE_MS).unwrap_or(0.0);
        device.await_ms = Some(io_ms / requests);
        device.service_time_ms = busy_ms.map(|busy| busy / requests);
    }
    describe_from_labels(timeline, name, &mut device);
    Some(device)
}

fn describe_from_labels(timeline: &Timeline, name: &str, device: &mut DeviceWindow) {
    let labels = timeline
        .layer(layer::DEVICE)
        .flat_map(|sample| sample.series.iter())
        .map(|series| &series.labels)
        .find(|labels| labels.get(label::DEVICE).map(String::as_str) == Some(name));
    let Some(labels) = labels else { return };
    device.rotational = labels.get(label::ROTATIONAL).map(|text| text == "true");
    if labels.get(label::KIND).map(String::as_str) == Some("md") {
        device.stripe = Some(Stripe {
            level: labels.get(label::MD_LEVEL).cloned().unwrap_or_default(),
            chunk_bytes: labels
                .get(label::CHUNK_BYTES)
                .and_then(|text| text.parse().ok())
                .unwrap_or(0.0),
            member_disks: labels
                .get(label::MD_MEMBERS)
                .map_or(0, |list| list.split(',').count() as u32),
        });
    }
}

/// Seconds in which a device's average await (read + write time per
/// request) went over `threshold_ms`.
pub(crate) fn await_spikes(
    timeline: &Timeline,
    names: &[String],
    threshold_ms: f64,
) -> Vec<AwaitSpike> {
    let mut spikes = Vec::new();
    for sample in timeline.layer(layer::DEVICE) {
        for name in names {
            let this = |labels: &Labels| labels.get(label::DEVICE) == Some(name);
            let rate = |counter: &str| sample.rate(counter, &this).unwrap_or(0.0);
            let requests = rate(device::READ_REQUESTS) + rate(device::WRITE_REQUESTS);
            if requests <= 0.0 {
                continue;
            }
            let await_ms = (rate(device::READ_MS) + rate(device::WRITE_MS)) / requests;
            if await_ms > threshold_ms {
                spikes.push(AwaitSpike {
                    t_s: sample.t_s,
                    device: name.clone(),
                    await_ms,
                });
            }
        }
    }
    spikes
}

/// The kernel NFS client's READ and WRITE traffic; `None` without NFS.
pub(crate) fn nfs(timeline: &Timeline) -> Option<NfsTotals> {
    let op = |wanted: &'static str| {
        move |labels: &Labels| labels.get(label::OP).map(String::as_str) == Some(wanted)
    };
    let read_ops = timeline.total(layer::NFS, nfs::OPS, &op("READ"))?;
    Some(NfsTotals {
        read_ops,
        read_bytes: timeline
            .total(layer::NFS, nfs::BYTES_RECEIVED, &op("READ"))
            .unwrap_or(0.0),
        write_ops: timeline
            .total(layer::NFS, nfs::OPS, &op("WRITE"))
            .unwrap_or(0.0),
        write_bytes: timeline
            .total(layer::NFS, nfs::BYTES_SENT, &op("WRITE"))
            .unwrap_or(0.0),
    })
}

/// Bytes through every interface but loopback; `None` without NICs.
pub(crate) fn nic(timeline: &Timeline) -> Option<NicTotals> {
    let not_loopback =
        |labels: &Labels| labels.get(label::INTERFACE).map(String::as_str) != Some("lo");
    Some(NicTotals {
        receive_bytes: timeline.total(layer::NET, net::RECEIVE_BYTES, &not_loopback)?,
        transmit_bytes: timeline
            .total(layer::NET, net::TRANSMIT_BYTES, &not_loopback)
            .unwrap_or(0.0),
    })
}

/// The host's CPU and the server processes' run-queue delay; `None`
/// without cpu samples.
pub(crate) fn cpu(timeline: &Timeline, host_cpus: f64) -> Option<CpuEvidence> {
    let covered_s = timeline.covered_s(layer::CPU);
    if covered_s <= 0.0 {
        return None;
    }
    let ticks = |name: &str| timeline.total(layer::CPU, name, &any);
    let all_ticks: f64 = CPU_TICK_COUNTERS
        .iter()
        .filter_map(|name| ticks(name))
        .sum();
    let is_cpu = |labels: &Labels| labels.get(label::RESOURCE).map(String::as_str) == Some("cpu");
    let process_s = timeline.covered_s(layer::PROCESS);
    Some(CpuEvidence {
        cpus: timeline
            .gauge_average(layer::CPU, cpu::CPUS)
            .unwrap_or(host_cpus),
        idle_pct: ticks(cpu::IDLE_TICKS)
            .filter(|_| all_ticks > 0.0)
            .map(|idle| 100.0 * idle / all_ticks),
        procs_running_avg: timeline.gauge_average(layer::CPU, cpu::PROCS_RUNNING),
        run_delay_ms_per_s: timeline
            .total(layer::PROCESS, process::RUN_DELAY_NS, &any)
            .filter(|_| process_s > 0.0)
            .map(|ns| ns / 1e6 / process_s),
        psi_cpu_some_pct: timeline
            .total(layer::CPU, cpu::PRESSURE_SOME_US, &is_cpu)
            .map(|us| 100.0 * us / 1e6 / covered_s),
    })
}
