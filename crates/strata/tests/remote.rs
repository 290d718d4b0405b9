//! `strata run` against a server on another host (a namespace host whose
//! data directory's path exists here too): the run completes with the
//! workload and the database's own figures, and says plainly that the
//! server's host is not observed, with no device of this machine in its
//! figures.

mod common;

use common::*;
use strata_testkit::host::NamespaceHost;
use strata_testkit::mariadb::HostedMariaDb;
use strata_testkit::postgres::{debian_bin_dir, HostedPostgres};

#[test]
fn a_run_against_a_server_on_another_host_says_its_host_is_not_observed() {
    let dir = scratch();
    let mut host = NamespaceHost::create(1);
    let server = HostedPostgres::start(&mut host, &debian_bin_dir());
    let url = server.url();
    let plan = ["--schemas", "1", "--scale", "4MiB"];
    let mut setup = vec!["setup", "--db", url.as_str()];
    setup.extend(plan);
    run_json(&setup, dir.path());
    let mut args = vec![
        "run",
        "--db",
        url.as_str(),
        "--duration",
        "2s",
        "--warmup",
        "0s",
    ];
    args.extend(plan);
    let document = run_not_observed(&args, "the server's host is not observed (", dir.path());
    let environment = &document["environment"];
    assert_eq!(
        environment["page_cache"]["method"], "other_host",
        "this machine's page cache is not the server's: nothing dropped here"
    );
    assert_eq!(document["result"]["devices"], serde_json::json!([]));
    assert!(document["result"]["workload"]["loops"].as_u64().unwrap() > 0);
    assert!(document["result"]["database"]["blocks_read"]
        .as_f64()
        .is_some());

    let record = dir.path().join("unobserved.strata");
    let mut text_args = args.clone();
    text_args.extend(["--record", record.to_str().unwrap()]);
    let text = run(&text_args, dir.path());
    assert!(text.status.success(), "{}", stderr_of(&text));
    let shown = String::from_utf8_lossy(&text.stdout);
    assert!(
        shown.contains("the server's host is not observed"),
        "{shown}"
    );
    assert!(
        !shown.contains("absorbed") && !shown.contains("served 0 requests"),
        "{shown}"
    );
    let report = run(&["report", record.to_str().unwrap()], dir.path());
    let reported = everything(&report);
    assert!(report.status.success(), "{reported}");
    assert!(
        reported.contains("neither limited nor dropped from here")
            && !reported.contains("other_host"),
        "the page cache in words: {reported}"
    );
}

/// The same for MariaDB: a server on another host answering over TCP,
/// whose data directory and pid file paths exist here too, is not taken
/// for this machine's.
#[test]
fn a_mariadb_run_against_a_server_on_another_host_says_its_host_is_not_observed() {
    let dir = scratch();
    let mut host = NamespaceHost::create(4);
    let server = HostedMariaDb::start(&mut host);
    let url = server.url("strata_slob");
    let plan = ["--schemas", "1", "--scale", "4MiB"];
    let mut args = vec!["run", "--engine", "mariadb", "--db", url.as_str()];
    args.extend(["--duration", "2s", "--warmup", "0s"]);
    args.extend(plan);
    let document = run_not_observed(&args, "the server's host is not observed (pid ", dir.path());
    assert_eq!(document["result"]["devices"], serde_json::json!([]));
    assert!(document["result"]["workload"]["loops"].as_u64().unwrap() > 0);
}

