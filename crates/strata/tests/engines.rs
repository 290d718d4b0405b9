//! `strata run --engine` through the real binary: the SQLite and MariaDB
//! engines run the same method and print the same result format, naming
//! their engine; options
//! that only PostgreSQL can honour, and unknown engines, are refused before
//! any work starts; the temporary database file is gone afterwards.

mod common;

use common::{run, run_json, scratch, stderr_of, strata_processes_in};
use serde_json::Value;
use strata_testkit::files::names as entries;

#[test]
fn sqlite_engine_runs_the_method_and_leaves_no_file_behind() {
    let dir = scratch();
    let record = dir.path().join("sqlite.strata");
    let document = run_json(
        &[
            "run",
            "--engine",
            "sqlite",
            "--schemas",
            "2",
            "--scale",
            "2048",
            "--duration",
            "2s",
            "--warmup",
            "500ms",
            "--record",
            record.to_str().unwrap(),
        ],
        dir.path(),
    );
    let environment = &document["environment"];
    assert_eq!(environment["engine"], "sqlite");
    assert!(environment["server_version"]
        .as_str()
        .unwrap()
        .starts_with("3."));
    let result = &document["result"];
    assert!(
        result["database"].is_null(),
        "SQLite has no database counters"
    );
    let selected = result["workload"]["rows_selected"].as_f64().unwrap();
    let device_reads: f64 = result["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|device| device["read_requests"].as_f64().unwrap())
        .sum();
    assert!(selected > 0.0 && device_reads > 0.0, "{result}");
    assert!(
        device_reads >= 0.3 * selected,
        "{device_reads} device read requests for {selected} pages read"
    );
    // SQLite runs in strata's own session threads: their block requests
    // are counted under the role "session", a part of the device's.
    let traced = &result["block_trace"];
    assert!(traced["unavailable"].is_null(), "{traced}");
    // Both counts are of the requests issued, whose device time is shown.
    let reads_of = |rows: &Value, role: Option<&str>, count: &str| -> u64 {
        rows.as_array()
            .into_iter()
            .flatten()
            .filter(|row| row["operation"] == "read")
            .filter(|row| role.is_none_or(|role| row["role"] == role))
            .map(|row| row[count].as_u64().unwrap())
            .sum()
    };
    let devices = traced["devices"].as_array().unwrap();
    let sessions: u64 = devices
        .iter()
        .map(|device| reads_of(&device["by_role"], Some("session"), "requests"))
        .sum();
    let all: u64 = devices
        .iter()
        .map(|device| reads_of(&device["operations"], None, "issued_requests"))
        .sum();
    assert!(
        sessions > 0 && sessions <= all,
        "{sessions} of {all}: {traced}"
    );
    assert!(
        sessions as f64 >= 0.3 * selected,
        "{sessions} session read requests for {selected} pages read"
    );
    assert_eq!(entries(dir.path()), vec!["sqlite.strata".to_string()]);
    let report = run(&["report", record.to_str().unwrap()], dir.path());
    assert!(report.status.success(), "{}", stderr_of(&report));
    assert!(String::from_utf8_lossy(&report.stdout).contains("SQLite 3."));
}

#[test]
fn postgresql_only_options_and_unknown_engines_are_refused_before_work() {
    let dir = scratch();
    for (option, value) in [
        ("--shared-buffers", Some("64MiB")),
        ("--pg-bin", Some("/usr/lib/postgresql/15/bin")),
        ("--keep", None),
        ("--direct-io", None),
        ("--performance-schema", None),
    ] {
        let mut args = vec!["run", "--engine", "sqlite", option];
        args.extend(value);
        let output = run(&args, dir.path());
        assert_eq!(output.status.code(), Some(2), "{option}");
        let stderr = stderr_of(&output);
        assert!(
            stderr.contains(&format!("{option} does not apply to --engine sqlite")),
            "{stderr}"
        );
    }
    let output = run(&["run", "--engine", "oracle"], dir.path());
    let stderr = stderr_of(&output);
    assert!(!output.status.success());
    assert!(
        stderr.contains("--engine") && stderr.contains("postgresql, sqlite"),
        "{stderr}"
    );
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}

#[test]
fn without_postgresql_binaries_the_embedded_default_runs_on_sqlite_and_says_so() {
    let dir = scratch();
    let output = common::strata()
        .args([
            "run",
            "--schemas",
            "1",
            "--scale",
            "1024",
            "--duration",
            "1s",
        ])
        .args(["--warmup", "0s", "--json", "--record", "r.strata"])
        .env("STRATA_PG_BIN", "/nonexistent")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("no PostgreSQL server binaries") && stderr.contains("on SQLite"),
        "{stderr}"
    );
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["environment"]["engine"], "sqlite");
    assert_eq!(entries(dir.path()), vec!["r.strata".to_string()]);
}

