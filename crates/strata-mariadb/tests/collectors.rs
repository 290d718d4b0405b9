//! The `mariadb` collector against real servers: the machine's MariaDB
//! (database `test`, only tables named `strata_test_*` that a test created)
//! and, for the performance_schema figures, a throwaway `mariadbd` started
//! on a private socket with `performance_schema=ON`.

use mysql::prelude::Queryable;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use strata_core::metrics::{Collected, Collector, Metric, MetricKind};
use strata_mariadb::collector::MariaDbCollector;
use strata_recording::names::mariadb;

const MACHINE_URL: &str = "mysql://root@127.0.0.1:3306/test";
const START_HINT: &str =
    "start it with: start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd";
const DATA_FILE: &str = "wait/io/file/innodb/innodb_data_file";

/// The machine's server, or a loud failure saying how to start it.
fn machine_server() -> (MariaDbCollector, mysql::Conn) {
    let collector = MariaDbCollector::connect(MACHINE_URL).unwrap_or_else(|error| {
        panic!("MariaDB is not reachable at {MACHINE_URL} ({error:#}); {START_HINT}")
    });
    let conn =
        mysql::Conn::new(mysql::Opts::from_url(MACHINE_URL).unwrap()).unwrap_or_else(|error| {
            panic!("MariaDB is not reachable at {MACHINE_URL} ({error}); {START_HINT}")
        });
    (collector, conn)
}

/// `series_key` → metric, of one collection.
fn collect(collector: &mut MariaDbCollector) -> BTreeMap<String, Metric> {
    match collector.collect().expect("collecting") {
        Collected::Metrics { metrics } => metrics
            .into_iter()
            .map(|metric| (metric.series_key(), metric))
            .collect(),
        Collected::Absent { reason } => panic!("mariadb layer absent: {reason}"),
        Collected::Partial { unreadable, .. } => panic!("mariadb gave no numbers: {unreadable:?}"),
    }
}

fn growth(before: &BTreeMap<String, Metric>, after: &BTreeMap<String, Metric>, key: &str) -> f64 {
    let value = |metrics: &BTreeMap<String, Metric>| {
        metrics
            .get(key)
            .unwrap_or_else(|| panic!("no {key}; have {:?}", metrics.keys()))
            .value
    };
    value(after) - value(before)
}

/// A table this test created, dropped when the test ends.
struct TestTable {
    conn: mysql::Conn,
    name: String,
}

impl TestTable {
    fn create(mut conn: mysql::Conn) -> TestTable {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let name = format!("strata_test_{}_{nanos}", std::process::id());
        conn.query_drop(format!(
            "CREATE TABLE {name} (id INT AUTO_INCREMENT PRIMARY KEY, filler VARCHAR(1000)) \
             ENGINE=InnoDB"
        ))
        .unwrap();
        TestTable { conn, name }
    }

    /// `transactions` explicit transactions of 20 rows of 1000 bytes each.
    fn insert(&mut self, transactions: usize) {
        for _ in 0..transactions {
            self.conn.query_drop("BEGIN").unwrap();
            self.conn
                .query_drop(format!(
                    "INSERT INTO {} (filler) SELECT REPEAT('x', 1000) FROM seq_1_to_20",
                    self.name
                ))
                .unwrap();
            self.conn.query_drop("COMMIT").unwrap();
        }
    }

    /// Writes the table's dirty pages to its data file now.
    fn flush(&mut self) {
        self.conn
            .query_drop(format!("FLUSH TABLES {} FOR EXPORT", self.name))
            .unwrap();
        self.conn.query_drop("UNLOCK TABLES").unwrap();
    }
}

impl Drop for TestTable {
    fn drop(&mut self) {
        let _ = self
            .conn
            .query_drop(format!("DROP TABLE IF EXISTS {}", self.name));
    }
}

