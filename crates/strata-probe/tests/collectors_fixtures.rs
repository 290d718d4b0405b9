//! The collectors' parsers against files captured from this machine (and a
//! hand-written mountstats in the kernel's format), and `disk_totals` over
//! synthetic device metrics.

use strata_core::metrics::{Metric, MetricKind};
use strata_probe::blockdev::{BlockDevice, DeviceKind};
use strata_probe::collectors::{
    device_metrics, disk_totals, parse_meminfo, parse_mountstats, parse_net_dev, parse_pressure,
    parse_proc_io, parse_proc_stat, parse_schedstat, parse_vmstat,
};
use strata_probe::diskstats::DiskStat;

const NET_DEV: &str = include_str!("fixtures/net-dev.txt");
const PROC_STAT: &str = include_str!("fixtures/proc-stat.txt");
const MEMINFO: &str = include_str!("fixtures/meminfo.txt");
const VMSTAT: &str = include_str!("fixtures/vmstat.txt");
const SCHEDSTAT: &str = include_str!("fixtures/schedstat.txt");
const PROC_IO: &str = include_str!("fixtures/proc-io.txt");
const PRESSURE_IO: &str = include_str!("fixtures/pressure-io.txt");
const MOUNTSTATS: &str = include_str!("fixtures/mountstats.txt");

/// The value of the one metric called `name` whose labels include `labels`.
fn value(metrics: &[Metric], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let matching: Vec<&Metric> = metrics
        .iter()
        .filter(|metric| {
            metric.name == name
                && labels
                    .iter()
                    .all(|(key, value)| metric.labels.get(*key).map(String::as_str) == Some(*value))
        })
        .collect();
    assert!(matching.len() <= 1, "{name} {labels:?} is ambiguous");
    matching.first().map(|metric| metric.value)
}

fn kind_of(metrics: &[Metric], name: &str) -> MetricKind {
    metrics
        .iter()
        .find(|metric| metric.name == name)
        .unwrap()
        .kind
}

fn error_text(result: anyhow::Result<impl std::fmt::Debug>) -> String {
    format!(
        "{:#}",
        result.expect_err("malformed input must be an error")
    )
}

#[test]
fn net_dev_fixture_gives_eight_counters_per_interface() {
    let metrics = parse_net_dev(NET_DEV).unwrap();
    assert_eq!(metrics.len(), 4 * 8, "lo, ifb0, ifb1, eth0");
    let eth0 = |name| value(&metrics, name, &[("interface", "eth0")]).unwrap();
    assert_eq!(eth0("receive_bytes"), 214467388.0);
    assert_eq!(eth0("receive_packets"), 7590.0);
    assert_eq!(eth0("receive_errors"), 0.0);
    assert_eq!(eth0("receive_drops"), 0.0);
    assert_eq!(eth0("transmit_bytes"), 411797.0);
    assert_eq!(eth0("transmit_packets"), 4415.0);
    assert_eq!(eth0("transmit_errors"), 0.0);
    assert_eq!(eth0("transmit_drops"), 0.0);
    assert_eq!(
        value(&metrics, "transmit_bytes", &[("interface", "lo")]),
        Some(199885.0)
    );
    assert!(metrics.iter().all(|m| m.kind == MetricKind::Counter));
}

#[test]
fn net_dev_malformed_line_is_an_error_naming_it() {
    let short = format!("{}\n  eth9: 1 2 3\n", NET_DEV.trim_end());
    let text = error_text(parse_net_dev(&short));
    assert!(text.contains("line 7") && text.contains("eth9"), "{text}");
    let not_a_number = "  eth0: 1 2 x 4 5 6 7 8 9 10 11 12 13 14 15 16\n";
    let text = error_text(parse_net_dev(not_a_number));
    assert!(text.contains("line 1") && text.contains("\"x\""), "{text}");
}

#[test]
fn proc_stat_fixture_gives_ticks_run_queue_and_cpus() {
    let metrics = parse_proc_stat(PROC_STAT).unwrap();
    let expected = [
        ("user_ticks", 177480.0),
        ("nice_ticks", 11860.0),
        ("system_ticks", 121051.0),
        ("idle_ticks", 421924.0),
        ("iowait_ticks", 222760.0),
        ("irq_ticks", 0.0),
        ("softirq_ticks", 13430.0),
        ("steal_ticks", 225.0),
        ("procs_running", 5.0),
        ("procs_blocked", 1.0),
        ("cpus", 2.0),
    ];
    let got: Vec<(&str, f64)> = metrics.iter().map(|m| (m.name.as_str(), m.value)).collect();
    assert_eq!(got, expected);
    assert_eq!(kind_of(&metrics, "idle_ticks"), MetricKind::Counter);
    assert_eq!(kind_of(&metrics, "procs_running"), MetricKind::Gauge);
}

