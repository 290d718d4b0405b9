//! Tests for detect_signature over synthetic first-128-KiB buffers.

mod common;

use strata_probe::safety::{detect_signature, SIGNATURE_SCAN_BYTES};

fn head_with(patches: &[(usize, &[u8])]) -> Vec<u8> {
    let mut head = vec![0u8; SIGNATURE_SCAN_BYTES];
    for (offset, bytes) in patches {
        head[*offset..*offset + bytes.len()].copy_from_slice(bytes);
    }
    head
}

fn detected(patches: &[(usize, &[u8])]) -> Option<&'static str> {
    detect_signature(&head_with(patches))
}

const EXT_MAGIC: (usize, &[u8]) = (1080, &[0x53, 0xEF]);
const BOOT_SIGNATURE: (usize, &[u8]) = (510, &[0x55, 0xAA]);
const MD_MAGIC: [u8; 4] = [0xfc, 0x4e, 0x2b, 0xa9];

#[test]
fn blank_random_and_short_buffers_carry_no_signature() {
    assert_eq!(detected(&[]), None);
    assert_eq!(
        detect_signature(&common::pseudo_random_bytes(SIGNATURE_SCAN_BYTES, 42)),
        None
    );
    assert_eq!(detect_signature(&[]), None);
    assert_eq!(detect_signature(&[0x55; 100]), None);
}

#[test]
fn ext_generation_follows_feature_flags() {
    assert_eq!(detected(&[EXT_MAGIC]), Some("ext2 filesystem"));
    assert_eq!(
        detected(&[EXT_MAGIC, (1116, &[0x04])]),
        Some("ext3 filesystem")
    );
    let extents_incompat: &[u8] = &[0x42];
    assert_eq!(
        detected(&[EXT_MAGIC, (1116, &[0x04]), (1120, extents_incompat)]),
        Some("ext4 filesystem")
    );
    assert_eq!(
        detected(&[(1080, &[0xEF, 0x53])]),
        None,
        "big-endian magic is not ext"
    );
}

#[test]
fn fixed_magics_are_recognised_at_their_offsets() {
    let cases: &[(usize, &[u8], &str)] = &[
        (0, b"XFSB", "XFS filesystem"),
        (65600, b"_BHRfS_M", "btrfs filesystem"),
        (512, b"LABELONE", "LVM2 physical volume"),
        (4086, b"SWAPSPACE2", "Linux swap"),
        (4086, b"SWAP-SPACE", "Linux swap"),
        (0, &MD_MAGIC, "md RAID superblock"),
        (4096, &MD_MAGIC, "md RAID superblock"),
        (3, b"NTFS    ", "NTFS filesystem"),
        (32769, b"CD001", "ISO9660 filesystem"),
        (512, b"EFI PART", "GPT partition table"),
        (0, b"hsqs", "squashfs filesystem"),
        (0, b"LUKS\xba\xbe", "LUKS encrypted volume"),
    ];
    for (offset, magic, name) in cases {
        assert_eq!(
            detected(&[(*offset, magic)]),
            Some(*name),
            "{name} at {offset}"
        );
        assert_eq!(
            detected(&[(*offset + 1, magic)]),
            None,
            "{name} one byte off"
        );
    }
}

#[test]
fn fat_needs_its_label_and_the_boot_signature() {
    assert_eq!(
        detected(&[(54, b"FAT12   "), BOOT_SIGNATURE]),
        Some("FAT filesystem")
    );
    assert_eq!(
        detected(&[(82, b"FAT32   "), BOOT_SIGNATURE]),
        Some("FAT filesystem")
    );
    assert_eq!(detected(&[(82, b"FAT32   ")]), None);
}

#[test]
fn mbr_needs_the_boot_signature_and_a_used_partition_entry() {
    let linux_in_entry_3: (usize, &[u8]) = (446 + 16 * 2 + 4, &[0x83]);
    assert_eq!(
        detected(&[BOOT_SIGNATURE, linux_in_entry_3]),
        Some("MBR partition table")
    );
    assert_eq!(detected(&[BOOT_SIGNATURE]), None);
    assert_eq!(detected(&[linux_in_entry_3]), None);
}

#[test]
fn gpt_wins_over_its_protective_mbr() {
    let protective_entry: (usize, &[u8]) = (446 + 4, &[0xEE]);
    assert_eq!(
        detected(&[BOOT_SIGNATURE, protective_entry, (512, b"EFI PART")]),
        Some("GPT partition table")
    );
}