/// A run's document, once it says its server's host is not observed (the
/// note starting `note_start`) and has no data device of this machine.
fn run_not_observed(args: &[&str], note_start: &str, dir: &std::path::Path) -> serde_json::Value {
    let document = run_json(args, dir);
    assert_matches_the_run_schema(&document);
    let environment = &document["environment"];
    let note = environment["device_note"].as_str().unwrap_or_default();
    assert!(
        note.starts_with(note_start) && note.contains("pass --agent http://HOST:PORT"),
        "{note}"
    );
    assert_eq!(environment["devices"]["data"], serde_json::json!([]));
    let result = &document["result"];
    assert!(
        result["absorption"].is_null(),
        "no page cache figure: {result}"
    );
    let reasons = result["verdict"]["reasons"].as_array().unwrap();
    let codes: Vec<&str> = reasons
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes
            .iter()
            .filter(|code| **code == "devices_not_observed")
            .count(),
        1,
        "{codes:?}"
    );
    assert!(
        !codes.contains(&"too_few_device_requests")
            && !codes.contains(&"page_cache_absorbed_reads"),
        "nothing claimed of a host not observed: {codes:?}"
    );
    document
}

/// The server's host observed through an agent there — a strata agent
/// (`strata observe --prometheus ADDR --path DATA_DIR`) and node_exporter,
/// both in the host's namespaces: the run's device table is the agent's
/// devices, the note names the host and the agent's clock offset, and the
/// Recording's device layer comes from the agent each second. A second
/// `--agent` (another strata agent, naming itself `nfs1`) is another host:
/// named in the environment, recorded as `device@nfs1`, reported per host.
#[test]
fn a_run_through_the_server_host_s_agent_accounts_its_devices() {
    let dir = scratch();
    let mut host = NamespaceHost::create(2);
    let server = HostedPostgres::start(&mut host, &debian_bin_dir());
    let strata_agent = format!("{}:9477", host.address);
    let node_exporter = format!("{}:9100", host.address);
    let data = server.data_dir.to_str().unwrap().to_string();
    let log = || {
        std::fs::File::create(dir.path().join("agent.log"))
            .unwrap()
            .into()
    };
    let agent_args = ["observe", "--prometheus", &strata_agent, "--path", &data];
    let _ = host.spawn(env!("CARGO_BIN_EXE_strata"), &agent_args, None, log());
    let other_agent = format!("{}:9478", host.address);
    let other_args = [
        "observe",
        "--prometheus",
        &other_agent,
        "--host",
        "nfs1",
        "--path",
        &data,
    ];
    let _ = host.spawn(env!("CARGO_BIN_EXE_strata"), &other_args, None, log());
    let other_agent = format!("http://{other_agent}");
    scrape_until_up(&other_agent);
    let web_config = dir.path().join("web.yml");
    let users = format!("basic_auth_users:\n  {AGENT_USER}: {AGENT_PASSWORD_BCRYPT}\n");
    std::fs::write(&web_config, users).unwrap();
    let node_args = [
        format!("--web.listen-address={node_exporter}"),
        format!("--web.config.file={}", web_config.display()),
    ];
    let node_args: Vec<&str> = node_args.iter().map(String::as_str).collect();
    let _ = host.spawn("prometheus-node-exporter", &node_args, None, log());
    let url = server.url();
    let plan = ["--schemas", "1", "--scale", "4MiB"];
    let mut setup = vec!["setup", "--db", url.as_str()];
    setup.extend(plan);
    run_json(&setup, dir.path());
    let behind_basic_auth = format!("{AGENT_USER}:{AGENT_PASSWORD}@{node_exporter}");
    for (agent, others) in [
        (strata_agent, vec![other_agent.as_str()]),
        (behind_basic_auth, vec![]),
    ] {
        let agent = format!("http://{agent}");
        scrape_until_up(&agent);
        run_through(&agent, &others, &url, &plan, dir.path());
    }
}

