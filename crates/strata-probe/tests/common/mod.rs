//! Test scaffolding shared by the integration tests: loop devices over image
//! files, detached (and unmounted, swapped off) when dropped, and an MBR
//! writer. Not a mock: everything here drives the real kernel.
#![allow(dead_code)]

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

pub const MIB: u64 = 1024 * 1024;

/// Runs a command and returns its stdout, panicking with its stderr on failure.
pub fn run(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("starting {program}: {error}"));
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A loop device over an image file in its own temporary directory.
pub struct LoopDevice {
    pub node: PathBuf,
    pub image: PathBuf,
    pub dir: TempDir,
    mounts: Vec<PathBuf>,
    swaps: Vec<PathBuf>,
}

impl LoopDevice {
    /// Creates a zero-filled image of `size` bytes, lets `prepare` write to
    /// it, and attaches it (with partition scanning when `partition_scan`).
    pub fn attach(size: u64, partition_scan: bool, prepare: impl FnOnce(&mut File)) -> LoopDevice {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("creating tempdir");
        let image = dir.path().join("disk.img");
        let mut file = File::create(&image).expect("creating image");
        file.set_len(size).expect("sizing image");
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

    /// `losetup -P` registers partitions only when the kernel has a parser
    /// for the table; kernels built without one (like this test machine's)
    /// need `partx -a` to parse it in userspace and add them with BLKPG.
    fn ensure_partitions_registered(&self) {
        let first_partition = Path::new("/sys/block")
            .join(self.name())
            .join(format!("{}p1", self.name()));
        if !first_partition.exists() {
            run("partx", &["-a", self.node.to_str().unwrap()]);
        }
    }

    pub fn name(&self) -> String {
        self.node
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    pub fn partition_node(&self, number: u32) -> PathBuf {
        PathBuf::from(format!("{}p{number}", self.node.display()))
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

    pub fn swapon(&mut self, device: &Path) {
        run("mkswap", &[device.to_str().unwrap()]);
        run("swapon", &[device.to_str().unwrap()]);
        self.swaps.push(device.to_path_buf());
    }
}

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
            let mut command = Command::new(program);
            if program == "losetup" {
                command.arg("-d");
            }
            match command.arg(target).status() {
                Ok(status) if status.success() => {}
                other => eprintln!("cleanup {program} {}: {other:?}", target.display()),
            }
        }
    }
}

/// Writes a classic MBR with one Linux (0x83) partition entry.
pub fn write_mbr(file: &mut File, first_sector: u32, sector_count: u32) {
    let mut sector = [0u8; 512];
    let entry = &mut sector[446..462];
    entry[4] = 0x83;
    entry[8..12].copy_from_slice(&first_sector.to_le_bytes());
    entry[12..16].copy_from_slice(&sector_count.to_le_bytes());
    sector[510] = 0x55;
    sector[511] = 0xAA;
    file.seek(SeekFrom::Start(0)).unwrap();
    file.write_all(&sector).expect("writing MBR");
}

/// Deterministic pseudo-random bytes (xorshift64).
pub fn pseudo_random_bytes(length: usize, mut state: u64) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(length + 8);
    while bytes.len() < length {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes.extend_from_slice(&state.to_le_bytes());
    }
    bytes.truncate(length);
    bytes
}
