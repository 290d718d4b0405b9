//! The `device` layer: `/proc/diskstats` counters per block device, labelled
//! with what sysfs says the device is.

use crate::blockdev::{
    device_by_number, device_of_path, physical_devices, BlockDevice, DeviceKind,
};
use crate::diskstats::{read_diskstats, DiskStat};
use anyhow::{anyhow, Context};
use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;
use strata_core::metrics::{Collected, Collector, Metric};
use strata_recording::names::{device, label};

const SECTOR_BYTES: u64 = 512;

/// Which block devices the [`DeviceCollector`] reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceFilter {
    /// Every device in `/proc/diskstats` except `ram*`, `zram*` and loop
    /// devices with nothing attached (size 0).
    All,
    /// These devices, by kernel name (`sda`, `nvme0n1p2`, `dm-3`, `md0`),
    /// `/dev/` node name, or device-mapper name (`vg-data`,
    /// `/dev/mapper/vg-data`). Named devices are never skipped.
    Names(Vec<String>),
    /// The device holding the filesystem that this path is on, and the
    /// physical devices under it (a partition's disk, an LVM volume's or md
    /// array's members).
    Path(PathBuf),
}

/// Layer `device`: one set of metrics per selected block device, per sample.
///
/// Counters (raw, as `/proc/diskstats` has them; `_bytes` are sectors × 512):
/// `read_requests, read_merges, read_bytes, read_ms, write_requests,
/// write_merges, write_bytes, write_ms, discard_requests, discard_bytes,
/// discard_ms, flush_requests, flush_ms, busy_ms, weighted_ms`; gauge
/// `in_flight`. Discard and flush counters are left out when the kernel does
/// not print them (before 4.18 and 5.5).
///
/// Labels: `device`, `kind` (`disk|partition|dm|md|loop`), `parent` for a
/// partition, `dm_name` for device-mapper, `md_level`, `chunk_bytes` and
/// `md_members` for md, `rotational` (`true|false`) when sysfs says.
///
/// Each sample stands alone: a device that appears or vanishes between
/// samples is simply there or not.
#[derive(Debug)]
pub struct DeviceCollector {
    /// `None`: all devices (with the skip rule); otherwise these kernel names.
    selected: Option<BTreeSet<String>>,
}

impl DeviceCollector {
    /// Resolves `filter` now: an unknown name or a path not on a block
    /// device is an error listing the devices that exist.
    pub fn new(filter: DeviceFilter) -> anyhow::Result<DeviceCollector> {
        let selected = match filter {
            DeviceFilter::All => None,
            DeviceFilter::Names(names) => Some(resolve_names(&names)?),
            DeviceFilter::Path(path) => Some(resolve_path(&path)?),
        };
        Ok(DeviceCollector { selected })
    }

    /// The kernel names this collector is limited to (`None`: all devices).
    pub fn selected(&self) -> Option<&BTreeSet<String>> {
        self.selected.as_ref()
    }
}

impl Collector for DeviceCollector {
    fn layer(&self) -> &'static str {
        "device"
    }

    fn collect(&mut self) -> anyhow::Result<Collected> {
        let mut metrics = Vec::new();
        for stat in read_diskstats()? {
            if let Some(selected) = &self.selected {
                if !selected.contains(&stat.name) {
                    continue;
                }
            } else if is_ram_disk(&stat.name) {
                continue;
            }
            // A device whose sysfs entry is gone vanished between the two reads.
            let Ok(device) = device_by_number(stat.major, stat.minor) else {
                continue;
            };
            if self.selected.is_none() && is_empty_loop(&device) {
                continue;
            }
            metrics.extend(device_metrics(&stat, &device));
        }
        if metrics.is_empty() {
            let reason = match &self.selected {
                Some(names) => format!(
                    "none of the selected block devices ({}) is in /proc/diskstats now",
                    names.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
                None => "no block devices in /proc/diskstats".to_string(),
            };
            return Ok(Collected::Absent { reason });
        }
        Ok(Collected::Metrics { metrics })
    }
}

/// The metrics of one `/proc/diskstats` entry, labelled from `device`.
/// The member devices of an md array, from /sys/block/NAME/slaves.
fn md_members(name: &str) -> Vec<String> {
    let mut members: Vec<String> = std::fs::read_dir(format!("/sys/block/{name}/slaves"))
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    members.sort();
    members
}

pub fn device_metrics(stat: &DiskStat, device: &BlockDevice) -> Vec<Metric> {
    let mut counters = vec![
        (device::READ_REQUESTS, stat.read_requests),
        ("read_merges", stat.read_merges),
        (device::READ_BYTES, stat.read_sectors * SECTOR_BYTES),
        (device::READ_MS, stat.read_ms),
        (device::WRITE_REQUESTS, stat.write_requests),
        ("write_merges", stat.write_merges),
        (device::WRITE_BYTES, stat.write_sectors * SECTOR_BYTES),
        (device::WRITE_MS, stat.write_ms),
        (device::BUSY_MS, stat.busy_ms),
        (device::WEIGHTED_MS, stat.weighted_ms),
    ];
    if stat.field_count >= 15 {
        counters.extend([
            ("discard_requests", stat.discard_requests),
            ("discard_bytes", stat.discard_sectors * SECTOR_BYTES),
            ("discard_ms", stat.discard_ms),
        ]);
    }
    if stat.field_count >= 17 {
        counters.extend([
            ("flush_requests", stat.flush_requests),
            ("flush_ms", stat.flush_ms),
        ]);
    }
    let labels = device_labels(&stat.name, device);
    let labelled = |metric: Metric| {
        labels
            .iter()
            .fold(metric, |metric, (key, value)| metric.with_label(key, value))
    };
    counters
        .into_iter()
        .map(|(name, value)| labelled(Metric::counter(name, value as f64)))
        .chain(std::iter::once(labelled(Metric::gauge(
            "in_flight",
            stat.in_flight as f64,
        ))))
        .collect()
}

