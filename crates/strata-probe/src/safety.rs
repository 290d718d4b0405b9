//! Whether strata may write to a raw block device.
//!
//! [`check_device_writable`] refuses a device that is mounted or used as
//! swap (itself, a partition or anything built on it), that device-mapper,
//! LVM or md is built on, that another opener holds exclusively, or whose
//! first bytes carry a known filesystem, volume or partition table
//! signature. It is a guard against destroying data, not a permission
//! check: it does not look at file modes, and it never writes.

use crate::blockdev::{device_of_node, partitions_and_holders, BlockDevice, DeviceKind};
use anyhow::Context;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

const MOUNTINFO_PATH: &str = "/proc/self/mountinfo";
const SWAPS_PATH: &str = "/proc/swaps";
/// How much of the device [`detect_signature`] is shown.
pub const SIGNATURE_SCAN_BYTES: usize = 128 * 1024;

/// Why strata will not write to a device. Returned inside the
/// `anyhow::Error` of [`check_device_writable`]; downcast to match on it.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error(
        "refusing to write to {node}: {member} is mounted at {mount_point}; \
         unmount it first (umount {mount_point})"
    )]
    Mounted {
        node: String,
        member: String,
        mount_point: String,
    },
    #[error(
        "refusing to write to {node}: {member} is in use as swap (listed in /proc/swaps); \
         turn it off first (swapoff {swap_path})"
    )]
    Swap {
        node: String,
        member: String,
        swap_path: String,
    },
    #[error(
        "refusing to write to {node}: {holders} {verb} built on it (device-mapper, LVM or md); \
         tear that down first (dmsetup remove, vgchange -an, mdadm --stop)",
        verb = if .holders.contains(',') { "are" } else { "is" }
    )]
    Held { node: String, holders: String },
    #[error(
        "refusing to write to {node}: it is in use (opening it with O_EXCL failed with EBUSY); \
         find what holds it with `fuser -vm {node}` or `lsof {node}`"
    )]
    Busy { node: String },
    #[error(
        "refusing to write to {node}: it carries {} {signature} signature; if its contents are \
         expendable, erase the signatures with `wipefs -a {node}` and run strata again",
        indefinite_article(.signature)
    )]
    Signature {
        node: String,
        signature: &'static str,
    },
}

/// Ok when strata may overwrite the block device `node`; otherwise an error
/// naming the device, the reason and what the user can do about it
/// (a [`Refusal`] when the device is in use or not blank).
pub fn check_device_writable(node: &Path) -> anyhow::Result<()> {
    let device = device_of_node(node)?;
    let mut family = vec![device.clone()];
    family.extend(partitions_and_holders(&device)?);
    let node_text = node.display().to_string();
    refuse_if_mounted(&node_text, &family)?;
    refuse_if_swap(&node_text, &family)?;
    refuse_if_held(&node_text, &device, &family)?;
    let head = read_head_exclusively(node)?;
    match detect_signature(&head) {
        Some(signature) => Err(Refusal::Signature {
            node: node_text,
            signature,
        }
        .into()),
        None => Ok(()),
    }
}

fn refuse_if_mounted(node: &str, family: &[BlockDevice]) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(MOUNTINFO_PATH)
        .with_context(|| format!("reading {MOUNTINFO_PATH}"))?;
    for (number, mount_point) in mounted_numbers(&text) {
        if let Some(member) = family.iter().find(|d| (d.major, d.minor) == number) {
            return Err(Refusal::Mounted {
                node: node.to_string(),
                member: describe(member),
                mount_point,
            }
            .into());
        }
    }
    Ok(())
}

fn refuse_if_swap(node: &str, family: &[BlockDevice]) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(SWAPS_PATH).with_context(|| format!("reading {SWAPS_PATH}"))?;
    for swap_path in swap_paths(&text) {
        let Some(number) = block_number_of(Path::new(&swap_path)) else {
            continue;
        };
        if let Some(member) = family.iter().find(|d| (d.major, d.minor) == number) {
            return Err(Refusal::Swap {
                node: node.to_string(),
                member: describe(member),
                swap_path,
            }
            .into());
        }
    }
    Ok(())
}

