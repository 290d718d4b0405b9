//! A scrape's devices, CPU and memory as strata's own counters, whichever
//! agent gave them: a strata agent (`strata observe --prometheus`, series
//! `strata_<layer>_…` in base units) or node_exporter (`node_disk_…`,
//! `node_cpu_seconds_total`, `node_vmstat_oom_kill`). Seconds become the
//! milliseconds `/proc/diskstats` counts, bytes its 512-byte sectors, so the
//! accounting of a window is the same code for a remote host as for this
//! one. A strata agent's database, NFS client and NFS server counters come
//! back in their layers' own names and units (`served_layers`).
//!
//! Not for: scraping (`scrape`) or accounting (strata-run).

use crate::nfs_server::{nfs_server_calls, NfsServerCalls};
use crate::scrape::Scrape;
use crate::text::{count, Series};
use std::collections::BTreeMap;
use std::sync::LazyLock;
use strata_core::metrics::Metric;
use strata_probe::cpu::HostCpu;
use strata_probe::diskstats::DiskStat;
use strata_recording::names::{layer, mariadb, nfs, nfs_server, postgres, served};

/// Which agent answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Strata,
    NodeExporter,
}

impl Dialect {
    /// `strata` or `node_exporter`, as recordings and reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Strata => "strata",
            Dialect::NodeExporter => "node_exporter",
        }
    }
}

/// A device counter: where `DiskStat` keeps it, and its unit there.
#[derive(Clone, Copy, PartialEq)]
enum Field {
    ReadRequests,
    ReadMerges,
    ReadSectors,
    ReadMs,
    WriteRequests,
    WriteMerges,
    WriteSectors,
    WriteMs,
    InFlight,
    BusyMs,
    WeightedMs,
    FlushRequests,
    FlushMs,
}

/// Each dialect's device series (the name after its prefix) and the field
/// it fills; seconds become ms and bytes sectors by the field's unit.
const STRATA_DEVICE: [(&str, Field); 13] = [
    ("read_requests_total", Field::ReadRequests),
    ("read_merges_total", Field::ReadMerges),
    ("read_bytes_total", Field::ReadSectors),
    ("read_seconds_total", Field::ReadMs),
    ("write_requests_total", Field::WriteRequests),
    ("write_merges_total", Field::WriteMerges),
    ("write_bytes_total", Field::WriteSectors),
    ("write_seconds_total", Field::WriteMs),
    ("in_flight", Field::InFlight),
    ("busy_seconds_total", Field::BusyMs),
    ("weighted_seconds_total", Field::WeightedMs),
    ("flush_requests_total", Field::FlushRequests),
    ("flush_seconds_total", Field::FlushMs),
];

const NODE_DEVICE: [(&str, Field); 13] = [
    ("reads_completed_total", Field::ReadRequests),
    ("reads_merged_total", Field::ReadMerges),
    ("read_bytes_total", Field::ReadSectors),
    ("read_time_seconds_total", Field::ReadMs),
    ("writes_completed_total", Field::WriteRequests),
    ("writes_merged_total", Field::WriteMerges),
    ("written_bytes_total", Field::WriteSectors),
    ("write_time_seconds_total", Field::WriteMs),
    ("io_now", Field::InFlight),
    ("io_time_seconds_total", Field::BusyMs),
    ("io_time_weighted_seconds_total", Field::WeightedMs),
    ("flush_requests_total", Field::FlushRequests),
    ("flush_requests_time_seconds_total", Field::FlushMs),
];

/// The device series a disk must have to be counted: without one of
/// them its figures would be made up.
const REQUIRED: [Field; 9] = [
    Field::ReadRequests,
    Field::ReadSectors,
    Field::ReadMs,
    Field::WriteRequests,
    Field::WriteSectors,
    Field::WriteMs,
    Field::InFlight,
    Field::BusyMs,
    Field::WeightedMs,
];

/// The device series a disk must have to be counted, as `dialect` names
/// them (`node_disk_reads_completed_total`, …): one without any of them is
/// left out, named in [`HostCounters::unreadable`].
pub fn required_device_series(dialect: Dialect) -> Vec<String> {
    let (prefix, names) = match dialect {
        Dialect::Strata => ("strata_device_", &STRATA_DEVICE),
        Dialect::NodeExporter => ("node_disk_", &NODE_DEVICE),
    };
    names
        .iter()
        .filter(|(_, field)| REQUIRED.contains(field))
        .map(|(name, _)| format!("{prefix}{name}"))
        .collect()
}