/// A run through `agent` (its password, if any, given in the URL), and
/// `others` beside it.
fn run_through(agent: &str, others: &[&str], url: &str, plan: &[&str], dir: &std::path::Path) {
    let record = dir.join("remote.strata");
    let _ = std::fs::remove_file(&record);
    let mut args = vec!["run", "--db", url, "--agent", agent];
    for other in others {
        args.extend(["--agent", other]);
    }
    args.extend(["--duration", "3s", "--warmup", "1s", "--record"]);
    args.push(record.to_str().unwrap());
    args.push("--overwrite");
    args.extend(plan);
    let writing = KeepDoing::writing(&dir.join("writes.dat"));
    let text = run(&args, dir);
    assert!(text.status.success(), "{}", everything(&text));
    assert!(
        !everything(&text).contains(AGENT_PASSWORD),
        "{}",
        everything(&text)
    );
    let agent = &agent.replace(AGENT_PASSWORD, "***");
    let document = run_json(&args, dir);
    drop(writing);
    assert!(!document.to_string().contains(AGENT_PASSWORD), "{document}");
    assert_secret_nowhere_in_recording_or_reports(AGENT_PASSWORD, &record, dir);
    assert_matches_the_run_schema(&document);
    let environment = &document["environment"];
    let note = environment["device_note"].as_str().unwrap();
    assert!(
        note.contains(&format!("is observed through its agent {agent}/metrics"))
            && note.contains("clock offset"),
        "{note}"
    );
    let data_devices = environment["devices"]["data"].as_array().unwrap();
    assert!(!data_devices.is_empty(), "{agent}: {environment}");
    let server_host = &environment["server_host"];
    assert_eq!(server_host["agent"], format!("{agent}/metrics"));
    let offset_ms = server_host["clock_offset_ms"].as_f64().unwrap();
    assert!(offset_ms.abs() < 10.0, "one machine's clock: {server_host}");
    assert!(
        ["strata", "node_exporter"].contains(&server_host["agent_kind"].as_str().unwrap()),
        "{server_host}"
    );
    let device = data_devices[0].as_str().unwrap();
    let devices = document["result"]["devices"].as_array().unwrap();
    assert_eq!(devices.len(), data_devices.len(), "{devices:?}");
    assert_eq!(devices[0]["device"], device);
    assert!(document["result"]["absorption"].is_object());
    traced_by_the_agent(
        &document["result"]["block_trace"],
        &server_host["agent_kind"],
    );
    let recording = strata_recording::Recording::read(&record).unwrap();
    let sampled = recording
        .layers()
        .filter_map(|sample| sample.values("device"))
        .filter(|(metrics, _)| {
            let this = |metric: &&strata_core::metrics::Metric| {
                metric.labels.get("device").map(String::as_str) == Some(device)
            };
            metrics.iter().any(|metric| this(&metric))
        })
        .count();
    assert!(
        sampled >= 3,
        "{agent}: {sampled} device samples from the agent"
    );
    let report = run(&["report", record.to_str().unwrap()], dir);
    assert!(report.status.success(), "{}", stderr_of(&report));
    let shown = String::from_utf8_lossy(&report.stdout);
    assert!(
        shown.contains(device)
            && shown.contains("is observed through its agent")
            && shown.contains("server host"),
        "{shown}"
    );
    let traced_here = document["result"]["block_trace"]["traced_by"].is_string();
    assert_eq!(
        shown.contains("by its strata agent"),
        traced_here,
        "{shown}"
    );
    let other_hosts = environment["other_hosts"].as_array();
    if others.is_empty() {
        assert!(other_hosts.is_none(), "{environment}");
        return;
    }
    assert_eq!(other_hosts.unwrap()[0]["name"], "nfs1", "{environment}");
    let nfs1 = &document["result"]["other_hosts"][0];
    assert_eq!(nfs1["host"], "nfs1", "{}", document["result"]);
    let observed = nfs1["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|observed| observed["device"] == device)
        .unwrap_or_else(|| panic!("nfs1's agent watches {device} too: {nfs1}"));
    let requests = |figures: &serde_json::Value| figures["read_requests"].as_f64().unwrap();
    let (at_nfs1, at_server) = (requests(observed), requests(&devices[0]));
    // The two agents are asked at once at each edge, but each reads the
    // device when its own collection gets to it: requests the other tests
    // running beside this one make in between fall on one side only.
    assert!(
        (at_nfs1 - at_server).abs() <= (0.02 * at_server).max(20.0),
        "one device seen by two agents at the same edges: {at_nfs1} and {at_server} read requests"
    );
    let other_samples = recording
        .layers()
        .filter(|sample| sample.values("device@nfs1").is_some())
        .count();
    assert!(
        other_samples >= 3,
        "{other_samples} samples of nfs1's devices"
    );
    let hosts = shown.split("\nHosts\n").nth(1).expect("a Hosts section");
    assert!(
        hosts.contains("nfs1") && hosts.contains(device) && shown.contains("other hosts"),
        "{shown}"
    );
    assert!(
        hosts.contains("at the two edges"),
        "exact, from the result: {hosts}"
    );
}

/// A run through a strata agent on the server's host (sharing the
/// kernel's PID namespace, as a real host's processes do) gets that host's
/// requests as its own tracer would: by role (the PostgreSQL processes'
/// titles), by process, and the outliers, each backend's naming its
/// session and statement on the run's clock. The server keeps 16 buffers
/// and its files are dropped from the page cache every 100 ms, so the
/// sessions' reads reach the device throughout the window.
#[test]
fn a_run_through_a_tracing_agent_names_roles_processes_and_outliers() {
    let dir = scratch();
    let mut host = NamespaceHost::create(7);
    host.share_machine_pids();
    let server =
        HostedPostgres::start_with(&mut host, &debian_bin_dir(), &["shared_buffers=128kB"]);
    let (agent, _) = agent_and_schema(&mut host, &server, &["--io-outlier", "200us"], &dir);
    let url = server.url();
    let evicting = KeepDoing::evicting(&server.data_dir.join("base"));
    let mut args = vec!["run", "--db", url.as_str(), "--agent", agent.as_str()];
    args.extend(["--duration", "3s", "--warmup", "1s"]);
    args.extend(["--outlier-threshold", "200us", "--io-outlier", "200us"]);
    args.extend(["--think-time", "20ms", "--think-every", "1"]);
    args.extend(["--threads-per-schema", "2"]);
    args.extend(PLAN);
    let document = run_json(&args, dir.path());
    drop(evicting);
    let traced = &document["result"]["block_trace"];
    let by = traced["traced_by"].as_str().unwrap_or_default();
    assert!(
        by.contains("its /blocktrace")
            && by.contains("roles from its PostgreSQL processes' titles"),
        "{traced}"
    );
    let data_device = &traced["devices"][0];
    let backend_reads = data_device["by_role"]
        .as_array()
        .unwrap()
        .iter()
        .find(|role| role["role"] == "client backend" && role["operation"] == "read")
        .unwrap_or_else(|| panic!("no client backend reads by role: {data_device}"));
    assert!(
        backend_reads["requests"].as_u64().unwrap() > 0,
        "{backend_reads}"
    );
    let processes = traced["processes"].as_array().unwrap();
    assert!(
        processes
            .iter()
            .any(|process| process["command"] == "postgres" && process["role"] == "client backend"),
        "{processes:?}"
    );
    let reads: Vec<&serde_json::Value> = traced["outliers"]["listed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|outlier| outlier["role"] == "client backend" && outlier["operation"] == "read")
        .collect();
    assert_reads_name_their_session_and_statement(&reads, 2, &document["result"]);
}

/// The SLOB schema the hosted servers' runs read.
const PLAN: [&str; 4] = ["--schemas", "1", "--scale", "4MiB"];

/// A strata agent on `host` (port 9477, with `options`) watching
/// `server`'s data directory, up, and the server's schema set up: the
/// agent's URL and its program's number on the host.
fn agent_and_schema(
    host: &mut NamespaceHost,
    server: &HostedPostgres,
    options: &[&str],
    dir: &tempfile::TempDir,
) -> (String, usize) {
    let listen = format!("{}:9477", host.address);
    let data = server.data_dir.to_str().unwrap().to_string();
    let mut agent_args = vec!["observe", "--prometheus", &listen, "--path", &data];
    agent_args.extend(options);
    let log = std::fs::File::create(dir.path().join("agent.log")).unwrap();
    let program = host.spawn(env!("CARGO_BIN_EXE_strata"), &agent_args, None, log.into());
    let agent = format!("http://{listen}");
    scrape_until_up(&agent);
    let url = server.url();
    let mut setup = vec!["setup", "--db", url.as_str()];
    setup.extend(PLAN);
    run_json(&setup, dir.path());
    (agent, program)
}

/// `work` done again and again, `pause` apart, on a thread of its own
/// until dropped.
struct KeepDoing {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    worker: Option<std::thread::JoinHandle<()>>,
}

impl KeepDoing {
    fn start(pause: std::time::Duration, mut work: impl FnMut() + Send + 'static) -> KeepDoing {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let worker = std::thread::spawn(move || {
            while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                work();
                std::thread::sleep(pause);
            }
        });
        KeepDoing {
            stop,
            worker: Some(worker),
        }
    }

    /// Drops every file under `directory` from the page cache every 100 ms.
    fn evicting(directory: &std::path::Path) -> KeepDoing {
        let directory = directory.to_path_buf();
        KeepDoing::start(std::time::Duration::from_millis(100), move || {
            evict_under(&directory)
        })
    }

    /// A write of 4 KiB made durable (a write and a flush) every 20 ms:
    /// the device under the server has requests in every window whatever
    /// the page cache holds of the tables, and no reads, so the two
    /// agents' read counts are not disturbed.
    fn writing(path: &std::path::Path) -> KeepDoing {
        use std::io::Write;
        let mut file = std::fs::File::create(path).unwrap();
        KeepDoing::start(std::time::Duration::from_millis(20), move || {
            file.write_all(&[7u8; 4096]).unwrap();
            file.sync_data().unwrap();
        })
    }
}