fn global_status(conn: &mut mysql::Conn, name: &str) -> Option<String> {
    conn.query_first::<(String, String), _>(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .unwrap()
        .map(|(_, value)| value)
}

#[test]
fn mariadb_counters_move_with_commits_and_reads() {
    let (mut collector, mut conn) = machine_server();
    assert_eq!(collector.layer(), "mariadb");
    let performance_schema: i64 = conn
        .query_first("SELECT @@performance_schema")
        .unwrap()
        .unwrap();
    let flush_at_commit: i64 = conn
        .query_first("SELECT @@innodb_flush_log_at_trx_commit")
        .unwrap()
        .unwrap();
    let has_log_fsyncs = global_status(&mut conn, "Innodb_os_log_fsyncs").is_some();
    let mut table = TestTable::create(conn);

    let before = collect(&mut collector);
    assert_eq!(
        before["performance_schema_on{}"].value,
        performance_schema as f64
    );
    assert_eq!(before["performance_schema_on{}"].kind, MetricKind::Gauge);
    let file_metrics = before.keys().filter(|key| key.starts_with("file_")).count();
    assert_eq!(
        file_metrics > 0,
        performance_schema == 1,
        "{:?}",
        before.keys()
    );
    assert_eq!(
        before.contains_key("innodb_os_log_fsyncs{}"),
        has_log_fsyncs,
        "innodb_os_log_fsyncs is reported exactly when the server has it"
    );
    for name in [
        mariadb::DATA_READS,
        mariadb::DATA_READ_BYTES,
        mariadb::PAGES_READ,
        "innodb_data_writes",
        "innodb_data_written_bytes",
        "innodb_data_fsyncs",
        mariadb::BUFFER_POOL_READS,
        mariadb::BUFFER_POOL_READ_REQUESTS,
        mariadb::LOG_WRITES,
        mariadb::LOG_WRITTEN_BYTES,
        mariadb::COMMITS,
        "questions",
    ] {
        let metric = before
            .get(&format!("{name}{{}}"))
            .unwrap_or_else(|| panic!("no {name}; have {:?}", before.keys()));
        assert_eq!(metric.kind, MetricKind::Counter, "{name}");
    }

    const COMMITS: usize = 50;
    table.insert(COMMITS);
    table.flush();
    let after = collect(&mut collector);
    let commits = COMMITS as f64;
    assert!(growth(&before, &after, "com_commit{}") >= commits);
    // 1000 rows of 1000 bytes went through the redo log.
    assert!(growth(&before, &after, "innodb_os_log_written_bytes{}") >= 1e6);
    assert!(growth(&before, &after, "innodb_log_writes{}") >= 1.0);
    assert!(growth(&before, &after, "innodb_data_written_bytes{}") >= 1e6);
    assert!(growth(&before, &after, "innodb_data_writes{}") >= 1.0);
    // One redo fsync per commit when innodb_flush_log_at_trx_commit = 1;
    // MariaDB ≥ 10.8 counts them in Innodb_data_fsyncs.
    let fsync_key = match has_log_fsyncs {
        true => "innodb_os_log_fsyncs{}",
        false => "innodb_data_fsyncs{}",
    };
    let expected_fsyncs = if flush_at_commit == 1 { commits } else { 1.0 };
    let fsyncs = growth(&before, &after, fsync_key);
    assert!(fsyncs >= expected_fsyncs, "{fsync_key} grew by {fsyncs}");

    let before = collect(&mut collector);
    let bytes: i64 = table
        .conn
        .query_first(format!("SELECT SUM(LENGTH(filler)) FROM {}", table.name))
        .unwrap()
        .unwrap();
    assert_eq!(bytes, 1_000_000);
    let after = collect(&mut collector);
    // A full scan of ~65 pages of 16 KiB.
    let requests = growth(&before, &after, "innodb_buffer_pool_read_requests{}");
    assert!(
        requests >= 50.0,
        "buffer pool read requests grew by {requests}"
    );
    assert!(growth(&before, &after, "questions{}") >= 1.0);
}

#[test]
fn mariadb_wrong_password_or_port_fails_fast_without_the_password() {
    drop(machine_server());
    let secret = "strata-wrong-pw-4711";
    let free_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for url in [
        format!("mysql://root:{secret}@127.0.0.1:3306/test"),
        format!("mysql://root:{secret}@127.0.0.1:{free_port}/test"),
    ] {
        let started = Instant::now();
        let error = MariaDbCollector::connect(&url).unwrap_err();
        let elapsed = started.elapsed();
        let text = format!("{error:#} {error:?}");
        assert!(elapsed < Duration::from_secs(5), "{elapsed:?}: {text}");
        assert!(!text.contains(secret), "{text}");
        assert!(text.contains("mysql://root:***@127.0.0.1"), "{text}");
    }
}

/// A private `mariadbd` on a Unix socket in a temporary directory, with
/// performance_schema on; killed and removed on drop.
struct ThrowawayMariaDb {
    child: Child,
    dir: tempfile::TempDir,
}

impl ThrowawayMariaDb {
    fn start() -> ThrowawayMariaDb {
        let parent = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        std::fs::create_dir_all(&parent).unwrap();
        let dir = tempfile::Builder::new()
            .prefix("strata-mariadb-")
            .tempdir_in(&parent)
            .unwrap();
        let data_dir = dir.path().join("data");
        let mut common_args = vec![
            "--no-defaults".to_string(),
            format!("--datadir={}", data_dir.display()),
            "--innodb-log-file-size=16M".to_string(),
            "--innodb-buffer-pool-size=32M".to_string(),
        ];
        if unsafe { libc::geteuid() } == 0 {
            common_args.push("--user=root".to_string());
        }
        let install = Command::new("mariadb-install-db")
            .args(&common_args)
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
            .output()
            .expect("running mariadb-install-db (package mariadb-server)");
        assert!(
            install.status.success(),
            "mariadb-install-db failed: {}{}",
            String::from_utf8_lossy(&install.stdout),
            String::from_utf8_lossy(&install.stderr)
        );
        let child = Command::new("/usr/sbin/mariadbd")
            .args(&common_args)
            .arg(format!("--socket={}", socket(dir.path()).display()))
            .arg(format!("--pid-file={}", dir.path().join("pid").display()))
            .arg(format!(
                "--log-error={}",
                dir.path().join("error.log").display()
            ))
            .args(["--skip-networking", "--performance-schema=ON"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting /usr/sbin/mariadbd");
        ThrowawayMariaDb { child, dir }
    }

    fn url(&self) -> String {
        format!(
            "mysql://root@localhost/mysql?socket={}",
            socket(self.dir.path()).display()
        )
    }

    /// Connects once the server accepts connections (30 s at most).
    fn connect(&mut self) -> MariaDbCollector {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match MariaDbCollector::connect(&self.url()) {
                Ok(collector) => return collector,
                Err(error) => {
                    let exited = self.child.try_wait().unwrap();
                    let log = std::fs::read_to_string(self.dir.path().join("error.log"))
                        .unwrap_or_default();
                    assert!(
                        exited.is_none() && Instant::now() < deadline,
                        "throwaway mariadbd not accepting connections ({exited:?}): {error:#}\n{log}"
                    );
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn socket(dir: &Path) -> PathBuf {
    dir.join("mysqld.sock")
}

impl Drop for ThrowawayMariaDb {
    fn drop(&mut self) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mariadb_performance_schema_gives_per_file_counters() {
    let mut server = ThrowawayMariaDb::start();
    let mut collector = server.connect();
    assert!(collector.performance_schema_on());
    let mut conn = mysql::Conn::new(mysql::Opts::from_url(&server.url()).unwrap()).unwrap();
    conn.query_drop("CREATE DATABASE test").unwrap();
    conn.query_drop("USE test").unwrap();
    let events: Vec<String> = conn
        .query(
            "SELECT EVENT_NAME FROM performance_schema.file_summary_by_event_name \
             WHERE EVENT_NAME IN ('wait/io/file/innodb/innodb_data_file', \
                                  'wait/io/file/innodb/innodb_log_file') \
             ORDER BY EVENT_NAME",
        )
        .unwrap();
    assert!(events.iter().any(|event| event == DATA_FILE), "{events:?}");
    let mut table = TestTable::create(conn);

    let before = collect(&mut collector);
    assert_eq!(before["performance_schema_on{}"].value, 1.0);
    let reported: Vec<String> = before
        .values()
        .filter(|metric| metric.name == "file_reads")
        .map(|metric| metric.labels["event"].clone())
        .collect();
    assert_eq!(
        reported, events,
        "one set of file metrics per event the server has"
    );
    for event in &events {
        for name in [
            "file_reads",
            "file_read_bytes",
            "file_read_wait_ps",
            "file_writes",
            "file_write_bytes",
            "file_write_wait_ps",
            "file_misc_wait_ps",
        ] {
            let key = format!("{name}{{event={event}}}");
            let metric = before
                .get(&key)
                .unwrap_or_else(|| panic!("no {key}; have {:?}", before.keys()));
            assert_eq!(metric.kind, MetricKind::Counter, "{key}");
        }
    }
    assert!(before[&format!("file_read_bytes{{event={DATA_FILE}}}")].value > 0.0);

    table.insert(50);
    table.flush();
    let after = collect(&mut collector);
    let data = |name: &str| growth(&before, &after, &format!("{name}{{event={DATA_FILE}}}"));
    assert!(data("file_writes") >= 1.0);
    assert!(data("file_write_bytes") >= 1e6);
    assert!(data("file_write_wait_ps") > 0.0);
    assert!(
        data("file_misc_wait_ps") > 0.0,
        "FOR EXPORT syncs the data file"
    );
    let status_written = growth(&before, &after, "innodb_data_written_bytes{}");
    assert!(
        data("file_write_bytes") >= status_written / 2.0,
        "file figures and status counters disagree: {} vs {status_written}",
        data("file_write_bytes")
    );
    drop(table);
    drop(collector);
}
