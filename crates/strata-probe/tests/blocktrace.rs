//! The block tracer against the kernel's own counters, and against
//! bpftrace on the same requests. Against the kernel: a loop device (its
//! backing file written whole, then read with direct I/O, so each request
//! reaches the disk below) read and written with O_DIRECT while the tracer runs; the
//! requests it counts per operation are /proc/diskstats' for the device,
//! and their mean time start → end is diskstats' time per request.

use common::{data_device, data_device_in, mount_tracefs, settle_completions, stat_of};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::process::{Command, Stdio};
use strata_probe::blocktrace::{bucket_range, BlockTracer, Kind, Op, TraceSnapshot};
use strata_probe::diskstats::DiskStat;
use strata_testkit::loopdev::{LoopDevice, MIB};

mod common;

/// One test at a time: another tracer on the same tracepoints (bpftrace's
/// programs run before strata's at each request's end) lengthens the times
/// this one measures.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

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

/// This binary's tests one at a time: its lock held, then the device
/// `made`, and the tracer started and given 200 ms to settle.
fn alone_traced(
    made: impl FnOnce() -> LoopDevice,
) -> (std::sync::MutexGuard<'static, ()>, LoopDevice, BlockTracer) {
    let alone = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let device = made();
    let tracer = BlockTracer::start().expect("tracing the block layer as root");
    std::thread::sleep(std::time::Duration::from_millis(200));
    (alone, device, tracer)
}

fn traced(snapshot: &TraceSnapshot, stat: &DiskStat, op: Op, kind: Kind) -> (u64, f64) {
    let buckets = snapshot
        .get((stat.major, stat.minor), op, kind)
        .unwrap_or_else(|| panic!("no {op:?} {kind:?} series for {}: {snapshot:?}", stat.name));
    (buckets.count(), buckets.mean().unwrap())
}

/// The sizes traced are the requests' own: 3,000 of 4 KiB and 500 of
/// 64 KiB read, 1,000 of 4 KiB written, their bytes /proc/diskstats'
/// sectors × 512 (less what the `missing` requests, counted by diskstats
/// and not traced, could hold).
fn sizes_are_those_issued(
    snapshot: &TraceSnapshot,
    (before, after): (&DiskStat, &DiskStat),
    missing: u64,
) {
    let device = (after.major, after.minor);
    let sizes = |op: Op| snapshot.get(device, op, Kind::Size).unwrap();
    let in_bucket = |op: Op, bytes: u64| {
        sizes(op)
            .counts
            .get(&strata_probe::blocktrace::bucket_of(bytes))
            .copied()
            .unwrap_or(0)
    };
    for (op, bytes, issued) in [
        (Op::Read, 4096, 3000),
        (Op::Read, 65536, 500),
        (Op::Write, 4096, 1000),
    ] {
        let counted = in_bucket(op, bytes);
        assert!(
            counted <= issued && counted + missing >= issued,
            "{op:?} of {bytes} bytes: {counted} traced of {issued}: {:?}",
            sizes(op)
        );
    }
    assert_eq!(sizes(Op::Read).counts.len(), 2, "{:?}", sizes(Op::Read));
    for (op, sectors) in [
        (Op::Read, after.read_sectors - before.read_sectors),
        (Op::Write, after.write_sectors - before.write_sectors),
    ] {
        let (traced, kernel) = (sizes(op).sum, sectors * 512);
        assert!(
            traced <= kernel && traced + missing * 65536 >= kernel,
            "{op:?}: {traced} bytes traced, /proc/diskstats {kernel}"
        );
    }
}

