//! Block devices as targets: writes need --allow-write-device and are refused
//! on a device that is mounted or holds a filesystem. Loop devices over image
//! files stand in for disks.

mod common;

use common::*;
use strata_testkit::loopdev::{own_filesystem, LoopDevice, MIB};

fn write_to(device: &LoopDevice, allow: bool) -> std::process::Output {
    let dir = scratch();
    let mut args = vec![
        "calibrate",
        "--target",
        device.node.to_str().unwrap(),
        "--workload",
        "random-write",
        "--ios",
        "100",
    ];
    if allow {
        args.push("--allow-write-device");
    }
    run(&args, dir.path())
}

#[test]
fn writes_to_a_device_need_the_flag() {
    let device = LoopDevice::attach(64 * MIB, false, |_| {});
    let output = write_to(&device, false);
    assert!(!output.status.success());
    assert!(
        stderr_of(&output).contains("--allow-write-device"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn writes_to_a_mounted_device_are_refused_even_with_the_flag() {
    let (device, mount_point) = own_filesystem(64);
    std::fs::write(mount_point.join("data"), b"keep").unwrap();
    let output = write_to(&device, true);
    assert!(!output.status.success());
    assert!(
        stderr_of(&output).contains("mounted"),
        "{}",
        stderr_of(&output)
    );
    assert_eq!(std::fs::read(mount_point.join("data")).unwrap(), b"keep");
}

#[test]
fn writes_to_a_device_holding_a_filesystem_are_refused() {
    let device = LoopDevice::attach(64 * MIB, false, |_| {});
    device.make_ext4(&device.node);
    let output = write_to(&device, true);
    assert!(!output.status.success());
    assert!(
        stderr_of(&output).contains("ext4"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn a_blank_device_is_written_with_the_flag_and_read_without_it() {
    let device = LoopDevice::attach(64 * MIB, false, |_| {});
    let output = write_to(&device, true);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let dir = scratch();
    let document = run_json(
        &[
            "calibrate",
            "--target",
            device.node.to_str().unwrap(),
            "--workload",
            "small-random-read",
            "--range",
            "0-50%",
            "--ios",
            "200",
        ],
        dir.path(),
    );
    assert_eq!(document["target"]["kind"], "block_device");
    assert_eq!(document["target"]["range"]["end_bytes"], 32 << 20);
    assert_eq!(document["points"][0]["groups"][0]["all"]["requests"], 200);
    let device_name = device.name();
    assert_eq!(document["points"][0]["verification"]["device"], device_name);
}
