//! The block tracer against the kernel's own counters: a loop device (its
//! backing file written whole, then read with direct I/O, so each request
//! reaches the disk below) read and written with O_DIRECT while the tracer runs; the
//! requests it counts per operation are /proc/diskstats' for the device,
//! and their mean time start → end is diskstats' time per request.

use std::os::unix::fs::{FileExt, OpenOptionsExt};
use strata_probe::blocktrace::{BlockTracer, Kind, Op, TraceSnapshot};
use strata_probe::diskstats::{read_diskstats, DiskStat};
use strata_testkit::command::run;
use strata_testkit::loopdev::{LoopDevice, MIB};

fn stat_of(device: &LoopDevice) -> DiskStat {
    read_diskstats()
        .unwrap()
        .into_iter()
        .find(|stat| stat.name == device.name())
        .expect("the loop device in /proc/diskstats")
}

/// An aligned buffer for O_DIRECT.
fn aligned(bytes: usize) -> &'static mut [u8] {
    let layout = std::alloc::Layout::from_size_align(bytes, 4096).unwrap();
    unsafe { std::slice::from_raw_parts_mut(std::alloc::alloc_zeroed(layout), bytes) }
}

/// `count` requests of `size` bytes at scattered offsets of the device.
fn direct_io(device: &LoopDevice, size: usize, count: u64, write: bool) {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_DIRECT)
        .open(&device.node)
        .unwrap();
    let buffer = aligned(size);
    let slots = (64 * MIB) / size as u64;
    for request in 0..count {
        let offset = (request * 7919 % slots) * size as u64;
        match write {
            true => file.write_all_at(buffer, offset).unwrap(),
            false => file.read_exact_at(buffer, offset).unwrap(),
        }
    }
}

fn traced(snapshot: &TraceSnapshot, stat: &DiskStat, op: Op, kind: Kind) -> (u64, f64) {
    let buckets = snapshot
        .get((stat.major, stat.minor), op, kind)
        .unwrap_or_else(|| panic!("no {op:?} {kind:?} series for {}: {snapshot:?}", stat.name));
    (buckets.count(), buckets.mean_ns().unwrap())
}

#[test]
fn traced_requests_are_the_kernels_own_count_and_time() {
    let device = LoopDevice::attach(64 * MIB, false, |image| {
        let data: Vec<u8> = (0..MIB).map(|byte| (byte % 251) as u8 + 1).collect();
        for mib in 0..64 {
            image.write_all_at(&data, mib * MIB).unwrap();
        }
    });
    run(
        "losetup",
        &["--direct-io=on", device.node.to_str().unwrap()],
    );
    let tracer = BlockTracer::start().expect("tracing the block layer as root");
    std::thread::sleep(std::time::Duration::from_millis(200));
    // The tracer's counts last before diskstats, as a run's edges read them.
    let (traced_before, before) = (tracer.snapshot(), stat_of(&device));
    direct_io(&device, 4096, 3000, false);
    direct_io(&device, 65536, 500, false);
    direct_io(&device, 4096, 1000, true);
    let (traced_after, after) = (tracer.snapshot(), stat_of(&device));
    let snapshot = traced_after.since(&traced_before);

    let reads = after.read_requests - before.read_requests;
    let writes = after.write_requests - before.write_requests;
    assert!(
        reads >= 3500 && writes >= 1000,
        "{reads} reads, {writes} writes"
    );
    let (traced_reads, read_mean_ns) = traced(&snapshot, &after, Op::Read, Kind::Total);
    let (traced_writes, write_mean_ns) = traced(&snapshot, &after, Op::Write, Kind::Total);
    assert_eq!(
        (traced_reads, traced_writes),
        (reads, writes),
        "traced requests against /proc/diskstats; unfollowed: {:?}",
        snapshot.unfollowed
    );
    let kernel_read_ns = (after.read_ms - before.read_ms) as f64 * 1e6 / reads as f64;
    let kernel_write_ns = (after.write_ms - before.write_ms) as f64 * 1e6 / writes as f64;
    for (what, traced_ns, kernel_ns) in [
        ("read", read_mean_ns, kernel_read_ns),
        ("write", write_mean_ns, kernel_write_ns),
    ] {
        let apart = (traced_ns - kernel_ns).abs() / kernel_ns;
        assert!(
            apart < 0.02,
            "{what}: traced mean {traced_ns:.0} ns, /proc/diskstats {kernel_ns:.0} ns ({:.1}% apart)",
            apart * 100.0
        );
    }
    let (device_reads, device_mean_ns) = traced(&snapshot, &after, Op::Read, Kind::Device);
    let (queued_reads, queue_mean_ns) = traced(&snapshot, &after, Op::Read, Kind::Queue);
    assert_eq!((device_reads, queued_reads), (reads, reads));
    let parts_ns = device_mean_ns + queue_mean_ns;
    assert!(
        (parts_ns - read_mean_ns).abs() / read_mean_ns < 0.01,
        "queue {queue_mean_ns:.0} + device {device_mean_ns:.0} ns against a total of {read_mean_ns:.0} ns"
    );
    let read_buckets = snapshot
        .get((after.major, after.minor), Op::Read, Kind::Device)
        .unwrap();
    let (p50, p99) = (
        read_buckets.quantile_ns(0.5).unwrap(),
        read_buckets.quantile_ns(0.99).unwrap(),
    );
    assert!(0.0 < p50 && p50 <= p99, "p50 {p50} ns, p99 {p99} ns");
    println!(
        "{reads} reads, {writes} writes traced as /proc/diskstats counts them; read mean \
         {read_mean_ns:.0} ns traced, {kernel_read_ns:.0} ns by diskstats (queue \
         {queue_mean_ns:.0} + device {device_mean_ns:.0}); write mean {write_mean_ns:.0} ns \
         traced, {kernel_write_ns:.0} ns; read device p50 {p50:.0} ns, p99 {p99:.0} ns"
    );
    assert_eq!(snapshot.unfollowed.starts_dropped, 0);
}