/// Refuses when anything other than the device's own partitions is built on
/// the device or on one of its partitions.
fn refuse_if_held(node: &str, device: &BlockDevice, family: &[BlockDevice]) -> anyhow::Result<()> {
    let holders: Vec<String> = family
        .iter()
        .filter(|member| *member != device && !is_partition_of(member, device))
        .map(describe)
        .collect();
    if holders.is_empty() {
        return Ok(());
    }
    Err(Refusal::Held {
        node: node.to_string(),
        holders: holders.join(", "),
    }
    .into())
}

/// Opens the device with O_EXCL (which fails with EBUSY while the kernel or
/// another exclusive opener holds it) and reads its first
/// [`SIGNATURE_SCAN_BYTES`] with ordinary buffered reads.
fn read_head_exclusively(node: &Path) -> anyhow::Result<Vec<u8>> {
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(node);
    let file = match opened {
        Ok(file) => file,
        Err(error) if error.raw_os_error() == Some(libc::EBUSY) => {
            return Err(Refusal::Busy {
                node: node.display().to_string(),
            }
            .into());
        }
        Err(error) => {
            return Err(error)
                .with_context(|| format!("opening {} exclusively (O_EXCL)", node.display()))
        }
    };
    read_head(file).with_context(|| format!("reading the first bytes of {}", node.display()))
}

fn read_head(file: File) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(SIGNATURE_SCAN_BYTES);
    file.take(SIGNATURE_SCAN_BYTES as u64)
        .read_to_end(&mut head)?;
    Ok(head)
}

fn is_partition_of(member: &BlockDevice, device: &BlockDevice) -> bool {
    matches!(&member.kind, DeviceKind::Partition { parent } if *parent == device.name)
}

fn describe(device: &BlockDevice) -> String {
    match &device.kind {
        DeviceKind::DeviceMapper { dm_name } => {
            format!(
                "{} ({}, {}:{})",
                device.name, dm_name, device.major, device.minor
            )
        }
        _ => format!("{} ({}:{})", device.name, device.major, device.minor),
    }
}

/// `(MAJ, MIN)` and mount point of every entry in a mountinfo text
/// (fields 3 and 5, see proc(5)).
pub fn mounted_numbers(mountinfo: &str) -> Vec<((u32, u32), String)> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (major, minor) = fields.get(2)?.split_once(':')?;
            let number = (major.parse().ok()?, minor.parse().ok()?);
            Some((number, unescape_octal(fields.get(4)?)))
        })
        .collect()
}

/// The paths in the first column of a `/proc/swaps` text.
pub fn swap_paths(swaps: &str) -> Vec<String> {
    swaps
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next())
        .map(unescape_octal)
        .collect()
}

fn block_number_of(path: &Path) -> Option<(u32, u32)> {
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.file_type().is_block_device() {
        return None;
    }
    Some((libc::major(metadata.rdev()), libc::minor(metadata.rdev())))
}

