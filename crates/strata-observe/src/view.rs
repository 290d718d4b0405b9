//! Text views of a sample, one section per layer with the column names and
//! definitions of the tools this audience already reads: iostat -x for
//! devices, nfsiostat for NFS, nicstat for NICs, mpstat/vmstat for CPU and
//! memory, and AWR's top events for database waits. The same sections print
//! live on a terminal or as timestamped lines when piped.
//!
//! Not for: computing rates (the sampler did) or deciding what is wrong.

pub use crate::layer_table::LayerTable;
use crate::sampler::{LayerSample, Sample};
use crate::top::TopProcesses;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use strata_core::metrics::{Metric, MetricKind, CPU_TICK_COUNTERS};

/// A section's header and rows, and whether anything in it moved.
struct Rows {
    header: String,
    rows: Vec<String>,
    active: bool,
}

impl Rows {
    fn of(header: String, things: Vec<Thing>, row: impl Fn(&Thing) -> String) -> Rows {
        let active = things.iter().any(Thing::moved);
        Rows {
            header,
            rows: things.iter().map(row).collect(),
            active,
        }
    }
}

/// The metrics of one thing (one device, one mount and op…): raw values and
/// rates by metric name.
#[derive(Default)]
struct Thing {
    labels: BTreeMap<String, String>,
    values: BTreeMap<String, f64>,
    rates: BTreeMap<String, f64>,
}

impl Thing {
    fn rate(&self, name: &str) -> f64 {
        self.rates.get(name).copied().unwrap_or(0.0)
    }

    fn value(&self, name: &str) -> f64 {
        self.values.get(name).copied().unwrap_or(0.0)
    }

    fn label(&self, name: &str) -> &str {
        self.labels.get(name).map_or("", String::as_str)
    }

    /// rate(numerator) / rate(denominator), 0 when nothing happened.
    fn per(&self, numerator: &str, denominator: &str) -> f64 {
        let denominator = self.rate(denominator);
        if denominator > 0.0 {
            self.rate(numerator) / denominator
        } else {
            0.0
        }
    }

    fn moved(&self) -> bool {
        self.rates.values().any(|rate| *rate > 0.0)
    }
}

/// Groups metrics by the labels in `keys` (other labels stay on the thing).
fn group(metrics: &[Metric], rates: &BTreeMap<String, f64>, keys: &[&str]) -> Vec<Thing> {
    group_with_suffix(metrics, rates, keys, "")
}

/// Like `group`, and a metric carrying the label `suffix` is named
/// `NAME:VALUE` (PSI has one `pressure_some_us` per resource).
fn group_with_suffix(
    metrics: &[Metric],
    rates: &BTreeMap<String, f64>,
    keys: &[&str],
    suffix: &str,
) -> Vec<Thing> {
    let mut things: BTreeMap<Vec<String>, Thing> = BTreeMap::new();
    for metric in metrics {
        let identity: Vec<String> = keys
            .iter()
            .map(|key| metric.labels.get(*key).cloned().unwrap_or_default())
            .collect();
        let thing = things.entry(identity).or_default();
        thing.labels.extend(metric.labels.clone());
        let name = match metric.labels.get(suffix) {
            Some(value) => format!("{}:{value}", metric.name),
            None => metric.name.clone(),
        };
        if metric.kind == MetricKind::Counter {
            if let Some(rate) = rates.get(&metric.series_key()) {
                thing.rates.insert(name.clone(), *rate);
            }
        }
        thing.values.insert(name, metric.value);
    }
    things.into_values().collect()
}

pub fn sections(sample: &Sample) -> Vec<LayerTable> {
    let mut sections: Vec<LayerTable> = sample
        .layers
        .iter()
        .map(|(layer, layer_sample)| match layer_sample {
            LayerSample::Values {
                metrics,
                rates,
                gaps,
            } => with_gaps(section_of(layer, &without(metrics, gaps), rates), gaps),
            LayerSample::Absent { reason } => LayerTable {
                layer: layer.clone(),
                header: format!("{layer}: absent ({reason})"),
                rows: Vec::new(),
                active: false,
            },
            LayerSample::Failed { error } => LayerTable {
                layer: layer.clone(),
                header: format!("{layer}: FAILED: {error}"),
                rows: Vec::new(),
                active: true,
            },
        })
        .collect();
    sections.extend(hosts_total(sample, &this_hostname()));
    sections
}