impl Drop for KeepDoing {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

fn evict_under(directory: &std::path::Path) {
    use std::os::fd::AsRawFd;
    for entry in std::fs::read_dir(directory).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            evict_under(&path);
        } else if let Ok(file) = std::fs::File::open(&path) {
            // SAFETY: the descriptor is open for the call.
            unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
    }
}

/// A strata agent (root there) traces its host's requests, and the run
/// takes them from its histograms at the edges, counted as the agent's
/// /proc/diskstats counts them; node_exporter traces none, and the run
/// says so.
fn traced_by_the_agent(block_trace: &serde_json::Value, agent_kind: &serde_json::Value) {
    if agent_kind == "node_exporter" {
        let why = block_trace["unavailable"].as_str().unwrap_or_default();
        assert!(
            why.contains("which serves no requests traced one by one"),
            "{block_trace}"
        );
        return;
    }
    let by = block_trace["traced_by"].as_str().unwrap_or_default();
    assert!(by.contains("by its strata agent"), "{block_trace}");
    let operations: Vec<&serde_json::Value> = block_trace["devices"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|device| device["operations"].as_array().unwrap())
        .collect();
    assert!(!operations.is_empty(), "no request traced: {block_trace}");
    let of = |name: &str, field: &str| -> f64 {
        let named = operations.iter().filter(|op| op["operation"] == name);
        named.filter_map(|op| op[field].as_f64()).sum()
    };
    // Requests started and ended, as diskstats counts them: under fsync,
    // not those issued (a PREFLUSH write with no data is never issued; the
    // flush issued for it has no start).
    // diskstats counts the flushes the block layer issues.
    // Ends the agent's tracer missed are served beside the histograms.
    let started_and_ended = |op: &str| of(op, "requests") + of(op, "ends_missed");
    let traced = [
        started_and_ended("read"),
        started_and_ended("write"),
        of("flush", "issued_requests"),
    ];
    assert!(
        operations.iter().all(|op| op["ends_missed"].is_u64()),
        "no count of ends missed: {block_trace}"
    );
    let counted = ["read", "write", "flush"].map(|op| of(op, "diskstats_requests"));
    // The agent reads its tracer and /proc/diskstats in one scrape, a few
    // milliseconds apart, while this host's other tests do I/O.
    let near =
        |(traced, counted): (&f64, &f64)| (traced - counted).abs() <= (0.02 * counted).max(10.0);
    assert!(
        traced.iter().zip(&counted).all(near),
        "(reads, writes, flushes) traced {traced:?} against the agent's diskstats {counted:?}: \
         {block_trace}"
    );
    for operation in operations {
        let device_time = &operation["device_time"];
        assert!(
            device_time["p50_ms"].as_f64().unwrap() <= device_time["p99_ms"].as_f64().unwrap(),
            "{operation}"
        );
    }
}