/// The data device's traced reads by the submitting thread's role (by
/// performance_schema, or without it by PROCESSLIST's TID): the sessions'
/// connections (`sql/one_connection`) read nearly all the server's pages.
fn assert_reads_counted_under_the_connections(document: &serde_json::Value) {
    let traced = &document["result"]["block_trace"];
    let mut reads: std::collections::BTreeMap<String, u64> = Default::default();
    for row in traced["devices"][0]["by_role"].as_array().unwrap() {
        if row["operation"] == "read" {
            *reads
                .entry(row["role"].as_str().unwrap().to_string())
                .or_default() += row["requests"].as_u64().unwrap();
        }
    }
    eprintln!("MariaDB's traced reads by role: {reads:?}");
    // Reads without a role are other processes' (another test's server on
    // the same disk): this run names only its own server's threads.
    let named: u64 = reads
        .iter()
        .filter(|(role, _)| !role.is_empty())
        .map(|(_, count)| count)
        .sum();
    let connections = reads.get("sql/one_connection").copied().unwrap_or(0);
    assert!(
        named > 0 && connections * 10 >= named * 9,
        "{reads:?}: {traced}"
    );
}

#[test]
fn mariadb_engine_runs_on_a_throwaway_server_and_removes_it() {
    let dir = scratch();
    let document = run_json(
        &[
            "run",
            "--engine",
            "mariadb",
            "--schemas",
            "1",
            "--scale",
            "2048",
            "--duration",
            "1s",
            "--warmup",
            "200ms",
            "--update-pct",
            "20",
            "--record",
            "m.strata",
            "--performance-schema",
        ],
        dir.path(),
    );
    let environment = &document["environment"];
    assert_eq!(environment["engine"], "mariadb");
    assert_eq!(environment["block_bytes"], 16384);
    assert_eq!(environment["page_cache"]["method"], "direct_io");
    let innodb = &document["engine_figures"]["innodb"];
    let read_requests = innodb["read_requests"].as_f64().unwrap();
    assert!(read_requests > 0.0, "{innodb}");
    assert!(innodb["pages_read"].as_f64().unwrap() >= read_requests * 0.9);
    assert!(
        innodb["log_writes"].as_f64().unwrap() > 0.0,
        "updates write redo"
    );
    let files = innodb["files"].as_array().unwrap();
    let data_file = files
        .iter()
        .find(|file| file["event"] == "wait/io/file/innodb/innodb_data_file")
        .unwrap_or_else(|| panic!("no data file timings: {files:?}"));
    assert!(data_file["reads"].as_f64().unwrap() > 0.0, "{data_file}");
    assert_reads_counted_under_the_connections(&document);
    assert_eq!(entries(dir.path()), vec!["m.strata".to_string()]);
    assert!(strata_processes_in(dir.path()).is_empty());
    let report = run_json(&["report", "m.strata"], dir.path());
    let profile = report["sections"][0]["blocks"][0]["rows"].to_string();
    assert!(profile.contains("blocks read (16 KiB)"), "{profile}");
    assert!(profile.contains("redo MB"), "{profile}");
    let refused = run(
        &["run", "--engine", "mariadb", "--page-cache-limit", "1GiB"],
        dir.path(),
    );
    let stderr = stderr_of(&refused);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--page-cache-limit does not apply to --engine mariadb"),
        "{stderr}"
    );
}

#[test]
fn a_wrong_mariadb_password_fails_fast_and_is_never_printed() {
    let dir = scratch();
    let started = std::time::Instant::now();
    let output = run(
        &[
            "run",
            "--db",
            "mysql://root:sekret-4711@127.0.0.1:3306/strata_password_test",
            "--duration",
            "1s",
        ],
        dir.path(),
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("MariaDB") && stderr.contains("***"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stderr.contains("sekret-4711") && !stdout.contains("sekret-4711"));
}

/// `--scale 32MiB` is 32 MiB of table on disk whatever the engine's block:
/// 4,096 rows of 8 KiB on PostgreSQL and SQLite, 2,048 of 16 KiB on InnoDB,
/// as each engine measures its table (within 5%).
#[test]
fn scale_is_the_size_of_the_table_on_disk_for_every_engine() {
    let dir = scratch();
    for (engine, rows) in [("postgresql", 4096), ("sqlite", 4096), ("mariadb", 2048)] {
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
            "1s",
        ];
        if engine == "postgresql" {
            args.extend(["--shared-buffers", "16MiB"]);
        }
        let document = run_json(&args, dir.path());
        let schema = &document["load"]["schemas"][0];
        assert_eq!(schema["rows"], rows, "{engine}: {schema}");
        let on_disk = schema["bytes_on_disk"].as_f64().unwrap();
        let wanted = 32.0 * 1024.0 * 1024.0;
        assert!(
            (on_disk / wanted - 1.0).abs() <= 0.05,
            "{engine}: {on_disk} bytes on disk for --scale 32MiB"
        );
        if engine == "mariadb" {
            // performance_schema off: the connections by PROCESSLIST's TID.
            assert_reads_counted_under_the_connections(&document);
        }
    }
}