impl Field {
    /// Puts `value` (in the series' unit) into `stat`; a value no counter
    /// can hold (NaN, an infinity, below 0, past 2^64) is an error.
    fn set(self, stat: &mut DiskStat, value: f64) -> Result<(), String> {
        let (slot, value) = match self {
            Field::ReadRequests => (&mut stat.read_requests, value),
            Field::ReadMerges => (&mut stat.read_merges, value),
            Field::ReadSectors => (&mut stat.read_sectors, value / 512.0),
            Field::ReadMs => (&mut stat.read_ms, value * 1e3),
            Field::WriteRequests => (&mut stat.write_requests, value),
            Field::WriteMerges => (&mut stat.write_merges, value),
            Field::WriteSectors => (&mut stat.write_sectors, value / 512.0),
            Field::WriteMs => (&mut stat.write_ms, value * 1e3),
            Field::InFlight => (&mut stat.in_flight, value),
            Field::BusyMs => (&mut stat.busy_ms, value * 1e3),
            Field::WeightedMs => (&mut stat.weighted_ms, value * 1e3),
            Field::FlushRequests => (&mut stat.flush_requests, value),
            Field::FlushMs => (&mut stat.flush_ms, value * 1e3),
        };
        *slot = count(value)?;
        Ok(())
    }
}

/// One host's counters at one scrape.
#[derive(Clone, Debug)]
pub struct HostCounters {
    pub dialect: Dialect,
    /// The host's name: a strata agent's `host` label, node_exporter's
    /// `node_uname_info` nodename, else the URL's host.
    pub host: String,
    pub disks: Vec<DiskStat>,
    /// What each device is (`disk`, `partition`, `dm`, `md`, `loop`): a
    /// strata agent's `kind` label (it reads `/sys/block/*/slaves` and
    /// `holders`); for node_exporter, `node_disk_device_mapper_info` and
    /// the names (`dm-N`, `mdN`, a partition named after a disk it lists:
    /// `mmcblk0p1` of `mmcblk0`). Only a `disk` is counted in a host's
    /// total.
    pub kinds: BTreeMap<String, String>,
    /// Seconds of CPU time by mode, summed over CPUs, as hundredths (the
    /// shares between two scrapes are what counts); `None` where the agent
    /// gave no CPU series or one no counter can hold (in `unreadable`).
    pub cpu: Option<HostCpu>,
    /// Runnable tasks and CPUs, when the agent gives them.
    pub procs_running: Option<f64>,
    pub cpus: Option<f64>,
    pub oom_kills: Option<u64>,
    /// Mount points and the devices mounted there (node_exporter's
    /// `node_filesystem_*`), to find a path's device.
    pub mounts: Vec<(String, String)>,
    /// Each network interface but loopback, its bytes received and sent
    /// (a strata agent's `strata_net_*`, node_exporter's
    /// `node_network_*`); one whose counters are not whole numbers of 0 or
    /// more is left out.
    pub interfaces: Vec<InterfaceCounters>,
    /// The calls an NFS server on the host counted itself, per export and
    /// operation (a strata agent's `nfs_server` layer; none from
    /// node_exporter).
    pub nfs_server: Vec<NfsServerCalls>,
    /// What of the answer is not taken, by the labels strata's layers
    /// give the thing (`device=vda,kind=disk`: [`HostCounters::thing`];
    /// `` for the host's CPU), and why: a value no counter can hold (NaN,
    /// an infinity, below 0) or a series the thing must have and has not.
    /// Absent, never a number.
    pub unreadable: BTreeMap<String, String>,
}

