//! Every captured node_exporter exposition (tests/fixtures/expositions,
//! their sources in SOURCES.md: node_exporter's own end-to-end outputs from
//! v0.18.1 to v1.12.1 on Linux, the BSDs, Darwin and Solaris, and Debian's
//! node_exporter on made-up Dell DMI, stacked disks and a textfile of odd
//! values) read by strata exactly as Prometheus's Python client reads it:
//! the same samples, names, labels and values to the bit, no line skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use strata_agent::text::parse;

/// Prometheus's reference parser (`prometheus_client`, installed by
/// scripts/install-test-deps): one JSON line per sample, its value as
/// Python's repr.
const REFERENCE: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
with open(sys.argv[1], encoding="utf-8") as f:
    text = f.read()
for family in text_string_to_metric_families(text):
    for sample in family.samples:
        print(json.dumps([sample.name, sample.labels, repr(sample.value)]))
"#;

type Sample = (String, BTreeMap<String, String>, u64);

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/expositions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "prom"))
        .collect();
    files.sort();
    files
}

/// A value's bits, every NaN the same.
fn bits(value: f64) -> u64 {
    match value.is_nan() {
        true => f64::NAN.to_bits(),
        false => value.to_bits(),
    }
}

fn reference(path: &Path) -> Vec<Sample> {
    let output = std::process::Command::new("python3")
        .args(["-c", REFERENCE])
        .arg(path)
        .output()
        .expect("python3");
    assert!(
        output.status.success(),
        "prometheus_client on {}: {} (run scripts/install-test-deps)",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let mut samples: Vec<Sample> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (name, labels, value): (String, BTreeMap<String, String>, String) =
                serde_json::from_str(line).unwrap();
            let value = match value.as_str() {
                "nan" => f64::NAN,
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                number => number.parse().unwrap(),
            };
            (name, labels, bits(value))
        })
        .collect();
    samples.sort();
    samples
}

#[test]
fn every_captured_exposition_reads_as_prometheus_s_own_client_reads_it() {
    let files = fixtures();
    assert!(files.len() >= 20, "{} fixtures", files.len());
    let mut odd = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let read = parse(&text);
        assert!(
            read.skipped.is_empty(),
            "{}: {:?}",
            path.display(),
            read.skipped
        );
        let mut ours: Vec<Sample> = read
            .series
            .iter()
            .map(|series| {
                (
                    series.name.clone(),
                    series.labels.clone(),
                    bits(series.value),
                )
            })
            .collect();
        ours.sort();
        let theirs = reference(&path);
        assert!(!theirs.is_empty(), "{}", path.display());
        assert_eq!(ours.len(), theirs.len(), "{}", path.display());
        for (our, their) in ours.iter().zip(&theirs) {
            assert_eq!(our, their, "{}", path.display());
        }
        odd += read
            .series
            .iter()
            .filter(|series| {
                !series.value.is_finite()
                    || series
                        .labels
                        .values()
                        .any(|value| value.chars().any(|c| c.is_control() || !c.is_ascii()))
            })
            .count();
    }
    assert!(
        odd > 10,
        "the fixtures hold non-finite values and odd labels: {odd}"
    );
}

/// The Dell server's DMI as Debian's node_exporter served it: U+FFFD, a
/// raw 0x1C, an escaped backslash and quote, and `=` inside label values.
#[test]
fn a_dell_server_s_dmi_labels_are_read_byte_for_byte() {
    let path = fixtures()
        .into_iter()
        .find(|path| path.ends_with("debian-node-exporter-1.5.0-dell-dmi.prom"))
        .unwrap();
    let read = parse(&std::fs::read_to_string(path).unwrap());
    let dmi = read
        .series
        .iter()
        .find(|series| series.name == "node_dmi_info")
        .unwrap();
    assert_eq!(dmi.label("product_version"), Some("A\u{FFFD}\u{1c}\\\"q"));
    assert!(dmi
        .label("product_sku")
        .unwrap()
        .starts_with("SKU=NotProvided;ModelName="));
    assert_eq!(dmi.labels.len(), 19);
    assert_eq!(dmi.value, 1.0);
}

/// Debian's node_exporter on stacked disks: a partition beside its disk
/// and an LVM volume beside the disks under it are named for what they
/// are, so that a host's total counts each I/O once (its whole disks).
#[test]
fn stacked_devices_are_named_partition_dm_and_loop_beside_their_disks() {
    for (name, expected) in [
        (
            "debian-node-exporter-1.5.0-stacked-disks-all.prom",
            &[
                ("dm-0", "dm"),
                ("loop0", "loop"),
                ("mmcblk0", "disk"),
                ("mmcblk0p1", "partition"),
                ("nvme0n1", "disk"),
                ("nvme0n1p1", "partition"),
                ("sda", "disk"),
                ("sda1", "partition"),
            ][..],
        ),
        (
            "debian-node-exporter-1.5.0-stacked-disks-default-filter.prom",
            &[
                ("dm-0", "dm"),
                ("mmcblk0", "disk"),
                ("mmcblk0p1", "partition"),
                ("nvme0n1", "disk"),
                ("sda", "disk"),
            ],
        ),
    ] {
        let path = fixtures()
            .into_iter()
            .find(|path| path.ends_with(name))
            .unwrap();
        let scrape = strata_agent::scrape::Scrape {
            url: name.to_string(),
            sent_unix_s: 0.0,
            came_back_unix_s: 0.0,
            series: parse(&std::fs::read_to_string(path).unwrap()).series,
            unread: None,
        };
        let counters = strata_agent::host::HostCounters::of(&scrape, "h").unwrap();
        let devices_unread = counters.unreadable_devices().count();
        assert_eq!(devices_unread, 0, "{name}: {:?}", counters.unreadable);
        let kinds: Vec<(&str, &str)> = counters
            .disks
            .iter()
            .map(|disk| (disk.name.as_str(), counters.kind(&disk.name)))
            .collect();
        assert_eq!(kinds, expected, "{name}");
    }
}