/// The metrics of the things that have rates over this interval.
fn without(metrics: &[Metric], gaps: &BTreeMap<String, String>) -> Vec<Metric> {
    metrics
        .iter()
        .filter(|metric| !gaps.contains_key(&metric.labels_key()))
        .cloned()
        .collect()
}

/// `section` with a row for each thing that has no rates over this
/// interval, and why.
fn with_gaps(mut section: LayerTable, gaps: &BTreeMap<String, String>) -> LayerTable {
    for (thing, why) in gaps {
        let thing = match thing.is_empty() {
            true => section.layer.clone(),
            false => thing.clone(),
        };
        section
            .rows
            .push(format!("{thing}: no rates over this interval: {why}"));
        section.active = true;
    }
    section
}

/// This machine's name, as its agent would name it.
fn this_hostname() -> String {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| strata_recording::HostInfo::current().hostname)
        .clone()
}

/// Beside other hosts' devices (`device@HOST`): each host's disks once, and
/// all hosts together, like iostat-all over Exadata cells. A host named
/// twice (an agent on this machine) is shown but not added again.
fn hosts_total(sample: &Sample, this_host: &str) -> Option<LayerTable> {
    let mut hosts: Vec<(String, Result<Thing, String>)> = Vec::new();
    for (layer, layer_sample) in &sample.layers {
        let host = match layer.split_once('@') {
            Some(("device", host)) => host.to_string(),
            None if layer == "device" => this_host.to_string(),
            _ => continue,
        };
        if let LayerSample::Values {
            metrics,
            rates,
            gaps,
        } = layer_sample
        {
            let things = group(metrics, rates, &["device"]);
            let disks = whole_disks(&things);
            let counted =
                |thing: &&String| thing.contains("kind=disk") || thing.contains("kind=loop");
            let total = match gaps.iter().find(|(thing, _)| counted(thing)) {
                None => Ok(disk_total(&disks)),
                Some((thing, why)) => Err(format!("{thing}: {why}")),
            };
            hosts.push((host, total));
        }
    }
    if hosts.len() < 2
        || !sample
            .layers
            .keys()
            .any(|layer| layer.starts_with("device@"))
    {
        return None;
    }
    let header = device_rows(Vec::new())
        .header
        .replacen("Device", "Host  ", 1);
    let mut counted: Vec<&str> = Vec::new();
    let mut once: Vec<&Thing> = Vec::new();
    let mut gaps: Vec<&str> = Vec::new();
    let mut rows = Vec::new();
    for (host, total) in &hosts {
        let again = counted.contains(&host.as_str());
        counted.push(host);
        match (total, again) {
            (Err(why), _) => {
                gaps.push(host);
                rows.push(format!("{host}: no rates over this interval: {why}"));
            }
            (Ok(total), true) => rows.push(device_row(host, "again, not added", total)),
            (Ok(total), false) => {
                once.push(total);
                rows.push(device_row(host, "disks, once", total));
            }
        }
    }
    let all = disk_total(&once);
    match gaps.is_empty() {
        true => rows.push(device_row("all hosts", "each host once", &all)),
        false => rows.push(format!(
            "all hosts: no total over this interval: {} had a gap",
            gaps.join(", ")
        )),
    }
    Some(LayerTable {
        layer: "device@all".to_string(),
        header,
        active: all.moved() || !gaps.is_empty(),
        rows,
    })
}

fn section_of(layer: &str, metrics: &[Metric], rates: &BTreeMap<String, f64>) -> LayerTable {
    let own_name = layer.split_once('@').map_or(layer, |(name, _host)| name);
    let rows = match own_name {
        "device" => device_rows(group(metrics, rates, &["device"])),
        "nfs" => nfs_rows(group(metrics, rates, &["mount", "op"])),
        "nfs_server" => nfs_server_rows(group(metrics, rates, &["export", "protocol", "op"])),
        "net" => net_rows(group(metrics, rates, &["interface"])),
        "cpu" => cpu_rows(group_with_suffix(metrics, rates, &[], "resource")),
        "memory" => memory_rows(group(metrics, rates, &[])),
        "process" => process_rows(group(metrics, rates, &["pid"])),
        "postgres" => postgres_rows(metrics, rates),
        "mariadb" => mariadb_rows(group(metrics, rates, &["event"])),
        _ => generic_rows(metrics, rates),
    };
    LayerTable {
        layer: layer.to_string(),
        header: rows.header,
        rows: rows.rows,
        active: rows.active,
    }
}

