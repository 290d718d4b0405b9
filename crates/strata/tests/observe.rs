//! `strata observe` end to end: real /proc and /sys, a loop device for the
//! I/O it must see, the Prometheus endpoint read by Python's own parser, and
//! record-then-replay.

mod common;

use common::*;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;
use strata_testkit::loopdev::own_filesystem;

fn observe_output(args: &[&str], dir: &std::path::Path) -> String {
    let output = run(args, dir);
    assert!(
        output.status.success(),
        "strata {args:?}: {}",
        stderr_of(&output)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn record_then_replay_prints_the_same_lines() {
    let dir = scratch();
    let record = dir.path().join("observe.strata");
    let live = observe_output(
        &[
            "observe",
            "--interval",
            "200ms",
            "--count",
            "3",
            "--all",
            "--record",
            record.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(live.contains(" device "), "{live}");
    assert!(live.contains(" cpu "), "{live}");
    assert!(
        live.contains("%util") && live.contains("r_await"),
        "iostat's columns: {live}"
    );
    let replayed = observe_output(
        &["observe", "--replay", record.to_str().unwrap(), "--all"],
        dir.path(),
    );
    assert_eq!(live, replayed);
    let recording = strata_recording::Recording::read(&record).unwrap();
    assert_eq!(recording.header.kind, strata_recording::Kind::Observe);
    assert!(recording.layers().any(|sample| matches!(
        sample.layers.get("nfs"),
        Some(strata_recording::layers::LayerSample::Absent { .. })
    )));
}

#[test]
fn direct_io_moves_the_right_device() {
    let (device, mount_point) = own_filesystem(256);
    let record = mount_point.join("observe.strata");
    let observer = strata()
        .args(["observe", "--interval", "500ms", "--count", "6", "--path"])
        .arg(&mount_point)
        .arg("--record")
        .arg(&record)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let load = run(
        &[
            "calibrate",
            "--size",
            "64MiB",
            "--workload",
            "random-write",
            "--ios",
            "4000",
            "--qd",
            "8",
        ],
        &mount_point,
    );
    assert!(load.status.success(), "{}", stderr_of(&load));
    let status = observer.wait_with_output().unwrap();
    assert!(status.status.success());
    let name = device.name();
    let recording = strata_recording::Recording::read(&record).unwrap();
    let written: f64 = recording
        .layers()
        .filter_map(|sample| sample.values("device"))
        .flat_map(|(_, rates)| rates.iter())
        .filter(|(key, _)| {
            key.starts_with("write_requests{") && key.contains(&format!("device={name}"))
        })
        .map(|(_, rate)| rate * 0.5)
        .sum();
    assert!(
        written >= 4000.0 * 0.9,
        "the loop device's write requests seen by observe: {written}"
    );
    let other_devices = recording
        .layers()
        .filter_map(|sample| sample.values("device"))
        .flat_map(|(metrics, _)| metrics.iter())
        .any(|metric| metric.labels.get("device").map(String::as_str) == Some("vda"));
    assert!(!other_devices, "--path selects only the devices under it");
}

#[test]
fn prometheus_endpoint_serves_text_that_prometheus_parses() {
    let dir = scratch();
    let mut observer = strata()
        .args([
            "observe",
            "--interval",
            "200ms",
            "--count",
            "20",
            "--prometheus",
            "127.0.0.1:0",
            "--db",
            "host=/var/run/postgresql dbname=postgres user=postgres",
            "--mariadb",
            "mysql://root@127.0.0.1:3306/test",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = observer.stderr.take().unwrap();
    let mut announced = String::new();
    let mut byte = [0u8; 1];
    while !announced.contains("/metrics") {
        assert_eq!(
            stderr.read(&mut byte).unwrap(),
            1,
            "observe ended early: {announced}"
        );
        announced.push(byte[0] as char);
    }
    let address = announced
        .split("http://")
        .nth(1)
        .unwrap()
        .trim_end_matches("/metrics")
        .to_string();
    // Requests for the block tracer to count: 64 writes and reads that
    // reach the device.
    direct_io_requests(&dir.path().join("traced.dat"), 64);
    std::thread::sleep(Duration::from_millis(600));
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let body = response.split("\r\n\r\n").nth(1).unwrap().to_string();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    for family in [
        "strata_device_read_requests_total{host=",
        "strata_device_read_seconds_total{host=",
        "strata_cpu_user_seconds_total{host=",
        "strata_postgres_database_blks_read_total{host=",
        "strata_process_run_delay_seconds_total{host=",
        "strata_mariadb_innodb_data_reads_total{host=",
        "strata_agent_answered_seconds{host=",
        "strata_blocktrace_requests_total{host=",
        "strata_block_request_device_seconds_bucket{host=",
        "strata_block_request_queue_seconds_count{host=",
        "strata_block_request_size_bytes_bucket{host=",
    ] {
        assert!(body.contains(family), "no {family} in\n{body}");
    }
    assert_promtool_accepts(&body);
    assert_the_dashboard_draws_what_agents_serve(&body);
    let parser = Command::new("python3")
        .args([
            "-c",
            "import sys\nfrom prometheus_client.parser import text_string_to_metric_families as parse\n\
             families = list(parse(sys.stdin.read()))\nprint(len(families))\n\
             assert any(f.name == 'strata_device_read_requests' and f.type == 'counter' for f in families), [f.name for f in families]",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    parser
        .stdin
        .as_ref()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let parsed = parser.wait_with_output().unwrap();
    let _ = observer.kill();
    let _ = observer.wait();
    assert!(
        parsed.status.success(),
        "prometheus_client refused it: {}",
        String::from_utf8_lossy(&parsed.stderr)
    );
}

/// `count` 4 KiB writes then reads of a new file with O_DIRECT, synced:
/// each one a block request.
fn direct_io_requests(path: &std::path::Path, count: u64) {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .unwrap();
    let layout = std::alloc::Layout::from_size_align(4096, 4096).unwrap();
    let buffer = unsafe { std::slice::from_raw_parts_mut(std::alloc::alloc_zeroed(layout), 4096) };
    for block in 0..count {
        file.write_all_at(buffer, block * 4096).unwrap();
    }
    file.sync_all().unwrap();
    for block in 0..count {
        file.read_exact_at(buffer, block * 4096).unwrap();
    }
    unsafe { std::alloc::dealloc(buffer.as_mut_ptr(), layout) };
}

/// Every strata family the Grafana dashboard in deploy/ queries is one an
/// agent serves.
fn assert_the_dashboard_draws_what_agents_serve(body: &str) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/grafana/strata-fleet.json"
    );
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut queried = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            for part in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if part.starts_with("strata_") {
                    queried.push(part.to_string());
                }
            }
        }
    }
    assert!(queried.len() >= 10, "{queried:?}");
    for family in queried {
        assert!(
            body.contains(&format!("\n{family}{{")),
            "the dashboard queries {family}, which no agent serves"
        );
    }
}

#[test]
fn the_shipped_prometheus_config_is_valid() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/prometheus/prometheus.yml"
    );
    let checked = Command::new("promtool")
        .args(["check", "config", path])
        .output()
        .expect("promtool (Debian's prometheus): run scripts/install-test-deps");
    assert!(
        checked.status.success(),
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}

#[test]
fn a_taken_port_is_a_clear_error() {
    let dir = scratch();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let output = run(
        &["observe", "--count", "1", "--prometheus", &address],
        dir.path(),
    );
    assert!(!output.status.success());
    assert!(
        stderr_of(&output).contains("--prometheus") && stderr_of(&output).contains("port"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn bad_input_is_refused_by_name() {
    let dir = scratch();
    for (args, expected) in [
        (vec!["observe", "--interval", "50ms"], "--interval"),
        (vec!["observe", "--count", "-1"], "--count"),
        (vec!["observe", "--device", "nosuchdisk0"], "vda"),
        (
            vec![
                "observe",
                "--count",
                "1",
                "--record",
                "missing/dir/o.strata",
            ],
            "creating recording missing/dir/o.strata: its directory does not exist",
        ),
        (
            vec![
                "observe",
                "--count",
                "1",
                "--agent",
                "http://127.0.0.1:1",
                "--record",
                "missing/dir/o.strata",
            ],
            "--record: creating recording missing/dir/o.strata: its directory does not exist",
        ),
    ] {
        let output = run(&args, dir.path());
        assert!(!output.status.success(), "{args:?}");
        assert!(
            stderr_of(&output).contains(expected),
            "{args:?}: {}",
            stderr_of(&output)
        );
    }
    assert!(
        !dir.path().join("missing").exists(),
        "observe --record made a directory"
    );
}

#[test]
fn truncated_and_newer_replays_name_the_line() {
    let dir = scratch();
    let record = dir.path().join("o.strata");
    observe_output(
        &[
            "observe",
            "--interval",
            "100ms",
            "--count",
            "1",
            "--record",
            record.to_str().unwrap(),
        ],
        dir.path(),
    );
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(&record, &text[..text.len() - 20]).unwrap();
    let output = run(
        &["observe", "--replay", record.to_str().unwrap()],
        dir.path(),
    );
    assert!(output.status.success(), "{}", stderr_of(&output));
    let lines = text.lines().count();
    let named = format!("line {lines} of {} ends mid-record", record.display());
    assert!(
        stderr_of(&output).contains(&named),
        "{}",
        stderr_of(&output)
    );
    let mut cut = text.clone();
    cut.insert_str(text.find('\n').unwrap() + 1, "{\"type\":\"lay\n");
    std::fs::write(&record, cut).unwrap();
    let output = run(
        &["observe", "--replay", record.to_str().unwrap()],
        dir.path(),
    );
    assert!(!output.status.success());
    assert!(
        stderr_of(&output).contains("line 2: not a complete record"),
        "{}",
        stderr_of(&output)
    );
    let newer = text.replacen("\"version\":2", "\"version\":9", 1);
    std::fs::write(&record, newer).unwrap();
    let output = run(
        &["observe", "--replay", record.to_str().unwrap()],
        dir.path(),
    );
    assert!(
        stderr_of(&output).contains("version 9") && stderr_of(&output).contains("line 1"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn database_layers_show_postgresql_waits_and_mariadb_counters() {
    let dir = scratch();
    let setup = run_json(
        &[
            "setup",
            "--schemas",
            "1",
            "--scale",
            "4MiB",
            "--shared-buffers",
            "16MiB",
            "--keep",
        ],
        dir.path(),
    );
    let connection = setup["kept"]["connection_string"]
        .as_str()
        .unwrap()
        .to_string();
    let stop = setup["kept"]["how_to_stop"].as_str().unwrap().to_string();
    let sleeper = Command::new("psql")
        .args([&connection, "-c", "SELECT pg_sleep(3)"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let output = run(
        &[
            "observe",
            "--interval",
            "1s",
            "--count",
            "2",
            "--all",
            "--db",
            &connection,
            "--mariadb",
            "mysql://root@127.0.0.1:3306/test",
        ],
        dir.path(),
    );
    let _ = sleeper.wait_with_output();
    let stopped = Command::new("sh").args(["-c", &stop]).output().unwrap();
    assert!(
        stopped.status.success(),
        "{}",
        String::from_utf8_lossy(&stopped.stderr)
    );
    assert!(output.status.success(), "{}", stderr_of(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("blks_read/s"), "{text}");
    assert!(
        text.contains("wait Timeout:PgSleep"),
        "the 10 Hz sampler saw the sleeping session: {text}"
    );
    assert!(
        text.contains(" mariadb ") && text.contains("data reads/s"),
        "{text}"
    );
}

/// `--db` takes a MariaDB URL as `strata run --db` does, and observes the
/// server as `--mariadb` does; both naming a MariaDB server is refused,
/// naming the two options.
#[test]
fn observe_db_takes_a_mariadb_url_as_run_does() {
    let dir = scratch();
    let url = "mysql://root@127.0.0.1:3306/test";
    let args = [
        "observe",
        "--interval",
        "1s",
        "--count",
        "1",
        "--all",
        "--db",
        url,
    ];
    let output = run(&args, dir.path());
    assert!(output.status.success(), "{}", stderr_of(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(" mariadb ") && text.contains("data reads/s"),
        "{text}"
    );
    let both = run(&[&args[..], &["--mariadb", url]].concat(), dir.path());
    assert!(!both.status.success());
    let error = stderr_of(&both);
    assert!(
        error.contains("--db") && error.contains("--mariadb"),
        "{error}"
    );
}

/// dd's own last line: `N bytes (…) copied, S s, R MB/s`.
fn dd_report(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    text.lines().last().unwrap_or_default().to_string()
}

/// Read MB/s of each `top` row of `pid` in observe's piped text
/// (`HH:MM:SS top PID READ WRITE …`).
/// The process's rows in the top sections: (read MB/s from /proc/PID/io,
/// block read requests/s traced).
fn top_reads(text: &str, pid: u32) -> Vec<(f64, f64)> {
    text.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|fields| fields.get(1) == Some(&"top") && fields.get(2) == Some(&&*pid.to_string()))
        .map(|fields| {
            let number = |at: usize| fields[at].parse().unwrap_or(f64::NAN);
            (number(3), number(7))
        })
        .collect()
}

#[test]
fn top_names_a_reader_started_after_observe_with_its_device_reads() {
    let dir = scratch();
    let file = dir.path().join("read-me");
    let written = Command::new("dd")
        .args([
            "if=/dev/zero",
            "bs=1M",
            "count=256",
            "oflag=direct",
            "status=none",
        ])
        .arg(format!("of={}", file.display()))
        .status()
        .unwrap();
    assert!(written.success());
    let observer = strata()
        .args(["observe", "--top", "5", "--count", "3", "--interval", "1s"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    // 4 KiB O_DIRECT reads: every byte from the device, slowly enough to
    // outlast a 1 s interval.
    let started = std::time::Instant::now();
    let reader = Command::new("dd")
        .arg(format!("if={}", file.display()))
        .args(["of=/dev/null", "bs=4k", "iflag=direct"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let dd_pid = reader.id();
    let observed = observer.wait_with_output().unwrap();
    let dd = reader.wait_with_output().unwrap();
    let dd_seconds = started.elapsed().as_secs_f64();
    assert!(observed.status.success(), "{}", stderr_of(&observed));
    assert!(dd.status.success(), "{}", dd_report(&dd.stderr));
    let text = String::from_utf8(observed.stdout).unwrap();
    let reads = top_reads(&text, dd_pid);
    eprintln!(
        "observe saw dd read (MB/s, traced requests/s) {reads:?}; dd: {}",
        dd_report(&dd.stderr)
    );
    assert!(
        dd_seconds > 1.0,
        "dd ended in {dd_seconds:.2} s, too fast to straddle a scan of /proc"
    );
    assert!(
        reads.iter().any(|(mb_per_s, _)| *mb_per_s > 0.0),
        "dd (pid {dd_pid}) with read MB/s > 0 among the top 5: {text}"
    );
    // Its 4 KiB reads, one request each, traced under its PID: the
    // requests per second are its bytes' over 4 KiB (the trace and /proc
    // read a moment apart).
    assert!(
        reads.iter().any(|(mb_per_s, requests_per_s)| {
            let from_bytes = mb_per_s * 1e6 / 4096.0;
            *requests_per_s > 0.0 && (requests_per_s - from_bytes).abs() <= from_bytes * 0.15
        }),
        "dd (pid {dd_pid})'s traced reads per second against its bytes' over 4 KiB: {text}"
    );
    assert!(text.contains("read MB/s") && text.contains("syscalls/s") && text.contains("% CPU"));
    assert!(
        text.contains("blk rd/s") && text.contains("D2C ms"),
        "{text}"
    );
}

#[test]
fn top_is_recorded_and_replayed_as_the_same_json_lines() {
    let dir = scratch();
    let record = dir.path().join("top.strata");
    let live = observe_output(
        &[
            "observe",
            "--top",
            "3",
            "--count",
            "2",
            "--interval",
            "300ms",
            "--json",
            "--record",
            record.to_str().unwrap(),
        ],
        dir.path(),
    );
    let replayed = observe_output(
        &["observe", "--replay", record.to_str().unwrap(), "--json"],
        dir.path(),
    );
    assert_eq!(live, replayed);
    let lines: Vec<serde_json::Value> = live
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{live}");
    for line in &lines {
        let processes = line["top"]["processes"].as_array().unwrap();
        assert!(!processes.is_empty() && processes.len() <= 3, "{line}");
        assert_eq!(line["top"]["t_s"], line["t_s"]);
    }
    let recording = std::fs::read_to_string(&record).unwrap();
    assert_eq!(
        recording
            .lines()
            .filter(|l| l.starts_with("{\"type\":\"top\""))
            .count(),
        2,
        "one top record per interval"
    );
}