fn assert_matches_the_run_schema(document: &serde_json::Value) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/run.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(document)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// An agent lost in the middle of the window (its host's namespace kills
/// it): the run completes, with no device figures rather than wrong ones,
/// and a warning that names the agent's host.
#[test]
fn an_agent_lost_mid_run_leaves_a_named_gap_and_the_run_completes() {
    let dir = scratch();
    let mut host = NamespaceHost::create(3);
    let server = HostedPostgres::start(&mut host, &debian_bin_dir());
    let (agent, agent_program) = agent_and_schema(&mut host, &server, &[], &dir);
    let url = server.url();
    let mut args = vec!["run", "--db", url.as_str(), "--agent", agent.as_str()];
    args.extend(["--duration", "4s", "--warmup", "1s", "--json"]);
    args.extend(PLAN);
    let running = strata()
        .args(&args)
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    host.stop(agent_program);
    let output = running.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let result = &document["result"];
    assert_eq!(
        result["devices"],
        serde_json::json!([]),
        "no device figure from half a window"
    );
    assert!(result["workload"]["loops"].as_u64().unwrap() > 0);
    let warnings = result["warnings"].to_string();
    assert!(
        warnings.contains("did not answer at an edge of the window"),
        "{warnings}"
    );
}

/// node_exporter's series of a disk `vda`, every one `value`.
fn vda_series(value: usize) -> String {
    strata_agent::host::required_device_series(strata_agent::host::Dialect::NodeExporter)
        .iter()
        .map(|name| format!("{name}{{device=\"vda\"}} {value}\n"))
        .collect()
}