/// The devices a total counts, each I/O once: the whole disks, or the loop
/// devices where there are none (an agent pointed at loop devices); never
/// a partition, a device-mapper or md device over them.
fn whole_disks(things: &[Thing]) -> Vec<&Thing> {
    let of_kind =
        |kind: &str| -> Vec<&Thing> { things.iter().filter(|t| t.label("kind") == kind).collect() };
    let disks = of_kind("disk");
    match disks.is_empty() {
        true => of_kind("loop"),
        false => disks,
    }
}

fn device_rows(things: Vec<Thing>) -> Rows {
    let header = format!(
        "{:<12} {:<14} {:>9} {:>10} {:>7} {:>8} {:>8} {:>9} {:>10} {:>7} {:>8} {:>8} {:>7} {:>8} {:>7} {:>6}",
        "Device", "what", "r/s", "rkB/s", "rrqm/s", "r_await", "rareq-sz", "w/s", "wkB/s", "wrqm/s", "w_await",
        "wareq-sz", "f/s", "f_await", "aqu-sz", "%util"
    );
    let disks = whole_disks(&things);
    let total = (disks.len() > 1 || things.len() > disks.len()).then(|| disk_total(&disks));
    let flagged: Vec<String> = things.iter().filter_map(rotation_note).collect();
    let mut rows = Rows::of(header, things, |t| {
        device_row(t.label("device"), &describe_device(t), t)
    });
    if let Some(total) = total {
        rows.rows.push(device_row("total", "disks, once", &total));
    }
    rows.rows.extend(flagged);
    rows
}

/// A note for a disk sysfs calls rotational that served more requests per
/// second than a rotating disk can.
fn rotation_note(thing: &Thing) -> Option<String> {
    use strata_recording::device::{rotation_as_served, rotation_contradicted};
    let requests_per_s = thing.rate("read_requests") + thing.rate("write_requests");
    let rotational = (thing.label("rotational") == "true").then_some(true);
    rotation_contradicted(rotational, requests_per_s).then(|| {
        let rotation = rotation_as_served(rotational, requests_per_s);
        format!("{}: {rotation}", thing.label("device"))
    })
}

/// What a device is: a disk (rotational or not), a partition of a disk, a
/// device-mapper name, an md level and chunk.
fn describe_device(thing: &Thing) -> String {
    match thing.label("kind") {
        "partition" => format!("part of {}", thing.label("parent")),
        "dm" => format!("dm {}", thing.label("dm_name")),
        "md" => format!(
            "md {} {} B chunk of {}",
            thing.label("md_level"),
            thing.label("chunk_bytes"),
            thing.label("md_members")
        ),
        "disk" => match thing.label("rotational") {
            "true" => "disk, rotational".to_string(),
            "false" => "disk, flash".to_string(),
            _ => "disk".to_string(),
        },
        other => other.to_string(),
    }
}

/// The whole disks' rates added up: the host's physical I/O, never counting
/// a disk and its partitions (or a dm/md device and its members) twice.
fn disk_total(disks: &[&Thing]) -> Thing {
    let mut total = Thing::default();
    for disk in disks {
        for (name, rate) in &disk.rates {
            *total.rates.entry(name.clone()).or_insert(0.0) += rate;
        }
    }
    total
}

fn device_row(name: &str, what: &str, t: &Thing) -> String {
    format!(
        "{:<12} {:<14} {:>9.1} {:>10.1} {:>7.1} {:>8.2} {:>8.1} {:>9.1} {:>10.1} {:>7.1} {:>8.2} {:>8.1} {:>7.1} {:>8.2} {:>7.2} {:>6.1}",
        name,
        what,
        t.rate("read_requests"),
        t.rate("read_bytes") / 1024.0,
        t.rate("read_merges"),
        t.per("read_ms", "read_requests"),
        t.per("read_bytes", "read_requests") / 1024.0,
        t.rate("write_requests"),
        t.rate("write_bytes") / 1024.0,
        t.rate("write_merges"),
        t.per("write_ms", "write_requests"),
        t.per("write_bytes", "write_requests") / 1024.0,
        t.rate("flush_requests"),
        t.per("flush_ms", "flush_requests"),
        t.rate("weighted_ms") / 1000.0,
        (t.rate("busy_ms") / 10.0).min(100.0),
    )
}

