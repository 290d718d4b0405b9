//! SIGINT and SIGTERM in every phase of `strata run` on a throwaway
//! PostgreSQL cluster: startup, load, warm-up, measured window, teardown.
//! Each ends with 130 or 143 and leaves no server process, data or socket
//! directory, memory cgroup or temporary file behind, and keeps a Recording
//! that `strata report` reads: the partial run once its sessions ran, else
//! the phase it was stopped in.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;
use strata_testkit::loopdev::own_filesystem;

struct Stopped {
    code: Option<i32>,
    stderr: String,
    stdout: String,
    pid: u32,
}

/// Starts `strata run` in `dir`, waits for the stderr line that starts
/// `phase`, waits `delay`, sends `signal`, and collects the end.
fn stop_in_phase(dir: &Path, extra: &[&str], phase: &str, delay: Duration, signal: i32) -> Stopped {
    let mut args = vec![
        "run",
        "--schemas",
        "2",
        "--shared-buffers",
        "16MiB",
        "--json",
    ];
    args.extend(["--record", "partial.strata"]);
    args.extend(extra);
    let (child, lines) = spawn_with_stderr_lines(&args, dir);
    let pid = child.id();
    let mut stderr = wait_for_phase(&lines, phase);
    std::thread::sleep(delay);
    let mut child = child;
    assert!(
        child.try_wait().unwrap().is_none(),
        "strata ended before the signal: {stderr}"
    );
    unsafe { libc::kill(pid as i32, signal) };
    let output = child.wait_with_output().unwrap();
    stderr.extend(lines.iter().map(|line| line + "\n"));
    Stopped {
        code: output.status.code(),
        stderr,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        pid,
    }
}

/// Everything a cluster made by strata process `pid` would have left:
/// directories named `.strata-pg-<pid>-…` in `dir` and the temporary
/// directory, memory cgroups `strata-pg-<pid>-…`, and its processes.
fn assert_nothing_of(pid: u32, dir: &Path) {
    let prefix = format!("strata-pg-{pid}-");
    let mut left: Vec<PathBuf> = [dir.to_path_buf(), std::env::temp_dir(), "/var/tmp".into()]
        .iter()
        .flat_map(|parent| entries_named(parent, &prefix))
        .collect();
    left.extend(cgroups_named(Path::new("/sys/fs/cgroup"), &prefix, 3));
    assert!(left.is_empty(), "left behind: {left:?}");
    assert_nothing_left_behind(dir);
}

fn entries_named(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().contains(prefix))
        .map(|entry| entry.path())
        .collect()
}

fn cgroups_named(dir: &Path, prefix: &str, depth: u32) -> Vec<PathBuf> {
    let mut found = entries_named(dir, prefix);
    if depth > 0 {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                found.extend(cgroups_named(&entry.path(), prefix, depth - 1));
            }
        }
    }
    found
}

/// The partial Recording exists and `strata report` reads it; its text.
fn assert_report_reads(dir: &Path) -> String {
    let recording = dir.join("partial.strata");
    assert!(recording.is_file(), "no partial Recording");
    let output = run(&["report", recording.to_str().unwrap()], dir);
    assert!(output.status.success(), "{}", stderr_of(&output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn sigterm_during_startup_stops_cleanly() {
    let (_device, dir) = own_filesystem(512);
    let stopped = stop_in_phase(
        &dir,
        &["--scale", "64MiB"],
        "starting a throwaway PostgreSQL cluster",
        Duration::from_millis(200),
        libc::SIGTERM,
    );
    assert_eq!(stopped.code, Some(143), "{}", stopped.stderr);
    assert_nothing_of(stopped.pid, &dir);
    let report = assert_report_reads(&dir);
    assert!(report.contains("the run was stopped while"), "{report}");
    assert!(
        report.contains("(stopped by SIGTERM): nothing was measured"),
        "{report}"
    );
}

#[test]
fn sigint_during_the_load_stops_cleanly() {
    let (_device, dir) = own_filesystem(1024);
    let stopped = stop_in_phase(
        &dir,
        &["--scale", "256MiB"],
        "loading the SLOB schemas",
        Duration::from_millis(300),
        libc::SIGINT,
    );
    assert_eq!(stopped.code, Some(130), "{}", stopped.stderr);
    assert_nothing_of(stopped.pid, &dir);
    let report = assert_report_reads(&dir);
    let named = "the run was stopped while loading the SLOB schemas (stopped by SIGINT)";
    assert!(report.contains(named), "{report}");
}

#[test]
fn sigterm_in_the_warm_up_keeps_a_partial_recording() {
    let (_device, dir) = own_filesystem(512);
    let stopped = stop_in_phase(
        &dir,
        &["--scale", "64MiB", "--warmup", "6s", "--duration", "20s"],
        "running",
        Duration::from_secs(2),
        libc::SIGTERM,
    );
    assert_eq!(stopped.code, Some(143), "{}", stopped.stderr);
    assert_nothing_of(stopped.pid, &dir);
    assert_report_reads(&dir);
}

#[test]
fn sigterm_in_the_window_keeps_a_partial_result_and_recording() {
    let (_device, dir) = own_filesystem(512);
    let stopped = stop_in_phase(
        &dir,
        &["--scale", "64MiB", "--warmup", "1s", "--duration", "30s"],
        "running",
        Duration::from_secs(5),
        libc::SIGTERM,
    );
    assert_eq!(stopped.code, Some(143), "{}", stopped.stderr);
    let document: serde_json::Value =
        serde_json::from_str(&stopped.stdout).expect("the partial result as JSON");
    assert_eq!(document["result"]["interrupted"], true);
    assert_nothing_of(stopped.pid, &dir);
    assert_report_reads(&dir);
}

#[test]
fn sigint_during_teardown_still_removes_everything() {
    let (_device, dir) = own_filesystem(512);
    let stopped = stop_in_phase(
        &dir,
        &["--scale", "64MiB", "--warmup", "0s", "--duration", "2s"],
        "stopping and removing the throwaway cluster",
        Duration::ZERO,
        libc::SIGINT,
    );
    assert_eq!(stopped.code, Some(130), "{}", stopped.stderr);
    assert_nothing_of(stopped.pid, &dir);
    assert_report_reads(&dir);
}