#[test]
fn proc_stat_malformed_or_without_cpu_line_is_an_error() {
    let text = error_text(parse_proc_stat("cpu  1 2 3 4 5 6 7 x 0 0\n"));
    assert!(
        text.contains("line 1") && text.contains("steal_ticks"),
        "{text}"
    );
    let text = error_text(parse_proc_stat("cpu  1 2 3\n"));
    assert!(text.contains("line 1"), "{text}");
    let text = error_text(parse_proc_stat("cpu 1 2 3 4 5 6 7 8\nprocs_running\n"));
    assert!(text.contains("line 2"), "{text}");
    assert!(parse_proc_stat("ctxt 5\n").is_err());
}

#[test]
fn pressure_fixture_gives_some_and_full_totals() {
    let metrics = parse_pressure("io", PRESSURE_IO).unwrap();
    assert_eq!(metrics.len(), 2);
    assert_eq!(
        value(&metrics, "pressure_some_us", &[("resource", "io")]),
        Some(2085030551.0)
    );
    assert_eq!(
        value(&metrics, "pressure_full_us", &[("resource", "io")]),
        Some(1771240870.0)
    );
    let text = error_text(parse_pressure(
        "cpu",
        "some avg10=0.00 total=1\nfull avg10=0.00\n",
    ));
    assert!(text.contains("pressure/cpu line 2"), "{text}");
}

#[test]
fn meminfo_fixture_gives_bytes() {
    let metrics = parse_meminfo(MEMINFO).unwrap();
    let got: Vec<(&str, f64)> = metrics.iter().map(|m| (m.name.as_str(), m.value)).collect();
    assert_eq!(
        got,
        [
            ("mem_total_bytes", 24684084.0 * 1024.0),
            ("mem_free_bytes", 23519580.0 * 1024.0),
            ("mem_available_bytes", 23790408.0 * 1024.0),
            ("cached_bytes", 704444.0 * 1024.0),
            ("buffers_bytes", 9256.0 * 1024.0),
            ("dirty_bytes", 136.0 * 1024.0),
            ("writeback_bytes", 0.0),
            ("shmem_bytes", 222940.0 * 1024.0),
        ]
    );
    assert!(metrics.iter().all(|m| m.kind == MetricKind::Gauge));
    let text = error_text(parse_meminfo("MemTotal: 1 kB\nCached: lots kB\n"));
    assert!(
        text.contains("meminfo line 2") && text.contains("lots"),
        "{text}"
    );
}

#[test]
fn vmstat_fixture_gives_paging_counters() {
    let metrics = parse_vmstat(VMSTAT).unwrap();
    let got: Vec<(&str, f64)> = metrics.iter().map(|m| (m.name.as_str(), m.value)).collect();
    assert_eq!(
        got,
        [
            ("pgpgin_kib", 1830803056.0),
            ("pgpgout_kib", 140615405.0),
            ("pgmajfault", 30896.0),
            ("pgfault", 75638602.0),
            ("oom_kills", 11.0),
        ]
    );
    assert!(metrics.iter().all(|m| m.kind == MetricKind::Counter));
    let text = error_text(parse_vmstat("nr_free_pages 5\npgpgin\n"));
    assert!(text.contains("vmstat line 2"), "{text}");
}

#[test]
fn schedstat_fixture_gives_cpu_delay_and_slices() {
    assert_eq!(parse_schedstat(SCHEDSTAT), Some((383399, 1291549, 6)));
    assert_eq!(parse_schedstat("1 2\n"), None);
    assert_eq!(parse_schedstat("1 2 x\n"), None);
    assert_eq!(parse_schedstat("1 2 3 4\n"), None);
}

#[test]
fn proc_io_fixture_gives_every_field_in_order() {
    let fields = parse_proc_io(PROC_IO).unwrap();
    let expected = [
        ("rchar", 10668),
        ("wchar", 0),
        ("syscr", 16),
        ("syscw", 0),
        ("read_bytes", 0),
        ("write_bytes", 0),
        ("cancelled_write_bytes", 0),
    ];
    let expected: Vec<(String, u64)> = expected.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    assert_eq!(fields, expected);
    let text = error_text(parse_proc_io("rchar: 1\nwchar 2\n"));
    assert!(text.contains("io line 2"), "{text}");
    let text = error_text(parse_proc_io("rchar: -1\n"));
    assert!(text.contains("io line 1"), "{text}");
}

