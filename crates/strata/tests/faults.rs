//! Faults strata must survive with a clear error and nothing left behind:
//! a killed mariadbd, a full filesystem under `run` and `calibrate`, and a
//! `--db` server that goes away in the middle of a run. Each against the
//! real part: a real mariadbd, a real tmpfs, a real PostgreSQL cluster.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use strata_testkit::files::names as entries;

/// A tmpfs of `size_mib` mounted on a directory of its own; unmounted on drop.
struct Tmpfs {
    point: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmpfs {
    fn new(size_mib: u64) -> Tmpfs {
        Tmpfs::of_size(&format!("{size_mib}m"))
    }

    /// `size` as mount(8) takes it: `64k`, `32m`.
    fn of_size(size: &str) -> Tmpfs {
        let dir = tempfile::Builder::new()
            .prefix("strata-tmpfs-")
            .tempdir()
            .unwrap();
        let point = dir.path().join("full");
        std::fs::create_dir(&point).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0755")])
            .arg("tmpfs")
            .arg(&point)
            .status()
            .unwrap();
        assert!(status.success(), "mounting a tmpfs");
        Tmpfs { point, _dir: dir }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.point).status();
    }
}

/// The end of a run: exit code, stdout, all of stderr, and how long after `since`.
fn finish(child: Child, lines: mpsc::Receiver<String>, seen: String, since: Instant) -> Ended {
    let output = child.wait_with_output().unwrap();
    let elapsed = since.elapsed();
    let stderr = seen + &lines.iter().collect::<Vec<_>>().join("\n");
    Ended {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr,
        elapsed,
    }
}

struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

fn assert_report_reads(recording: &Path, dir: &Path) {
    assert!(recording.is_file(), "no partial Recording");
    let output = run(&["report", recording.to_str().unwrap()], dir);
    assert!(output.status.success(), "{}", stderr_of(&output));
}

#[test]
fn a_killed_mariadbd_is_a_clear_error_and_nothing_is_left_behind() {
    let dir = scratch();
    let args = [
        "run",
        "--engine",
        "mariadb",
        "--schemas",
        "1",
        "--scale",
        "32MiB",
        "--warmup",
        "0s",
        "--duration",
        "40s",
        "--json",
        "--record",
        "partial.strata",
    ];
    let (child, lines) = spawn_with_stderr_lines(&args, dir.path());
    let seen = wait_for_phase(&lines, "running");
    let work_dir = work_directory_of(&seen);
    std::thread::sleep(Duration::from_secs(3));
    let server = children_named(child.id(), "mariadbd");
    assert_eq!(server.len(), 1, "one mariadbd: {server:?}");
    unsafe { libc::kill(server[0] as i32, libc::SIGKILL) };
    let ended = finish(child, lines, seen, Instant::now());
    assert!(
        ended.elapsed < Duration::from_secs(20),
        "{:?}",
        ended.elapsed
    );
    assert_eq!(ended.code, Some(1), "{}\n{}", ended.stderr, ended.stdout);
    let everything = format!("{}{}", ended.stdout, ended.stderr);
    assert!(
        everything.contains("the throwaway mariadbd (pid ")
            && everything.contains("stopped running before the window ended"),
        "names the server: {everything}"
    );
    assert!(everything.contains("failed"), "says when: {everything}");
    assert_report_reads(&dir.path().join("partial.strata"), dir.path());
    let document: serde_json::Value = serde_json::from_str(&ended.stdout).unwrap();
    let data = document["environment"]["data_directory"].as_str().unwrap();
    let server_dir = Path::new(data).parent().unwrap();
    assert!(
        server_dir.starts_with(&work_dir),
        "{server_dir:?} in {work_dir:?}"
    );
    assert!(!server_dir.exists(), "left behind: {server_dir:?}");
    assert!(strata_processes_in(server_dir).is_empty());
}

