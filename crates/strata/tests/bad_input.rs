//! Bad input is refused with the option's name and what it accepts, before
//! any I/O: no target file is created.

mod common;

use common::*;

fn refused(args: &[&str], expected: &[&str]) {
    let dir = scratch();
    let output = run(args, dir.path());
    assert!(!output.status.success(), "strata {args:?} should fail");
    let stderr = stderr_of(&output);
    for fragment in expected {
        assert!(
            stderr.contains(fragment),
            "strata {args:?}: '{fragment}' missing from: {stderr}"
        );
    }
    assert!(
        leftovers(dir.path()).is_empty(),
        "nothing was created for {args:?}"
    );
}

#[test]
fn unaligned_block_size_with_o_direct() {
    refused(
        &["calibrate", "--bs", "1000"],
        &["--bs", "512-byte", "O_DIRECT", "--buffered"],
    );
}

#[test]
fn unaligned_range_with_o_direct() {
    refused(
        &["calibrate", "--size", "64MiB", "--range", "1000-8MiB"],
        &["--range", "O_DIRECT"],
    );
}

#[test]
fn size_larger_than_free_space() {
    refused(
        &["calibrate", "--size", "900TiB"],
        &["--size", "free space"],
    );
}

#[test]
fn zero_and_absurd_queue_depths() {
    refused(&["calibrate", "--qd", "0"], &["--qd", "1..=4096"]);
    refused(&["calibrate", "--qd", "100000"], &["--qd", "1..=4096"]);
    refused(&["calibrate", "--jobs", "0"], &["--jobs"]);
}

#[test]
fn unknown_names_list_the_accepted_ones() {
    refused(
        &["calibrate", "--workload", "oltp"],
        &["--workload", "small-random-read", "log-write", "mixed"],
    );
    refused(
        &["calibrate", "--engine", "libaio"],
        &["--engine", "io_uring", "psync"],
    );
    refused(&["calibrate", "--rw", "randomread"], &["--rw", "randread"]);
    refused(
        &["calibrate", "--distribution", "pareto:1"],
        &["--distribution", "zipf:THETA"],
    );
    refused(&["calibrate", "--sync", "always"], &["--sync", "fdatasync"]);
}

#[test]
fn units_and_percentages_are_checked() {
    refused(&["calibrate", "--bs", "8q"], &["--bs", "KiB", "KB"]);
    refused(&["calibrate", "--duration", "10 parsecs"], &["--duration"]);
    refused(
        &["calibrate", "--read-pct", "120"],
        &["--read-pct", "0 to 100"],
    );
    refused(
        &["calibrate", "--workload", "log-write", "--bs", "1MiB"],
        &["--bs", "64 KiB"],
    );
    refused(&["calibrate", "--max-qd", "8"], &["--max-qd", "--sweep"]);
}

#[test]
fn a_filesystem_that_refuses_o_direct_is_named() {
    let dir = scratch();
    let mount_point = dir.path().join("ramfs");
    std::fs::create_dir(&mount_point).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "ramfs", "ramfs"])
        .arg(&mount_point)
        .status()
        .unwrap();
    assert!(mounted.success(), "mounting ramfs (tests run as root)");
    let output = run(&["calibrate", "--size", "16MiB"], &mount_point);
    let stderr = stderr_of(&output);
    let leftover = leftovers(&mount_point);
    std::process::Command::new("umount")
        .arg(&mount_point)
        .status()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        stderr.contains("refuses O_DIRECT") && stderr.contains("--buffered"),
        "{stderr}"
    );
    assert!(leftover.is_empty());
}