#[test]
fn mountstats_with_two_nfs_mounts_gives_per_op_counters_and_labels() {
    let metrics = parse_mountstats(MOUNTSTATS).unwrap();
    let v4 = [
        ("mount", "/u02/oradata"),
        ("server", "nas01"),
        ("export", "/export/oradata"),
    ];
    let v3 = [
        ("mount", "/u03/redo logs"),
        ("server", "10.1.2.40"),
        ("export", "/vol/redo"),
    ];
    let counters = [
        "ops",
        "transmissions",
        "timeouts",
        "bytes_sent",
        "bytes_received",
        "queue_ms",
        "rtt_ms",
        "execute_ms",
        "errors",
    ];
    let op = |mount: &[(&str, &str)], op: &str| -> Vec<f64> {
        let mut labels = mount.to_vec();
        labels.push(("op", op));
        counters
            .iter()
            .map(|name| value(&metrics, name, &labels).unwrap_or_else(|| panic!("{op} {name}")))
            .collect()
    };
    assert_eq!(
        op(&v4, "READ"),
        [
            1204.0,
            1204.0,
            0.0,
            182372.0,
            158219648.0,
            33.0,
            1524.0,
            1620.0,
            0.0
        ]
    );
    assert_eq!(
        op(&v4, "WRITE"),
        [388.0, 390.0, 1.0, 51121520.0, 62080.0, 41.0, 2901.0, 3010.0, 2.0]
    );
    assert_eq!(
        op(&v4, "COMMIT"),
        [12.0, 12.0, 0.0, 2304.0, 1536.0, 0.0, 95.0, 96.0, 0.0]
    );
    assert_eq!(
        op(&v4, "GETATTR"),
        [9120.0, 9120.0, 0.0, 1641600.0, 2152320.0, 12.0, 3110.0, 3198.0, 0.0]
    );
    assert_eq!(
        op(&v3, "READ"),
        [20.0, 20.0, 0.0, 2400.0, 1312000.0, 0.0, 14.0, 15.0, 0.0]
    );
    assert_eq!(
        op(&v3, "WRITE"),
        [
            512044.0,
            512061.0,
            17.0,
            4203590460.0,
            67589808.0,
            912.0,
            1402117.0,
            1520433.0,
            0.0
        ]
    );
    assert_eq!(
        op(&v3, "COMMIT"),
        [640.0, 640.0, 0.0, 81920.0, 107520.0, 0.0, 3110.0, 3131.0, 0.0]
    );
    assert_eq!(
        op(&v3, "GETATTR"),
        [77.0, 77.0, 0.0, 8932.0, 8624.0, 0.0, 21.0, 24.0, 0.0]
    );
    // Every op the kernel listed is there: 69 for this NFSv4.2 mount, 22 for NFSv3.
    let ops_of = |mount: &str| {
        metrics
            .iter()
            .filter(|m| m.name == "ops" && m.labels["mount"] == mount)
            .count()
    };
    assert_eq!(ops_of("/u02/oradata"), 69);
    assert_eq!(ops_of("/u03/redo logs"), 22);
    assert_eq!(metrics.len(), (69 + 22) * 9);
    assert!(metrics.iter().all(|m| m.kind == MetricKind::Counter));
    assert!(metrics.iter().all(|m| m.labels.len() == 4));
}

#[test]
fn mountstats_without_nfs_or_errors_field_parses() {
    let local = "device /dev/sda2 mounted on / with fstype ext4\n\
                 device proc mounted on /proc with fstype proc\n";
    assert_eq!(parse_mountstats(local).unwrap(), Vec::<Metric>::new());
    // statvers 1.0 kernels print 8 counters, without errors.
    let old = "device srv:/x mounted on /x with fstype nfs statvers=1.0\n\
               \tper-op statistics\n\
               \t        READ: 1 2 3 4 5 6 7 8\n";
    let metrics = parse_mountstats(old).unwrap();
    assert_eq!(metrics.len(), 8);
    assert_eq!(value(&metrics, "execute_ms", &[("op", "READ")]), Some(8.0));
    assert_eq!(value(&metrics, "errors", &[("op", "READ")]), None);
}

#[test]
fn mountstats_malformed_lines_are_errors_naming_the_line() {
    let mut lines: Vec<&str> = MOUNTSTATS.lines().collect();
    let read = lines
        .iter()
        .position(|line| line.trim_start().starts_with("READ:"))
        .unwrap();
    lines[read] = "\t        READ: 1204 1204 0 182372 many 33 1524 1620 0";
    let text = error_text(parse_mountstats(&lines.join("\n")));
    assert!(
        text.contains(&format!("mountstats line {}", read + 1)) && text.contains("many"),
        "{text}"
    );
    lines[read] = "\t        READ: 1204 1204 0";
    let text = error_text(parse_mountstats(&lines.join("\n")));
    assert!(
        text.contains(&format!("mountstats line {}", read + 1)),
        "{text}"
    );
    let text = error_text(parse_mountstats(
        "device a mounted on /a with fstype ext4\ngarbage here\n",
    ));
    assert!(text.contains("mountstats line 2"), "{text}");
    let text = error_text(parse_mountstats("device srv:/x on /x fstype nfs\n"));
    assert!(text.contains("mountstats line 1"), "{text}");
}