fn nfs_rows(things: Vec<Thing>) -> Rows {
    let header = format!(
        "{:<24} {:<8} {:>9} {:>10} {:>10} {:>11} {:>11}",
        "mount", "op", "ops/s", "kB/s", "timeouts/s", "avg RTT ms", "avg exe ms"
    );
    Rows::of(header, things, |t| {
        let row = format!(
            "{:<24} {:<8} {:>9.1} {:>10.1} {:>10.1} {:>11.2} {:>11.2}",
            t.label("mount"),
            t.label("op"),
            t.rate("ops"),
            (t.rate("bytes_sent") + t.rate("bytes_received")) / 1024.0,
            t.rate("timeouts"),
            t.per("rtt_ms", "ops"),
            t.per("execute_ms", "ops"),
        );
        row
    })
}

/// An NFS server's own count per export, protocol and operation, and its
/// own time per call.
fn nfs_server_rows(things: Vec<Thing>) -> Rows {
    let header = format!(
        "{:<24} {:<8} {:<6} {:>9} {:>10} {:>9} {:>14}",
        "export", "protocol", "op", "calls/s", "kB/s", "errors/s", "server ms/call"
    );
    Rows::of(header, things, |t| {
        format!(
            "{:<24} {:<8} {:<6} {:>9.1} {:>10.1} {:>9.1} {:>14.3}",
            t.label("export"),
            t.label("protocol"),
            t.label("op"),
            t.rate("ops"),
            t.rate("transferred_bytes") / 1024.0,
            t.rate("errors"),
            t.per("latency_ns", "ops") / 1e6,
        )
    })
}

fn net_rows(things: Vec<Thing>) -> Rows {
    let header = format!(
        "{:<12} {:>10} {:>10} {:>9} {:>9} {:>7} {:>7} {:>6}",
        "Int", "rKB/s", "wKB/s", "rPk/s", "wPk/s", "rAvs", "wAvs", "%Util"
    );
    Rows::of(header, things, |t| {
        let speed_bytes = t.value("speed_mbps") * 1e6 / 8.0;
        let busiest = t.rate("receive_bytes").max(t.rate("transmit_bytes"));
        let util = if speed_bytes > 0.0 {
            format!("{:.1}", busiest * 100.0 / speed_bytes)
        } else {
            "-".into()
        };
        let row = format!(
            "{:<12} {:>10.1} {:>10.1} {:>9.1} {:>9.1} {:>7.0} {:>7.0} {:>6}",
            t.label("interface"),
            t.rate("receive_bytes") / 1024.0,
            t.rate("transmit_bytes") / 1024.0,
            t.rate("receive_packets"),
            t.rate("transmit_packets"),
            t.per("receive_bytes", "receive_packets"),
            t.per("transmit_bytes", "transmit_packets"),
            util,
        );
        row
    })
}

fn cpu_rows(things: Vec<Thing>) -> Rows {
    let header = format!(
        "{:>6} {:>6} {:>8} {:>6} {:>7} {:>10} {:>8} {:>10} {:>9} {:>9} {:>10}",
        "%usr",
        "%sys",
        "%iowait",
        "%idle",
        "%steal",
        "runnable",
        "blocked",
        "cpu some%",
        "io some%",
        "io full%",
        "mem some%"
    );
    Rows::of(header, things, |t| {
        let total: f64 = CPU_TICK_COUNTERS.iter().map(|name| t.rate(name)).sum();
        let pct = |names: &[&str]| {
            if total > 0.0 {
                names.iter().map(|n| t.rate(n)).sum::<f64>() * 100.0 / total
            } else {
                0.0
            }
        };
        let pressure = |metric: &str| pressure_pct(t, metric);
        let row = format!(
            "{:>6.1} {:>6.1} {:>8.1} {:>6.1} {:>7.1} {:>10} {:>8.0} {:>10} {:>9} {:>9} {:>10}",
            pct(&["user_ticks", "nice_ticks"]),
            pct(&["system_ticks", "irq_ticks", "softirq_ticks"]),
            pct(&["iowait_ticks"]),
            pct(&["idle_ticks"]),
            pct(&["steal_ticks"]),
            format!("{:.0}/{:.0}", t.value("procs_running"), t.value("cpus")),
            t.value("procs_blocked"),
            pressure("pressure_some_us:cpu"),
            pressure("pressure_some_us:io"),
            pressure("pressure_full_us:io"),
            pressure("pressure_some_us:memory"),
        );
        row
    })
}

