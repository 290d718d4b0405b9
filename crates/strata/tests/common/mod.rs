//! Helpers shared by the binary's integration tests: run the real `strata`
//! binary and read its JSON; make and clean up loop devices.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn strata() -> Command {
    Command::new(env!("CARGO_BIN_EXE_strata"))
}

/// A scratch directory on the disk that holds the build (a real block
/// device, so O_DIRECT and /proc/diskstats mean something).
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch dir")
}

pub fn run(args: &[&str], dir: &Path) -> Output {
    strata()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("running strata")
}

/// Runs strata with `--json` and parses stdout; panics with stderr on failure.
pub fn run_json(args: &[&str], dir: &Path) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let output = run(&all, dir);
    assert!(
        output.status.success(),
        "strata {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON document")
}

pub fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Files strata may have left in `dir` (temporary targets).
pub fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".strata-calibrate")
        })
        .collect()
}

fn sh(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        output.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A loop device over an image file, detached (and unmounted) on drop.
pub struct LoopDevice {
    pub node: String,
    pub mount_point: Option<PathBuf>,
    _dir: tempfile::TempDir,
}

impl LoopDevice {
    /// The image and mount point live in the system's temporary directory,
    /// which every account can reach, so that a server strata starts on the
    /// mounted filesystem runs wherever the checkout is.
    pub fn new(size_mib: u64) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("strata-loop-")
            .tempdir()
            .expect("a directory for the loop device");
        let image = dir.path().join("disk.img");
        let file = std::fs::File::create(&image).unwrap();
        file.set_len(size_mib << 20).unwrap();
        let node = sh("losetup", &["-f", "--show", image.to_str().unwrap()]);
        LoopDevice {
            node,
            mount_point: None,
            _dir: dir,
        }
    }

    /// ext4 with its inode tables and journal written now, not by the
    /// kernel's lazy-init thread later: nothing writes to the device in a
    /// test's window but the test's own work (lazy init once wrote 6.8 MB
    /// in a calibrate window, "device_saw_more").
    pub fn make_ext4(&self) {
        sh(
            "mkfs.ext4",
            &[
                "-q",
                "-F",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
                &self.node,
            ],
        );
    }

    pub fn mount(&mut self) -> PathBuf {
        let point = self._dir.path().join("mnt");
        std::fs::create_dir_all(&point).unwrap();
        sh("mount", &[&self.node, point.to_str().unwrap()]);
        self.mount_point = Some(point.clone());
        point
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        if let Some(point) = &self.mount_point {
            let _ = Command::new("umount").arg(point).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.node]).status();
    }
}

/// A fresh ext4 filesystem on a loop device, mounted: its device counters
/// hold only what the test does on it.
pub fn own_filesystem(size_mib: u64) -> (LoopDevice, std::path::PathBuf) {
    let mut device = LoopDevice::new(size_mib);
    device.make_ext4();
    let mount_point = device.mount();
    (device, mount_point)
}

pub fn strata_processes_in(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().to_string_lossy().to_string();
            name.parse::<u32>().ok()?;
            let cmdline = std::fs::read(format!("/proc/{name}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            cmdline
                .contains(&needle)
                .then_some(format!("{name}: {cmdline}"))
        })
        .collect()
}

/// No throwaway cluster's directory and no process of it remains in `dir`.
pub fn assert_nothing_left_behind(dir: &Path) {
    assert!(
        cluster_dirs_in(dir).is_empty(),
        "cluster left: {:?}",
        cluster_dirs_in(dir)
    );
    assert!(
        strata_processes_in(dir).is_empty(),
        "processes left: {:?}",
        strata_processes_in(dir)
    );
}

pub fn cluster_dirs_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().to_string())
        .filter(|name| name.starts_with(".strata-pg"))
        .collect()
}

/// Where scripts/install-test-deps puts PostgreSQL 18's server binaries
/// (`$STRATA_PG18_BIN` overrides it).
pub fn pg18_bin_dir() -> PathBuf {
    let dir = std::env::var_os("STRATA_PG18_BIN").map_or_else(
        || PathBuf::from("/opt/strata/postgresql-18/bin"),
        PathBuf::from,
    );
    assert!(
        dir.join("postgres").is_file() && dir.join("initdb").is_file(),
        "PostgreSQL 18 server binaries are not in {}: run scripts/install-test-deps as root",
        dir.display()
    );
    dir
}

/// Starts strata in `dir` with stdout and stderr piped; stderr comes back
/// line by line as it is written.
pub fn spawn_with_stderr_lines(
    args: &[&str],
    dir: &Path,
) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    use std::io::BufRead;
    let mut child = strata()
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting strata");
    let stderr = child.stderr.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    (child, receiver)
}

/// Reads stderr lines until one starts with `strata: <phase>` (at most two
/// minutes); returns every line read.
pub fn wait_for_phase(lines: &std::sync::mpsc::Receiver<String>, phase: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut seen = String::new();
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = lines
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no phase {phase:?}: {seen}"));
        seen += &line;
        seen.push('\n');
        if line.starts_with(&format!("strata: {phase}")) {
            return seen;
        }
    }
}
