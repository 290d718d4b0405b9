//! The collectors against this machine's real /proc and /sys: load is
//! generated here (a direct write, spinning threads, a file read) and must
//! show up in the raw counters.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use strata_core::metrics::{Collected, Collector, Metric};
use strata_io::buffer::AlignedBuffer;
use strata_probe::blockdev::{device_of_path, physical_devices};
use strata_probe::collectors::{
    all_os_collectors, CpuCollector, DeviceCollector, DeviceFilter, MemoryCollector, NetCollector,
    NfsCollector, ProcessDelayCollector,
};

const MIB: usize = 1024 * 1024;

fn metrics_of(collector: &mut dyn Collector) -> Vec<Metric> {
    match collector.collect().unwrap() {
        Collected::Metrics { metrics } => metrics,
        Collected::Absent { reason } => panic!("{} absent: {reason}", collector.layer()),
        Collected::Partial { unreadable, .. } => {
            panic!("{} gave no numbers: {unreadable:?}", collector.layer())
        }
    }
}

/// The value of the one metric called `name` whose labels include `labels`.
fn value(metrics: &[Metric], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    metrics
        .iter()
        .find(|metric| {
            metric.name == name
                && labels
                    .iter()
                    .all(|(key, value)| metric.labels.get(*key).map(String::as_str) == Some(*value))
        })
        .map(|metric| metric.value)
}

#[test]
fn direct_write_grows_write_bytes_of_the_files_device() {
    const WRITE_BYTES: usize = 8 * MIB;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("direct.bin");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
        .unwrap();
    let device = device_of_path(&path).unwrap();
    let mut expected: Vec<String> = physical_devices(&device)
        .unwrap()
        .into_iter()
        .map(|physical| physical.name)
        .collect();
    expected.push(device.name.clone());
    expected.sort();
    expected.dedup();

    let mut collector = DeviceCollector::new(DeviceFilter::Path(path.clone())).unwrap();
    let selected: Vec<String> = collector.selected().unwrap().iter().cloned().collect();
    assert_eq!(selected, expected);

    let labels = [("device", device.name.as_str())];
    let before = metrics_of(&mut collector);
    let chunk = AlignedBuffer::new(MIB);
    for _ in 0..WRITE_BYTES / MIB {
        file.write_all(chunk.as_slice()).unwrap();
    }
    file.sync_all().unwrap();
    let after = metrics_of(&mut collector);

    let written = value(&after, "write_bytes", &labels).unwrap()
        - value(&before, "write_bytes", &labels).unwrap();
    assert!(
        written >= WRITE_BYTES as f64,
        "{} wrote {written} bytes",
        device.name
    );
    let devices: Vec<&str> = after
        .iter()
        .map(|metric| metric.labels["device"].as_str())
        .collect();
    assert!(devices
        .iter()
        .all(|name| expected.iter().any(|e| e == name)));
    assert!(after
        .iter()
        .all(|metric| metric.labels.contains_key("kind")));
}