/// PSI share of time in percent, or "-" when the kernel has no PSI; the
/// metric is named `NAME:RESOURCE` here because `group` keeps one value per
/// name and PSI has one per resource.
fn pressure_pct(thing: &Thing, key: &str) -> String {
    thing
        .rates
        .get(key)
        .map_or("-".to_string(), |micros_per_s| {
            format!("{:.1}", micros_per_s / 1e4)
        })
}

fn memory_rows(things: Vec<Thing>) -> Rows {
    let header = format!(
        "{:>11} {:>10} {:>13} {:>11} {:>10} {:>12} {:>12}",
        "cached MiB",
        "dirty MiB",
        "writeback MiB",
        "shmem MiB",
        "majflt/s",
        "pgpgin kB/s",
        "pgpgout kB/s"
    );
    let mib = |bytes: f64| bytes / 1_048_576.0;
    Rows::of(header, things, |t| {
        let row = format!(
            "{:>11.1} {:>10.1} {:>13.1} {:>11.1} {:>10.1} {:>12.1} {:>12.1}",
            mib(t.value("cached_bytes")),
            mib(t.value("dirty_bytes")),
            mib(t.value("writeback_bytes")),
            mib(t.value("shmem_bytes")),
            t.rate("pgmajfault"),
            t.rate("pgpgin_kib"),
            t.rate("pgpgout_kib"),
        );
        row
    })
}

fn process_rows(things: Vec<Thing>) -> Rows {
    let header = format!(
        "{:>8} {:<16} {:>14} {:>10} {:>12} {:>14} {:>12} {:>14}",
        "pid",
        "comm",
        "runq ms/s",
        "cpu ms/s",
        "rchar kB/s",
        "read kB/s dev",
        "wchar kB/s",
        "write kB/s dev"
    );
    Rows::of(header, things, |t| {
        let row = format!(
            "{:>8} {:<16} {:>14.1} {:>10.1} {:>12.1} {:>14.1} {:>12.1} {:>14.1}",
            t.label("pid"),
            t.label("comm"),
            t.rate("run_delay_ns") / 1e6,
            t.rate("cpu_ns") / 1e6,
            t.rate("rchar_bytes") / 1024.0,
            t.rate("read_bytes") / 1024.0,
            t.rate("wchar_bytes") / 1024.0,
            t.rate("write_bytes") / 1024.0,
        );
        row
    })
}

fn postgres_rows(metrics: &[Metric], rates: &BTreeMap<String, f64>) -> Rows {
    let (events, counters): (Vec<Metric>, Vec<Metric>) = metrics
        .iter()
        .cloned()
        .partition(|metric| metric.name == "wait_event_samples");
    let totals = group(&counters, rates, &[]).pop().unwrap_or_default();
    let header = format!(
        "{:>15} {:>12} {:>10} {:>9} {:>12} {:>13} {:>11}",
        "blks_read/s",
        "blks_hit/s",
        "commits/s",
        "WAL MB/s",
        "WAL syncs/s",
        "read us/blk",
        "temp MB/s"
    );
    let mut rows = vec![format!(
        "{:>15.1} {:>12.1} {:>10.1} {:>9.2} {:>12.1} {:>13.1} {:>11.2}",
        totals.rate("database_blks_read"),
        totals.rate("database_blks_hit"),
        totals.rate("database_xact_commit"),
        totals.rate("wal_bytes") / 1e6,
        totals.rate("wal_sync"),
        totals.per("database_blk_read_time_ms", "database_blks_read") * 1e3,
        totals.rate("database_temp_bytes") / 1e6,
    )];
    let active = totals.rate("active_session_samples");
    let mut waits: Vec<(f64, String)> = group(&events, rates, &["wait_event_type", "wait_event"])
        .iter()
        .filter(|event| event.rate("wait_event_samples") > 0.0)
        .map(|event| {
            let share = if active > 0.0 {
                event.rate("wait_event_samples") * 100.0 / active
            } else {
                0.0
            };
            (
                share,
                format!(
                    "{}:{}",
                    event.label("wait_event_type"),
                    event.label("wait_event")
                ),
            )
        })
        .collect();
    waits.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (share, name) in waits {
        rows.push(format!(
            "  wait {name:<40} {share:>6.1}% of active session time"
        ));
    }
    Rows {
        header,
        rows,
        active: totals.moved(),
    }
}