/// The pids of `parent`'s children whose command is `name`.
fn children_named(parent: u32, name: &str) -> Vec<u32> {
    let stats = std::fs::read_dir("/proc").unwrap().filter_map(|entry| {
        let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        Some((
            pid,
            std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?,
        ))
    });
    stats
        .filter(|(_, stat)| {
            let (head, rest) = stat.rsplit_once(')').unwrap_or_default();
            let ppid = rest
                .split_whitespace()
                .nth(1)
                .and_then(|ppid| ppid.parse().ok());
            head.ends_with(&format!("({name}")) && ppid == Some(parent)
        })
        .map(|(pid, _)| pid)
        .collect()
}

/// Runs `command --work-dir TMPFS args` on a fresh tmpfs of `size_mib`;
/// checks it ended with exit code 2 and left the tmpfs empty; returns its
/// stderr and the tmpfs's path.
fn refused_on_tmpfs(size_mib: u64, command: &str, args: &[&str]) -> (String, String) {
    let full = Tmpfs::new(size_mib);
    let dir = scratch();
    let work_dir = full.point.to_str().unwrap().to_string();
    let mut all = vec![command, "--work-dir", &work_dir];
    all.extend(args);
    let output = run(&all, dir.path());
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let left = entries(&full.point);
    assert!(left.is_empty(), "left on the tmpfs: {left:?}");
    (stderr, work_dir)
}

