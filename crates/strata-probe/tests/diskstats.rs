//! Tests for /proc/diskstats parsing and iostat -x arithmetic.

mod common;

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use strata_io::buffer::AlignedBuffer;
use strata_probe::blockdev::device_of_path;
use strata_probe::diskstats::{find, parse_diskstats, read_diskstats, DeviceDelta, DiskStat};
use strata_testkit::loopdev::MIB;

const FIXTURE_20_FIELDS: &str = include_str!("fixtures/diskstats-20fields.txt");

/// Pre-4.18 layout: 11 counters.
const LINES_14_FIELDS: &str = "\
   8       0 sda 1020 45 63190 2104 6043 9218 253776 25408 0 9412 27508
 259       1 nvme0n1p1 88 0 5424 21 3 0 24 1 0 40 22
 253       0 dm-0 224501 0 7310658 118596 1077291 0 9876216 2988032 2 741620 3106628
";

/// 4.18 to 5.4 layout: 15 counters (discards added).
const LINES_18_FIELDS: &str = "\
 259       0 nvme0n1 4093 1110 269942 1262 91731 53466 4313720 106524 0 62116 107786 12 0 4194304 3
   9     127 md127 51022 0 3264722 0 99003 0 6172480 0 0 0 0 71 0 9437184 0
";

#[test]
fn captured_20_field_fixture_parses_every_line() {
    let stats = parse_diskstats(FIXTURE_20_FIELDS).unwrap();
    let line_count = FIXTURE_20_FIELDS
        .lines()
        .filter(|line| !line.trim().is_empty())
        .count();
    assert_eq!(stats.len(), line_count);
    assert!(stats.iter().all(|stat| stat.field_count == 17));
    let vda = find(&stats, "vda").expect("vda in fixture");
    let expected = DiskStat {
        major: 254,
        minor: 0,
        name: "vda".into(),
        read_requests: 29454,
        read_merges: 4940,
        read_sectors: 2396122,
        read_ms: 6866,
        write_requests: 23686,
        write_merges: 14142,
        write_sectors: 2220448,
        write_ms: 16104,
        in_flight: 0,
        busy_ms: 5468,
        weighted_ms: 23936,
        discard_requests: 9656,
        discard_merges: 52,
        discard_sectors: 1002952,
        discard_ms: 711,
        flush_requests: 4682,
        flush_ms: 254,
        field_count: 17,
    };
    assert_eq!(vda, &expected);
    let loop1 = find(&stats, "loop1").unwrap();
    assert_eq!((loop1.major, loop1.minor, loop1.write_sectors), (7, 1, 0));
}

#[test]
fn lines_with_14_fields_leave_discard_and_flush_counters_zero() {
    let stats = parse_diskstats(LINES_14_FIELDS).unwrap();
    let names: Vec<&str> = stats.iter().map(|stat| stat.name.as_str()).collect();
    assert_eq!(names, ["sda", "nvme0n1p1", "dm-0"]);
    let dm = find(&stats, "dm-0").unwrap();
    assert_eq!((dm.major, dm.minor, dm.field_count), (253, 0, 11));
    assert_eq!(
        (dm.read_requests, dm.read_sectors, dm.read_ms),
        (224501, 7310658, 118596)
    );
    assert_eq!(
        (dm.write_requests, dm.write_sectors, dm.write_ms),
        (1077291, 9876216, 2988032)
    );
    assert_eq!(
        (dm.in_flight, dm.busy_ms, dm.weighted_ms),
        (2, 741620, 3106628)
    );
    assert_eq!(
        (dm.discard_requests, dm.discard_sectors, dm.flush_requests),
        (0, 0, 0)
    );
    let sda = find(&stats, "sda").unwrap();
    assert_eq!((sda.read_merges, sda.write_merges), (45, 9218));
}

#[test]
fn lines_with_18_fields_carry_discards_but_no_flushes() {
    let stats = parse_diskstats(LINES_18_FIELDS).unwrap();
    let nvme = find(&stats, "nvme0n1").unwrap();
    assert_eq!(nvme.field_count, 15);
    assert_eq!(
        (
            nvme.discard_requests,
            nvme.discard_merges,
            nvme.discard_sectors,
            nvme.discard_ms
        ),
        (12, 0, 4194304, 3)
    );
    assert_eq!((nvme.flush_requests, nvme.flush_ms), (0, 0));
    let md = find(&stats, "md127").unwrap();
    assert_eq!(
        (md.major, md.minor, md.write_sectors, md.discard_sectors),
        (9, 127, 6172480, 9437184)
    );
}

#[test]
fn malformed_lines_are_errors_naming_the_line() {
    let wrong_count = format!("{LINES_14_FIELDS}   8       1 sda1 1 2 3 4 5 6 7 8 9 10 11 12 13\n");
    let message = format!("{:#}", parse_diskstats(&wrong_count).unwrap_err());
    assert!(message.contains("line 4"), "{message}");
    assert!(message.contains("found 16"), "{message}");

    let not_a_number = LINES_14_FIELDS.replace("5424", "54x4");
    let message = format!("{:#}", parse_diskstats(&not_a_number).unwrap_err());
    assert!(message.contains("line 2"), "{message}");
    assert!(message.contains("sectors read"), "{message}");
}

#[test]
fn blank_lines_are_skipped_and_find_misses_unknown_names() {
    let stats = parse_diskstats(&format!("\n{LINES_18_FIELDS}\n\n")).unwrap();
    assert_eq!(stats.len(), 2);
    assert!(find(&stats, "sdz").is_none());
}