fn mariadb_rows(things: Vec<Thing>) -> Rows {
    let header = format!(
        "{:<36} {:>14} {:>12} {:>13} {:>12} {:>13} {:>10}",
        "event",
        "data reads/s",
        "data MB/s",
        "pages read/s",
        "bp misses/s",
        "log fsyncs/s",
        "commits/s"
    );
    Rows::of(header, things, |t| {
        let name = if t.label("event").is_empty() {
            "global status"
        } else {
            t.label("event")
        };
        let row = if t.label("event").is_empty() {
            format!(
                "{:<36} {:>14.1} {:>12.2} {:>13.1} {:>12.1} {:>13.1} {:>10.1}",
                name,
                t.rate("innodb_data_reads"),
                t.rate("innodb_data_read_bytes") / 1e6,
                t.rate("innodb_pages_read"),
                t.rate("innodb_buffer_pool_reads"),
                t.rate("innodb_os_log_fsyncs"),
                t.rate("com_commit"),
            )
        } else {
            format!(
                "{:<36} reads/s {:>9.1} read MB/s {:>8.2} writes/s {:>9.1} write MB/s {:>8.2}",
                name,
                t.rate("file_reads"),
                t.rate("file_read_bytes") / 1e6,
                t.rate("file_writes"),
                t.rate("file_write_bytes") / 1e6,
            )
        };
        row
    })
}

fn generic_rows(metrics: &[Metric], rates: &BTreeMap<String, f64>) -> Rows {
    let rows = metrics
        .iter()
        .map(|metric| {
            let key = metric.series_key();
            match rates.get(&key) {
                Some(rate) => format!("{key} {rate:.2}/s"),
                None => format!("{key} {}", metric.value),
            }
        })
        .collect();
    Rows {
        header: "metric value".to_string(),
        rows,
        active: rates.values().any(|rate| *rate > 0.0),
    }
}

fn clock(unix_s: f64) -> String {
    let stamp = strata_core::time::rfc3339_from_unix(unix_s as i64);
    stamp[11..19].to_string()
}

/// The sections of a sample, and the top processes' after them when
/// `--top` was asked for.
fn sections_with_top(sample: &Sample, top: Option<&TopProcesses>) -> Vec<LayerTable> {
    let mut sections = sections(sample);
    sections.extend(top.map(crate::top_view::section));
    sections
}

/// Timestamped lines (`HH:MM:SS layer …`), a header line per section, for
/// pipes and files. The first sample has no rates and prints nothing; an
/// absent layer is reported once, the first time.
#[derive(Default)]
pub struct PlainLines {
    absent_reported: std::collections::BTreeSet<String>,
}

impl PlainLines {
    pub fn render(&mut self, sample: &Sample, top: Option<&TopProcesses>, all: bool) -> String {
        let mut out = String::new();
        if sample.interval_s == 0.0 {
            return out;
        }
        let time = clock(sample.unix_s);
        for section in sections_with_top(sample, top) {
            let absent = section.rows.is_empty() && !section.active;
            let shown = if absent {
                self.absent_reported.insert(section.layer.clone())
            } else {
                all || section.active
            };
            if !shown {
                continue;
            }
            let _ = writeln!(out, "{time} {:<8} {}", section.layer, section.header);
            for row in &section.rows {
                let _ = writeln!(out, "{time} {:<8} {row}", section.layer);
            }
        }
        out
    }
}