impl HostCounters {
    /// The counters of a scrape; `None` when neither agent answered.
    pub fn of(scrape: &Scrape, url_host: &str) -> Option<HostCounters> {
        let has = |prefix: &str| scrape.series.iter().any(|s| s.name.starts_with(prefix));
        let dialect = if has("strata_") {
            Dialect::Strata
        } else if has("node_") {
            Dialect::NodeExporter
        } else {
            return None;
        };
        let (device_prefix, device_series) = match dialect {
            Dialect::Strata => ("strata_device_", &STRATA_DEVICE),
            Dialect::NodeExporter => ("node_disk_", &NODE_DEVICE),
        };
        let (disks, labelled, unreadable_devices) = disks(scrape, device_prefix, device_series);
        let kinds = match dialect {
            Dialect::Strata => labelled,
            Dialect::NodeExporter => node_exporter_kinds(scrape, &disks, &unreadable_devices),
        };
        let kind = |device: &str| kinds.get(device).map_or("disk", String::as_str);
        let mut unreadable: BTreeMap<String, String> = unreadable_devices
            .iter()
            .map(|(device, why)| (thing(device, kind(device)), why.clone()))
            .collect();
        let cpu = cpu(&scrape.series, dialect)
            .map_err(|why| unreadable.insert(String::new(), why))
            .ok();
        let procs_running = scrape
            .value(match dialect {
                Dialect::Strata => "strata_cpu_procs_running",
                Dialect::NodeExporter => "node_procs_running",
            })
            .filter(|running| running.is_finite() && *running >= 0.0);
        Some(HostCounters {
            dialect,
            host: host_name(scrape, dialect).unwrap_or_else(|| url_host.to_string()),
            disks,
            kinds,
            cpu,
            procs_running,
            cpus: cpus(&scrape.series, dialect),
            oom_kills: oom_kills(scrape, dialect),
            mounts: mounts(&scrape.series),
            interfaces: interfaces(&scrape.series, dialect),
            nfs_server: nfs_server_calls(&served_layers(scrape)),
            unreadable,
        })
    }

    /// What `device` is (`disk` when nothing says otherwise).
    pub fn kind(&self, device: &str) -> &str {
        self.kinds.get(device).map_or("disk", String::as_str)
    }

    /// `device=NAME,kind=KIND`: the device as strata's device layer labels
    /// it, the key of its gaps.
    pub fn thing(&self, device: &str) -> String {
        thing(device, self.kind(device))
    }

    /// The devices left out of `disks` (in `unreadable`).
    pub fn unreadable_devices(&self) -> impl Iterator<Item = &str> {
        self.unreadable.keys().filter_map(|thing| {
            let (device, _kind) = thing.strip_prefix("device=")?.split_once(",kind=")?;
            Some(device)
        })
    }

    /// The devices a path's files are on, as this host's agent names them:
    /// for node_exporter, the device mounted at the path's longest mount
    /// point (a partition's disk when the partition has no counters of its
    /// own); for a strata agent (run with `--path` there), every disk and
    /// md array it watches, or its loop devices when it watches nothing
    /// else (it was pointed at them), never a partition or a mapping over
    /// a disk it also counts.
    pub fn devices_under(&self, path: &str) -> Vec<String> {
        match self.dialect {
            Dialect::Strata => {
                let of_kinds = |kinds: &[&str]| -> Vec<String> {
                    self.disks
                        .iter()
                        .filter(|disk| {
                            self.kinds
                                .get(&disk.name)
                                .map_or(true, |kind| kinds.contains(&kind.as_str()))
                        })
                        .map(|disk| disk.name.clone())
                        .collect()
                };
                let disks = of_kinds(&["disk", "md"]);
                match disks.is_empty() {
                    true => of_kinds(&["loop"]),
                    false => disks,
                }
            }
            Dialect::NodeExporter => self.mounted_device(path).into_iter().collect(),
        }
    }

    fn mounted_device(&self, path: &str) -> Option<String> {
        let (_, device) = self
            .mounts
            .iter()
            .filter(|(mount, _)| {
                path == mount
                    || path.starts_with(&format!("{}/", mount.trim_end_matches('/')))
                    || mount == "/"
            })
            .max_by_key(|(mount, _)| mount.len())?;
        let name = device.strip_prefix("/dev/")?;
        let known = |name: &str| self.disks.iter().any(|disk| disk.name == name);
        if known(name) {
            return Some(name.to_string());
        }
        let disk = partition_disk(name);
        known(&disk).then_some(disk)
    }
}

/// `device=NAME,kind=KIND`.
fn thing(device: &str, kind: &str) -> String {
    format!("device={device},kind={kind}")
}

