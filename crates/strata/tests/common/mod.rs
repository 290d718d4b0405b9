//! Helpers shared by the binary's integration tests beyond strata-testkit:
//! run the real `strata` binary, read its JSON and stderr, and check what
//! its runs left behind.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

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
    strata_testkit::files::leftovers(dir, ".strata-calibrate")
}

/// The processes whose command line names `dir`, as `pid: command line`.
pub fn strata_processes_in(dir: &Path) -> Vec<String> {
    strata_testkit::process::processes_naming(dir)
        .into_iter()
        .map(|(pid, cmdline)| format!("{pid}: {cmdline}"))
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

/// The names of throwaway clusters' directories in `dir`.
pub fn cluster_dirs_in(dir: &Path) -> Vec<String> {
    strata_testkit::files::names(dir)
        .into_iter()
        .filter(|name| name.starts_with(".strata-pg"))
        .collect()
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

/// An AWR or STATSPACK report of `../shared/fixtures/awr`.
pub fn awr_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/awr")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// A Recording of strata-report's fixtures (`docs` in its README).
pub fn recording_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../strata-report/tests/fixtures")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The section `id` of a report's JSON document; panics, showing the
/// document, without one.
pub fn section<'a>(report: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    report["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|section| section["id"] == id)
        .unwrap_or_else(|| panic!("no {id} section in {report}"))
}

/// The first answer of the agent at `url` (a strata agent or node_exporter
/// that is starting), scraping until it answers; panics after 20 s.
pub fn scrape_until_up(url: &str) -> strata_agent::scrape::Scrape {
    let uri = strata_agent::scrape::parse_agent(url).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        match strata_agent::scrape::scrape_blocking(&uri, std::time::Duration::from_secs(5)) {
            Ok(scraped) => return scraped,
            Err(error) if std::time::Instant::now() > deadline => panic!("{url}: {error:#}"),
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(100)),
        }
    }
}

/// A process killed when dropped.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `strata observe --prometheus` on a free port with `more` options, and
/// its URL once it says where it serves.
pub fn strata_agent(more: &[&str], dir: &std::path::Path) -> (Killed, String) {
    let mut args = vec!["observe", "--prometheus", "127.0.0.1:0"];
    args.extend(more);
    let (child, lines) = spawn_with_stderr_lines(&args, dir);
    let child = Killed(child);
    let announced = lines
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the agent says where it serves");
    let address = announced
        .split("http://")
        .nth(1)
        .unwrap_or_else(|| panic!("{announced}"))
        .trim_end_matches("/metrics")
        .to_string();
    (child, format!("http://{address}"))
}

/// The user and password of agents behind Basic auth in the tests, and the
/// password's bcrypt (cost 4) as node_exporter's web-config.yml
/// `basic_auth_users` takes it.
pub const AGENT_USER: &str = "mon";
pub const AGENT_PASSWORD: &str = "agent-SECRET-pw";
pub const AGENT_PASSWORD_BCRYPT: &str =
    "$2b$04$eO5lp1K2J2POxbNxXSk8/.bFUjDS1t3bzhBdsJbUusPqkMFoc6mYS";

/// Everything a command printed, as one text.
pub fn everything(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        stderr_of(output)
    )
}

/// Neither the Recording at `record` nor any report of it (text, JSON,
/// HTML) holds `secret`.
pub fn assert_secret_nowhere_in_recording_or_reports(secret: &str, record: &Path, dir: &Path) {
    let recorded = std::fs::read_to_string(record).unwrap();
    assert!(!recorded.contains(secret), "{recorded}");
    for format in [&[][..], &["--json"], &["--html", "-"]] {
        let mut args = vec!["report", record.to_str().unwrap()];
        args.extend(format);
        let report = run(&args, dir);
        assert!(report.status.success(), "{args:?}: {}", stderr_of(&report));
        assert!(!everything(&report).contains(secret), "{args:?}");
    }
}

pub fn node_exporter() -> (Killed, String) {
    let port = strata_testkit::process::free_port();
    let child = std::process::Command::new("prometheus-node-exporter")
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg("--collector.diskstats.device-exclude=^ram[0-9]+$")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("prometheus-node-exporter: run scripts/install-test-deps");
    (Killed(child), format!("http://127.0.0.1:{port}"))
}

