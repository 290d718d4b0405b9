//! A newcomer's first hour: the README's `strata run` from a clone under a
//! private directory (mode 0700, as /root is), where the servers' OS
//! accounts cannot reach the checkout; and `--work-dir` values that cannot
//! work, refused by name before any work starts.

mod common;

use common::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use strata_testkit::loopdev::own_filesystem;

/// A fresh directory of mode 0700 in the temporary directory, holding a
/// clone of this project.
fn private_clone() -> (tempfile::TempDir, PathBuf) {
    let private = tempfile::Builder::new()
        .prefix("strata-private-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let clone = private.path().join("strata");
    let output = Command::new("git")
        .args(["clone", "--quiet", "--depth", "1"])
        .arg(format!(
            "file://{}",
            project.canonicalize().unwrap().display()
        ))
        .arg(&clone)
        .output()
        .expect("running git clone");
    assert!(
        output.status.success(),
        "git clone: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    (private, clone)
}

/// 32 MiB: more than each engine's cache of a throwaway server (16 MiB
/// of shared_buffers here, InnoDB's 16 MiB pool, SQLite's 2 MiB).
fn short_run(engine: &str, clone: &Path) -> serde_json::Value {
    let record = format!("{engine}.strata");
    let mut args = vec![
        "run",
        "--engine",
        engine,
        "--schemas",
        "1",
        "--scale",
        "32MiB",
        "--warmup",
        "0s",
        "--duration",
        "2s",
        "--record",
        &record,
    ];
    if engine == "postgresql" {
        args.extend(["--shared-buffers", "16MiB"]);
    }
    run_json(&args, clone)
}

/// The work directory a run chose, checked against the clone: on the same
/// filesystem, and `reason` names why.
fn work_directory(document: &serde_json::Value) -> (PathBuf, String) {
    let work = &document["environment"]["work_directory"];
    let path = PathBuf::from(work["path"].as_str().expect("work_directory.path"));
    (path, work["reason"].as_str().unwrap().to_string())
}

#[test]
fn the_readme_run_works_from_a_clone_under_a_private_directory() {
    let (_private, clone) = private_clone();
    let clone_device = std::fs::metadata(&clone).unwrap().dev();
    for (engine, account) in [("postgresql", "postgres"), ("mariadb", "mysql")] {
        let document = short_run(engine, &clone);
        let (path, reason) = work_directory(&document);
        assert!(!path.starts_with(&clone), "{engine}: {path:?}");
        assert_eq!(std::fs::metadata(&path).unwrap().dev(), clone_device);
        let unreachable = format!("cannot be reached by OS account {account}");
        assert!(reason.contains(&unreachable), "{engine}: {reason}");
        assert!(reason.contains("same filesystem"), "{engine}: {reason}");
        let data = document["environment"]["data_directory"].as_str().unwrap();
        assert!(data.starts_with(path.to_str().unwrap()), "{data}");
        assert!(!Path::new(data).exists(), "{engine}: {data} left behind");
        assert!(document["result"]["workload"]["loops"].as_u64().unwrap() > 0);
        let recording = std::fs::read_to_string(clone.join(format!("{engine}.strata"))).unwrap();
        assert!(recording.contains("\"work_directory\""), "{engine}");
    }
    let document = short_run("sqlite", &clone);
    let (path, reason) = work_directory(&document);
    assert_eq!(path, clone.canonicalize().unwrap());
    assert_eq!(reason, "the current directory");
}

#[test]
fn work_dirs_that_cannot_work_are_refused_by_name_before_any_work() {
    let dir = scratch();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let private = dir.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let missing = dir.path().join("missing");
    let [file, private, missing] = [&file, &private, &missing].map(|path| path.to_str().unwrap());
    for (args, expected) in [
        (vec!["run", "--work-dir", missing], "cannot use it"),
        (vec!["run", "--work-dir", file], "not a directory"),
        (
            vec!["run", "--work-dir", private],
            "OS account postgres cannot reach it",
        ),
        (
            vec!["run", "--engine", "mariadb", "--work-dir", private],
            "OS account mysql cannot reach it",
        ),
        (vec!["setup", "--work-dir", file], "not a directory"),
        (
            vec!["calibrate", "--work-dir", missing, "--size", "1MiB"],
            "cannot use it",
        ),
        (
            vec![
                "run",
                "--db",
                "postgres://u@h/db",
                "--work-dir",
                dir.path().to_str().unwrap(),
            ],
            "--work-dir applies to the throwaway cluster",
        ),
    ] {
        let output = run(&args, dir.path());
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("--work-dir"), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("starting"),
            "{args:?}: work started: {stderr}"
        );
        assert!(cluster_dirs_in(dir.path()).is_empty());
    }
}

#[test]
fn a_filesystem_with_no_reachable_directory_names_the_way_out() {
    let (_device, mount_point) = own_filesystem(64);
    let private = mount_point.parent().unwrap();
    std::fs::set_permissions(private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let args = [
        "run",
        "--schemas",
        "1",
        "--scale",
        "32MiB",
        "--shared-buffers",
        "16MiB",
    ];
    let output = run(&args, &mount_point);
    std::fs::set_permissions(private, std::fs::Permissions::from_mode(0o755)).unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot be reached by OS account postgres")
            && stderr.contains("no directory on its filesystem")
            && stderr.contains("give --work-dir DIR"),
        "{stderr}"
    );
    assert!(cluster_dirs_in(&mount_point).is_empty());
}