/// On MariaDB a connection is a thread of mariadbd, and the tracer keeps
/// the submitting thread: a session's slow reads name the session (its
/// connection's PROCESSLIST `TID`) and the statement they fell in, and
/// another client's name its query as PROCESSLIST showed it, string
/// literals as `?`.
#[test]
fn a_mariadb_runs_slow_reads_name_the_session_or_another_clients_query() {
    let dir = scratch();
    let mut args = vec!["run", "--engine", "mariadb", "--json"];
    args.extend(["--schemas", "2", "--scale", "2048"]);
    args.extend(["--duration", "4s", "--warmup", "1s"]);
    args.extend(["--outlier-threshold", "100us", "--io-outlier", "100us"]);
    // Short statements far apart: few enough outliers for the ring (4,096)
    // to keep the window's, and a read placed on the wrong clock falls
    // between statements.
    args.extend([
        "--work-unit",
        "8",
        "--think-time",
        "50ms",
        "--think-every",
        "1",
    ]);
    let (run, lines) = common::spawn_with_stderr_lines(&args, dir.path());
    let seen = common::wait_for_phase(&lines, "running");
    // The current directory, or one the server's account can reach, which
    // other tests' servers may share: this run's is named by its PID.
    let work_dir = common::work_directory_of(&seen);
    let ours = format!(".strata-mariadb-{}-", run.id());
    let socket = std::fs::read_dir(&work_dir)
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&ours))
        .map(|entry| entry.path().join("mysqld.sock"))
        .find(|socket| socket.exists())
        .unwrap_or_else(|| panic!("no {ours}* server socket in {}", work_dir.display()));
    // Every row of the second schema through its secondary index (its keys
    // are shuffled: a clustered page read per row), 0.5 ms apart.
    let scattered = "SELECT COUNT(*), SUM(n) FROM strata_slob_2 FORCE INDEX (slob_key) \
                     WHERE `key` BETWEEN 0 AND 100000000 AND SLEEP(0.0005) = 0 \
                     AND 'not-a-secret-8Rk' <> ''";
    let client = std::process::Command::new("mariadb")
        .arg(format!("--socket={}", socket.display()))
        .args(["-uroot", "strata_slob", "-e", scattered])
        .output()
        .unwrap();
    assert!(client.status.success(), "{}", stderr_of(&client));
    let output = run.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        !stdout.contains("not-a-secret-8Rk"),
        "a literal reached the output"
    );
    let document: Value = serde_json::from_str(&stdout).unwrap();
    let listed = document["result"]["block_trace"]["outliers"]["listed"]
        .as_array()
        .unwrap();
    let by_the_client: Vec<&Value> = listed
        .iter()
        .filter(|outlier| {
            outlier["query"]
                .as_str()
                .is_some_and(|q| q.contains("strata_slob_2"))
        })
        .collect();
    assert!(
        by_the_client.len() >= 10,
        "the client's query named on too few outliers: {listed:?}"
    );
    let clients_thread = &by_the_client[0]["thread"];
    let sessions: Vec<&Value> = listed
        .iter()
        .filter(|outlier| &outlier["thread"] != clients_thread)
        .collect();
    assert_sessions_reads_name_their_statements(&sessions, &document["result"]);
    for outlier in by_the_client {
        assert!(
            outlier["query"].as_str().unwrap().contains("AND ? <> ?"),
            "{outlier}"
        );
        assert!(outlier.get("session").is_none(), "{outlier}");
        assert_eq!(outlier["command"], "mariadbd", "{outlier}");
        assert_eq!(&outlier["thread"], clients_thread, "{outlier}");
    }
}

/// The sessions' connections' slow reads name their session and statement.
fn assert_sessions_reads_name_their_statements(listed: &[&Value], result: &Value) {
    let reads: Vec<&Value> = listed
        .iter()
        .copied()
        .filter(|outlier| outlier["role"] == "sql/one_connection" && outlier["operation"] == "read")
        .collect();
    common::assert_reads_name_their_session_and_statement(&reads, 2, result);
}
