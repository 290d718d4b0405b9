//! strata's count of its own requests against the device's. Each test works
//! on a filesystem of its own on a loop device, so no other I/O on the
//! machine lands on the device these windows read.

mod common;

use common::*;
use strata_testkit::loopdev::{own_filesystem, LoopDevice};

fn filesystem_of_its_own() -> (LoopDevice, std::path::PathBuf) {
    own_filesystem(256)
}

#[test]
fn direct_reads_show_up_in_the_device_counters() {
    let (device, dir) = filesystem_of_its_own();
    let document = run_json(
        &[
            "calibrate",
            "--size",
            "128MiB",
            "--workload",
            "small-random-read",
            "--qd",
            "8",
            "--ios",
            "4000",
        ],
        &dir,
    );
    let verification = &document["points"][0]["verification"];
    let device_name = device.name();
    assert_eq!(verification["device"], device_name);
    assert_eq!(document["target"]["device"]["name"], device_name);
    let engine_reads = verification["engine_read_requests"].as_u64().unwrap();
    let device_reads = verification["device_read_requests"].as_u64().unwrap();
    assert_eq!(engine_reads, 4000);
    assert!(
        (engine_reads..engine_reads + 50).contains(&device_reads),
        "the device saw {device_reads} read requests for strata's {engine_reads}"
    );
    assert_eq!(verification["verdict"], "consistent", "{verification}");
    assert_eq!(
        document["verdict"]["verdict"], "valid",
        "{}",
        document["verdict"]
    );
    assert_eq!(document["summary"]["verdict"], document["verdict"]);
}

#[test]
fn buffered_rereads_are_not_claimed_as_device_reads() {
    let (_device, dir) = filesystem_of_its_own();
    let args = [
        "calibrate",
        "--target",
        "small.dat",
        "--size",
        "8MiB",
        "--workload",
        "small-random-read",
        "--buffered",
        "--ios",
        "20000",
    ];
    run_json(&args, &dir);
    let document = run_json(&args, &dir);
    let verification = &document["points"][0]["verification"];
    assert_eq!(verification["verdict"], "not_checked");
    assert_eq!(verification["engine_read_requests"], 20000);
    let device_reads = verification["device_read_requests"].as_u64().unwrap();
    assert!(
        device_reads < 100,
        "an 8 MiB file read twice comes from the page cache: {device_reads}"
    );
    assert_eq!(document["verdict"]["verdict"], "not_a_storage_result");
    assert_eq!(document["verdict"]["reasons"][0]["code"], "buffered_io");
    let mut strict = args.to_vec();
    strict.extend(["--strict", "--record", "small.strata"]);
    let output = run(&strict, &dir);
    assert_eq!(output.status.code(), Some(3), "{}", stderr_of(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.starts_with("verdict: not a storage result\n  - buffered I/O (--buffered)"),
        "{text}"
    );
    let report = run(&["report", "small.strata"], &dir);
    let report = String::from_utf8_lossy(&report.stdout);
    let first_fact = report.lines().nth(2).unwrap_or_default();
    assert!(
        first_fact.starts_with("verdict           not a storage result: buffered I/O"),
        "{report}"
    );
}
