//! The /proc and /sys parsers under garbage: each one's captured fixture
//! parses, and a thousand mutations of it (truncated, spans deleted and
//! duplicated, huge numbers, non-UTF-8 bytes) never panic.

use strata_core::fuzz::{mutate, run, FuzzBudget};
use strata_probe::collectors::{
    parse_meminfo, parse_mountstats, parse_net_dev, parse_pressure, parse_proc_io, parse_proc_stat,
    parse_schedstat, parse_vmstat,
};
use strata_probe::cpu::HostCpu;
use strata_probe::diskstats::parse_diskstats;
use strata_probe::safety::mounted_numbers;

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