#[test]
fn an_existing_file_strata_did_not_make_is_never_written() {
    let dir = scratch();
    let precious = dir.path().join("precious.db");
    std::fs::write(&precious, vec![7u8; 1 << 20]).unwrap();
    let output = run(
        &[
            "calibrate",
            "--target",
            precious.to_str().unwrap(),
            "--workload",
            "random-write",
            "--ios",
            "10",
        ],
        dir.path(),
    );
    assert!(!output.status.success());
    assert!(
        stderr_of(&output).contains("not created by strata"),
        "{}",
        stderr_of(&output)
    );
    assert_eq!(std::fs::read(&precious).unwrap(), vec![7u8; 1 << 20]);
    let read_only = run_json(
        &[
            "calibrate",
            "--target",
            precious.to_str().unwrap(),
            "--workload",
            "small-random-read",
            "--ios",
            "10",
        ],
        dir.path(),
    );
    assert_eq!(read_only["points"][0]["groups"][0]["all"]["requests"], 10);
    assert_eq!(
        std::fs::read(&precious).unwrap(),
        vec![7u8; 1 << 20],
        "reads leave it as it was"
    );
}

#[test]
fn contradictions_and_empty_work_are_refused_before_any_work() {
    let dir = scratch();
    for (args, expected) in [
        (
            vec!["run", "--duration", "0s"],
            "--duration must be at least 1 s, got 0",
        ),
        (
            vec!["run", "--duration", "0.0001s"],
            "--duration must be at least 1 s, got 100",
        ),
        (
            vec!["run", "--outlier-threshold", "0s"],
            "--outlier-threshold must be more than 0 s",
        ),
        (
            vec!["run", "--single-schema", "--schemas", "4"],
            "--schemas 4 does not apply",
        ),
        (
            vec!["setup", "--shared-buffers", "1k"],
            "--shared-buffers 1 KiB: PostgreSQL needs at least 128 KiB",
        ),
        (
            vec!["calibrate", "--size", "0"],
            "--size must be more than 0 bytes",
        ),
        (
            vec!["run", "--pg-bin", "/nonexistent"],
            "/nonexistent (from --pg-bin) does not hold both initdb and postgres",
        ),
    ] {
        let output = run(&args, dir.path());
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("SQLite"), "{args:?}: {stderr}");
        assert!(!stderr.contains("starting"), "{args:?}: {stderr}");
    }
    assert!(cluster_dirs_in(dir.path()).is_empty());
    assert!(leftovers(dir.path()).is_empty());
}

/// `--agent` takes an http:// or https://HOST:PORT URL, one for a run,
/// and not for SQLite, whose database is a file here: each refused by name
/// before any work.
#[test]
fn agents_that_cannot_be_followed_are_refused() {
    refused(
        &["run", "--agent", "db1:9100"],
        &["--agent", "http://HOST:PORT"],
    );
    refused(
        &["run", "--agent", "ftp://db1:9100"],
        &["--agent", "http:// or https://"],
    );
    refused(
        &["run", "--engine", "sqlite", "--agent", "http://a:1"],
        &["--agent", "does not apply to --engine sqlite"],
    );
}