#[test]
fn merges_are_the_kernels_own_count() {
    let _alone = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let device = data_device();
    let tracer = BlockTracer::start().expect("tracing the block layer as root");
    let (traced_before, before) = (tracer.snapshot(), stat_of(&device));
    // Buffered writes reach the device as bios the block layer merges, in
    // dd's own fsync: the merges are counted under its role.
    let mut dd = Command::new("dd")
        .args([
            "if=/dev/zero",
            "bs=4k",
            "count=8000",
            "conv=fsync",
            "status=none",
        ])
        .arg(format!("of={}", device.node.display()))
        .spawn()
        .unwrap();
    tracer.name_roles(&[(dd.id(), "dd")]).unwrap();
    assert!(dd.wait().unwrap().success());
    settle_completions(&device);
    let (traced_after, after) = (tracer.snapshot(), stat_of(&device));
    let snapshot = traced_after.since(&traced_before);
    let merged = |op: Op| snapshot.merges_of((after.major, after.minor), op);
    let kernel = (
        after.read_merges - before.read_merges,
        after.write_merges - before.write_merges,
    );
    assert!(kernel.1 > 1000, "{} write merges", kernel.1);
    assert_eq!((merged(Op::Read), merged(Op::Write)), kernel);
    let role = snapshot.roles.iter().position(|role| role == "dd").unwrap() as u8;
    let by_dd = snapshot.merges[&((after.major, after.minor), Op::Write, role)];
    tracer.forget_roles(&[dd.id()]);
    assert!(
        by_dd * 10 >= kernel.1 * 9,
        "{by_dd} of {} write merges in dd's fsync: {:?}",
        kernel.1,
        snapshot.merges
    );
    let written_bytes = (after.write_sectors - before.write_sectors) * 512;
    let sizes = snapshot
        .get((after.major, after.minor), Op::Write, Kind::Size)
        .unwrap();
    assert_eq!(sizes.sum, written_bytes);
    assert!(sizes.mean().unwrap() > 8192.0, "merged requests: {sizes:?}");
    println!(
        "{} write merges traced as /proc/diskstats counts them ({by_dd} in dd's fsync); {} written in {} requests",
        kernel.1,
        written_bytes,
        sizes.count()
    );
}