/// The live screen: one block per layer; quiet layers are summarised in
/// one line unless `all`.
pub fn live_screen(
    sample: &Sample,
    top: Option<&TopProcesses>,
    all: bool,
    interval_s: f64,
) -> String {
    let mut out = format!(
        "strata observe — {}, every {interval_s:.1} s (Ctrl-C to stop)\n",
        strata_core::time::rfc3339_from_unix(sample.unix_s as i64)
    );
    if sample.interval_s == 0.0 {
        out.push_str("\n(first sample taken; rates appear with the next one)\n");
        return out;
    }
    let mut quiet = Vec::new();
    for section in sections_with_top(sample, top) {
        if !(all || section.active || section.rows.is_empty()) {
            quiet.push(section.layer);
            continue;
        }
        let _ = writeln!(out, "\n[{}]\n{}", section.layer, section.header);
        for row in &section.rows {
            let _ = writeln!(out, "{row}");
        }
    }
    if !quiet.is_empty() {
        let _ = writeln!(out, "\nno activity: {}", quiet.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::LayerSample;

    fn device(name: &str, kind: &str, reads: f64) -> (Metric, (String, f64)) {
        let metric = Metric::counter("read_requests", 0.0)
            .with_label("device", name)
            .with_label("kind", kind);
        let key = metric.series_key();
        (metric, (key, reads))
    }

    #[test]
    fn the_total_counts_a_disk_and_its_partition_once() {
        let (metrics, rates): (Vec<Metric>, BTreeMap<String, f64>) = [
            device("vda", "disk", 100.0),
            device("vda1", "partition", 100.0),
            device("vdb", "disk", 50.0),
        ]
        .into_iter()
        .unzip();
        let sample = Sample {
            t_s: 1.0,
            unix_s: 0.0,
            interval_s: 1.0,
            layers: BTreeMap::from([(
                "device".to_string(),
                LayerSample::Values {
                    metrics,
                    rates,
                    gaps: BTreeMap::new(),
                },
            )]),
        };
        let section = sections(&sample).remove(0);
        let total = section
            .rows
            .iter()
            .find(|row| row.starts_with("total"))
            .expect("a total row");
        let reads: f64 = total.split_whitespace().nth(3).unwrap().parse().unwrap();
        assert_eq!(reads, 150.0, "{total}");
        assert!(section
            .rows
            .iter()
            .any(|row| row.contains("part of") || row.starts_with("vda1")));
    }

    #[test]
    fn a_disk_flagged_rotational_beyond_a_spindles_rate_gets_a_note() {
        let rotational = |name: &str, reads: f64| {
            let (metric, (_, rate)) = device(name, "disk", reads);
            let metric = metric.with_label("rotational", "true");
            let key = metric.series_key();
            (metric, (key, rate))
        };
        let (metrics, rates): (Vec<Metric>, BTreeMap<String, f64>) =
            [rotational("vda", 57_000.0), rotational("sdb", 120.0)]
                .into_iter()
                .unzip();
        let rows = device_rows(group(&metrics, &rates, &["device"])).rows;
        let notes: Vec<&String> = rows.iter().filter(|row| row.contains("flagged")).collect();
        assert_eq!(notes.len(), 1, "{rows:#?}");
        assert!(notes[0].starts_with("vda: ") && notes[0].contains("57,000 requests/s"));
    }

    #[test]
    fn hosts_are_totalled_each_once() {
        let layer = |reads: f64| {
            let (metrics, rates): (Vec<Metric>, BTreeMap<String, f64>) = [
                device("vda", "disk", reads),
                device("vda1", "partition", reads),
            ]
            .into_iter()
            .unzip();
            LayerSample::Values {
                metrics,
                rates,
                gaps: BTreeMap::new(),
            }
        };
        let sample = Sample {
            t_s: 1.0,
            unix_s: 0.0,
            interval_s: 1.0,
            layers: BTreeMap::from([
                ("device".to_string(), layer(10.0)),
                ("device@db1".to_string(), layer(100.0)),
                ("device@here".to_string(), layer(10.0)),
            ]),
        };
        let total = hosts_total(&sample, "here").expect("a total across hosts");
        let reads = |start: &str| -> f64 {
            let row = total
                .rows
                .iter()
                .find(|row| row.starts_with(start))
                .unwrap();
            row.split_whitespace()
                .rev()
                .nth(13)
                .unwrap()
                .parse()
                .unwrap()
        };
        assert_eq!(reads("db1"), 100.0);
        assert_eq!(reads("all hosts"), 110.0, "{:#?}", total.rows);
        assert!(total
            .rows
            .iter()
            .any(|row| row.contains("again, not added")));
    }
}
