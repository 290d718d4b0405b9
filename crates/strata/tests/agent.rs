//! Scraping agents: a strata agent (`strata observe --prometheus`) and
//! node_exporter, on this machine, give a loop device's read requests and
//! bytes over an interval as the kernel's `/proc/diskstats` counts them
//! (within 1%), and their clocks as this machine's (within 10 ms).

mod common;

use common::*;
use std::process::{Command, Stdio};
use strata_agent::host::HostCounters;
use strata_agent::scrape::Scrape;
use strata_probe::diskstats::{find, parse_diskstats, DiskStat};
use strata_testkit::loopdev::LoopDevice;

fn kernel(device: &str) -> DiskStat {
    let text = std::fs::read_to_string("/proc/diskstats").unwrap();
    find(&parse_diskstats(&text).unwrap(), device)
        .unwrap()
        .clone()
}

fn disk(scraped: &Scrape, device: &str) -> DiskStat {
    let counters = HostCounters::of(scraped, "127.0.0.1").expect("an agent's counters");
    counters
        .disks
        .into_iter()
        .find(|disk| disk.name == device)
        .unwrap_or_else(|| panic!("{} has no {device}", scraped.url))
}

fn within_1_pct(what: &str, got: u64, kernel: u64) {
    let apart = got.abs_diff(kernel) as f64;
    assert!(
        apart <= kernel as f64 * 0.01,
        "{what}: {got}, the kernel counted {kernel}"
    );
}

#[test]
fn agents_count_a_device_s_reads_as_the_kernel_does_on_this_machine_s_clock() {
    let dir = scratch();
    let device = LoopDevice::attach(64 << 20, false, |_| {});
    let name = device.name();
    let (_agent, agent_url) = strata_agent(&["--device", &name], dir.path());
    let (_node, node_url) = node_exporter();
    let urls = [agent_url, node_url];
    let before: Vec<Scrape> = urls.iter().map(|url| scrape_until_up(url)).collect();
    let kernel_before = kernel(&name);
    let read = Command::new("dd")
        .arg(format!("if={}", device.node.display()))
        .args(["of=/dev/null", "bs=4k", "count=4000", "iflag=direct"])
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(read.success());
    let kernel_after = kernel(&name);
    let after: Vec<Scrape> = urls.iter().map(|url| scrape_until_up(url)).collect();
    let requests = kernel_after.read_requests - kernel_before.read_requests;
    let sectors = kernel_after.read_sectors - kernel_before.read_sectors;
    assert!(
        requests >= 4000,
        "the kernel counted {requests} read requests"
    );
    for (before, after) in before.iter().zip(&after) {
        let (start, end) = (disk(before, &name), disk(after, &name));
        within_1_pct(
            &after.url,
            end.read_requests - start.read_requests,
            requests,
        );
        within_1_pct(&after.url, end.read_sectors - start.read_sectors, sectors);
        let offset_s = after.clock_offset_s().expect("the agent's clock");
        eprintln!(
            "{}: {} read requests, {} sectors (kernel {requests}, {sectors}); offset {:.3} ms, round trip {:.3} ms",
            after.url,
            end.read_requests - start.read_requests,
            end.read_sectors - start.read_sectors,
            offset_s * 1e3,
            after.round_trip_s() * 1e3
        );
        assert!(
            offset_s.abs() < 0.010,
            "{}: clock offset {offset_s} s on one machine",
            after.url
        );
    }
}

/// `strata observe --agent URL` shows another host's devices and CPU beside
/// this machine's, as `device@HOST` and `cpu@HOST`, in the text view and
/// the JSON stream, and the hosts' total counts this host once.
#[test]
fn observe_follows_an_agent_beside_this_machine() {
    let dir = scratch();
    let (_node, node_url) = node_exporter();
    scrape_until_up(&node_url);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let host = host.trim();
    let args = [
        "observe",
        "--count",
        "2",
        "--interval",
        "300ms",
        "--all",
        "--agent",
        &node_url,
    ];
    let shown = run(&args, dir.path());
    assert!(shown.status.success(), "{}", stderr_of(&shown));
    let text = String::from_utf8_lossy(&shown.stdout);
    for layer in [format!("device@{host}"), format!("cpu@{host}")] {
        assert!(text.contains(&layer), "no {layer} in\n{text}");
    }
    assert!(
        text.contains("device@all") && text.contains("again, not added"),
        "this machine's node_exporter is this host again: not added to the hosts' total\n{text}"
    );
    let mut json = args.to_vec();
    json.extend(["--format", "json"]);
    let lines = run(&json, dir.path());
    let stream = String::from_utf8_lossy(&lines.stdout);
    let last: serde_json::Value = serde_json::from_str(stream.lines().last().unwrap()).unwrap();
    assert!(
        last.to_string().contains(&format!("device@{host}")),
        "{last}"
    );
}