/// What each of node_exporter's devices is: `dm` for device-mapper's
/// (`node_disk_device_mapper_info`, or named `dm-N`), `md` for an md
/// array (`mdN`), `partition` for a name that is a partition of another
/// device listed (`sda1` of `sda`, `nvme0n1p2` of `nvme0n1`), `loop`, and
/// `disk` otherwise.
fn node_exporter_kinds(
    scrape: &Scrape,
    disks: &[DiskStat],
    unreadable: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let names: Vec<&str> = disks
        .iter()
        .map(|disk| disk.name.as_str())
        .chain(unreadable.keys().map(String::as_str))
        .collect();
    let mapped: Vec<&str> = scrape
        .series
        .iter()
        .filter(|series| series.name == "node_disk_device_mapper_info")
        .filter_map(|series| series.label("device"))
        .collect();
    let numbered = |name: &str, prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()))
    };
    names
        .iter()
        .map(|name| {
            let disk = partition_disk(name);
            let kind = if mapped.contains(name) || numbered(name, "dm-") {
                "dm"
            } else if numbered(name, "md") {
                "md"
            } else if numbered(name, "loop") {
                "loop"
            } else if disk != *name && names.contains(&disk.as_str()) {
                "partition"
            } else {
                "disk"
            };
            (name.to_string(), kind.to_string())
        })
        .collect()
}

/// The disks of a scrape, each one's `kind` label where it has one, and
/// the disks left out with why: one with a value no counter can hold, or
/// without a series it must have.
fn disks(
    scrape: &Scrape,
    prefix: &str,
    device_series: &[(&str, Field)],
) -> (
    Vec<DiskStat>,
    BTreeMap<String, String>,
    BTreeMap<String, String>,
) {
    let mut unreadable = BTreeMap::new();
    let mut disks: BTreeMap<String, (DiskStat, Vec<usize>)> = BTreeMap::new();
    let mut kinds = BTreeMap::new();
    let mut bad: BTreeMap<String, String> = BTreeMap::new();
    for series in &scrape.series {
        let Some(rest) = series.name.strip_prefix(prefix) else {
            continue;
        };
        let Some(device) = series.label("device") else {
            continue;
        };
        if let Some(kind) = series.label("kind") {
            kinds.insert(device.to_string(), kind.to_string());
        }
        let Some(index) = device_series.iter().position(|(name, _)| *name == rest) else {
            continue;
        };
        let (stat, seen) = disks.entry(device.to_string()).or_insert_with(|| {
            let stat = DiskStat {
                name: device.to_string(),
                ..DiskStat::default()
            };
            (stat, Vec::new())
        });
        seen.push(index);
        if let Err(why) = device_series[index].1.set(stat, series.value) {
            bad.entry(device.to_string())
                .or_insert(format!("{} {why}", series.name));
        }
    }
    let mut kept = Vec::new();
    for (device, (mut stat, seen)) in disks {
        let has = |field: &Field| seen.iter().any(|index| device_series[*index].1 == *field);
        let why = bad.remove(&device).or_else(|| {
            let missing = REQUIRED.iter().find(|field| !has(field))?;
            let (name, _) = device_series.iter().find(|(_, field)| field == missing)?;
            Some(format!("the agent gives no {prefix}{name} of it"))
        });
        match why {
            Some(why) => {
                unreadable.insert(device, why);
            }
            None => {
                let flushes_known = [Field::FlushRequests, Field::FlushMs].iter().all(has);
                stat.field_count = if flushes_known { 17 } else { 11 };
                kept.push(stat);
            }
        }
    }
    (kept, kinds, unreadable)
}

/// `vda1` → `vda`, `nvme0n1p2` → `nvme0n1`, `mmcblk0p1` → `mmcblk0`.
fn partition_disk(name: &str) -> String {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    match stem.strip_suffix('p') {
        Some(disk) if disk.ends_with(|c: char| c.is_ascii_digit()) => disk.to_string(),
        _ => stem.to_string(),
    }
}

fn host_name(scrape: &Scrape, dialect: Dialect) -> Option<String> {
    let (name, label) = match dialect {
        Dialect::Strata => ("strata_sample_time_seconds", "host"),
        Dialect::NodeExporter => ("node_uname_info", "nodename"),
    };
    scrape
        .series
        .iter()
        .find(|series| series.name == name)?
        .label(label)
        .map(str::to_string)
}

/// CPU seconds by mode as hundredths of a second; an error where the
/// agent gives no CPU time (its idle time, which every host has) or a
/// value no counter can hold. A mode the agent does not give (steal on
/// bare metal) is 0.
fn cpu(series: &[Series], dialect: Dialect) -> Result<HostCpu, String> {
    if of_cpu_mode(series, dialect, "idle").next().is_none() {
        return Err("the agent gives no CPU time (node_cpu_seconds_total, \
                    strata_cpu_idle_seconds_total)"
            .to_string());
    }
    let hundredths = |mode: &str| -> Result<u64, String> {
        let seconds: f64 = of_cpu_mode(series, dialect, mode)
            .map(|series| series.value)
            .sum();
        count(seconds * 100.0).map_err(|why| format!("its {mode} CPU time {why}"))
    };
    Ok(HostCpu {
        user: hundredths("user")?,
        nice: hundredths("nice")?,
        system: hundredths("system")?,
        idle: hundredths("idle")?,
        iowait: hundredths("iowait")?,
        irq: hundredths("irq")?,
        softirq: hundredths("softirq")?,
        steal: hundredths("steal")?,
        pressure_some_us: cpu_pressure_some_us(series, dialect),
    })
}

