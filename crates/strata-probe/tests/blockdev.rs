//! Tests for block device topology against the real /sys of this machine,
//! using loop devices attached for the test.

mod common;

use common::write_mbr;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use strata_probe::blockdev::{
    device_by_number, device_of_node, device_of_path, partitions_and_holders, physical_devices,
    DeviceKind,
};
use strata_testkit::command::run;
use strata_testkit::loopdev::{LoopDevice, MIB};

#[test]
fn root_filesystem_resolves_to_its_real_device() {
    let dev = std::fs::metadata("/").unwrap().dev();
    let root = device_of_path(Path::new("/")).unwrap();
    assert_eq!(
        (root.major, root.minor),
        (libc::major(dev), libc::minor(dev))
    );
    assert!(root.size_bytes > 0);
    assert!(root.logical_block_size >= 512);
    assert!(root.physical_block_size >= root.logical_block_size);
    assert_eq!(device_by_number(root.major, root.minor).unwrap(), root);
}

/// /work sits on a whole disk (no partition table) on this machine; the
/// expectation is taken from sysfs so the test stays honest elsewhere.
#[test]
fn filesystem_on_whole_disk_is_its_own_physical_device() {
    let device = device_of_path(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    let sys_dir = format!("/sys/dev/block/{}:{}", device.major, device.minor);
    if Path::new(&sys_dir).join("partition").exists() {
        assert!(
            matches!(device.kind, DeviceKind::Partition { .. }),
            "{device:?}"
        );
    } else {
        assert!(
            !matches!(device.kind, DeviceKind::Partition { .. }),
            "{device:?}"
        );
        let queue = format!("/sys/block/{}/queue", device.name);
        let scheduler = std::fs::read_to_string(format!("{queue}/scheduler")).unwrap();
        assert!(scheduler.contains(&format!("[{}]", device.scheduler.clone().unwrap())));
        let read_ahead = std::fs::read_to_string(format!("{queue}/read_ahead_kb")).unwrap();
        assert_eq!(
            device.read_ahead_kib,
            Some(read_ahead.trim().parse().unwrap())
        );
    }
    let physical = physical_devices(&device).unwrap();
    assert_eq!(physical.len(), 1);
    assert!(!matches!(physical[0].kind, DeviceKind::Partition { .. }));
}

#[test]
fn path_on_tmpfs_is_an_error_that_says_why() {
    let message = format!("{:#}", device_of_path(Path::new("/dev/shm")).unwrap_err());
    assert!(message.contains("/dev/shm"), "{message}");
    assert!(
        message.contains("not backed by a block device"),
        "{message}"
    );
}

#[test]
fn node_that_is_not_a_block_device_is_an_error() {
    let message = format!("{:#}", device_of_node(Path::new("/dev/null")).unwrap_err());
    assert!(
        message.contains("/dev/null is not a block device"),
        "{message}"
    );
}

#[test]
fn loop_device_reports_its_backing_file() {
    let loop_device = LoopDevice::attach(8 * MIB, false, |_| {});
    let device = device_of_node(&loop_device.node).unwrap();
    assert_eq!(device.name, loop_device.name());
    assert_eq!(device.major, 7);
    assert_eq!(
        device.kind,
        DeviceKind::Loop {
            backing_file: Some(loop_device.image.display().to_string())
        }
    );
    assert_eq!(device.size_bytes, 8 * MIB);
    assert_eq!(physical_devices(&device).unwrap(), vec![device.clone()]);
    assert!(partitions_and_holders(&device).unwrap().is_empty());
}

#[test]
fn partitioned_loop_device_shows_its_partition() {
    let loop_device = LoopDevice::attach(16 * MIB, true, |file| write_mbr(file, 2048, 30720));
    let disk = device_of_node(&loop_device.node).unwrap();
    let dependents = partitions_and_holders(&disk).unwrap();
    assert_eq!(dependents.len(), 1, "{dependents:?}");
    let partition = &dependents[0];
    assert_eq!(partition.name, format!("{}p1", loop_device.name()));
    assert_eq!(
        partition.kind,
        DeviceKind::Partition {
            parent: disk.name.clone()
        }
    );
    assert_eq!(partition.size_bytes, 30720 * 512);
    assert_eq!(partition.logical_block_size, disk.logical_block_size);
    assert_eq!(partition.scheduler, disk.scheduler);
    assert_eq!(
        &device_of_node(&loop_device.partition_node(1)).unwrap(),
        partition
    );
    assert_eq!(physical_devices(partition).unwrap(), vec![disk.clone()]);
}

#[test]
fn file_on_a_mounted_partition_resolves_to_the_partition() {
    let mut loop_device = LoopDevice::attach(16 * MIB, true, |file| write_mbr(file, 2048, 30720));
    let partition_node = loop_device.partition_node(1);
    run("mkfs.ext4", &["-q", partition_node.to_str().unwrap()]);
    let mount_point = loop_device.mount(&partition_node);
    let file = mount_point.join("data");
    std::fs::write(&file, b"strata").unwrap();
    let device = device_of_path(&file).unwrap();
    assert_eq!(device.name, format!("{}p1", loop_device.name()));
    assert_eq!(
        device.kind,
        DeviceKind::Partition {
            parent: loop_device.name()
        }
    );
    let physical = physical_devices(&device).unwrap();
    assert_eq!(physical.len(), 1);
    assert_eq!(physical[0].name, loop_device.name());
}
