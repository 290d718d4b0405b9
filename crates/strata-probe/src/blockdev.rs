//! Block device topology from `/sys`: what a device is (disk, partition,
//! device-mapper, md, loop), its queue settings, which physical devices
//! carry its I/O, and what is built on top of it.
//!
//! This module only reads sysfs and stats paths; it does not open devices,
//! read their contents or judge whether they are safe to write (see
//! [`crate::safety`]).

use anyhow::{anyhow, Context};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::str::FromStr;
pub use strata_recording::device::{BlockDevice, DeviceKind};

const SYS_DEV_BLOCK: &str = "/sys/dev/block";
const SECTOR_BYTES: u64 = 512;
const LOOP_MAJOR: u32 = 7;

/// The device with number `major:minor`, via `/sys/dev/block/MAJ:MIN`.
pub fn device_by_number(major: u32, minor: u32) -> anyhow::Result<BlockDevice> {
    device_from_sys_dir(&sys_dir_of_number(major, minor)?)
}

/// The disk (its name) that the filesystem `path` is on lies on, and
/// where on it the filesystem starts, bytes (a partition's start; 0 for a
/// whole disk or loop device); `None` for a device-mapper or md device,
/// whose requests reach other disks.
pub fn position_on_disk(path: &Path) -> Option<(String, u64)> {
    let device = device_of_path(path).ok()?;
    match device.kind {
        DeviceKind::Partition { parent } => {
            let dir = sys_dir_of_number(device.major, device.minor).ok()?;
            let start_sectors: u64 = parse_attr(&dir.join("start")).ok()?;
            Some((parent, start_sectors * SECTOR_BYTES))
        }
        DeviceKind::Disk | DeviceKind::Loop { .. } => Some((device.name, 0)),
        _ => None,
    }
}

/// The block device holding the filesystem that `path` is on.
pub fn device_of_path(path: &Path) -> anyhow::Result<BlockDevice> {
    let metadata = std::fs::metadata(path).with_context(|| format!("stat {}", path.display()))?;
    let (major, minor) = split_dev(metadata.dev());
    let link = sys_link_of_number(major, minor);
    if !link.exists() {
        return Err(anyhow!(
            "{} is on device {major}:{minor}, which has no {} entry: its filesystem is not \
             backed by a block device (tmpfs, overlayfs, NFS, FUSE, a btrfs subvolume, ...); \
             give a path on a filesystem that lives directly on a disk, partition, LVM volume or md array",
            path.display(),
            link.display()
        ));
    }
    device_by_number(major, minor)
        .with_context(|| format!("finding the block device under {}", path.display()))
}

/// The block device that a node such as `/dev/loop0` stands for.
pub fn device_of_node(node: &Path) -> anyhow::Result<BlockDevice> {
    let metadata = std::fs::metadata(node).with_context(|| format!("stat {}", node.display()))?;
    if !metadata.file_type().is_block_device() {
        return Err(anyhow!("{} is not a block device node", node.display()));
    }
    let (major, minor) = split_dev(metadata.rdev());
    device_by_number(major, minor).with_context(|| format!("describing {}", node.display()))
}

/// The devices that do the work for `dev`: a partition maps to its disk,
/// device-mapper and md devices to the leaves under their `slaves/`
/// (recursively, leaf partitions mapped to their disks). Each device appears
/// once, in discovery order. Any other device is its own physical device.
pub fn physical_devices(dev: &BlockDevice) -> anyhow::Result<Vec<BlockDevice>> {
    let mut leaves = Vec::new();
    collect_leaves(&sys_dir_of_number(dev.major, dev.minor)?, &mut leaves)?;
    Ok(leaves)
}

/// Every partition of `dev` and everything built on it (`holders/`),
/// recursively, each once; `dev` itself is not included.
pub fn partitions_and_holders(dev: &BlockDevice) -> anyhow::Result<Vec<BlockDevice>> {
    let mut dependents = Vec::new();
    collect_dependents(&sys_dir_of_number(dev.major, dev.minor)?, &mut dependents)?;
    dependents.retain(|other| (other.major, other.minor) != (dev.major, dev.minor));
    Ok(dependents)
}

fn collect_leaves(dir: &Path, leaves: &mut Vec<BlockDevice>) -> anyhow::Result<()> {
    if is_partition_dir(dir) {
        return collect_leaves(parent_dir(dir)?, leaves);
    }
    let slaves = linked_dirs(&dir.join("slaves"))?;
    if slaves.is_empty() {
        push_new(leaves, device_from_sys_dir(dir)?);
    }
    for slave in slaves {
        collect_leaves(&slave, leaves)?;
    }
    Ok(())
}

fn collect_dependents(dir: &Path, dependents: &mut Vec<BlockDevice>) -> anyhow::Result<()> {
    let mut children = partition_dirs(dir)?;
    children.extend(linked_dirs(&dir.join("holders"))?);
    for child in children {
        if push_new(dependents, device_from_sys_dir(&child)?) {
            collect_dependents(&child, dependents)?;
        }
    }
    Ok(())
}

/// Appends `device` unless a device with the same number is already there;
/// says whether it was appended.
fn push_new(devices: &mut Vec<BlockDevice>, device: BlockDevice) -> bool {
    let number = (device.major, device.minor);
    if devices
        .iter()
        .any(|known| (known.major, known.minor) == number)
    {
        return false;
    }
    devices.push(device);
    true
}