fn stat(name: &str, major: u32, minor: u32, write_sectors: u64) -> DiskStat {
    DiskStat {
        major,
        minor,
        name: name.to_string(),
        read_requests: 10,
        read_merges: 1,
        read_sectors: 80,
        read_ms: 5,
        write_requests: 20,
        write_merges: 2,
        write_sectors,
        write_ms: 7,
        in_flight: 1,
        busy_ms: 30,
        weighted_ms: 40,
        discard_requests: 0,
        discard_merges: 0,
        discard_sectors: 0,
        discard_ms: 0,
        flush_requests: 3,
        flush_ms: 1,
        field_count: 17,
    }
}

fn device(name: &str, minor: u32, kind: DeviceKind) -> BlockDevice {
    BlockDevice {
        name: name.to_string(),
        major: 8,
        minor,
        kind,
        size_bytes: 1 << 30,
        rotational: Some(false),
        logical_block_size: 512,
        physical_block_size: 4096,
        read_ahead_kib: Some(128),
        scheduler: Some("none".to_string()),
        max_sectors_kib: Some(1280),
    }
}

#[test]
fn device_metrics_carry_bytes_and_labels() {
    let partition = device(
        "sda1",
        1,
        DeviceKind::Partition {
            parent: "sda".into(),
        },
    );
    let metrics = device_metrics(&stat("sda1", 8, 1, 1000), &partition);
    assert_eq!(metrics.len(), 16);
    let labels = [
        ("device", "sda1"),
        ("kind", "partition"),
        ("parent", "sda"),
        ("rotational", "false"),
    ];
    assert_eq!(value(&metrics, "write_bytes", &labels), Some(512000.0));
    assert_eq!(value(&metrics, "read_bytes", &labels), Some(40960.0));
    assert_eq!(value(&metrics, "flush_requests", &labels), Some(3.0));
    assert_eq!(kind_of(&metrics, "in_flight"), MetricKind::Gauge);
    let md = device(
        "md0",
        0,
        DeviceKind::Md {
            level: "raid0".into(),
            chunk_bytes: 65536,
            raid_disks: 3,
        },
    );
    let metrics = device_metrics(&stat("md0", 9, 0, 8), &md);
    assert_eq!(
        value(
            &metrics,
            "busy_ms",
            &[
                ("kind", "md"),
                ("md_level", "raid0"),
                ("chunk_bytes", "65536")
            ]
        ),
        Some(30.0)
    );
    // A 4.18–5.4 kernel prints no flush counters: they are left out, not zero.
    let mut older = stat("sda", 8, 0, 8);
    older.field_count = 15;
    let metrics = device_metrics(&older, &device("sda", 0, DeviceKind::Disk));
    assert_eq!(metrics.len(), 14);
    assert_eq!(value(&metrics, "flush_requests", &[]), None);
}

#[test]
fn disk_totals_count_a_disk_and_its_partition_once() {
    let disk = device("sda", 0, DeviceKind::Disk);
    let partition = device(
        "sda1",
        1,
        DeviceKind::Partition {
            parent: "sda".into(),
        },
    );
    let lvm = device(
        "dm-0",
        0,
        DeviceKind::DeviceMapper {
            dm_name: "vg-data".into(),
        },
    );
    let mut metrics = device_metrics(&stat("sda", 8, 0, 3000), &disk);
    metrics.extend(device_metrics(&stat("sda1", 8, 1, 2000), &partition));
    metrics.extend(device_metrics(&stat("dm-0", 253, 0, 2000), &lvm));
    metrics.extend(device_metrics(&stat("sda", 8, 0, 3000), &disk)); // same series twice
    let totals = disk_totals(&metrics);
    assert_eq!(totals.len(), 16, "one set of metrics, for sda only");
    assert!(totals
        .iter()
        .all(|m| m.labels.len() == 1 && m.labels["device"] == "sda"));
    let written: f64 = totals
        .iter()
        .filter(|m| m.name == "write_bytes")
        .map(|m| m.value)
        .sum();
    assert_eq!(written, 3000.0 * 512.0);
    assert_eq!(kind_of(&totals, "in_flight"), MetricKind::Gauge);
}
