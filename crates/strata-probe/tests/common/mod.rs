//! What the probe's integration tests need beyond strata-testkit: an MBR
//! writer for the loop devices they partition, deterministic bytes, and
//! for the block tracer's tests a loop device each request of which reaches
//! the disk below, its /proc/diskstats line, and tracefs for bpftrace.
#![allow(dead_code)]

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::process::Command;
use strata_probe::diskstats::{read_diskstats, DiskStat};
use strata_testkit::command::run;
use strata_testkit::loopdev::{LoopDevice, MIB};

/// Writes a classic MBR with one Linux (0x83) partition entry.
pub fn write_mbr(file: &mut File, first_sector: u32, sector_count: u32) {
    let mut sector = [0u8; 512];
    let entry = &mut sector[446..462];
    entry[4] = 0x83;
    entry[8..12].copy_from_slice(&first_sector.to_le_bytes());
    entry[12..16].copy_from_slice(&sector_count.to_le_bytes());
    sector[510] = 0x55;
    sector[511] = 0xAA;
    file.seek(SeekFrom::Start(0)).unwrap();
    file.write_all(&sector).expect("writing MBR");
}

/// Deterministic pseudo-random bytes (xorshift64).
pub fn pseudo_random_bytes(length: usize, mut state: u64) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(length + 8);
    while bytes.len() < length {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes.extend_from_slice(&state.to_le_bytes());
    }
    bytes.truncate(length);
    bytes
}

/// The block layer wakes a request's submitter (its bios end) before it
/// accounts the request's end (`block_io_done`, /proc/diskstats), and on a
/// busy host that end can come much later; blk-mq's in-flight count drops
/// when a request completes, before its end is accounted. The counts are
/// read once the device has no request in flight and its completions have
/// not moved for 50 ms (up to 5 s).
pub fn settle_completions(device: &LoopDevice) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let ended = |stat: &DiskStat| (stat.read_requests, stat.write_requests, stat.flush_requests);
    let mut last = stat_of(device);
    while std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let now = stat_of(device);
        if now.in_flight == 0 && ended(&now) == ended(&last) {
            return;
        }
        last = now;
    }
}

pub fn stat_of(device: &LoopDevice) -> DiskStat {
    read_diskstats()
        .unwrap()
        .into_iter()
        .find(|stat| stat.name == device.name())
        .expect("the loop device in /proc/diskstats")
}

/// A loop device over a file written whole, read with direct I/O: each
/// request reaches the disk below.
pub fn data_device() -> LoopDevice {
    data_device_in(&std::env::temp_dir())
}

/// [`data_device`] with its image under `base` (`/dev/shm`: in memory).
pub fn data_device_in(base: &std::path::Path) -> LoopDevice {
    let device = LoopDevice::attach_in(base, 64 * MIB, false, |image| {
        let data: Vec<u8> = (0..MIB).map(|byte| (byte % 251) as u8 + 1).collect();
        for mib in 0..64 {
            image.write_all_at(&data, mib * MIB).unwrap();
        }
    });
    run(
        "losetup",
        &["--direct-io=on", device.node.to_str().unwrap()],
    );
    // udev reads a device it is told about: done before the test's reads.
    run("udevadm", &["settle"]);
    device
}

/// bpftrace finds tracepoints in tracefs (strata's tracer does not need
/// it): mounted where a fresh machine has it not.
pub fn mount_tracefs() {
    const TRACEFS: &str = "/sys/kernel/tracing";
    if std::path::Path::new(TRACEFS).join("events").exists() {
        return;
    }
    let status = Command::new("mount")
        .args(["-t", "tracefs", "tracefs", TRACEFS])
        .status()
        .expect("running mount");
    assert!(status.success(), "mounting tracefs on {TRACEFS}: {status}");
}