/// Debian's libfaketime for programs with threads, preloaded into the
/// agent itself (the `faketime` wrapper would leave it running when killed).
fn libfaketime() -> std::path::PathBuf {
    std::fs::read_dir("/usr/lib")
        .unwrap()
        .filter_map(|entry| Some(entry.ok()?.path().join("faketime/libfaketimeMT.so.1")))
        .find(|library| library.is_file())
        .expect("libfaketime (Debian's faketime): run scripts/install-test-deps")
}

/// An agent whose clock runs 2.5 s ahead (libfaketime shifts what the
/// agent's clock reads): its offset is measured within 10 ms of that.
#[test]
fn a_shifted_agent_clock_is_measured_within_10_ms() {
    let dir = scratch();
    let mut agent = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["observe", "--prometheus", "127.0.0.1:0", "--interval", "1s"])
        .env("LD_PRELOAD", libfaketime())
        .env("FAKETIME", "+2.5s")
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = agent.stderr.take().unwrap();
    let agent = Killed(agent);
    let announced = std::io::BufRead::lines(std::io::BufReader::new(stderr))
        .map_while(Result::ok)
        .find(|line| line.contains("/metrics"))
        .expect("the agent says where it serves");
    let url = announced
        .split("http://")
        .nth(1)
        .unwrap()
        .trim_end_matches("/metrics");
    let scraped = scrape_until_up(&format!("http://{url}"));
    let offset_s = scraped.clock_offset_s().unwrap();
    assert!(
        (offset_s - 2.5).abs() < 0.010,
        "measured {offset_s} s for a clock 2.5 s ahead (round trip {} s)",
        scraped.round_trip_s()
    );
    drop(agent);
}

/// A MariaDB run with `--agent`, against a MariaDB on another host (a
/// network and PID namespace) whose node_exporter is the agent: the
/// devices and CPU of the window are the agent's, named with the host and
/// the agent's clock. The same `--agent` with strata's own throwaway
/// server, on this machine, is refused before any work.
#[test]
fn a_mariadb_run_through_an_agent_accounts_its_devices() {
    let dir = scratch();
    let mut host = strata_testkit::host::NamespaceHost::create(1);
    let server = strata_testkit::mariadb::HostedMariaDb::start(&mut host);
    let listen = format!("{}:9100", host.address);
    let node_args = [format!("--web.listen-address={listen}")];
    let node_args: Vec<&str> = node_args.iter().map(String::as_str).collect();
    let log = std::fs::File::create(dir.path().join("node.log")).unwrap();
    let _ = host.spawn("prometheus-node-exporter", &node_args, None, log.into());
    let node_url = format!("http://{listen}");
    scrape_until_up(&node_url);
    let url = server.url("strata_slob");
    let plan = ["--engine", "mariadb", "--schemas", "1", "--scale", "2048"];
    let window = [
        "--duration",
        "1s",
        "--warmup",
        "200ms",
        "--agent",
        &node_url,
    ];
    let mut args = vec!["run", "--db", url.as_str()];
    args.extend(plan);
    args.extend(window);
    let document = run_json(&args, dir.path());
    let environment = &document["environment"];
    let server_host = &environment["server_host"];
    assert_eq!(server_host["agent_kind"], "node_exporter", "{environment}");
    assert_eq!(server_host["agent"], format!("{node_url}/metrics"));
    let data = environment["devices"]["data"].as_array().unwrap();
    assert!(!data.is_empty(), "{environment}");
    let devices = document["result"]["devices"].as_array().unwrap();
    assert_eq!(devices[0]["device"], data[0], "{devices:?}");
    let note = environment["device_note"].as_str().unwrap();
    assert!(note.contains("is observed through its agent"), "{note}");

    let mut throwaway = vec!["run"];
    throwaway.extend(plan);
    throwaway.extend(window);
    let refused = run(&throwaway, dir.path());
    let said = everything(&refused);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains("--agent http://")
            && said.contains("throwaway MariaDB server runs on this machine"),
        "{said}"
    );
    assert_nothing_left_behind(dir.path());
}