/// The series of the CPU time in `mode` (per CPU for node_exporter).
fn of_cpu_mode<'a>(
    series: &'a [Series],
    dialect: Dialect,
    mode: &'a str,
) -> impl Iterator<Item = &'a Series> + 'a {
    series.iter().filter(move |series| match dialect {
        Dialect::Strata => series.name == format!("strata_cpu_{mode}_seconds_total"),
        Dialect::NodeExporter => {
            series.name == "node_cpu_seconds_total" && series.label("mode") == Some(mode)
        }
    })
}

/// CPU pressure's `some` total, µs: strata's
/// `strata_cpu_pressure_some_seconds_total{resource="cpu"}`, node_exporter's
/// `node_pressure_cpu_waiting_seconds_total`; `None` where the host
/// exported none.
fn cpu_pressure_some_us(series: &[Series], dialect: Dialect) -> Option<u64> {
    let seconds = series
        .iter()
        .find(|series| match dialect {
            Dialect::Strata => {
                series.name == "strata_cpu_pressure_some_seconds_total"
                    && series.label("resource") == Some("cpu")
            }
            Dialect::NodeExporter => series.name == "node_pressure_cpu_waiting_seconds_total",
        })?
        .value;
    count(seconds * 1e6).ok()
}

/// A strata agent's `cpus` (a whole number, 1 or more: any other is
/// absent); node_exporter's CPUs counted by their `cpu` label.
fn cpus(series: &[Series], dialect: Dialect) -> Option<f64> {
    match dialect {
        Dialect::Strata => series
            .iter()
            .find(|series| series.name == "strata_cpu_cpus")
            .map(|series| series.value)
            .filter(|cpus| *cpus >= 1.0 && cpus.fract() == 0.0 && cpus.is_finite()),
        Dialect::NodeExporter => {
            let cpus: std::collections::BTreeSet<&str> = series
                .iter()
                .filter(|series| series.name == "node_cpu_seconds_total")
                .filter_map(|series| series.label("cpu"))
                .collect();
            (!cpus.is_empty()).then_some(cpus.len() as f64)
        }
    }
}

fn oom_kills(scrape: &Scrape, dialect: Dialect) -> Option<u64> {
    let name = match dialect {
        Dialect::Strata => "strata_memory_oom_kills_total",
        Dialect::NodeExporter => "node_vmstat_oom_kill",
    };
    count(scrape.value(name)?).ok()
}

/// One network interface's counters at a scrape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterfaceCounters {
    pub interface: String,
    pub receive_bytes: u64,
    pub transmit_bytes: u64,
}

fn interfaces(series: &[Series], dialect: Dialect) -> Vec<InterfaceCounters> {
    let (prefix, label) = match dialect {
        Dialect::Strata => ("strata_net_", "interface"),
        Dialect::NodeExporter => ("node_network_", "device"),
    };
    let bytes = |family: &str, interface: &str| {
        let name = format!("{prefix}{family}_bytes_total");
        let value = series
            .iter()
            .find(|series| series.name == name && series.label(label) == Some(interface))?
            .value;
        count(value).ok().filter(|_| value.fract() == 0.0)
    };
    let receive = format!("{prefix}receive_bytes_total");
    let mut names: Vec<&str> = series
        .iter()
        .filter(|series| series.name == receive)
        .filter_map(|series| series.label(label))
        .filter(|interface| *interface != "lo")
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .filter_map(|interface| {
            Some(InterfaceCounters {
                interface: interface.to_string(),
                receive_bytes: bytes("receive", interface)?,
                transmit_bytes: bytes("transmit", interface)?,
            })
        })
        .collect()
}