#[test]
fn a_fleet_report_s_times_and_server_are_checked_before_any_query() {
    let prometheus = ["report", "--prometheus", "http://127.0.0.1:1"];
    let with = |more: &[&'static str]| [prometheus.as_slice(), more].concat();
    refused(
        &with(&["--from", "yesterday"]),
        &["--from", "RFC 3339", "now-DURATION"],
    );
    refused(
        &with(&["--from", "now", "--to", "now-1m"]),
        &["--from must be before --to"],
    );
    refused(
        &with(&["--from", "now-1h", "--step", "0.1s"]),
        &["--step", "11000"],
    );
    refused(
        &[
            "report",
            "--prometheus",
            "ftp://prom:9090",
            "--from",
            "now-1m",
        ],
        &["--prometheus ftp://prom:9090", "http://HOST:PORT"],
    );
    refused(&["report", "--prometheus", "http://prom:9090"], &["--from"]);
    refused(
        &["report", "x.strata", "--from", "now-1m", "--to", "now"],
        &["--from now-1m"],
    );
}

#[test]
fn shard_options_are_checked_before_any_work() {
    refused(&["run", "--shard", "0/3"], &["--shard", "1 <= I <= N"]);
    refused(&["run", "--shard", "4/3"], &["--shard", "1 <= I <= N"]);
    refused(&["run", "--shard", "two"], &["--shard", "I/N"]);
    refused(&["run", "--shard", "1/3"], &["--shard 1/3", "--run-id"]);
    refused(
        &["run", "--shard", "1/3", "--run-id", "r1"],
        &["--shard 1/3", "--db"],
    );
    refused(
        &["run", "--shards", "3"],
        &["--shards", "--shard I/N", "JOB_COMPLETION_INDEX"],
    );
    refused(
        &["run", "--run-id", "bad id", "--shard", "1/2"],
        &["--run-id", "letters, digits"],
    );
    refused(
        &[
            "run", "--engine", "sqlite", "--shard", "1/2", "--run-id", "r1",
        ],
        &["--shard 1/2", "does not apply to --engine sqlite"],
    );
    refused(
        &[
            "run",
            "--db",
            "postgresql://a@h1/x",
            "--db",
            "postgresql://a@h2/x",
        ],
        &["--db given 2 times", "--shard"],
    );
    refused(
        &["merge", "-o", "x.strata", "missing.strata"],
        &["missing.strata"],
    );
}

#[test]
fn sweep_options_are_checked_before_any_work() {
    let sweep = |more: &[&'static str]| [&["run", "--sweep-sessions"][..], more].concat();
    refused(
        &sweep(&["4,2"]),
        &["--sweep-sessions", "must rise", "1,2,4,8"],
    );
    refused(&sweep(&["0-8"]), &["--sweep-sessions", "1 to 10000"]);
    refused(&sweep(&["8-2"]), &["--sweep-sessions", "must rise"]);
    refused(
        &sweep(&["1,2", "--work-loops", "10"]),
        &["--sweep-sessions", "--work-loops does not apply"],
    );
    refused(
        &sweep(&["1,2", "--engine", "sqlite"]),
        &["--sweep-sessions does not apply to --engine sqlite"],
    );
    refused(
        &sweep(&["1,2", "--predict", "/nonexistent/cal.strata"]),
        &["--calibration /nonexistent/cal.strata"],
    );
    refused(
        &sweep(&[
            "1,2",
            "--predict",
            "cal.strata",
            "--scan-pct",
            "10",
            "--scan-table-size",
            "1MiB",
        ]),
        &["--predict models single-block reads and updates, not scans"],
    );
    refused(&["run", "--predict", "cal.strata"], &["--sweep-sessions"]);
    refused(
        &sweep(&["1,2", "--predict", "cal.strata", "--db", "postgres://h/db"]),
        &[
            "--predict measures the database's CPU per block",
            "--calibration",
        ],
    );
    refused(
        &[
            "model",
            "predict",
            "--calibration",
            "/nonexistent/cal.strata",
            "--cpu-per-block",
            "10us",
        ],
        &["--calibration /nonexistent/cal.strata"],
    );
    refused(
        &["model", "predict", "--calibration", "cal.strata"],
        &["--cpu-per-block"],
    );
}

/// `--slob-conf`: a bad value names the file, the line, the setting and
/// what it accepts, and never shows a password; it does not go with
/// `--pgio-conf` or another engine — each refused before any work.
#[test]
fn slob_conf_values_are_checked_before_any_work() {
    let confs = scratch();
    let conf = |name: &str, text: &str| {
        let path = confs.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let password = "SYSDBA_PASSWD=\"s3cret-pw\"\n";
    let over = conf("over.conf", &format!("{password}UPDATE_PCT=150\n"));
    let stress = conf("stress.conf", "REDO_STRESS=MEDIUM\n");
    let scale = conf("scale.conf", "SCALE=80m\n");
    let unterminated = conf("quote.conf", "SYSDBA_PASSWD=\"s3cret-pw\n");
    let stock = conf("slob.conf", "UPDATE_PCT=20\n");
    let cases = [
        (
            vec!["run", "--slob-conf", &over],
            vec![over.as_str(), "line 2: UPDATE_PCT=150", "0 to 100"],
        ),
        (
            vec!["run", "--slob-conf", &stress],
            vec![stress.as_str(), "REDO_STRESS=MEDIUM", "LITE or HEAVY"],
        ),
        (
            vec!["setup", "--slob-conf", &scale],
            vec!["SCALE=80m", "a count of blocks", "M, G or T"],
        ),
        (
            vec!["run", "--slob-conf", &unterminated],
            vec![unterminated.as_str(), "line 1", "unterminated"],
        ),
        (
            vec!["run", "--slob-conf", &stock, "--pgio-conf", &stock],
            vec!["--slob-conf", "cannot be used with", "--pgio-conf"],
        ),
        (
            vec!["run", "--engine", "sqlite", "--slob-conf", &stock],
            vec!["--slob-conf does not apply to --engine sqlite"],
        ),
        (
            vec!["run", "--engine", "sqlite", "--update-pad-bytes", "256"],
            vec!["--update-pad-bytes does not apply to --engine sqlite"],
        ),
        (
            vec!["run", "--update-pad-bytes", "4000"],
            vec!["--update-pad-bytes", "0..=3900"],
        ),
    ];
    for (args, expected) in cases {
        refused(&args, &expected);
        let stderr = stderr_of(&run(&args, scratch().path()));
        assert!(!stderr.contains("s3cret-pw"), "{args:?}: {stderr}");
        assert!(!stderr.contains("starting"), "{args:?}: {stderr}");
    }
}

#[test]
fn observe_top_counts_and_output_options() {
    refused(&["observe", "--top", "0"], &["--top", "'0'", "1 or more"]);
    refused(
        &["observe", "--top", "abc"],
        &["--top", "'abc'", "1 or more"],
    );
    refused(&["observe", "--top", "-3"], &["--top", "1 or more"]);
    refused(
        &["observe", "--top", "5", "--format", "csv"],
        &[
            "--top 5",
            "--format text",
            "--format json",
            "not with --format csv",
        ],
    );
    refused(
        &["observe", "--top", "5", "--html", "top.html"],
        &["--top 5", "not with --format html"],
    );
    refused(
        &["observe", "--json", "--format", "csv"],
        &["--json", "--format"],
    );
    refused(
        &["observe", "--json", "--html", "o.html"],
        &["--html", "--json"],
    );
}

/// More sessions than the host can run while the throwaway server's page
/// cache is held to its limit are refused before any work, naming the
/// most it can and the ways out; `--page-cache-limit unlimited` is one.
#[test]
fn more_sessions_than_the_page_cache_limit_can_hold_are_refused_before_any_work() {
    let dir = scratch();
    let cpus = std::thread::available_parallelism().unwrap().get();
    let most = strata_run::request::MOST_SESSIONS_PER_CPU_WITH_A_LIMITED_CACHE as usize * cpus;
    let sessions = (most + 1).to_string();
    let args = ["run", "--single-schema", "--sessions", &sessions];
    let output = run(&args, dir.path());
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let named = format!("{sessions} sessions on this host's {cpus} CPUs: past {most}");
    assert!(stderr.contains(&named), "{stderr}");
    assert!(stderr.contains("--page-cache-limit unlimited"), "{stderr}");
    assert!(!stderr.contains("starting"), "{stderr}");
    assert!(cluster_dirs_in(dir.path()).is_empty());
    assert!(!dir.path().read_dir().unwrap().any(|_| true), "files left");
}

/// `strata merge -o FILE` onto a file that exists is refused before any
/// shard is read (the shards named here do not exist), and the file is
/// left as it was.
#[test]
fn a_merge_onto_an_existing_file_is_refused_and_the_file_kept() {
    let dir = scratch();
    let existing = dir.path().join("run.strata");
    std::fs::write(&existing, "someone's file\n").unwrap();
    let args = [
        "merge",
        "-o",
        "run.strata",
        "shard-1.strata",
        "shard-2.strata",
    ];
    let output = run(&args, dir.path());
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("-o run.strata: the file exists"),
        "{stderr}"
    );
    assert!(!stderr.contains("shard-1"), "a shard was read: {stderr}");
    let kept = std::fs::read_to_string(&existing).unwrap();
    assert_eq!(kept, "someone's file\n");
}
