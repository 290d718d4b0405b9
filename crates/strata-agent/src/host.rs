//! A scrape's devices, CPU and memory as strata's own counters, whichever
//! agent gave them: a strata agent (`strata observe --prometheus`, series
//! `strata_<layer>_…` in base units) or node_exporter (`node_disk_…`,
//! `node_cpu_seconds_total`, `node_vmstat_oom_kill`). Seconds become the
//! milliseconds `/proc/diskstats` counts, bytes its 512-byte sectors, so the
//! accounting of a window is the same code for a remote host as for this
//! one. A strata agent's database counters come back in the database
//! layer's own names and units (`database_layers`).
//!
//! Not for: scraping (`scrape`) or accounting (strata-run).

use crate::scrape::Scrape;
use crate::text::Series;
use std::collections::BTreeMap;
use std::sync::LazyLock;
use strata_core::metrics::Metric;
use strata_probe::cpu::HostCpu;
use strata_probe::diskstats::DiskStat;
use strata_recording::names::{layer, mariadb, postgres, served};

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
#[derive(Clone, Copy)]
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

impl Field {
    fn set(self, stat: &mut DiskStat, value: f64) {
        let count = |value: f64| value.max(0.0).round() as u64;
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
        *slot = count(value);
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
    /// The `kind` label of each device, when the agent gives it (a strata
    /// agent: `disk`, `partition`, `md`, …).
    pub kinds: BTreeMap<String, String>,
    /// Seconds of CPU time by mode, summed over CPUs, as hundredths (the
    /// shares between two scrapes are what counts).
    pub cpu: HostCpu,
    /// Runnable tasks and CPUs, when the agent gives them.
    pub procs_running: Option<f64>,
    pub cpus: Option<f64>,
    pub oom_kills: Option<u64>,
    /// Mount points and the devices mounted there (node_exporter's
    /// `node_filesystem_*`), to find a path's device.
    pub mounts: Vec<(String, String)>,
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
        let mut disks: BTreeMap<String, DiskStat> = BTreeMap::new();
        let mut kinds = BTreeMap::new();
        for series in &scrape.series {
            let Some(rest) = series.name.strip_prefix(device_prefix) else {
                continue;
            };
            let Some(device) = series.label("device") else {
                continue;
            };
            if let Some(kind) = series.label("kind") {
                kinds.insert(device.to_string(), kind.to_string());
            }
            if let Some((_, field)) = device_series.iter().find(|(name, _)| *name == rest) {
                let stat = disks.entry(device.to_string()).or_insert_with(|| DiskStat {
                    name: device.to_string(),
                    field_count: 17,
                    ..DiskStat::default()
                });
                field.set(stat, series.value);
            }
        }
        Some(HostCounters {
            dialect,
            host: host_name(scrape, dialect).unwrap_or_else(|| url_host.to_string()),
            disks: disks.into_values().collect(),
            kinds,
            cpu: cpu(&scrape.series, dialect),
            procs_running: scrape.value(match dialect {
                Dialect::Strata => "strata_cpu_procs_running",
                Dialect::NodeExporter => "node_procs_running",
            }),
            cpus: cpus(&scrape.series, dialect),
            oom_kills: oom_kills(scrape, dialect),
            mounts: mounts(&scrape.series),
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

/// CPU seconds by mode as hundredths of a second.
fn cpu(series: &[Series], dialect: Dialect) -> HostCpu {
    let seconds = |mode: &str| -> f64 {
        series
            .iter()
            .filter(|series| match dialect {
                Dialect::Strata => series.name == format!("strata_cpu_{mode}_seconds_total"),
                Dialect::NodeExporter => {
                    series.name == "node_cpu_seconds_total" && series.label("mode") == Some(mode)
                }
            })
            .map(|series| series.value)
            .sum()
    };
    let hundredths = |mode: &str| (seconds(mode) * 100.0).round() as u64;
    HostCpu {
        user: hundredths("user"),
        nice: hundredths("nice"),
        system: hundredths("system"),
        idle: hundredths("idle"),
        iowait: hundredths("iowait"),
        irq: hundredths("irq"),
        softirq: hundredths("softirq"),
        steal: hundredths("steal"),
        pressure_some_us: cpu_pressure_some_us(series, dialect),
    }
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
    Some((seconds * 1e6).round() as u64)
}

/// A strata agent's `cpus`; node_exporter's CPUs counted by their `cpu`
/// label.
fn cpus(series: &[Series], dialect: Dialect) -> Option<f64> {
    match dialect {
        Dialect::Strata => series
            .iter()
            .find(|series| series.name == "strata_cpu_cpus")
            .map(|series| series.value),
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
    scrape.value(name).map(|kills| kills.max(0.0) as u64)
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

/// A strata agent's database series (`strata_postgres_…_total`,
/// `strata_mariadb_…_total`) back in the database layer's names and units,
/// for the counters a report reads: the exposition's names, inverted.
pub fn database_layers(scrape: &Scrape) -> Vec<(&'static str, Vec<Metric>)> {
    let mut by_layer: BTreeMap<&'static str, Vec<Metric>> = BTreeMap::new();
    let served = &*SERVED_DATABASE_COUNTERS;
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

/// Each served name of a database counter a report reads: its layer, its
/// own name, and the factor the exposition multiplied it by.
static SERVED_DATABASE_COUNTERS: LazyLock<BTreeMap<String, (&str, &str, f64)>> =
    LazyLock::new(served_database_counters);

fn served_database_counters() -> BTreeMap<String, (&'static str, &'static str, f64)> {
    let postgres = postgres::READ_BY_REPORTS.map(|name| (layer::POSTGRES, name));
    let mariadb = mariadb::READ_BY_REPORTS.map(|name| (layer::MARIADB, name));
    postgres
        .into_iter()
        .chain(mariadb)
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

    #[test]
    fn node_exporter_s_disks_cpu_and_mounts_become_diskstats_and_ticks() {
        let counters = HostCounters::of(
            &scrape(
                "node_disk_reads_completed_total{device=\"vda\"} 431824\n\
                 node_disk_read_bytes_total{device=\"vda\"} 5448160256\n\
                 node_disk_read_time_seconds_total{device=\"vda\"} 58.04\n\
                 node_disk_io_time_seconds_total{device=\"vda\"} 12.5\n\
                 node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 100.5\n\
                 node_cpu_seconds_total{cpu=\"1\",mode=\"idle\"} 99.5\n\
                 node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 10\n\
                 node_vmstat_oom_kill 2\n\
                 node_pressure_cpu_waiting_seconds_total 12.5\n\
                 node_uname_info{nodename=\"db1\",release=\"6.1\",version=\"#1 SMP, x\"} 1\n\
                 node_filesystem_size_bytes{device=\"/dev/vda1\",fstype=\"ext4\",mountpoint=\"/\"} 1\n\
                 node_filesystem_size_bytes{device=\"/dev/vdb\",fstype=\"xfs\",mountpoint=\"/data\"} 1\n\
                 node_disk_reads_completed_total{device=\"vdb\"} 7\n",
            ),
            "10.0.0.2",
        )
        .unwrap();
        assert_eq!(counters.dialect, Dialect::NodeExporter);
        assert_eq!(counters.host, "db1");
        let vda = counters
            .disks
            .iter()
            .find(|disk| disk.name == "vda")
            .unwrap();
        assert_eq!(vda.read_requests, 431824);
        assert_eq!(vda.read_sectors, 5448160256 / 512);
        assert_eq!(vda.read_ms, 58040);
        assert_eq!(vda.busy_ms, 12500);
        assert_eq!(counters.cpu.idle, 20000);
        assert_eq!(counters.cpu.user, 1000);
        assert_eq!(counters.cpu.pressure_some_us, Some(12_500_000));
        assert_eq!(counters.oom_kills, Some(2));
        assert_eq!(counters.cpus, Some(2.0));
        assert_eq!(
            counters.devices_under("/var/lib/postgresql/15/main"),
            ["vda"]
        );
        assert_eq!(counters.devices_under("/data/pg"), ["vdb"]);
        assert_eq!(counters.devices_under("/database"), ["vda"]);
    }

    #[test]
    fn a_strata_agent_s_disks_are_its_kind_disk_devices_in_base_units() {
        let counters = HostCounters::of(
            &scrape(
                "strata_sample_time_seconds{host=\"db2\"} 1\n\
                 strata_device_read_requests_total{host=\"db2\",device=\"vda\",kind=\"disk\"} 10\n\
                 strata_device_read_seconds_total{host=\"db2\",device=\"vda\",kind=\"disk\"} 0.25\n\
                 strata_device_read_requests_total{host=\"db2\",device=\"vda1\",kind=\"partition\"} 9\n\
                 strata_cpu_idle_seconds_total{host=\"db2\"} 3.5\n\
                 strata_cpu_pressure_some_seconds_total{host=\"db2\",resource=\"io\"} 9\n\
                 strata_cpu_pressure_some_seconds_total{host=\"db2\",resource=\"cpu\"} 2\n",
            ),
            "10.0.0.2",
        )
        .unwrap();
        assert_eq!(counters.dialect, Dialect::Strata);
        assert_eq!(counters.host, "db2");
        assert_eq!(counters.devices_under("/anything"), ["vda"]);
        let loops = HostCounters::of(
            &scrape(
                "strata_device_read_requests_total{host=\"db2\",device=\"loop3\",kind=\"loop\"} 1\n",
            ),
            "10.0.0.2",
        )
        .unwrap();
        assert_eq!(
            loops.devices_under("/"),
            ["loop3"],
            "an agent pointed at a loop device"
        );
        assert_eq!(counters.disks[0].read_ms, 250);
        assert_eq!(counters.cpu.idle, 350);
        assert_eq!(counters.cpu.pressure_some_us, Some(2_000_000));
        assert_eq!(loops.cpu.pressure_some_us, None);
        assert!(HostCounters::of(&scrape("up 1\n"), "x").is_none());
    }

    #[test]
    fn partitions_name_their_disks() {
        assert_eq!(partition_disk("vda1"), "vda");
        assert_eq!(partition_disk("nvme0n1p2"), "nvme0n1");
        assert_eq!(partition_disk("mmcblk0p1"), "mmcblk0");
        assert_eq!(partition_disk("sdb"), "sdb");
    }
}