#[test]
fn unknown_device_name_or_path_is_an_error_listing_real_devices() {
    let root = device_of_path(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    let error = DeviceCollector::new(DeviceFilter::Names(vec!["nosuchdisk9".into()])).unwrap_err();
    let text = format!("{error:#}");
    assert!(text.contains("nosuchdisk9"), "{text}");
    assert!(text.contains(&root.name), "{text}");

    let error = DeviceCollector::new(DeviceFilter::Path("/proc/self/stat".into())).unwrap_err();
    let text = format!("{error:#}");
    assert!(text.contains(&root.name), "{text}");

    assert!(all_os_collectors(DeviceFilter::Names(vec!["nosuchdisk9".into()]), vec![]).is_err());
}

#[test]
fn all_devices_skip_ram_disks_and_empty_loops_unless_named() {
    let metrics = metrics_of(&mut DeviceCollector::new(DeviceFilter::All).unwrap());
    for metric in &metrics {
        let name = &metric.labels["device"];
        assert!(
            !name.starts_with("ram") && !name.starts_with("zram"),
            "{name}"
        );
        if metric.labels["kind"] == "loop" {
            let size = std::fs::read_to_string(format!("/sys/block/{name}/size")).unwrap();
            assert_ne!(size.trim(), "0", "{name} has nothing attached");
        }
    }
    let root = device_of_path(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    assert!(value(&metrics, "read_requests", &[("device", &root.name)]).unwrap() > 0.0);

    if Path::new("/sys/block/zram0").exists() {
        let mut named =
            DeviceCollector::new(DeviceFilter::Names(vec!["/dev/zram0".into()])).unwrap();
        let metrics = metrics_of(&mut named);
        assert!(metrics.iter().all(|m| m.labels["device"] == "zram0"));
        assert_eq!(metrics.len(), 16);
    }
}

#[test]
fn nfs_collector_is_absent_without_nfs_mounts() {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    let has_nfs = mounts
        .lines()
        .any(|line| matches!(line.split_whitespace().nth(2), Some("nfs" | "nfs4")));
    let collected = NfsCollector::new().collect().unwrap();
    if has_nfs {
        assert!(
            matches!(collected, Collected::Metrics { .. }),
            "{collected:?}"
        );
    } else {
        assert_eq!(
            collected,
            Collected::Absent {
                reason: "no NFS mounts".to_string()
            }
        );
    }
}

/// A child process, killed and reaped when dropped.
struct Spinner(Child);

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn process_waiting_for_a_cpu_shows_run_delay_and_a_gone_pid_is_left_out() {
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut spins = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    spins = std::hint::black_box(spins.wrapping_add(1));
                }
            })
        })
        .collect();
    let mut spinner = Spinner(
        Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap(),
    );
    let child = spinner.0.id();
    let child_text = child.to_string();
    let labels = [("pid", child_text.as_str()), ("comm", "sh")];

    let mut collector = ProcessDelayCollector::new(vec![child]);
    let before = metrics_of(&mut collector);
    std::thread::sleep(Duration::from_secs(1));
    let after = metrics_of(&mut collector);
    stop.store(true, Ordering::Relaxed);
    for thread in threads {
        thread.join().unwrap();
    }
    let grew =
        |name| value(&after, name, &labels).unwrap() - value(&before, name, &labels).unwrap();
    assert!(
        grew("run_delay_ns") > 0.0,
        "3 spinners on 2 CPUs must queue"
    );
    assert!(grew("cpu_ns") > 0.0);

    spinner.0.kill().unwrap();
    spinner.0.wait().unwrap();
    let own = std::process::id();
    let mut both = ProcessDelayCollector::new(vec![child, own]);
    let metrics = metrics_of(&mut both);
    assert!(metrics.iter().all(|m| m.labels["pid"] == own.to_string()));
    assert!(value(&metrics, "run_delay_ns", &[]).is_some());
    assert!(matches!(
        collector.collect().unwrap(),
        Collected::Absent { .. }
    ));
}

#[test]
fn newcomers_join_with_their_backend_type_and_the_gone_leave() {
    let own = std::process::id();
    let mut child = Command::new("sleep").arg("30").spawn().unwrap();
    let child_text = child.id().to_string();
    let current = Arc::new(std::sync::Mutex::new(BTreeMap::from([(
        own,
        "driver".to_string(),
    )])));
    let named = current.clone();
    let mut collector = ProcessDelayCollector::new(Vec::new()).with_newcomers(move |watched| {
        let mut named = named.lock().unwrap().clone();
        named.retain(|pid, _| !watched.contains(pid));
        named
    });
    let first = metrics_of(&mut collector);
    assert!(first.iter().all(|m| m.labels["backend_type"] == "driver"));
    assert!(value(&first, "cpu_ns", &[("pid", &child_text)]).is_none());

    current
        .lock()
        .unwrap()
        .insert(child.id(), "client backend".to_string());
    let joined = metrics_of(&mut collector);
    let labels = [
        ("pid", child_text.as_str()),
        ("backend_type", "client backend"),
    ];
    assert!(value(&joined, "cpu_ns", &labels).is_some(), "{joined:?}");

    child.kill().unwrap();
    child.wait().unwrap();
    current.lock().unwrap().remove(&child.id());
    let left = metrics_of(&mut collector);
    assert!(left.iter().all(|m| m.labels["pid"] == own.to_string()));
    assert!(value(&left, "cpu_ns", &[("backend_type", "driver")]).is_some());
}

