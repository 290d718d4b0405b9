//! A fleet through a real Prometheus server (Debian's `prometheus`):
//! two strata agents, each named as its own host and watching its own loop
//! device, are scraped once a second; one of them, on a host of its own (a
//! network and PID namespace), also watches that host's PostgreSQL.
//! `strata report --prometheus` over a window gives each host's read
//! requests as the kernel counted them and as a Recording of the same
//! agents (`strata observe --agent`) does, within 2%, and the database
//! host's blocks read as that Recording does.

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use strata_agent::query::{query_range_blocking, Range};
use strata_probe::diskstats::{find, parse_diskstats};
use strata_testkit::host::NamespaceHost;
use strata_testkit::loopdev::LoopDevice;
use strata_testkit::postgres::{debian_bin_dir, HostedPostgres};
use strata_testkit::process::free_port;

/// Prometheus scraping `targets` once a second, with its data in `dir`;
/// its URL once every target is up.
fn prometheus(targets: &[&str], dir: &Path) -> (Killed, String) {
    let listed: Vec<String> = targets.iter().map(|target| format!("'{target}'")).collect();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n\
             scrape_configs:\n  - job_name: strata\n    static_configs:\n      - targets: [{}]\n",
            listed.join(", ")
        ),
    )
    .unwrap();
    let port = free_port();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("tsdb").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
        .spawn()
        .expect("prometheus (Debian's package): run scripts/install-test-deps");
    let server = (Killed(child), format!("http://127.0.0.1:{port}"));
    wait_until_up(&server.1, targets.len(), dir);
    server
}

/// Polls Prometheus's `up` until `targets` targets answer 1 (60 s at most).
fn wait_until_up(url: &str, targets: usize, dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let now = strata_core::time::unix_now_s();
        let range = Range {
            start_unix_s: now - 1.0,
            end_unix_s: now,
            step_s: 1.0,
        };
        let prometheus = strata_agent::query::parse_prometheus(url).unwrap();
        let up = query_range_blocking(&prometheus, "up == 1", range, Duration::from_secs(5))
            .map(|series| series.len())
            .unwrap_or(0);
        if up == targets {
            return;
        }
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default();
            panic!("{up} of {targets} targets up after 60 s; Prometheus said:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn kernel_read_requests(device: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/diskstats").unwrap();
    find(&parse_diskstats(&text).unwrap(), device)
        .unwrap()
        .read_requests
}

/// Reads `count` blocks of `block` bytes of `device` with O_DIRECT; the
/// kernel's count of its read requests meanwhile.
fn read_direct(device: &LoopDevice, block: &str, count: u32) -> u64 {
    let name = device.name();
    let before = kernel_read_requests(&name);
    let status = Command::new("dd")
        .arg(format!("if={}", device.node.display()))
        .args([
            "of=/dev/null",
            &format!("bs={block}"),
            &format!("count={count}"),
        ])
        .arg("iflag=direct")
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "dd of {name}");
    kernel_read_requests(&name) - before
}

/// The read requests of `device` on `host` in a report's hosts section.
fn host_read_requests(report: &serde_json::Value, host: &str, device: &str) -> f64 {
    let section = section(report, "hosts");
    let table = &section["blocks"][0];
    let row = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row[0]["text"] == host && row[1]["text"] == device)
        .unwrap_or_else(|| panic!("no {host} {device} row in {table}"));
    row[3]["value"].as_f64().unwrap()
}

/// The blocks read of `host`'s database in a report's hosts section.
fn host_blocks_read(report: &serde_json::Value, host: &str) -> f64 {
    let section = section(report, "hosts");
    let title = format!("{host}: Reads at each layer");
    let table = section["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|block| {
            block["title"]
                .as_str()
                .is_some_and(|t| t.starts_with(&title))
        })
        .unwrap_or_else(|| panic!("no {title} table in {section}"));
    let row = &table["rows"][0];
    assert!(
        row[1]["text"].as_str().unwrap().starts_with("blocks read"),
        "{table}"
    );
    row[2]["value"].as_f64().unwrap()
}

/// Seq scans of a table larger than a quarter of shared_buffers read
/// through a small ring of buffers: every scan reads its blocks again.
fn read_blocks_in_the_database(url: &str) {
    let psql = debian_bin_dir().join("psql");
    for sql in [
        "CREATE TABLE fleet_scan AS SELECT g, repeat('x', 500) AS pad FROM generate_series(1, 80000) g",
        "SELECT count(*) FROM fleet_scan",
        "SELECT count(*) FROM fleet_scan",
    ] {
        let status = Command::new(&psql)
            .args([url, "-q", "-c", sql])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "psql: {sql}");
    }
}