/// An agent that answers once and then fails (HTTP 500, as an exporter
/// behind a broken proxy does): the run completes and says once, in its
/// verdict, that the server host's devices are not in its figures; no NaN
/// and no made-up count is printed; its Recording reads back, in text,
/// JSON and HTML, and its own HTML page is written.
#[test]
fn an_agent_that_fails_at_the_edges_leaves_a_named_gap_and_a_recording_that_reads() {
    let dir = scratch();
    let mut host = NamespaceHost::create(5);
    let server = HostedPostgres::start(&mut host, &debian_bin_dir());
    let disk = vda_series(1);
    let first = format!(
        "{disk}node_cpu_seconds_total{{cpu=\"0\",mode=\"idle\"}} 5\n\
         node_filesystem_size_bytes{{device=\"/dev/vda\",mountpoint=\"/\"}} 1\n\
         node_uname_info{{nodename=\"flaky\"}} 1\n"
    );
    let flaky = || {
        let first = first.clone();
        strata_testkit::http::ScriptedServer::start(move |n, _| match n {
            0 => strata_testkit::http::Answer::ok(first.clone()),
            _ => strata_testkit::http::Answer::status(500),
        })
    };
    let url = server.url();
    let plan = ["--schemas", "1", "--scale", "4MiB"];
    let mut setup = vec!["setup", "--db", url.as_str()];
    setup.extend(plan);
    run_json(&setup, dir.path());
    let record = dir.path().join("flaky.strata");
    let page = dir.path().join("flaky.html");
    let run_through = |agent: &str, more: &[&str]| {
        let mut args = vec!["run", "--db", url.as_str(), "--agent", agent];
        args.extend(["--duration", "2s", "--warmup", "0s", "--record"]);
        args.push(record.to_str().unwrap());
        args.push("--overwrite");
        args.extend(more);
        args.extend(plan);
        run(&args, dir.path())
    };
    let agent = flaky();
    let text = run_through(&agent.url(), &[]);
    let shown = everything(&text);
    assert!(text.status.success(), "{shown}");
    assert!(!shown.contains("NaN") && !shown.contains("-0 "), "{shown}");
    assert_eq!(
        shown
            .matches("the server's host's devices are not in these figures")
            .count(),
        1,
        "said once, in the verdict: {shown}"
    );
    let agent = flaky();
    let with_page = run_through(&agent.url(), &["--html", page.to_str().unwrap()]);
    assert!(with_page.status.success(), "{}", everything(&with_page));
    let page = std::fs::read_to_string(&page).expect("the run's HTML page");
    assert!(
        page.contains("not in these figures"),
        "the page names the gap"
    );
    for format in [&["--json"][..], &[], &["--html", "-"]] {
        let mut report = vec!["report", record.to_str().unwrap()];
        report.extend(format);
        let output = run(&report, dir.path());
        assert!(
            output.status.success(),
            "{report:?}: {}",
            everything(&output)
        );
    }
    let recording = strata_recording::Recording::read(&record).unwrap();
    let result = &recording.run_result().expect("a result").figures;
    assert!(result.devices.is_empty(), "{:?}", result.devices);
    assert!(result.absorption.is_none());
    assert_eq!(result.cpu.host_idle_pct, None);
    assert!(
        result
            .devices_unobserved
            .as_deref()
            .is_some_and(|why| why.contains("flaky") && why.contains("500")),
        "{:?}",
        result.devices_unobserved
    );
}