fn stat(name: &str, fill: impl FnOnce(&mut DiskStat)) -> DiskStat {
    let mut stat = parse_diskstats(&format!("8 0 {name} 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"))
        .unwrap()
        .remove(0);
    fill(&mut stat);
    stat
}

#[test]
fn delta_matches_iostat_definitions_worked_by_hand() {
    let before = stat("sda", |s| {
        s.read_requests = 1000;
        s.read_sectors = 8000;
        s.read_ms = 100;
        s.write_requests = 10;
        s.write_sectors = 80;
        s.write_ms = 40;
        s.busy_ms = 500;
        s.weighted_ms = 700;
    });
    let after = stat("sda", |s| {
        s.read_requests = 1200;
        s.read_merges = 30;
        s.read_sectors = 8000 + 51200;
        s.read_ms = 600;
        s.write_requests = 60;
        s.write_sectors = 80 + 800;
        s.write_ms = 1040;
        s.busy_ms = 2000;
        s.weighted_ms = 3700;
        s.discard_requests = 4;
        s.discard_sectors = 2048;
        s.flush_requests = 7;
        s.flush_ms = 14;
    });
    let delta = DeviceDelta::between(&before, &after, 2.0).unwrap();
    assert_eq!(
        (delta.read_requests, delta.read_merges, delta.read_bytes),
        (200, 30, 26_214_400)
    );
    assert_eq!((delta.write_requests, delta.write_bytes), (50, 409_600));
    assert_eq!(
        (delta.discard_requests, delta.discard_bytes),
        (4, 1_048_576)
    );
    assert_eq!((delta.flush_requests, delta.flush_ms), (7, 14));
    assert_eq!(delta.read_requests_per_s(), 100.0);
    assert_eq!(delta.write_requests_per_s(), 25.0);
    assert_eq!(delta.read_mb_per_s(), 13.1072);
    assert_eq!(delta.write_mb_per_s(), 0.2048);
    assert_eq!(delta.read_request_kib(), 128.0);
    assert_eq!(delta.write_request_kib(), 8.0);
    assert_eq!(delta.read_await_ms(), 2.5);
    assert_eq!(delta.write_await_ms(), 20.0);
    assert_eq!(delta.queue_size(), 1.5);
    assert_eq!(delta.utilization_pct(), 75.0);
}

#[test]
fn idle_interval_gives_zero_sizes_and_awaits_and_util_is_capped() {
    let before = stat("sdb", |s| s.busy_ms = 100);
    let after = stat("sdb", |s| s.busy_ms = 2600);
    let delta = DeviceDelta::between(&before, &after, 2.0).unwrap();
    assert_eq!(delta.read_request_kib(), 0.0);
    assert_eq!(delta.write_request_kib(), 0.0);
    assert_eq!(delta.read_await_ms(), 0.0);
    assert_eq!(delta.write_await_ms(), 0.0);
    assert_eq!(delta.utilization_pct(), 100.0);
}

/// The kernel prints the milliseconds fields as 32-bit (`%u`): one that
/// went down while the counts went on wrapped; a count that went down is a
/// reset, and no figure spans it.
#[test]
fn a_milliseconds_field_wraps_at_2_pow_32_and_a_count_that_goes_down_is_a_reset() {
    let before = stat("sdc", |s| {
        s.write_requests = 100;
        s.busy_ms = (1 << 32) - 300;
        s.weighted_ms = 1 << 20;
    });
    let after = stat("sdc", |s| {
        s.write_requests = 150;
        s.busy_ms = 700;
        s.weighted_ms = (1 << 20) + 5;
    });
    let delta = DeviceDelta::between(&before, &after, 1.0).unwrap();
    assert_eq!((delta.write_requests, delta.busy_ms), (50, 1000));
    assert_eq!(delta.weighted_ms, 5);
    let rebooted = stat("sdc", |s| {
        s.write_requests = 3;
        s.busy_ms = 7;
    });
    let reset = DeviceDelta::between(&before, &rebooted, 1.0).unwrap_err();
    assert!(
        reset.contains("sdc's write_requests went down from 100 to 3") && reset.contains("reset"),
        "{reset}"
    );
}

#[test]
fn live_diskstats_list_the_root_device() {
    let stats = read_diskstats().unwrap();
    let root = device_of_path(std::path::Path::new("/")).unwrap();
    let entry = find(&stats, &root.name).expect("root device in /proc/diskstats");
    assert_eq!((entry.major, entry.minor), (root.major, root.minor));
    assert!(entry.read_requests > 0);
}

#[test]
fn direct_write_shows_up_in_the_file_systems_device_counters() {
    const WRITE_BYTES: u64 = 4 * MIB;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("direct.bin");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
        .unwrap();
    let device = device_of_path(&path).unwrap();
    let mut chunk = AlignedBuffer::new(MIB as usize);
    chunk
        .as_mut_slice()
        .copy_from_slice(&common::pseudo_random_bytes(MIB as usize, 7));

    let before = find(&read_diskstats().unwrap(), &device.name)
        .unwrap()
        .clone();
    for _ in 0..WRITE_BYTES / MIB {
        file.write_all(chunk.as_mut_slice()).unwrap();
    }
    file.sync_all().unwrap();
    let after = find(&read_diskstats().unwrap(), &device.name)
        .unwrap()
        .clone();

    let delta = DeviceDelta::between(&before, &after, 1.0).unwrap();
    assert!(
        delta.write_bytes >= WRITE_BYTES,
        "{} wrote {}",
        device.name,
        delta.write_bytes
    );
    assert!(delta.write_requests >= 1);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), WRITE_BYTES);
}