fn device_from_sys_dir(dir: &Path) -> anyhow::Result<BlockDevice> {
    let name = dir_name(dir)?;
    let (major, minor) = parse_dev_attr(&dir.join("dev"))?;
    let queue = if is_partition_dir(dir) {
        parent_dir(dir)?.join("queue")
    } else {
        dir.join("queue")
    };
    Ok(BlockDevice {
        kind: device_kind(dir, major)?,
        name,
        major,
        minor,
        size_bytes: parse_attr::<u64>(&dir.join("size"))? * SECTOR_BYTES,
        rotational: read_optional(&queue.join("rotational")).map(|value| value == "1"),
        logical_block_size: parse_attr(&queue.join("logical_block_size"))?,
        physical_block_size: parse_attr(&queue.join("physical_block_size"))?,
        read_ahead_kib: parse_optional(&queue.join("read_ahead_kb")),
        scheduler: read_optional(&queue.join("scheduler")).map(|line| active_scheduler(&line)),
        max_sectors_kib: parse_optional(&queue.join("max_sectors_kb")),
    })
}

fn device_kind(dir: &Path, major: u32) -> anyhow::Result<DeviceKind> {
    if is_partition_dir(dir) {
        return Ok(DeviceKind::Partition {
            parent: dir_name(parent_dir(dir)?)?,
        });
    }
    if dir.join("dm").is_dir() {
        return Ok(DeviceKind::DeviceMapper {
            dm_name: read_attr(&dir.join("dm/name"))?,
        });
    }
    if dir.join("md").is_dir() {
        return Ok(DeviceKind::Md {
            level: read_optional(&dir.join("md/level")).unwrap_or_default(),
            chunk_bytes: parse_optional(&dir.join("md/chunk_size")).unwrap_or(0),
            raid_disks: parse_optional(&dir.join("md/raid_disks")).unwrap_or(0),
        });
    }
    if major == LOOP_MAJOR || dir.join("loop").is_dir() {
        return Ok(DeviceKind::Loop {
            backing_file: read_optional(&dir.join("loop/backing_file")),
        });
    }
    Ok(DeviceKind::Disk)
}

/// `"none [mq-deadline] kyber"` → `"mq-deadline"`; a line without brackets
/// (some stacked devices print just `none`) is taken as is.
fn active_scheduler(line: &str) -> String {
    line.split_whitespace()
        .find_map(|word| word.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap_or(line.trim())
        .to_string()
}

fn sys_link_of_number(major: u32, minor: u32) -> PathBuf {
    Path::new(SYS_DEV_BLOCK).join(format!("{major}:{minor}"))
}

fn sys_dir_of_number(major: u32, minor: u32) -> anyhow::Result<PathBuf> {
    let link = sys_link_of_number(major, minor);
    std::fs::canonicalize(&link).with_context(|| {
        format!(
            "resolving {} (is {major}:{minor} a block device?)",
            link.display()
        )
    })
}

fn split_dev(dev: u64) -> (u32, u32) {
    (libc::major(dev), libc::minor(dev))
}

fn is_partition_dir(dir: &Path) -> bool {
    dir.join("partition").is_file()
}

fn parent_dir(dir: &Path) -> anyhow::Result<&Path> {
    dir.parent()
        .ok_or_else(|| anyhow!("{} has no parent directory", dir.display()))
}

fn dir_name(dir: &Path) -> anyhow::Result<String> {
    dir.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .ok_or_else(|| anyhow!("{} has no final component", dir.display()))
}

/// The sysfs directories of a disk's partitions.
fn partition_dirs(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))?;
    let mut partitions = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("listing {}", dir.display()))?
            .path();
        if is_partition_dir(&path) {
            partitions.push(path);
        }
    }
    partitions.sort();
    Ok(partitions)
}

/// The targets of the symlinks in a `slaves/` or `holders/` directory;
/// empty when the directory does not exist.
fn linked_dirs(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error).with_context(|| format!("listing {}", dir.display())),
    };
    let mut targets = Vec::new();
    for entry in entries {
        let link = entry
            .with_context(|| format!("listing {}", dir.display()))?
            .path();
        let target = std::fs::canonicalize(&link)
            .with_context(|| format!("resolving {}", link.display()))?;
        targets.push(target);
    }
    targets.sort();
    Ok(targets)
}

fn read_attr(path: &Path) -> anyhow::Result<String> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(text.trim().to_string())
}

fn parse_attr<T: FromStr>(path: &Path) -> anyhow::Result<T>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    let text = read_attr(path)?;
    text.parse()
        .with_context(|| format!("parsing {:?} from {}", text, path.display()))
}

fn parse_dev_attr(path: &Path) -> anyhow::Result<(u32, u32)> {
    let text = read_attr(path)?;
    let parsed = text
        .split_once(':')
        .and_then(|(major, minor)| Some((major.parse().ok()?, minor.parse().ok()?)));
    parsed.ok_or_else(|| anyhow!("{} holds {:?}, not MAJ:MIN", path.display(), text))
}

fn read_optional(path: &Path) -> Option<String> {
    read_attr(path).ok().filter(|text| !text.is_empty())
}

fn parse_optional<T: FromStr>(path: &Path) -> Option<T> {
    read_optional(path)?.parse().ok()
}
