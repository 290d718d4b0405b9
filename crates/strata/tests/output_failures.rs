//! A standard output that cannot be written (`> /dev/full`) is a one-line
//! error with exit code 1 for every command, never a panic.

mod common;

use common::*;
use std::process::Stdio;

#[test]
fn a_full_stdout_is_an_error_with_exit_code_1_for_every_command() {
    let dir = scratch();
    let awr = awr_fixture("11.2.0.3-single-html-sarthi2020.html");
    let run = recording_fixture("run-page-cache.strata");
    let commands: Vec<Vec<&str>> = vec![
        vec!["awr", &awr],
        vec!["awr", &awr, "--json"],
        vec!["report", &run],
        vec!["report", &run, "--json"],
        vec![
            "model",
            "queue",
            "--service-time",
            "5ms",
            "--arrival-rate",
            "100",
        ],
        vec![
            "model",
            "raid",
            "--raid",
            "5",
            "--disks",
            "10",
            "--iops",
            "1000",
            "--read-pct",
            "80",
        ],
        vec!["observe", "--interval", "100ms", "--count", "2"],
        vec![
            "calibrate",
            "--size",
            "4MiB",
            "--workload",
            "small-random-read",
            "--ios",
            "100",
            "--buffered",
        ],
        vec!["report", "--help"],
    ];
    for args in commands {
        let output = strata()
            .args(&args)
            .current_dir(dir.path())
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("strata: error: writing to standard output: No space left on device"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    assert!(leftovers(dir.path()).is_empty());
}

/// `2>&1 | head -2` closes stderr after two lines: the run must still end
/// on its own, with its result, and remove what it made (a panic on stderr
/// once left the sessions waiting for a start that never came).
#[test]
fn a_closed_stderr_does_not_stop_a_run_half_way() {
    let dir = scratch();
    let engines: [(&str, &[&str]); 2] = [
        ("sqlite", &[]),
        ("postgresql", &["--shared-buffers", "16MiB"]),
    ];
    for (engine, extra) in engines {
        let mut child = strata()
            .args([
                "run",
                "--engine",
                engine,
                "--schemas",
                "1",
                "--scale",
                "32MiB",
            ])
            .args(["--warmup", "0s", "--duration", "2s"])
            .args(extra)
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > std::time::Duration::from_secs(120) {
                let _ = child.kill();
                panic!("{engine}: strata hung with a closed stderr");
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{engine}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains("Measured window"), "{engine}: {stdout}");
        assert!(cluster_dirs_in(dir.path()).is_empty(), "{engine}");
    }
}