#[test]
fn traced_requests_are_the_kernels_own_count_and_time() {
    let (_alone, device, tracer) = alone_traced(data_device);
    // The tracer's counts last before diskstats, as a run's edges read them.
    let (traced_before, before) = (tracer.snapshot(), stat_of(&device));
    direct_io(&device, 4096, 3000, false);
    direct_io(&device, 65536, 500, false);
    direct_io(&device, 4096, 1000, true);
    settle_completions(&device);
    // A request whose end the tracer did not see is named once it has been
    // in flight 2 s.
    std::thread::sleep(std::time::Duration::from_millis(2100));
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
    // Every request, or named: the ends BPF misses on this kernel when the
    // loop device's requests end in the disk's interrupt (docs/tracing.md)
    // are found when the kernel reuses the request, or after 2 s in flight.
    let device = (after.major, after.minor);
    let missed = (
        snapshot.ends_missed_of(device, Op::Read),
        snapshot.ends_missed_of(device, Op::Write),
    );
    let not_seen = snapshot.unfollowed.ends_not_seen;
    let accounted = traced_reads + traced_writes + missed.0 + missed.1;
    let allowed = (reads + writes) / 1000;
    assert!(
        traced_reads + missed.0 <= reads
            && traced_writes + missed.1 <= writes
            && accounted + not_seen + allowed >= reads + writes,
        "traced ({traced_reads}, {traced_writes}), ends missed {missed:?} and {not_seen} ends \
         not seen against /proc/diskstats ({reads}, {writes}); unfollowed: {:?}",
        snapshot.unfollowed
    );
    assert!(
        not_seen <= 5,
        "{not_seen} ends not seen: {:?}",
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
    assert_eq!((device_reads, queued_reads), (traced_reads, traced_reads));
    let parts_ns = device_mean_ns + queue_mean_ns;
    assert!(
        (parts_ns - read_mean_ns).abs() / read_mean_ns < 0.01,
        "queue {queue_mean_ns:.0} + device {device_mean_ns:.0} ns against a total of {read_mean_ns:.0} ns"
    );
    let read_buckets = snapshot
        .get((after.major, after.minor), Op::Read, Kind::Device)
        .unwrap();
    let (p50, p99) = (
        read_buckets.quantile(0.5).unwrap(),
        read_buckets.quantile(0.99).unwrap(),
    );
    assert!(0.0 < p50 && p50 <= p99, "p50 {p50} ns, p99 {p99} ns");
    let missing = (reads + writes) - (traced_reads + traced_writes);
    sizes_are_those_issued(&snapshot, (&before, &after), missing);
    println!(
        "{reads} reads, {writes} writes traced as /proc/diskstats counts them ({missed:?} ends \
         missed, {not_seen} not seen); read mean \
         {read_mean_ns:.0} ns traced, {kernel_read_ns:.0} ns by diskstats (queue \
         {queue_mean_ns:.0} + device {device_mean_ns:.0}); write mean {write_mean_ns:.0} ns \
         traced, {kernel_write_ns:.0} ns; read device p50 {p50:.0} ns, p99 {p99:.0} ns"
    );
    assert_eq!(snapshot.unfollowed.starts_dropped, 0);
}

/// Writes each followed by a flush (`dd oflag=dsync` on the device): the
/// requests started and ended are /proc/diskstats' writes, among them the
/// empty PREFLUSH writes that are never issued (the block layer issues a
/// flush of its own for each, with no start), and the flushes issued are
/// its flushes.
#[test]
fn writes_with_flushes_are_counted_as_diskstats_counts_them() {
    let (_alone, device, tracer) = alone_traced(data_device);
    let (traced_before, before) = (tracer.snapshot(), stat_of(&device));
    let dd = Command::new("dd")
        .args([
            "if=/dev/zero",
            "bs=4k",
            "count=300",
            "oflag=dsync",
            "status=none",
        ])
        .arg(format!("of={}", device.node.display()))
        .status()
        .unwrap();
    assert!(dd.success());
    settle_completions(&device);
    let (traced_after, after) = (tracer.snapshot(), stat_of(&device));
    let window = traced_after.since(&traced_before);
    let count = |op: Op, kind: Kind| {
        window
            .get((after.major, after.minor), op, kind)
            .map_or(0, |buckets| buckets.count())
    };
    let started_writes = count(Op::Write, Kind::Total);
    let issued = (
        count(Op::Write, Kind::Device),
        count(Op::Flush, Kind::Device),
    );
    let kernel = (
        after.write_requests - before.write_requests,
        after.flush_requests - before.flush_requests,
    );
    assert!(kernel.1 >= 300, "{} flushes for 300 dsync writes", kernel.1);
    // Exact, but for the end BPF misses now and then (docs/tracing.md):
    // at most one here, within the 0.1%.
    let within = |traced: u64, kernel: u64| traced <= kernel && traced + 1 >= kernel;
    assert!(
        within(started_writes, kernel.0) && within(issued.1, kernel.1),
        "writes started and ended, flushes issued ({started_writes}, {}) against \
         /proc/diskstats' writes and flushes {kernel:?}; {} writes issued",
        issued.1,
        issued.0
    );
    assert!(
        issued.0 < started_writes,
        "{issued:?} issued of {started_writes} writes"
    );
    println!(
        "300 dsync writes: {started_writes} writes started and ended ({} issued) and {} flushes \
         issued, as /proc/diskstats counts writes and flushes",
        issued.0, issued.1
    );
}

/// Discards (`blkdiscard` in 1 MiB steps: 64 requests) are counted and
/// sized as /proc/diskstats counts them: their requests started and ended,
/// and their bytes its sectors discarded × 512.
#[test]
fn discards_are_counted_as_diskstats_counts_them() {
    let (_alone, device, tracer) = alone_traced(data_device);
    let (traced_before, before) = (tracer.snapshot(), stat_of(&device));
    let discarded = Command::new("blkdiscard")
        .args(["--step", "1MiB"])
        .arg(&device.node)
        .status()
        .unwrap();
    assert!(discarded.success());
    settle_completions(&device);
    let (traced_after, after) = (tracer.snapshot(), stat_of(&device));
    let window = traced_after.since(&traced_before);
    let (requests, _) = traced(&window, &after, Op::Discard, Kind::Total);
    let kernel = after.discard_requests - before.discard_requests;
    assert!(
        kernel >= 64,
        "{kernel} discard requests for 64 MiB in 1 MiB steps"
    );
    assert!(
        requests <= kernel && requests + 1 >= kernel,
        "{requests} discards traced, /proc/diskstats {kernel}"
    );
    let bytes = window
        .get((after.major, after.minor), Op::Discard, Kind::Size)
        .unwrap()
        .sum;
    let kernel_bytes = (after.discard_sectors - before.discard_sectors) * 512;
    assert!(
        bytes <= kernel_bytes && bytes + MIB >= kernel_bytes,
        "{bytes} bytes discarded traced, /proc/diskstats {kernel_bytes}"
    );
    println!(
        "{requests} discards of {bytes} bytes traced; /proc/diskstats {kernel} of {kernel_bytes}"
    );
}

/// On a loop device whose image is in memory (tmpfs, read with direct
/// I/O), no request ends in a disk's interrupt, where BPF on this kernel
/// misses some ends: there the traced requests are /proc/diskstats' within
/// the 0.1%.
#[test]
fn counts_are_exact_where_no_disk_interrupt_intervenes() {
    let (_alone, device, tracer) =
        alone_traced(|| data_device_in(std::path::Path::new("/dev/shm")));
    let (traced_before, before) = (tracer.snapshot(), stat_of(&device));
    direct_io(&device, 4096, 3000, false);
    direct_io(&device, 4096, 1000, true);
    settle_completions(&device);
    let (traced_after, after) = (tracer.snapshot(), stat_of(&device));
    let window = traced_after.since(&traced_before);
    let kernel = (
        after.read_requests - before.read_requests,
        after.write_requests - before.write_requests,
    );
    let traced = |op: Op| {
        window
            .get((after.major, after.minor), op, Kind::Total)
            .map_or(0, |buckets| buckets.count())
    };
    let counted = (traced(Op::Read), traced(Op::Write));
    let within = |traced: u64, kernel: u64| traced <= kernel && traced + kernel / 1000 >= kernel;
    assert!(
        kernel.0 >= 3000 && within(counted.0, kernel.0) && within(counted.1, kernel.1),
        "traced {counted:?} against /proc/diskstats {kernel:?}: {:?}",
        window.unfollowed
    );
}

/// bpftrace's biolatency in its tracepoint form (this kernel has no
/// kprobes, which Debian's biolatency.bt attaches to), for one device.
fn biolatency_script(dev: u32) -> String {
    format!(
        "tracepoint:block:block_io_start /args->dev == {dev}/ {{ @start[args->dev, args->sector] = nsecs; }} \
         tracepoint:block:block_io_done /@start[args->dev, args->sector]/ {{ \
         @usecs = hist((nsecs - @start[args->dev, args->sector]) / 1000); \
         delete(@start[args->dev, args->sector]); }} \
         END {{ clear(@start); }}"
    )
}

/// A bpftrace histogram's buckets by their low bound (`[0]`, `[1]`,
/// `[2, 4)`, `[1K, 2K)`, `[1M, 2M)`).
fn parse_hist(text: &str) -> BTreeMap<u64, u64> {
    let bound = |word: &str| -> u64 {
        let (digits, scale) = match word.chars().last() {
            Some('K') => (&word[..word.len() - 1], 1 << 10),
            Some('M') => (&word[..word.len() - 1], 1 << 20),
            Some('G') => (&word[..word.len() - 1], 1 << 30),
            _ => (word, 1),
        };
        digits.parse::<u64>().unwrap() * scale
    };
    text.lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix('[')?;
            let (range, after) = rest.split_once([')', ']'])?;
            let low = bound(range.split(',').next()?.trim());
            let count = after.split_whitespace().next()?.parse().ok()?;
            Some((low, count))
        })
        .collect()
}

