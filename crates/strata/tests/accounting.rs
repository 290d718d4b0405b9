//! strata's count of its own requests against the device's: kept in a test
//! binary of its own, one test at a time, so that no other test's I/O lands
//! on the device inside these windows.

mod common;

use common::*;
use std::sync::Mutex;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn direct_reads_show_up_in_the_device_counters() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch();
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
        dir.path(),
    );
    let verification = &document["points"][0]["verification"];
    let engine_reads = verification["engine_read_requests"].as_u64().unwrap();
    let device_reads = verification["device_read_requests"].as_u64().unwrap();
    assert_eq!(engine_reads, 4000);
    assert!(
        device_reads >= engine_reads * 98 / 100,
        "device saw {device_reads} read requests for {engine_reads}"
    );
    assert!(
        verification["device_read_bytes"].as_u64().unwrap() >= 4000 * 8192 * 98 / 100,
        "{verification}"
    );
    assert_ne!(verification["verdict"], "device_saw_less");
    let device = document["target"]["device"]["name"].as_str().unwrap();
    assert_eq!(verification["device"], device);
}

#[test]
fn buffered_rereads_are_not_claimed_as_device_reads() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch();
    let target = dir.path().join("small.dat");
    let target = target.to_str().unwrap();
    let args = [
        "calibrate",
        "--target",
        target,
        "--size",
        "8MiB",
        "--workload",
        "small-random-read",
        "--buffered",
        "--ios",
        "20000",
    ];
    run_json(&args, dir.path());
    let document = run_json(&args, dir.path());
    let verification = &document["points"][0]["verification"];
    assert_eq!(verification["verdict"], "not_checked");
    let device_reads = verification["device_read_requests"].as_u64().unwrap();
    assert!(
        device_reads < 20000 / 2,
        "an 8 MiB file read twice comes from the page cache: {device_reads}"
    );
}
