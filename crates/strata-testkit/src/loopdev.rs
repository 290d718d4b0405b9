//! Loop devices over image files, for tests that need a block device of
//! their own: a disk to partition, a filesystem whose device counters hold
//! only the test's I/O, a device to mount or swap on. Not a mock: it drives
//! the real kernel (`losetup`, `mount`, `swapon`), so its users need root.
//!
//! Not for scratch files of tests that need no device: those belong in the
//! crate's own scratch directory. The image lives in the system's temporary
//! directory, which every account can reach, so that a server strata starts
//! as another account on a mounted filesystem runs wherever the checkout
//! is.

use crate::command::run;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

pub const MIB: u64 = 1024 * 1024;

/// A loop device over an image file in its own temporary directory; when
/// dropped, what it mounted is unmounted (last first), what it swapped on is
/// swapped off, and the device is detached.
pub struct LoopDevice {
    /// `/dev/loopN`.
    pub node: PathBuf,
    pub image: PathBuf,
    /// Holds the image and the mount points.
    pub dir: TempDir,
    mounts: Vec<PathBuf>,
    swaps: Vec<PathBuf>,
}

impl LoopDevice {
    /// Creates a zero-filled image of `size_bytes`, lets `prepare` write to
    /// it (a partition table, a signature), and attaches it, with partition
    /// scanning when `partition_scan`.
    pub fn attach(
        size_bytes: u64,
        partition_scan: bool,
        prepare: impl FnOnce(&mut File),
    ) -> LoopDevice {
        Self::attach_in(&std::env::temp_dir(), size_bytes, partition_scan, prepare)
    }

    /// [`LoopDevice::attach`] with its image in a directory under `base`
    /// (`/dev/shm`: a device whose requests never reach a disk).
    pub fn attach_in(
        base: &std::path::Path,
        size_bytes: u64,
        partition_scan: bool,
        prepare: impl FnOnce(&mut File),
    ) -> LoopDevice {
        let dir = tempfile::Builder::new()
            .prefix("strata-loop-")
            .tempdir_in(base)
            .expect("a directory for the loop device");
        let image = dir.path().join("disk.img");
        let mut file = File::create(&image).expect("creating image");
        file.set_len(size_bytes).expect("sizing image");
        prepare(&mut file);
        file.sync_all().expect("syncing image");
        let image_text = image.to_str().expect("utf-8 image path");
        let mut args = vec!["-f", "--show"];
        if partition_scan {
            args.push("-P");
        }
        args.push(image_text);
        let node = PathBuf::from(run("losetup", &args));
        let loop_device = LoopDevice {
            node,
            image,
            dir,
            mounts: Vec::new(),
            swaps: Vec::new(),
        };
        if partition_scan {
            loop_device.ensure_partitions_registered();
        }
        loop_device
    }

    /// A loop device over another block device, with direct I/O: each of
    /// its requests becomes one of `device`'s, whose waits (a throttled
    /// cgroup's) are its device time. Detached when dropped, before
    /// `device` is.
    pub fn over_device(device: &Path) -> LoopDevice {
        let dir = tempfile::Builder::new()
            .prefix("strata-loop-")
            .tempdir()
            .expect("a directory for the loop device");
        let device_text = device.to_str().expect("utf-8 device path");
        let node = PathBuf::from(run(
            "losetup",
            &["-f", "--show", "--direct-io=on", device_text],
        ));
        run("udevadm", &["settle"]);
        LoopDevice {
            node,
            image: device.to_path_buf(),
            dir,
            mounts: Vec::new(),
            swaps: Vec::new(),
        }
    }

    /// `losetup -P` registers partitions only when the kernel has a parser
    /// for the table; kernels built without one need `partx -a` to parse it
    /// in userspace and add them with BLKPG.
    fn ensure_partitions_registered(&self) {
        let first_partition = Path::new("/sys/block")
            .join(self.name())
            .join(format!("{}p1", self.name()));
        if !first_partition.exists() {
            run("partx", &["-a", self.node.to_str().unwrap()]);
        }
    }

    /// The kernel's name for the device (`loopN`), as in /sys/block and
    /// /proc/diskstats.
    pub fn name(&self) -> String {
        self.node
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    /// The node of partition `number` (`/dev/loopNpM`).
    pub fn partition_node(&self, number: u32) -> PathBuf {
        PathBuf::from(format!("{}p{number}", self.node.display()))
    }

    /// Makes an ext4 filesystem on `device` (this loop device or one of its
    /// partitions) with its inode tables and journal written now, not by
    /// the kernel's lazy-init thread later: nothing writes to the device in
    /// a test's window but the test's own work (lazy init once wrote 6.8 MB
    /// in a calibrate window, "device_saw_more").
    pub fn make_ext4(&self, device: &Path) {
        run(
            "mkfs.ext4",
            &[
                "-q",
                "-F",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
                device.to_str().unwrap(),
            ],
        );
    }

    /// Mounts `device` (this loop device or one of its partitions) on a new
    /// directory and returns the mount point.
    pub fn mount(&mut self, device: &Path) -> PathBuf {
        let mount_point = self.dir.path().join(format!("mnt{}", self.mounts.len()));
        std::fs::create_dir(&mount_point).expect("creating mount point");
        run(
            "mount",
            &[device.to_str().unwrap(), mount_point.to_str().unwrap()],
        );
        self.mounts.push(mount_point.clone());
        mount_point
    }

    /// Makes `device` swap space and swaps on it.
    pub fn swapon(&mut self, device: &Path) {
        run("mkswap", &[device.to_str().unwrap()]);
        run("swapon", &[device.to_str().unwrap()]);
        self.swaps.push(device.to_path_buf());
    }
}

/// How long a cleanup is tried again while its target is busy: a process
/// that used io_uring (mariadbd) releases its files in a kernel worker
/// after it exits, so a mount can be busy for a moment after the last
/// process on it is gone.
const BUSY_FOR_AT_MOST: std::time::Duration = std::time::Duration::from_secs(10);

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let cleanups = self
            .mounts
            .iter()
            .rev()
            .map(|mount_point| ("umount", mount_point))
            .chain(self.swaps.iter().map(|device| ("swapoff", device)))
            .chain(std::iter::once(("losetup", &self.node)));
        for (program, target) in cleanups {
            let deadline = std::time::Instant::now() + BUSY_FOR_AT_MOST;
            loop {
                let mut command = Command::new(program);
                if program == "losetup" {
                    command.arg("-d");
                }
                match command.arg(target).output() {
                    Ok(output) if output.status.success() => break,
                    _ if std::time::Instant::now() < deadline => {
                        std::thread::sleep(std::time::Duration::from_millis(200))
                    }
                    Ok(output) => {
                        let stderr = String::from_utf8_lossy(&output.stderr);
                        eprintln!("cleanup {program} {}: {stderr}", target.display());
                        break;
                    }
                    Err(error) => {
                        eprintln!("cleanup {program} {}: {error}", target.display());
                        break;
                    }
                }
            }
        }
    }
}

/// A fresh ext4 filesystem of `size_mib` MiB on a loop device of its own,
/// mounted: its device counters hold only what the test does on it. Keep
/// the device as long as the mount point is used.
pub fn own_filesystem(size_mib: u64) -> (LoopDevice, PathBuf) {
    let mut device = LoopDevice::attach(size_mib * MIB, false, |_| {});
    let node = device.node.clone();
    device.make_ext4(&node);
    let mount_point = device.mount(&node);
    (device, mount_point)
}