/// The low bound of the power-of-two bucket of microseconds a value falls
/// in, as bpftrace's hist() makes them.
fn log2_low(micros: u64) -> u64 {
    match micros {
        0 | 1 => micros,
        _ => 1 << (63 - micros.leading_zeros()),
    }
}

/// bpftrace, killed if a test fails with it still attached (it would
/// slow the next test's requests).
struct Peer(std::process::Child);

impl Drop for Peer {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// bpftrace attached beside strata's tracer on the same requests: per
/// power-of-two bucket of microseconds, the counts agree within 2% of the
/// total.
#[test]
fn the_same_requests_fall_in_the_same_buckets_as_bpftraces_biolatency() {
    let _alone = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let device = data_device();
    let stat = stat_of(&device);
    mount_tracefs();
    // bpftrace first: the programs of a tracepoint run in the order they
    // were attached, so strata's run after bpftrace's at both ends of a
    // request and neither adds its own run time to the other's spans
    // unevenly (strata's end program does more than its start program).
    let mut peer = Peer(
        Command::new("bpftrace")
            .args(["-e", &biolatency_script((stat.major << 20) | stat.minor)])
            .stdout(Stdio::piped())
            .spawn()
            .expect("bpftrace (Debian's): run scripts/install-test-deps"),
    );
    let mut output = BufReader::new(peer.0.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("Attaching") {
        line.clear();
        assert!(
            output.read_line(&mut line).unwrap() > 0,
            "bpftrace ended before attaching"
        );
    }
    // It says so before it attaches.
    std::thread::sleep(std::time::Duration::from_secs(1));
    let tracer = BlockTracer::start().expect("tracing the block layer as root");
    let before = tracer.snapshot();
    direct_io(&device, 4096, 2000, false);
    direct_io(&device, 65536, 300, false);
    direct_io(&device, 4096, 500, true);
    settle_completions(&device);
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let window = tracer.snapshot().since(&before);
    unsafe { libc::kill(peer.0.id() as libc::pid_t, libc::SIGINT) };
    let mut text = String::new();
    output.read_to_string(&mut text).unwrap();
    peer.0.wait().unwrap();
    let theirs = parse_hist(&text);

    let mut ours: BTreeMap<u64, u64> = BTreeMap::new();
    for op in [Op::Read, Op::Write, Op::Flush, Op::Discard, Op::Other] {
        let Some(buckets) = window.get((stat.major, stat.minor), op, Kind::Total) else {
            continue;
        };
        for (bucket, count) in &buckets.counts {
            let (low, width) = bucket_range(*bucket);
            let middle_ns = low + width / 2;
            *ours.entry(log2_low(middle_ns / 1000)).or_default() += count;
        }
    }
    // bpftrace misses a few of the requests (0.1% to 0.5% seen here).
    let (total, mine): (u64, u64) = (theirs.values().sum(), ours.values().sum());
    // The test's requests once their ends are accounted
    // (`settle_completions`: a read of the counts while blk-mq had
    // completed a request but not yet accounted its end missed it); a
    // request whose end the tracer did not see is named after 2 s.
    let not_seen = window.unfollowed.ends_not_seen;
    // The ends BPF misses on this kernel (docs/tracing.md: 24 of the 2,800
    // once in CI, with the other tests' builds running) are named when the
    // kernel reuses the request, or after 2 s in flight.
    let device = (stat.major, stat.minor);
    let missed: u64 = [Op::Read, Op::Write, Op::Flush]
        .into_iter()
        .map(|op| window.ends_missed_of(device, op))
        .sum();
    assert!(
        mine + missed + not_seen >= 2786 && not_seen <= 5,
        "strata traced {mine} of the test's 2,800 requests, {missed} ends missed, {not_seen} \
         ends not seen: {:?}",
        window.unfollowed
    );
    assert!(
        total as f64 >= 0.98 * mine as f64,
        "bpftrace counted {total} requests, strata {mine}: {text}"
    );
    for low in ours.keys().chain(theirs.keys()) {
        let mine = ours.get(low).copied().unwrap_or(0);
        let peer = theirs.get(low).copied().unwrap_or(0);
        assert!(
            mine.abs_diff(peer) as f64 <= 0.02 * total as f64,
            "[{low} us bucket]: strata {mine}, bpftrace {peer} of {total}; strata {ours:?}, bpftrace {theirs:?}"
        );
    }
    println!("per power-of-two microseconds, strata {ours:?}, bpftrace {theirs:?}");
}

/// Without root (nor CAP_BPF and CAP_PERFMON) the tracer does not start,
/// and says why: a child process that gave up root tries.
#[test]
fn without_root_the_tracer_says_why_it_cannot_start() {
    let child = unsafe { libc::fork() };
    assert!(child >= 0, "fork: {}", std::io::Error::last_os_error());
    if child == 0 {
        let code = unsafe {
            if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                3
            } else {
                match BlockTracer::start() {
                    Ok(_) => 1,
                    Err(error) if format!("{error:#}").contains("Operation not permitted") => 0,
                    Err(_) => 2,
                }
            }
        };
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
    let code = libc::WEXITSTATUS(status);
    assert_eq!(
        code,
        0,
        "as nobody the tracer {}",
        [
            "",
            "started",
            "failed without naming the permission",
            "could not become nobody"
        ][code as usize % 4]
    );
}