fn within_2_pct(what: &str, got: f64, expected: f64) {
    assert!(
        (got - expected).abs() <= expected * 0.02,
        "{what}: {got}, expected {expected}"
    );
}

#[test]
fn prometheus_answers_a_fleet_report_as_the_agents_recording_and_the_kernel_do() {
    let dir = scratch();
    let loops = [
        LoopDevice::attach(64 << 20, false, |_| {}),
        LoopDevice::attach(64 << 20, false, |_| {}),
    ];
    let names = [loops[0].name(), loops[1].name()];
    let mut host = NamespaceHost::create(5);
    let server = HostedPostgres::start(&mut host, &debian_bin_dir());
    let alpha_address = format!("{}:9477", host.address);
    let url = server.url();
    let alpha_args = [
        "observe",
        "--prometheus",
        &alpha_address,
        "--host",
        "alpha",
        "--device",
        &names[0],
        "--db",
        &url,
    ];
    let log = std::fs::File::create(dir.path().join("alpha.log")).unwrap();
    let _ = host.spawn(env!("CARGO_BIN_EXE_strata"), &alpha_args, None, log.into());
    let alpha = format!("http://{alpha_address}");
    scrape_until_up(&alpha);
    let (_beta, beta) = strata_agent(&["--host", "beta", "--device", &names[1]], dir.path());
    let targets: Vec<&str> = [&alpha, &beta]
        .iter()
        .map(|url| url.trim_start_matches("http://"))
        .collect();
    let (_prometheus, prometheus_url) = prometheus(&targets, dir.path());
    let recording = dir.path().join("fleet.strata");
    let recorder = strata()
        .args([
            "observe",
            "--interval",
            "1s",
            "--agent",
            &alpha,
            "--agent",
            &beta,
        ])
        .arg("--record")
        .arg(&recording)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let recorder = Killed(recorder);
    std::thread::sleep(Duration::from_secs(2));
    let from = strata_core::time::unix_now_s();
    std::thread::sleep(Duration::from_millis(1500));
    let kernel = [
        read_direct(&loops[0], "4k", 4000) as f64,
        read_direct(&loops[1], "8k", 2500) as f64,
    ];
    read_blocks_in_the_database(&url);
    std::thread::sleep(Duration::from_millis(2500));
    let to = strata_core::time::unix_now_s();
    std::thread::sleep(Duration::from_secs(3));
    unsafe { libc::kill(recorder.0.id() as i32, libc::SIGINT) };
    drop(recorder);

    let fleet = run_json(
        &[
            "report",
            "--prometheus",
            &prometheus_url,
            "--from",
            &format!("{from:.3}"),
            "--to",
            &format!("{to:.3}"),
        ],
        dir.path(),
    );
    let recorded = run_json(&["report", recording.to_str().unwrap()], dir.path());
    for ((host, device), kernel) in ["alpha", "beta"].iter().zip(&names).zip(kernel) {
        assert!(kernel >= 2500.0, "{device}: the kernel counted {kernel}");
        let from_prometheus = host_read_requests(&fleet, host, device);
        let from_recording = host_read_requests(&recorded, host, device);
        eprintln!(
            "{host} {device}: kernel {kernel}, Prometheus {from_prometheus}, \
             Recording {from_recording} read requests"
        );
        within_2_pct(&format!("{host} via Prometheus"), from_prometheus, kernel);
        within_2_pct(
            &format!("{host} via Prometheus against the Recording"),
            from_prometheus,
            from_recording,
        );
    }
    let blocks = host_blocks_read(&fleet, "alpha");
    let recorded_blocks = host_blocks_read(&recorded, "alpha");
    eprintln!("alpha's database: Prometheus {blocks}, Recording {recorded_blocks} blocks read");
    assert!(
        blocks >= 5000.0,
        "two scans of 5,000 blocks: {blocks} blocks read"
    );
    within_2_pct("alpha's blocks read", blocks, recorded_blocks);
    let about = fleet["about"].to_string();
    assert!(
        about.contains("Prometheus") && about.contains("alpha (strata"),
        "{about}"
    );
}