#[test]
fn reading_a_file_grows_rchar_bytes() {
    let own = std::process::id().to_string();
    let labels = [("pid", own.as_str())];
    let mut collector = ProcessDelayCollector::new(vec![std::process::id()]);
    let before = metrics_of(&mut collector);
    let read = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/mountstats.txt"
    ))
    .unwrap();
    let after = metrics_of(&mut collector);
    let grew =
        |name| value(&after, name, &labels).unwrap() - value(&before, name, &labels).unwrap();
    assert!(grew("rchar_bytes") >= read.len() as f64);
    assert!(grew("syscr") >= 1.0);
    for name in ["wchar_bytes", "syscw", "read_bytes", "write_bytes"] {
        assert!(value(&after, name, &labels).is_some(), "{name}");
    }
}

#[test]
fn cpu_collector_sees_run_queue_pressure_and_growing_ticks() {
    let mut collector = CpuCollector::new();
    let before = metrics_of(&mut collector);
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(60) {
        std::hint::spin_loop();
    }
    let after = metrics_of(&mut collector);
    let total_ticks = |metrics: &[Metric]| -> f64 {
        metrics
            .iter()
            .filter(|m| m.name.ends_with("_ticks"))
            .map(|m| m.value)
            .sum()
    };
    assert!(total_ticks(&after) > total_ticks(&before));
    assert!(value(&after, "procs_running", &[]).unwrap() >= 1.0);
    assert!(value(&after, "cpus", &[]).unwrap() >= 1.0);
    assert!(value(&after, "ticks_per_second", &[]).unwrap() > 0.0);
    for resource in ["cpu", "io", "memory"] {
        let present = value(&after, "pressure_some_us", &[("resource", resource)]).is_some();
        assert_eq!(
            present,
            Path::new("/proc/pressure").join(resource).exists(),
            "{resource}"
        );
    }
}

#[test]
fn memory_and_net_collectors_read_this_machine() {
    let memory = metrics_of(&mut MemoryCollector::new());
    let total = value(&memory, "mem_total_bytes", &[]).unwrap();
    assert!(total > 0.0 && value(&memory, "cached_bytes", &[]).unwrap() < total);
    assert!(value(&memory, "pgfault", &[]).unwrap() > 0.0);

    let without = metrics_of(&mut NetCollector::new());
    assert!(without.iter().all(|m| m.labels["interface"] != "lo"));
    let with = metrics_of(&mut NetCollector::with_loopback());
    assert!(value(&with, "receive_bytes", &[("interface", "lo")]).is_some());
    for speed in with.iter().filter(|m| m.name == "speed_mbps") {
        assert!(speed.value > 0.0);
    }
}

#[test]
fn all_os_collectors_cover_every_layer() {
    let layers = |pids| -> Vec<String> {
        all_os_collectors(DeviceFilter::All, pids)
            .unwrap()
            .iter()
            .map(|collector| collector.layer().to_string())
            .collect()
    };
    assert_eq!(layers(vec![]), ["device", "nfs", "net", "cpu", "memory"]);
    assert_eq!(
        layers(vec![std::process::id()]),
        ["device", "nfs", "net", "cpu", "memory", "process"]
    );
}