/// The kept cluster of `strata setup --keep`, stopped and removed when
/// dropped.
pub struct KeptCluster {
    pub connection: String,
    stop: String,
}

impl Drop for KeptCluster {
    fn drop(&mut self) {
        let _ = std::process::Command::new("sh")
            .args(["-c", &self.stop])
            .current_dir("/")
            .stdout(std::process::Stdio::null())
            .status();
    }
}

impl KeptCluster {
    /// A cluster `strata setup --keep` made and loaded with `plan`.
    pub fn set_up(plan: &[&str], dir: &Path) -> KeptCluster {
        let mut args = vec!["setup", "--keep"];
        args.extend(plan);
        let setup = run_json(&args, dir);
        KeptCluster {
            connection: setup["kept"]["connection_string"].as_str().unwrap().into(),
            stop: setup["kept"]["how_to_stop"].as_str().unwrap().into(),
        }
    }
}

/// The directory of the first stderr line, `strata: work directory DIR (why)`.
pub fn work_directory_of(stderr: &str) -> std::path::PathBuf {
    let line = stderr
        .lines()
        .find_map(|line| line.strip_prefix("strata: work directory "))
        .unwrap_or_else(|| panic!("no work directory line: {stderr}"));
    std::path::PathBuf::from(line.split(" (").next().unwrap())
}

/// A run's slow reads by its sessions' server processes or threads
/// (`reads`, at least one): nine in ten name one of the run's `sessions`,
/// and nine in ten of those the select that ran from before the read
/// until after it (every statement over the run's floor was kept). A
/// failure says when the reads without a statement ended, beside the
/// window of the run's `result` (its length, its start edge's lateness
/// and its slowest select), so a read outside the window shows as one.
pub fn assert_reads_name_their_session_and_statement(
    reads: &[&serde_json::Value],
    sessions: u64,
    result: &serde_json::Value,
) {
    let named: Vec<&serde_json::Value> = reads
        .iter()
        .copied()
        .filter(|outlier| {
            outlier["session"]
                .as_u64()
                .is_some_and(|index| index < sessions)
        })
        .collect();
    assert!(
        !reads.is_empty() && named.len() * 10 >= reads.len() * 9,
        "{} of {} read outliers name their session: {:?}",
        named.len(),
        reads.len(),
        reads.iter().take(5).collect::<Vec<_>>()
    );
    let mut without_statement = Vec::new();
    for outlier in &named {
        let Some(statement) = outlier.get("statement") else {
            without_statement.push(outlier["ended_s"].as_f64().unwrap());
            continue;
        };
        assert_eq!(statement["session"], outlier["session"], "{outlier}");
        assert_eq!(statement["operation"], "select", "{outlier}");
        let request_ms =
            outlier["queue_ms"].as_f64().unwrap() + outlier["device_ms"].as_f64().unwrap();
        assert!(
            statement["latency_ms"].as_f64().unwrap() >= request_ms,
            "{outlier}"
        );
    }
    assert!(
        without_statement.len() * 10 <= named.len(),
        "{} of {} session read outliers name no statement: they ended {without_statement:?} s \
         after the start edge; the window is {} s, its start edge {} s late, its slowest select \
         {} µs",
        without_statement.len(),
        named.len(),
        result["window_s"],
        result["start_edge_late_s"],
        result["workload"]["operations"]["select"]["lat_max_us"]
    );
}

/// `promtool check metrics` (Prometheus's own linter) finds nothing to say:
/// HELP on every family, `_total` counters, base units in the names.
pub fn assert_promtool_accepts(body: &str) {
    use std::io::Write;
    use std::process::Stdio;
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian's prometheus): run scripts/install-test-deps");
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let checked = promtool.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(
        checked.status.success() && said.trim().is_empty(),
        "promtool: {said}"
    );
}

/// The body of `url`'s `/metrics` (an agent at http://HOST:PORT), as
/// served.
pub fn metrics_body(url: &str) -> String {
    use std::io::{Read, Write};
    let address = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response.split("\r\n\r\n").nth(1).unwrap().to_string()
}