fn mounts(series: &[Series]) -> Vec<(String, String)> {
    let mut mounts: Vec<(String, String)> = series
        .iter()
        .filter(|series| series.name == "node_filesystem_size_bytes")
        .filter_map(|series| {
            Some((
                series.label("mountpoint")?.to_string(),
                series.label("device")?.to_string(),
            ))
        })
        .collect();
    mounts.sort();
    mounts.dedup();
    mounts
}

/// A strata agent's layers beyond its devices and CPU, back in their own
/// names and units: its database's series (`strata_postgres_…_total`,
/// `strata_mariadb_…_total`: the counters a report reads), its NFS mounts'
/// (`strata_nfs_…`: the kernel client's, or a calibration's own client)
/// and its NFS server's (`strata_nfs_server_…`): the exposition's names,
/// inverted.
pub fn served_layers(scrape: &Scrape) -> Vec<(&'static str, Vec<Metric>)> {
    let mut by_layer: BTreeMap<&'static str, Vec<Metric>> = BTreeMap::new();
    let served = &*SERVED_COUNTERS;
    for series in &scrape.series {
        let Some((layer, name, factor)) = served.get(series.name.as_str()) else {
            continue;
        };
        let mut metric = Metric::counter(name, series.value / factor);
        metric.labels = series
            .labels
            .iter()
            .filter(|(key, _)| !["host", "job", "instance"].contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        by_layer.entry(layer).or_default().push(metric);
    }
    by_layer.into_iter().collect()
}

/// Each served name of a counter `served_layers` reads: its layer, its own
/// name, and the factor the exposition multiplied it by.
static SERVED_COUNTERS: LazyLock<BTreeMap<String, (&str, &str, f64)>> =
    LazyLock::new(served_counters);

fn served_counters() -> BTreeMap<String, (&'static str, &'static str, f64)> {
    let postgres = postgres::READ_BY_REPORTS.map(|name| (layer::POSTGRES, name));
    let mariadb = mariadb::READ_BY_REPORTS.map(|name| (layer::MARIADB, name));
    let nfs = nfs::OP_COUNTERS.map(|name| (layer::NFS, name));
    let nfs_server = nfs_server::COUNTERS.map(|name| (layer::NFS_SERVER, name));
    postgres
        .into_iter()
        .chain(mariadb)
        .chain(nfs)
        .chain(nfs_server)
        .map(|(layer, name)| {
            let (served, factor, _) = served(layer, &Metric::counter(name, 0.0), 100.0);
            (served, (layer, name, factor))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse;

    fn scrape(text: &str) -> Scrape {
        Scrape {
            url: "http://db1:9100/metrics".into(),
            sent_unix_s: 0.0,
            came_back_unix_s: 0.0,
            series: parse(text).series,
            unread: None,
        }
    }

    /// Every device series of `dialect` for one device (`labels`), 0 but
    /// those `given` (the name after the prefix, and the value's text).
    fn device_series(dialect: Dialect, labels: &str, given: &[(&str, &str)]) -> String {
        let (prefix, names) = match dialect {
            Dialect::Strata => ("strata_device_", &STRATA_DEVICE),
            Dialect::NodeExporter => ("node_disk_", &NODE_DEVICE),
        };
        names
            .iter()
            .map(|(name, _)| {
                let value = given
                    .iter()
                    .find(|(given, _)| given == name)
                    .map_or("0", |(_, value)| value);
                format!("{prefix}{name}{{{labels}}} {value}\n")
            })
            .collect()
    }

    #[test]
    fn node_exporter_s_disks_cpu_and_mounts_become_diskstats_and_ticks() {
        let vda = device_series(
            Dialect::NodeExporter,
            "device=\"vda\"",
            &[
                ("reads_completed_total", "431824"),
                ("read_bytes_total", "5448160256"),
                ("read_time_seconds_total", "58.04"),
                ("io_time_seconds_total", "12.5"),
            ],
        );
        let vdb = device_series(
            Dialect::NodeExporter,
            "device=\"vdb\"",
            &[("reads_completed_total", "7")],
        );
        let counters = HostCounters::of(
            &scrape(&format!(
                "{vda}{vdb}node_cpu_seconds_total{{cpu=\"0\",mode=\"idle\"}} 100.5\n\
                 node_cpu_seconds_total{{cpu=\"1\",mode=\"idle\"}} 99.5\n\
                 node_cpu_seconds_total{{cpu=\"0\",mode=\"user\"}} 10\n\
                 node_vmstat_oom_kill 2\n\
                 node_pressure_cpu_waiting_seconds_total 12.5\n\
                 node_uname_info{{nodename=\"db1\",release=\"6.1\",version=\"#1 SMP, x\"}} 1\n\
                 node_filesystem_size_bytes{{device=\"/dev/vda1\",fstype=\"ext4\",mountpoint=\"/\"}} 1\n\
                 node_filesystem_size_bytes{{device=\"/dev/vdb\",fstype=\"xfs\",mountpoint=\"/data\"}} 1\n\
                 node_network_receive_bytes_total{{device=\"eth0\"}} 4.2e+09\n\
                 node_network_transmit_bytes_total{{device=\"eth0\"}} 1200\n\
                 node_network_receive_bytes_total{{device=\"lo\"}} 99\n\
                 node_network_transmit_bytes_total{{device=\"lo\"}} 99\n\
                 node_network_receive_bytes_total{{device=\"eth1\"}} NaN\n\
                 node_network_transmit_bytes_total{{device=\"eth1\"}} 5\n"
            )),
            "10.0.0.2",
        )
        .unwrap();
        assert_eq!(counters.dialect, Dialect::NodeExporter);
        assert_eq!(counters.host, "db1");
        assert!(counters.unreadable.is_empty(), "{:?}", counters.unreadable);
        let vda = counters
            .disks
            .iter()
            .find(|disk| disk.name == "vda")
            .unwrap();
        assert_eq!(vda.read_requests, 431824);
        assert_eq!(vda.read_sectors, 5448160256 / 512);
        assert_eq!(vda.read_ms, 58040);
        assert_eq!(vda.busy_ms, 12500);
        assert_eq!(vda.field_count, 17, "its flushes are counted");
        let cpu = counters.cpu.unwrap();
        assert_eq!(cpu.idle, 20000);
        assert_eq!(cpu.user, 1000);
        assert_eq!(cpu.pressure_some_us, Some(12_500_000));
        assert_eq!(counters.oom_kills, Some(2));
        assert_eq!(counters.cpus, Some(2.0));
        assert_eq!(
            counters.devices_under("/var/lib/postgresql/15/main"),
            ["vda"]
        );
        assert_eq!(counters.devices_under("/data/pg"), ["vdb"]);
        assert_eq!(counters.devices_under("/database"), ["vda"]);
        let eth0 = InterfaceCounters {
            interface: "eth0".into(),
            receive_bytes: 4_200_000_000,
            transmit_bytes: 1200,
        };
        assert_eq!(counters.interfaces, [eth0], "loopback and a NaN left out");
    }

    #[test]
    fn a_strata_agent_s_disks_are_its_kind_disk_devices_in_base_units() {
        let labels =
            |device: &str, kind: &str| format!("host=\"db2\",device=\"{device}\",kind=\"{kind}\"");
        let vda = device_series(
            Dialect::Strata,
            &labels("vda", "disk"),
            &[
                ("read_requests_total", "10"),
                ("read_seconds_total", "0.25"),
            ],
        );
        let vda1 = device_series(
            Dialect::Strata,
            &labels("vda1", "partition"),
            &[("read_requests_total", "9")],
        );
        let counters = HostCounters::of(
            &scrape(&format!(
                "strata_sample_time_seconds{{host=\"db2\"}} 1\n{vda}{vda1}\
                 strata_cpu_idle_seconds_total{{host=\"db2\"}} 3.5\n\
                 strata_cpu_pressure_some_seconds_total{{host=\"db2\",resource=\"io\"}} 9\n\
                 strata_cpu_pressure_some_seconds_total{{host=\"db2\",resource=\"cpu\"}} 2\n"
            )),
            "10.0.0.2",
        )
        .unwrap();
        assert_eq!(counters.dialect, Dialect::Strata);
        assert_eq!(counters.host, "db2");
        assert_eq!(counters.devices_under("/anything"), ["vda"]);
        let loop3 = device_series(Dialect::Strata, &labels("loop3", "loop"), &[]);
        let loops = HostCounters::of(&scrape(&loop3), "10.0.0.2").unwrap();
        assert_eq!(
            loops.devices_under("/"),
            ["loop3"],
            "an agent pointed at a loop device"
        );
        assert_eq!(counters.disks[0].read_ms, 250);
        let cpu = counters.cpu.unwrap();
        assert_eq!(cpu.idle, 350);
        assert_eq!(cpu.pressure_some_us, Some(2_000_000));
        assert_eq!(loops.cpu, None, "an agent that gives no CPU time");
        assert!(loops.unreadable[""].contains("no CPU time"));
        assert!(HostCounters::of(&scrape("up 1\n"), "x").is_none());
    }

    /// What no counter can hold is absent with why, never a number: a
    /// NaN, an infinity, a negative value, a series a disk must have and
    /// has not; impossible CPU counts and run queues are absent.
    #[test]
    fn non_finite_negative_and_missing_values_are_absent_with_why() {
        let disk = |device: &str, given: &[(&str, &str)]| {
            device_series(
                Dialect::NodeExporter,
                &format!("device=\"{device}\""),
                given,
            )
        };
        let missing: String = disk("sdd", &[])
            .lines()
            .filter(|line| !line.starts_with("node_disk_io_time_seconds_total"))
            .map(|line| format!("{line}\n"))
            .collect();
        let text = [
            disk("sda", &[("reads_completed_total", "NaN")]),
            disk("sdb", &[("io_time_weighted_seconds_total", "+Inf")]),
            disk("sdc", &[("writes_completed_total", "-3")]),
            missing,
            disk("sde", &[("reads_completed_total", "12")]),
            "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} NaN\n".to_string(),
            "node_procs_running -1\n".to_string(),
        ]
        .concat();
        let counters = HostCounters::of(&scrape(&text), "db1").unwrap();
        let names: Vec<&str> = counters
            .disks
            .iter()
            .map(|disk| disk.name.as_str())
            .collect();
        assert_eq!(names, ["sde"]);
        let why = |device: &str| counters.unreadable[&format!("device={device},kind=disk")].clone();
        assert_eq!(why("sda"), "node_disk_reads_completed_total is NaN");
        assert_eq!(
            why("sdb"),
            "node_disk_io_time_weighted_seconds_total is inf"
        );
        assert_eq!(why("sdc"), "node_disk_writes_completed_total is -3");
        assert_eq!(
            why("sdd"),
            "the agent gives no node_disk_io_time_seconds_total of it"
        );
        assert_eq!(counters.cpu, None);
        assert_eq!(counters.unreadable[""], "its idle CPU time is NaN");
        assert_eq!(counters.procs_running, None);
        for cpus in ["-5", "NaN", "2.5", "0", "+Inf"] {
            let text =
                format!("strata_cpu_cpus{{host=\"h\"}} {cpus}\nstrata_cpu_idle_seconds_total 1\n");
            let counters = HostCounters::of(&scrape(&text), "h").unwrap();
            assert_eq!(counters.cpus, None, "strata_cpu_cpus {cpus}");
        }
    }

    #[test]
    fn partitions_name_their_disks() {
        assert_eq!(partition_disk("vda1"), "vda");
        assert_eq!(partition_disk("nvme0n1p2"), "nvme0n1");
        assert_eq!(partition_disk("mmcblk0p1"), "mmcblk0");
        assert_eq!(partition_disk("sdb"), "sdb");
    }

    #[test]
    fn an_agent_s_ganesha_series_read_back_as_counts() {
        let text = "\
strata_nfs_server_ops_total{host=\"filer\",export=\"/export\",op=\"READ\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 2048
strata_nfs_server_errors_total{host=\"filer\",export=\"/export\",op=\"READ\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 0
strata_nfs_server_transferred_bytes_total{host=\"filer\",export=\"/export\",op=\"READ\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 16777216
strata_nfs_server_latency_seconds_total{host=\"filer\",export=\"/export\",op=\"READ\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 0.041234567
strata_nfs_server_ops_total{host=\"filer\",export=\"/export\",op=\"WRITE\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 3
strata_nfs_server_errors_total{host=\"filer\",export=\"/export\",op=\"WRITE\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} NaN
strata_nfs_server_transferred_bytes_total{host=\"filer\",export=\"/export\",op=\"WRITE\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 8192
strata_nfs_server_latency_seconds_total{host=\"filer\",export=\"/export\",op=\"WRITE\",protocol=\"NFSv3\",server=\"nfs-ganesha\"} 0.001
";
        let calls = nfs_server_calls(&served_layers(&scrape(text)));
        assert_eq!(
            calls,
            [NfsServerCalls {
                server: "nfs-ganesha".into(),
                export: "/export".into(),
                protocol: "NFSv3".into(),
                op: "READ".into(),
                calls: 2048,
                errors: 0,
                transferred_bytes: 16_777_216,
                latency_ns: 41_234_567,
            }],
            "the WRITE series with a NaN count is left out, never a number"
        );
    }
}