fn device_labels(name: &str, device: &BlockDevice) -> Vec<(&'static str, String)> {
    let mut labels = vec![("device", name.to_string())];
    match &device.kind {
        DeviceKind::Disk => labels.push((label::KIND, "disk".into())),
        DeviceKind::Partition { parent } => {
            labels.push((label::KIND, "partition".into()));
            labels.push(("parent", parent.clone()));
        }
        DeviceKind::DeviceMapper { dm_name } => {
            labels.push((label::KIND, "dm".into()));
            labels.push(("dm_name", dm_name.clone()));
        }
        DeviceKind::Md {
            level, chunk_bytes, ..
        } => {
            labels.push((label::KIND, "md".into()));
            labels.push((label::MD_LEVEL, level.clone()));
            labels.push((label::CHUNK_BYTES, chunk_bytes.to_string()));
            labels.push((label::MD_MEMBERS, md_members(&device.name).join(",")));
        }
        DeviceKind::Loop { .. } => labels.push((label::KIND, "loop".into())),
    }
    if let Some(rotational) = device.rotational {
        labels.push((label::ROTATIONAL, rotational.to_string()));
    }
    labels
}

/// Per-disk totals from a [`DeviceCollector`] sample, with every physical
/// byte counted once.
///
/// The rule: only whole disks (`kind=disk`) are kept. A disk's own line in
/// `/proc/diskstats` already includes the I/O of its partitions, and
/// device-mapper, md and loop devices pass their I/O on to disks (or files on
/// disks) that are counted there; adding any of them would count the same
/// I/O twice. So each disk's total is its own counters, partitions and
/// stacked devices contribute nothing, and summing the result over `device`
/// gives the host's physical I/O. (On md RAID 1/5/6 that is the back-end
/// I/O, write penalty included, which is what the disks did.) A disk whose
/// own line was not collected (a filter that picked only a partition) has no
/// total. The same series given twice is counted once.
///
/// Each returned metric keeps its name, kind and value, with the single
/// label `device` = the disk's name.
pub fn disk_totals(metrics: &[Metric]) -> Vec<Metric> {
    let mut seen = HashSet::new();
    metrics
        .iter()
        .filter(|metric| metric.labels.get(label::KIND).map(String::as_str) == Some("disk"))
        .filter_map(|metric| {
            let device = metric.labels.get("device")?;
            if !seen.insert((device.clone(), metric.name.clone())) {
                return None;
            }
            let mut total = metric.clone();
            total.labels.clear();
            Some(total.with_label(label::DEVICE, device))
        })
        .collect()
}

fn is_ram_disk(name: &str) -> bool {
    name.starts_with("ram") || name.starts_with("zram")
}

fn is_empty_loop(device: &BlockDevice) -> bool {
    matches!(device.kind, DeviceKind::Loop { .. }) && device.size_bytes == 0
}

/// The devices in `/proc/diskstats` with their sysfs descriptions (those
/// whose sysfs entry cannot be read are left out).
fn known_devices() -> anyhow::Result<Vec<BlockDevice>> {
    Ok(read_diskstats()?
        .iter()
        .filter_map(|stat| device_by_number(stat.major, stat.minor).ok())
        .collect())
}

/// `sda, dm-0 (vg-data), zram0`: what a user could have named.
fn device_list(devices: &[BlockDevice]) -> String {
    let names: Vec<String> = devices
        .iter()
        .map(|device| match &device.kind {
            DeviceKind::DeviceMapper { dm_name } => format!("{} ({dm_name})", device.name),
            _ => device.name.clone(),
        })
        .collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

fn resolve_names(names: &[String]) -> anyhow::Result<BTreeSet<String>> {
    let devices = known_devices()?;
    let mut selected = BTreeSet::new();
    for requested in names {
        let bare = requested.strip_prefix("/dev/").unwrap_or(requested);
        let bare = bare.strip_prefix("mapper/").unwrap_or(bare);
        let found = devices.iter().find(|device| {
            device.name == bare
                || matches!(&device.kind, DeviceKind::DeviceMapper { dm_name } if dm_name == bare)
        });
        match found {
            Some(device) => {
                selected.insert(device.name.clone());
            }
            None => {
                return Err(anyhow!(
                    "no block device named {requested:?}; the devices here are: {}",
                    device_list(&devices)
                ))
            }
        }
    }
    Ok(selected)
}

fn resolve_path(path: &std::path::Path) -> anyhow::Result<BTreeSet<String>> {
    let holder = device_of_path(path).map_err(|error| {
        let listed = known_devices()
            .map(|devices| device_list(&devices))
            .unwrap_or_else(|list_error| format!("(cannot list them: {list_error:#})"));
        anyhow!("{error:#}; the block devices here are: {listed}")
    })?;
    let mut selected = BTreeSet::from([holder.name.clone()]);
    let physical = physical_devices(&holder)
        .with_context(|| format!("finding the physical devices under {}", holder.name))?;
    selected.extend(physical.into_iter().map(|device| device.name));
    Ok(selected)
}
