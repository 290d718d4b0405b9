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

/// The database's counters over the timeline: PostgreSQL's, else InnoDB's
/// (`innodb_direct`: its data files are opened with O_DIRECT); `None`
/// without samples of either.
pub(crate) fn database(timeline: &Timeline, innodb_direct: bool) -> Option<DatabaseTotals> {
    if timeline.covered_s("postgres") > 0.0 {
        return DatabaseTotals::from_counters(&|name| timeline.total("postgres", name, &any));
    }
    if timeline.covered_s("mariadb") > 0.0 {
        return DatabaseTotals::from_innodb(
            &|name| timeline.total("mariadb", name, &any),
            innodb_direct,
        );
    }
    None
}

/// The sampled wait events over the timeline.
pub(crate) fn waits(timeline: &Timeline) -> Option<WaitSamples> {
    let polls = timeline.total("postgres", "samples", &any)?;
    let active = timeline.total("postgres", "active_session_samples", &any)?;
    let mut events: Vec<(String, String, f64)> = Vec::new();
    for sample in timeline.layer("postgres") {
        for series in &sample.series {
            let (Some(rate), true) = (series.rate, series.name == "wait_event_samples") else {
                continue;
            };
            let event = series.labels.get("wait_event").cloned().unwrap_or_default();
            let class = series
                .labels
                .get("wait_event_type")
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

/// The devices an observe recording should count: disks that are not
/// members of an md array in the samples, and the md arrays themselves.
pub(crate) fn physical_device_names(timeline: &Timeline) -> Vec<String> {
    let mut disks = Vec::new();
    let mut members = Vec::new();
    for sample in timeline.layer("device") {
        for series in &sample.series {
            let Some(name) = series.labels.get("device") else {
                continue;
            };
            match series.labels.get("kind").map(String::as_str) {
                Some("disk") | Some("md") => disks.push(name.clone()),
                _ => {}
            }
            if let Some(list) = series.labels.get("md_members") {
                members.extend(list.split(',').map(str::to_string));
            }
        }
    }
    disks.sort();
    disks.dedup();
    disks.retain(|name| !members.contains(name));
    disks
}

/// One device's totals over the timeline, iostat's way; `None` when the
/// device never appears.
pub(crate) fn device(timeline: &Timeline, name: &str, role: &str) -> Option<DeviceWindow> {
    let this = |labels: &Labels| labels.get("device").map(String::as_str) == Some(name);
    let total = |counter: &str| timeline.total("device", counter, &this);
    let read_requests = total("read_requests")?;
    let mut device = DeviceWindow {
        name: name.to_string(),
        role: role.to_string(),
        read_requests,
        read_bytes: total("read_bytes").unwrap_or(0.0),
        write_requests: total("write_requests").unwrap_or(0.0),
        write_bytes: total("write_bytes").unwrap_or(0.0),
        ..DeviceWindow::default()
    };
    let covered_ms = timeline.covered_s("device") * 1000.0;
    let requests = device.read_requests + device.write_requests;
    let busy_ms = total("busy_ms");
    device.util_pct = busy_ms.map(|busy| 100.0 * busy / covered_ms);
    device.queue_size = total("weighted_ms").map(|weighted| weighted / covered_ms);
    if requests > 0.0 {
        let io_ms = total("read_ms").unwrap_or(0.0) + total("write_ms").unwrap_or(0.0);
        device.await_ms = Some(io_ms / requests);
        device.service_time_ms = busy_ms.map(|busy| busy / requests);
    }
    describe_from_labels(timeline, name, &mut device);
    Some(device)
}

fn describe_from_labels(timeline: &Timeline, name: &str, device: &mut DeviceWindow) {
    let labels = timeline
        .layer("device")
        .flat_map(|sample| sample.series.iter())
        .map(|series| &series.labels)
        .find(|labels| labels.get("device").map(String::as_str) == Some(name));
    let Some(labels) = labels else { return };
    device.rotational = labels.get("rotational").map(|text| text == "true");
    if labels.get("kind").map(String::as_str) == Some("md") {
        device.stripe = Some(Stripe {
            level: labels.get("md_level").cloned().unwrap_or_default(),
            chunk_bytes: labels
                .get("chunk_bytes")
                .and_then(|text| text.parse().ok())
                .unwrap_or(0.0),
            member_disks: labels
                .get("md_members")
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
    for sample in timeline.layer("device") {
        for name in names {
            let this = |labels: &Labels| labels.get("device") == Some(name);
            let rate = |counter: &str| sample.rate(counter, &this).unwrap_or(0.0);
            let requests = rate("read_requests") + rate("write_requests");
            if requests <= 0.0 {
                continue;
            }
            let await_ms = (rate("read_ms") + rate("write_ms")) / requests;
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
        move |labels: &Labels| labels.get("op").map(String::as_str) == Some(wanted)
    };
    let read_ops = timeline.total("nfs", "ops", &op("READ"))?;
    Some(NfsTotals {
        read_ops,
        read_bytes: timeline
            .total("nfs", "bytes_received", &op("READ"))
            .unwrap_or(0.0),
        write_ops: timeline.total("nfs", "ops", &op("WRITE")).unwrap_or(0.0),
        write_bytes: timeline
            .total("nfs", "bytes_sent", &op("WRITE"))
            .unwrap_or(0.0),
    })
}

/// Bytes through every interface but loopback; `None` without NICs.
pub(crate) fn nic(timeline: &Timeline) -> Option<NicTotals> {
    let not_loopback = |labels: &Labels| labels.get("interface").map(String::as_str) != Some("lo");
    Some(NicTotals {
        receive_bytes: timeline.total("net", "receive_bytes", &not_loopback)?,
        transmit_bytes: timeline
            .total("net", "transmit_bytes", &not_loopback)
            .unwrap_or(0.0),
    })
}

/// The host's CPU and the server processes' run-queue delay; `None`
/// without cpu samples.
pub(crate) fn cpu(timeline: &Timeline, host_cpus: f64) -> Option<CpuEvidence> {
    let covered_s = timeline.covered_s("cpu");
    if covered_s <= 0.0 {
        return None;
    }
    let ticks = |name: &str| timeline.total("cpu", name, &any);
    let all_ticks: f64 = CPU_TICK_COUNTERS
        .iter()
        .filter_map(|name| ticks(name))
        .sum();
    let is_cpu = |labels: &Labels| labels.get("resource").map(String::as_str) == Some("cpu");
    let process_s = timeline.covered_s("process");
    Some(CpuEvidence {
        cpus: timeline.gauge_average("cpu", "cpus").unwrap_or(host_cpus),
        idle_pct: ticks("idle_ticks")
            .filter(|_| all_ticks > 0.0)
            .map(|idle| 100.0 * idle / all_ticks),
        procs_running_avg: timeline.gauge_average("cpu", "procs_running"),
        run_delay_ms_per_s: timeline
            .total("process", "run_delay_ns", &any)
            .filter(|_| process_s > 0.0)
            .map(|ns| ns / 1e6 / process_s),
        psi_cpu_some_pct: timeline
            .total("cpu", "pressure_some_us", &is_cpu)
            .map(|us| 100.0 * us / 1e6 / covered_s),
    })
}
