//! Nothing lost: a strata killed with SIGKILL (as the OOM killer does) in
//! the middle of its work leaves a Recording `strata report` reads, no
//! server running, and nothing the next strata does not find, name and
//! remove; a Recording is never replaced, and every output path is
//! checked before any work.

mod common;

use common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// SIGKILL to `child` and its reaping.
fn kill_9(mut child: std::process::Child) {
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
}

/// Waits up to `limit` for `done`.
fn eventually(limit: Duration, done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    done()
}

#[test]
fn a_run_killed_in_its_window_leaves_its_recording_and_the_next_run_clears_the_rest() {
    let dir = scratch();
    let args = [
        "run",
        "--scale",
        "64MiB",
        "--duration",
        "60s",
        "--record",
        "killed.strata",
    ];
    let (child, lines) = spawn_with_stderr_lines(&args, dir.path());
    let pid = child.id();
    let seen = wait_for_phase(&lines, "running");
    // A clone under a 0700 directory puts the server elsewhere on its
    // filesystem (`/var/tmp`): the leftovers are there.
    let work_dir = work_directory_of(&seen);
    std::thread::sleep(Duration::from_secs(3));
    kill_9(child);

    assert!(
        eventually(Duration::from_secs(10), || strata_processes_in(&work_dir)
            .is_empty()),
        "the throwaway server outlived the strata that owned it: {:?}",
        strata_processes_in(&work_dir)
    );
    let left = cluster_dirs_in(&work_dir);
    assert!(
        left.iter()
            .any(|name| name.starts_with(&format!(".strata-pg-{pid}-"))),
        "{left:?}"
    );
    let report = run_json(&["report", "killed.strata"], dir.path());
    let problems = report["problems"].to_string();
    assert!(problems.contains("no result record"), "{problems}");
    let devices = section(&report, "load_profile").to_string();
    assert!(devices.contains("read requests"), "{devices}");

    let next = run(&["run", "--scale", "64MiB", "--duration", "2s"], dir.path());
    let stderr = stderr_of(&next);
    assert!(next.status.success(), "{stderr}");
    for name in &left {
        let removed = format!("strata: removed {}", work_dir.join(name).display());
        assert!(stderr.contains(&removed), "{name} not named: {stderr}");
    }
    assert!(
        stderr.contains(&format!("left by strata pid {pid}, which no longer runs")),
        "{stderr}"
    );
    assert_nothing_left_behind(&work_dir);
    assert_nothing_left_behind(dir.path());
}

#[test]
fn a_calibrate_killed_while_it_fills_its_file_leaves_it_to_the_next_calibrate() {
    let dir = scratch();
    let args = ["calibrate", "--size", "256MiB", "--duration", "30s"];
    let (child, _lines) = spawn_with_stderr_lines(&args, dir.path());
    assert!(
        eventually(Duration::from_secs(30), || !leftovers(dir.path())
            .is_empty()),
        "calibrate made no temporary file"
    );
    kill_9(child);
    let left = leftovers(dir.path());
    assert_eq!(left.len(), 1, "{left:?}");

    let next = run(
        &[
            "calibrate",
            "--size",
            "8MiB",
            "--duration",
            "1s",
            "--ramp",
            "0s",
            "--workload",
            "small-random-read",
        ],
        dir.path(),
    );
    let stderr = stderr_of(&next);
    assert!(next.status.success(), "{stderr}");
    let removed = format!(
        "strata: removed {} (an abandoned calibrate temporary file)",
        dir.path()
            .canonicalize()
            .unwrap()
            .join(left[0].file_name().unwrap())
            .display()
    );
    assert!(stderr.contains(&removed), "{stderr}");
    assert!(leftovers(dir.path()).is_empty());
}

/// `strata run` with `args` ends with exit code 2 in a few seconds (no
/// server started, nothing loaded); its stderr.
fn refused_at_once(args: &[&str], dir: &Path) -> String {
    let began = Instant::now();
    let output = run(args, dir);
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(began.elapsed() < Duration::from_secs(10), "{stderr}");
    assert!(!stderr.contains("starting a throwaway"), "{stderr}");
    assert_nothing_left_behind(dir);
    stderr
}

#[test]
fn an_existing_recording_is_refused_before_any_work_unless_overwrite_is_given() {
    let dir = scratch();
    let kept = dir.path().join("kept.strata");
    std::fs::write(&kept, "the user's own file\n").unwrap();
    let stderr = refused_at_once(&["run", "--record", "kept.strata"], dir.path());
    assert!(stderr.contains("--record"), "{stderr}");
    assert!(stderr.contains("kept.strata already exists"), "{stderr}");
    assert!(stderr.contains("--overwrite"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        "the user's own file\n"
    );

    let calibrate = run(&["calibrate", "--record", "kept.strata"], dir.path());
    assert_eq!(calibrate.status.code(), Some(2));
    assert!(stderr_of(&calibrate).contains("kept.strata already exists"));
    let observe = run(
        &["observe", "--count", "1", "--record", "kept.strata"],
        dir.path(),
    );
    assert_eq!(observe.status.code(), Some(2));
    assert!(stderr_of(&observe).contains("kept.strata already exists"));
    assert!(leftovers(dir.path()).is_empty());

    let replaced = run(
        &[
            "observe",
            "--count",
            "2",
            "--interval",
            "0.2s",
            "--record",
            "kept.strata",
            "--overwrite",
        ],
        dir.path(),
    );
    assert!(replaced.status.success(), "{}", stderr_of(&replaced));
    let report = run(&["report", "kept.strata"], dir.path());
    assert!(report.status.success(), "{}", stderr_of(&report));
}

#[test]
fn output_paths_that_cannot_be_written_are_refused_before_any_work() {
    let dir = scratch();
    let stderr = refused_at_once(&["run", "--record", "/nonexistent/x.strata"], dir.path());
    assert!(
        stderr.contains("/nonexistent/x.strata: its directory does not exist"),
        "{stderr}"
    );
    let stderr = refused_at_once(&["run", "--html", "/nonexistent/x.html"], dir.path());
    assert!(
        stderr.contains("--html /nonexistent/x.html: its directory /nonexistent does not exist"),
        "{stderr}"
    );
    let stderr = refused_at_once(&["run", "--json", "-o", "/proc/x.json"], dir.path());
    assert!(stderr.contains("--output /proc/x.json"), "{stderr}");
    assert!(
        !dir.path().read_dir().unwrap().any(|_| true),
        "a refused run left files in its directory"
    );

    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let csv = format!("{}/orion", file.display());
    let calibrate = run(&["calibrate", "--csv", &csv], dir.path());
    let stderr = stderr_of(&calibrate);
    assert_eq!(calibrate.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not a directory"), "{stderr}");
    assert!(leftovers(dir.path()).is_empty());
}