#[test]
fn a_full_filesystem_under_run_is_refused_naming_free_space_and_size() {
    let (stderr, work_dir) = refused_on_tmpfs(64, "run", &["--schemas", "1", "--scale", "256MiB"]);
    assert!(
        stderr.contains("--scale: the data set needs about"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{work_dir} has 64 MiB free")),
        "{stderr}"
    );
}

#[test]
fn a_filesystem_that_fills_during_the_load_is_named_with_what_was_free() {
    let args = [
        "--schemas",
        "1",
        "--scale",
        "80MiB",
        "--shared-buffers",
        "16MiB",
    ];
    let (stderr, work_dir) = refused_on_tmpfs(96, "run", &args);
    let named = format!("the filesystem of {work_dir} is full: it had");
    assert!(stderr.contains(&named), "{stderr}");
    assert!(stderr.contains("the data set needs about"), "{stderr}");
    assert!(
        stderr.contains("53100"),
        "the server's own error stays: {stderr}"
    );
}

#[test]
fn a_full_filesystem_under_calibrate_is_refused_naming_free_space_and_size() {
    let (stderr, work_dir) = refused_on_tmpfs(32, "calibrate", &["--size", "64MiB", "--buffered"]);
    let named = format!("--size 64 MiB is larger than the free space on {work_dir} (32 MiB)");
    assert!(stderr.contains(&named), "{stderr}");
}

#[test]
fn a_db_server_that_goes_away_mid_run_fails_the_run_and_keeps_the_recording() {
    let dir = scratch();
    let setup = run_json(
        &["setup", "--schemas", "2", "--scale", "16MiB", "--keep"],
        dir.path(),
    );
    let connection = setup["kept"]["connection_string"]
        .as_str()
        .unwrap()
        .to_string();
    let stop = setup["kept"]["how_to_stop"].as_str().unwrap().to_string();
    let args = [
        "run",
        "--db",
        &connection,
        "--schemas",
        "2",
        "--scale",
        "16MiB",
        "--warmup",
        "0s",
        "--duration",
        "40s",
        "--json",
        "--record",
        "partial.strata",
    ];
    let (child, lines) = spawn_with_stderr_lines(&args, dir.path());
    let seen = wait_for_phase(&lines, "running");
    std::thread::sleep(Duration::from_secs(3));
    let stopped = Command::new("sh").args(["-c", &stop]).output().unwrap();
    assert!(
        stopped.status.success(),
        "{}",
        String::from_utf8_lossy(&stopped.stderr)
    );
    let ended = finish(child, lines, seen, Instant::now());
    assert!(
        ended.elapsed < Duration::from_secs(30),
        "{:?}",
        ended.elapsed
    );
    assert_eq!(ended.code, Some(1), "{}\n{}", ended.stderr, ended.stdout);
    let document: serde_json::Value =
        serde_json::from_str(&ended.stdout).expect("the partial result as JSON");
    let sessions = &document["result"]["sessions"];
    assert!(sessions["failed"].as_u64().unwrap() >= 1, "{sessions}");
    assert_report_reads(&dir.path().join("partial.strata"), dir.path());
}

/// A `--db` server restarted by its owner (`pg_ctl restart`) inside the
/// window: `pg_postmaster_start_time()` moved, so the run fails saying so,
/// and the database's counters from both sides are not subtracted.
#[test]
fn a_db_server_restarted_in_the_window_fails_the_run_by_its_start_time() {
    let dir = scratch();
    let setup = run_json(
        &["setup", "--schemas", "1", "--scale", "32MiB", "--keep"],
        dir.path(),
    );
    let connection = setup["kept"]["connection_string"].as_str().unwrap();
    let stop = setup["kept"]["how_to_stop"].as_str().unwrap().to_string();
    let pg_ctl = stop.split(" stop -m fast").next().unwrap();
    let restart = format!("{pg_ctl} restart -m fast -l /dev/null");
    let args = [
        "run",
        "--db",
        connection,
        "--schemas",
        "1",
        "--scale",
        "32MiB",
        "--warmup",
        "0s",
        "--duration",
        "15s",
        "--tolerate-failures",
        "--json",
    ];
    let (child, lines) = spawn_with_stderr_lines(&args, dir.path());
    let seen = wait_for_phase(&lines, "running");
    std::thread::sleep(Duration::from_secs(3));
    let restarted = Command::new("sh").args(["-c", &restart]).output().unwrap();
    let ended = finish(child, lines, seen, Instant::now());
    let stopped = Command::new("sh").args(["-c", &stop]).output().unwrap();
    assert!(
        restarted.status.success() && stopped.status.success(),
        "{restart}: {}\n{stop}: {}",
        String::from_utf8_lossy(&restarted.stderr),
        String::from_utf8_lossy(&stopped.stderr)
    );
    assert_eq!(ended.code, Some(1), "{}\n{}", ended.stderr, ended.stdout);
    assert!(
        ended.stderr.contains(
            "strata: warning: the data set (32 MiB) fits in the database's cache \
             (shared_buffers = 128 MiB): its reads will be cache hits"
        ),
        "a --db server's cache is checked before the run: {}",
        ended.stderr
    );
    let document: serde_json::Value = serde_json::from_str(&ended.stdout).unwrap();
    let causes = document["verdict"]["causes"].to_string();
    assert!(
        causes.contains("the server restarted inside the window (it started again")
            && causes.contains("by pg_postmaster_start_time()"),
        "{causes}"
    );
    assert!(
        document["result"]["database"].is_null(),
        "{}",
        document["result"]["database"]
    );
}

/// A Recording's own full filesystem is named (its mount point, type and
/// space), not the work directory's; what was written before stays
/// readable, whole records only.
#[test]
fn a_recording_on_a_full_filesystem_is_named_by_its_own_filesystem_and_stays_readable() {
    let full = Tmpfs::of_size("64k");
    let dir = scratch();
    let record = full.point.join("run.strata");
    let record = record.to_str().unwrap();
    let args = [
        "run",
        "--scale",
        "64MiB",
        "--duration",
        "3s",
        "--record",
        record,
    ];
    let output = run(&args, dir.path());
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let named = format!(
        "writing recording {record}: No space left on device (os error 28) (the filesystem \
         mounted at {} (tmpfs): ",
        full.point.display()
    );
    assert!(stderr.contains(&named), "{stderr}");
    assert!(stderr.contains(" free of 64 KiB); the "), "{stderr}");
    assert!(!stderr.contains("is full: it had"), "{stderr}");
    assert_nothing_left_behind(dir.path());
    let report = run(&["report", record], dir.path());
    assert!(report.status.success(), "{}", stderr_of(&report));

    let observed = full.point.join("observe.strata");
    std::fs::remove_file(record).unwrap();
    let observed = observed.to_str().unwrap();
    let args = [
        "observe",
        "--count",
        "20",
        "--interval",
        "0.1s",
        "--record",
        observed,
    ];
    let output = run(&args, dir.path());
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("writing recording {observed}: No space left")),
        "{stderr}"
    );
    assert!(stderr.contains(" free of 64 KiB); the "), "{stderr}");
    let report = run(&["report", observed], dir.path());
    assert!(report.status.success(), "{}", stderr_of(&report));
}
