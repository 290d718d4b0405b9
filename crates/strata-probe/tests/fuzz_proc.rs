//! The /proc and /sys parsers under garbage: each one's captured fixture
//! parses, and a thousand mutations of it (truncated, spans deleted and
//! duplicated, numbers made huge, non-UTF-8 bytes) never panic. The same
//! for `/proc/PID/stat`, `/proc/swaps`, the mountinfo of the mounted-device
//! check, and the first bytes of a device read for its signature.

use strata_core::fuzz::{mutate, run, FuzzBudget};
use strata_probe::collectors::{
    parse_meminfo, parse_mountstats, parse_net_dev, parse_pressure, parse_proc_io, parse_proc_stat,
    parse_schedstat, parse_vmstat,
};
use strata_probe::cpu::{parse_stat_fields, HostCpu};
use strata_probe::diskstats::parse_diskstats;
use strata_probe::safety::{detect_signature, mounted_numbers, swap_paths, SIGNATURE_SCAN_BYTES};

type Parser = fn(&str) -> bool;

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(path).expect("fixture")
}

const TARGETS: [(&str, &str, Parser); 10] = [
    ("diskstats", "diskstats-20fields.txt", |text| {
        parse_diskstats(text).is_ok()
    }),
    ("meminfo", "meminfo.txt", |text| parse_meminfo(text).is_ok()),
    ("mountstats", "mountstats.txt", |text| {
        parse_mountstats(text).is_ok()
    }),
    ("net-dev", "net-dev.txt", |text| parse_net_dev(text).is_ok()),
    ("pressure", "pressure-io.txt", |text| {
        parse_pressure("io", text).is_ok()
    }),
    ("proc-io", "proc-io.txt", |text| parse_proc_io(text).is_ok()),
    ("proc-stat", "proc-stat.txt", |text| {
        parse_proc_stat(text).is_ok()
    }),
    ("host-cpu", "proc-stat.txt", |text| {
        HostCpu::parse(text).is_ok()
    }),
    ("schedstat", "schedstat.txt", |text| {
        parse_schedstat(text).is_some()
    }),
    ("vmstat", "vmstat.txt", |text| parse_vmstat(text).is_ok()),
];

#[test]
fn proc_parsers_never_panic_on_mutated_fixtures() {
    for (target, file, parse) in TARGETS {
        let seed = fixture(file);
        assert!(
            parse(&seed),
            "{target}: the fixture {file} itself must parse"
        );
        let report = run(
            target,
            &FuzzBudget::from_env(1_000),
            |rng| mutate(seed.as_bytes(), rng),
            |bytes| {
                parse(&String::from_utf8_lossy(bytes));
            },
        );
        assert_eq!(report.crash_count, 0, "{target}: {:?}", report.crashes);
    }
}

#[test]
fn mountinfo_never_panics_on_a_mutated_proc_self_mountinfo() {
    let seed = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounted_numbers(&seed).is_empty());
    let report = run(
        "mountinfo",
        &FuzzBudget::from_env(2_000),
        |rng| mutate(seed.as_bytes(), rng),
        |bytes| {
            mounted_numbers(&String::from_utf8_lossy(bytes));
        },
    );
    assert_eq!(report.crash_count, 0, "{:?}", report.crashes);
}

/// `/proc/PID/stat` (the CPU time of the server's processes): this
/// process's own, mutated. The command name may hold `)` and spaces.
#[test]
fn proc_pid_stat_never_panics() {
    let seed = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields = parse_stat_fields(&seed).expect("the live file");
    assert!(fields.len() >= 15, "{seed}");
    let report = run(
        "proc-pid-stat",
        &FuzzBudget::from_env(2_000),
        |rng| mutate(seed.as_bytes(), rng),
        |bytes| {
            parse_stat_fields(&String::from_utf8_lossy(bytes));
        },
    );
    assert_eq!(report.crash_count, 0, "{:?}", report.crashes);
}

/// Found by `proc-pid-stat`: a text that ends at the command name's `)`,
/// or has a multi-byte character right after it, was sliced two bytes
/// past the `)`: out of bounds, or inside the character.
#[test]
fn a_proc_pid_stat_ending_at_the_name_or_with_a_wide_character_after_it() {
    assert_eq!(parse_stat_fields("16337 (cat)"), Some(vec![]));
    assert_eq!(parse_stat_fields("16337 (cat)é 1 2"), Some(vec![0, 1, 2]));
    assert_eq!(parse_stat_fields("16337 (a) b) R 7 8"), Some(vec![0, 7, 8]));
    assert_eq!(parse_stat_fields("16337 cat R 7"), None);
}

const SWAPS: &str = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                     /dev/dm-1                               partition\t8388604\t\t0\t\t-2\n\
                     /var/swap\\040file                        file\t\t1048572\t\t0\t\t-3\n";

#[test]
fn proc_swaps_never_panics() {
    assert_eq!(swap_paths(SWAPS), ["/dev/dm-1", "/var/swap file"]);
    let report = run(
        "swaps",
        &FuzzBudget::from_env(2_000),
        |rng| mutate(SWAPS.as_bytes(), rng),
        |bytes| {
            swap_paths(&String::from_utf8_lossy(bytes));
        },
    );
    assert_eq!(report.crash_count, 0, "{:?}", report.crashes);
}

/// The first 128 KiB of a device, read before writing to it: an ext4
/// superblock, mutated (cut short, shifted, bytes changed), names a
/// filesystem or nothing, never panics.
#[test]
fn device_signatures_never_panic() {
    let mut head = vec![0u8; SIGNATURE_SCAN_BYTES];
    head[1080..1082].copy_from_slice(&[0x53, 0xEF]);
    head[1120] = 0x42;
    head[510..512].copy_from_slice(&[0x55, 0xAA]);
    head[446 + 4] = 0x83;
    assert_eq!(detect_signature(&head), Some("ext4 filesystem"));
    let report = run(
        "device signature",
        &FuzzBudget::from_env(300),
        |rng| mutate(&head, rng),
        |bytes| {
            if let Some(name) = detect_signature(bytes) {
                assert!(!name.is_empty());
            }
        },
    );
    assert_eq!(report.crash_count, 0, "{} crashes", report.crash_count);
}

/// Found by `meminfo`: a gauge in kB past 16 EiB overflowed on its way to
/// bytes (a panic in a debug build, a wrapped figure in a release one); it
/// is an error naming the line.
#[test]
fn a_meminfo_gauge_too_large_for_bytes_is_an_error() {
    let error = parse_meminfo("MemTotal:       18446744073709551615 kB\n").unwrap_err();
    let message = format!("{error:#}");
    assert!(
        message.contains("line 1") && message.contains("64 bits"),
        "{message}"
    );
    assert!(parse_meminfo("MemTotal:       24684084 kB\n").is_ok());
}