/// An agent whose counters go down between the window's edges (a host
/// that restarted, an exporter that went back): no device figure and no
/// CPU share spans the reset, no 32-bit wrap's billions are shown, and the
/// run is not called CPU-bound for it.
#[test]
fn counters_that_go_down_between_the_edges_are_a_gap_not_a_wrap() {
    let dir = scratch();
    let mut host = NamespaceHost::create(6);
    let server = HostedPostgres::start(&mut host, &debian_bin_dir());
    let going_down = |n: usize| {
        let value = 1_000_000_000 - 1_000 * n;
        let disk = vda_series(value);
        format!(
            "{disk}node_cpu_seconds_total{{cpu=\"0\",mode=\"idle\"}} {value}\n\
             node_cpu_seconds_total{{cpu=\"0\",mode=\"user\"}} {value}\n\
             node_filesystem_size_bytes{{device=\"/dev/vda\",mountpoint=\"/\"}} 1\n\
             node_uname_info{{nodename=\"rebooting\"}} 1\n"
        )
    };
    let agent = strata_testkit::http::ScriptedServer::start(move |n, _| {
        strata_testkit::http::Answer::ok(going_down(n))
    });
    let url = server.url();
    let plan = ["--schemas", "1", "--scale", "4MiB"];
    let mut setup = vec!["setup", "--db", url.as_str()];
    setup.extend(plan);
    run_json(&setup, dir.path());
    let agent_url = agent.url();
    let mut args = vec!["run", "--db", url.as_str(), "--agent", agent_url.as_str()];
    args.extend(["--duration", "2s", "--warmup", "0s"]);
    args.extend(plan);
    let text = run(&args, dir.path());
    let shown = everything(&text);
    assert!(text.status.success(), "{shown}");
    assert!(
        shown.contains("vda's read_requests went down from"),
        "the reset is named: {shown}"
    );
    assert!(
        !shown.contains("4294") && !shown.contains("CPU-bound"),
        "{shown}"
    );
    let document = run_json(&args, dir.path());
    let result = &document["result"];
    assert_eq!(result["devices"], serde_json::json!([]), "{result}");
    assert!(result["absorption"].is_null(), "{result}");
    assert!(result["cpu"]["host_idle_pct"].is_null(), "{result}");
    let codes = result["verdict"]["reasons"].to_string();
    assert!(
        !codes.contains("cpu_bound") && !codes.contains("too_few_device_requests"),
        "{codes}"
    );
    assert!(
        codes.contains("devices_not_observed") && codes.contains("went down"),
        "{codes}"
    );
}