/// Undoes the kernel's `\040`-style escaping of spaces, tabs, newlines and
/// backslashes in `/proc` path fields.
fn unescape_octal(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = bytes.get(index + 1..index + 4).filter(|digits| {
            bytes[index] == b'\\' && digits.iter().all(|d| (b'0'..=b'7').contains(d))
        });
        match escaped {
            Some(digits) => {
                out.push(
                    digits
                        .iter()
                        .fold(0u8, |acc, d| acc.wrapping_mul(8).wrapping_add(d - b'0')),
                );
                index += 4;
            }
            None => {
                out.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn indefinite_article(noun: &str) -> &'static str {
    const VOWEL_SOUNDS: [&str; 7] = ["ext", "XFS", "LVM", "md ", "MBR", "NTFS", "ISO"];
    if VOWEL_SOUNDS.iter().any(|prefix| noun.starts_with(prefix)) {
        "an"
    } else {
        "a"
    }
}

/// Names the filesystem, volume or partition table whose signature is in
/// `bytes`, the first bytes of a device (up to [`SIGNATURE_SCAN_BYTES`]);
/// `None` for anything else, including all zeros and random data.
pub fn detect_signature(bytes: &[u8]) -> Option<&'static str> {
    ext_signature(bytes)
        .or_else(|| magic_signature(bytes))
        .or_else(|| fat_signature(bytes))
        .or_else(|| mbr_signature(bytes))
}

fn has(bytes: &[u8], offset: usize, magic: &[u8]) -> bool {
    bytes.get(offset..offset + magic.len()) == Some(magic)
}

fn le32(bytes: &[u8], offset: usize) -> u32 {
    bytes
        .get(offset..offset + 4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// ext2/3/4: magic 0xEF53 in the superblock at 1024; the feature flags tell
/// the generations apart the way blkid does.
fn ext_signature(bytes: &[u8]) -> Option<&'static str> {
    const SUPERBLOCK: usize = 1024;
    const HAS_JOURNAL: u32 = 0x4;
    const EXT3_INCOMPAT: u32 = 0x2 | 0x4 | 0x10;
    const EXT3_RO_COMPAT: u32 = 0x1 | 0x2 | 0x4;
    if !has(bytes, SUPERBLOCK + 56, &[0x53, 0xEF]) {
        return None;
    }
    let compat = le32(bytes, SUPERBLOCK + 0x5C);
    let incompat = le32(bytes, SUPERBLOCK + 0x60);
    let ro_compat = le32(bytes, SUPERBLOCK + 0x64);
    if incompat & !EXT3_INCOMPAT != 0 || ro_compat & !EXT3_RO_COMPAT != 0 {
        Some("ext4 filesystem")
    } else if compat & HAS_JOURNAL != 0 {
        Some("ext3 filesystem")
    } else {
        Some("ext2 filesystem")
    }
}

/// Signatures that are a fixed byte string at a fixed offset. GPT comes
/// before the MBR check because a GPT disk also has a protective MBR.
fn magic_signature(bytes: &[u8]) -> Option<&'static str> {
    const MD_MAGIC: [u8; 4] = 0xa92b_4efc_u32.to_le_bytes();
    const MAGICS: &[(usize, &[u8], &str)] = &[
        (0, b"XFSB", "XFS filesystem"),
        (65600, b"_BHRfS_M", "btrfs filesystem"),
        (512, b"LABELONE", "LVM2 physical volume"),
        (4086, b"SWAPSPACE2", "Linux swap"),
        (4086, b"SWAP-SPACE", "Linux swap"),
        (65526, b"SWAPSPACE2", "Linux swap"),
        (0, &MD_MAGIC, "md RAID superblock"),
        (4096, &MD_MAGIC, "md RAID superblock"),
        (3, b"NTFS    ", "NTFS filesystem"),
        (32769, b"CD001", "ISO9660 filesystem"),
        (0, b"hsqs", "squashfs filesystem"),
        (0, b"LUKS\xba\xbe", "LUKS encrypted volume"),
        (512, b"EFI PART", "GPT partition table"),
        (4096, b"EFI PART", "GPT partition table"),
    ];
    MAGICS
        .iter()
        .find(|(offset, magic, _)| has(bytes, *offset, magic))
        .map(|(_, _, name)| *name)
}

fn has_boot_signature(bytes: &[u8]) -> bool {
    has(bytes, 510, &[0x55, 0xAA])
}

fn fat_signature(bytes: &[u8]) -> Option<&'static str> {
    let fat_label = has(bytes, 54, b"FAT") || has(bytes, 82, b"FAT");
    (fat_label && has_boot_signature(bytes)).then_some("FAT filesystem")
}

fn mbr_signature(bytes: &[u8]) -> Option<&'static str> {
    let any_partition_type = (0..4).any(|entry| {
        bytes
            .get(446 + 16 * entry + 4)
            .is_some_and(|&kind| kind != 0)
    });
    (has_boot_signature(bytes) && any_partition_type).then_some("MBR partition table")
}
