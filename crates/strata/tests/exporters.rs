//! Exporters and Prometheus servers that behave as real ones do on a
//! fleet, served by a scripted HTTP server (strata-testkit's `http`): a
//! host that reboots (its counters go down), a NaN, an infinity, an
//! impossible run queue, a device without some of its series, and a real
//! Dell server's DMI labels. No reset, NaN or infinity becomes a number:
//! each is a gap named with why, in observe, its Recording and its report,
//! and in `report --prometheus`.

mod common;

use base64::Engine as _;
use common::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use strata_testkit::http::{Answer, ScriptedServer};

/// The password of the scripted Prometheus server's Basic auth.
const PROMETHEUS_PASSWORD: &str = "prom-SECRET-pw";

/// node_exporter's device series of one disk: `reads` read requests (4 KiB
/// each, 0.1 ms each) and `busy_s` seconds busy; `reads` as text, so it can
/// be `NaN`.
fn node_disk(device: &str, reads: &str, busy_s: f64) -> String {
    let number: f64 = reads.parse().unwrap_or(0.0);
    let series = [
        ("reads_completed_total", reads.to_string()),
        ("reads_merged_total", "0".into()),
        ("read_bytes_total", format!("{}", number * 4096.0)),
        ("read_time_seconds_total", format!("{}", number * 1e-4)),
        ("writes_completed_total", "0".into()),
        ("writes_merged_total", "0".into()),
        ("written_bytes_total", "0".into()),
        ("write_time_seconds_total", "0".into()),
        ("io_now", "0".into()),
        ("io_time_seconds_total", format!("{busy_s}")),
        ("io_time_weighted_seconds_total", format!("{busy_s}")),
        ("flush_requests_total", "0".into()),
        ("flush_requests_time_seconds_total", "0".into()),
    ];
    series
        .iter()
        .map(|(name, value)| format!("node_disk_{name}{{device=\"{device}\"}} {value}\n"))
        .collect()
}

/// What the scripted node_exporter of host `edge1` answers at its `n`th
/// scrape: sda reads 100 requests a scrape and the host reboots at the
/// fourth (every counter starts again); sdb's reads are NaN at the second;
/// the run queue is -1.
fn rebooting_exporter(n: usize) -> String {
    let (base, step) = match n >= 4 {
        false => (1_000_000.0, n as f64),
        true => (5.0, (n - 4) as f64),
    };
    let sda = node_disk(
        "sda",
        &format!("{}", base + 100.0 * step),
        base / 1e3 + step * 0.1,
    );
    let sdb_reads = match n {
        2 => "NaN".to_string(),
        _ => format!("{}", 500 + 10 * n),
    };
    let sdb = node_disk("sdb", &sdb_reads, 1.0);
    let cpu = base / 10.0 + step;
    format!(
        "{sda}{sdb}node_cpu_seconds_total{{cpu=\"0\",mode=\"idle\"}} {cpu}\n\
         node_cpu_seconds_total{{cpu=\"0\",mode=\"user\"}} {}\n\
         node_procs_running -1\n\
         node_uname_info{{nodename=\"edge1\",release=\"6.1\"}} 1\n",
        cpu / 10.0
    )
}

/// The JSON lines of `strata observe ARGS… --json`, once it succeeded.
fn observed(args: &[&str], dir: &std::path::Path) -> Vec<serde_json::Value> {
    let output = run(args, dir);
    assert!(output.status.success(), "{}", everything(&output));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The rate of `key` in every sample of `layer` of `lines` (observe's
/// JSON).
fn rates(lines: &[serde_json::Value], layer: &str, key: &str) -> Vec<f64> {
    lines
        .iter()
        .filter_map(|line| line["layers"][layer]["rates"][key].as_f64())
        .collect()
}

/// Every gap of `layer` in `lines`, as `thing: why`.
fn gaps(lines: &[serde_json::Value], layer: &str) -> Vec<String> {
    lines
        .iter()
        .filter_map(|line| line["layers"][layer]["gaps"].as_object())
        .flat_map(|gaps| {
            gaps.iter()
                .map(|(thing, why)| format!("{thing}: {}", why.as_str().unwrap()))
        })
        .collect()
}

#[test]
fn a_reboot_a_nan_and_a_negative_run_queue_are_named_gaps_never_numbers() {
    let dir = scratch();
    let exporter = ScriptedServer::start(|n, _| Answer::ok(rebooting_exporter(n)));
    let record = dir.path().join("edge.strata");
    let record = record.to_str().unwrap();
    let agent = exporter.url();
    let args = [
        "observe",
        "--count",
        "7",
        "--interval",
        "300ms",
        "--agent",
        &agent,
        "--record",
        record,
        "--json",
    ];
    let lines = observed(&args, dir.path());
    assert!(exporter.requests() >= 6, "{} scrapes", exporter.requests());
    let sda = rates(
        &lines,
        "device@edge1",
        "read_requests{device=sda,kind=disk}",
    );
    assert!(sda.len() >= 3, "{sda:?}");
    assert!(
        sda.iter().all(|rate| (0.0..2_000.0).contains(rate)),
        "100 read requests a scrape, never a wrap's billions: {sda:?}"
    );
    let device_gaps = gaps(&lines, "device@edge1");
    assert!(
        device_gaps.iter().any(|gap| gap
            .starts_with("device=sda,kind=disk: read_requests went down from 1000300 to 5")),
        "{device_gaps:?}"
    );
    assert!(
        device_gaps
            .iter()
            .any(|gap| gap
                .starts_with("device=sdb,kind=disk: node_disk_reads_completed_total is NaN")),
        "{device_gaps:?}"
    );
    let cpu_gaps = gaps(&lines, "cpu@edge1");
    assert!(
        cpu_gaps.iter().any(|gap| gap.contains("went down")),
        "{cpu_gaps:?}"
    );
    for line in &lines {
        let metrics = line["layers"]["cpu@edge1"]["metrics"].to_string();
        assert!(
            !metrics.contains("procs_running"),
            "a run queue of -1 is absent: {metrics}"
        );
    }

    let replay = run(&["observe", "--replay", record], dir.path());
    let shown = everything(&replay);
    assert!(replay.status.success(), "{shown}");
    assert!(
        shown
            .contains("device=sda,kind=disk: no rates over this interval: read_requests went down"),
        "{shown}"
    );
    let report = run_json(&["report", record], dir.path());
    let hosts = section(&report, "hosts");
    let row = hosts["blocks"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row[0]["text"] == "edge1" && row[1]["text"] == "sda")
        .unwrap_or_else(|| panic!("{hosts}"));
    let read_requests = row[3]["value"].as_f64().unwrap();
    let most = 100.0 * exporter.requests() as f64;
    assert!(
        (100.0..=most).contains(&read_requests),
        "sda's read requests over the recording: {read_requests} (at most {most})"
    );
    assert!(
        hosts.to_string().contains("read_requests went down"),
        "the report names the gap: {hosts}"
    );
}

/// A Dell server's DMI labels as node_exporter serves them (U+FFFD, 0x1C,
/// escaped quotes; tests/fixtures in strata-agent) beside its disks and
/// CPU: the scrape is read whole and followed.
#[test]
fn a_dell_server_s_exposition_is_followed() {
    let dir = scratch();
    let dmi = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../strata-agent/tests/fixtures/expositions/debian-node-exporter-1.5.0-dell-dmi.prom"
    ))
    .unwrap();
    let scrapes = Arc::new(AtomicUsize::new(0));
    let counted = scrapes.clone();
    let exporter = ScriptedServer::start(move |n, _| {
        counted.fetch_add(1, Ordering::Relaxed);
        let disk = node_disk("sda", &format!("{}", 100 * n), n as f64 * 0.01);
        Answer::ok(format!(
            "{dmi}{disk}node_cpu_seconds_total{{cpu=\"0\",mode=\"idle\"}} {n}\n\
             node_uname_info{{nodename=\"r740\"}} 1\n"
        ))
    });
    let record = dir.path().join("dell.strata");
    let agent = exporter.url();
    let args = [
        "observe",
        "--count",
        "2",
        "--interval",
        "300ms",
        "--agent",
        &agent,
    ];
    let mut all = args.to_vec();
    all.extend(["--record", record.to_str().unwrap()]);
    let output = run(&all, dir.path());
    assert!(output.status.success(), "{}", everything(&output));
    assert!(
        !everything(&output).contains("did not read"),
        "{}",
        everything(&output)
    );
    let recording = strata_recording::Recording::read(&record).unwrap();
    let sampled = recording
        .layers()
        .filter(|sample| sample.values("device@r740").is_some())
        .count();
    assert!(sampled >= 2, "{sampled} samples of the Dell's devices");
    assert!(scrapes.load(Ordering::Relaxed) >= 3);
}

/// One series of a range query's answer: its name, its labels and its
/// value at each step (`None` for a step without one).
type RangeSeries<'a> = (&'a str, &'a [(&'a str, &'a str)], Vec<Option<&'a str>>);

/// A Prometheus range query's answer of `series`.
fn matrix(series: &[RangeSeries], start: f64) -> String {
    let result: Vec<serde_json::Value> = series
        .iter()
        .map(|(name, labels, values)| {
            let mut metric: serde_json::Map<String, serde_json::Value> = labels
                .iter()
                .map(|(key, value)| (key.to_string(), serde_json::json!(value)))
                .collect();
            metric.insert("__name__".into(), serde_json::json!(name));
            metric.insert("job".into(), serde_json::json!("node"));
            metric.insert("instance".into(), serde_json::json!("edge2:9100"));
            let values: Vec<serde_json::Value> = values
                .iter()
                .enumerate()
                .filter_map(|(step, value)| {
                    Some(serde_json::json!([start + step as f64, (*value)?]))
                })
                .collect();
            serde_json::json!({ "metric": metric, "values": values })
        })
        .collect();
    serde_json::json!({
        "status": "success",
        "data": { "resultType": "matrix", "result": result }
    })
    .to_string()
}

/// `report --prometheus` over a range in which edge2 rebooted (sda's
/// counters go down at the fourth step), sdb's reads are NaN and +Inf,
/// and sdc has no write series: the interval across the reboot is a gap,
/// never a 32-bit wrap; NaN and +Inf are gaps; sdc is absent with why. The
/// server wants Basic auth: its password comes from a file and is shown
/// nowhere.
#[test]
fn a_prometheus_range_with_a_reset_nan_inf_and_missing_series_reads_as_gaps() {
    let dir = scratch();
    let start = 1_700_000_000.0;
    let some =
        |values: &[&'static str]| values.iter().map(|value| Some(*value)).collect::<Vec<_>>();
    let disk = |device: &'static str, reads: Vec<Option<&'static str>>, writes: bool| {
        let labels: &'static [(&'static str, &'static str)] = match device {
            "sda" => &[("device", "sda")],
            "sdb" => &[("device", "sdb")],
            _ => &[("device", "sdc")],
        };
        let zeros = some(&["0", "0", "0", "0", "0"]);
        let busy = match device {
            "sda" => some(&["100", "100.2", "100.4", "0.1", "0.3"]),
            _ => zeros.clone(),
        };
        let mut series = vec![
            ("node_disk_reads_completed_total", labels, reads),
            ("node_disk_read_bytes_total", labels, zeros.clone()),
            ("node_disk_read_time_seconds_total", labels, zeros.clone()),
            ("node_disk_io_now", labels, zeros.clone()),
            ("node_disk_io_time_seconds_total", labels, busy.clone()),
            ("node_disk_io_time_weighted_seconds_total", labels, busy),
        ];
        if writes {
            series.extend([
                ("node_disk_writes_completed_total", labels, zeros.clone()),
                ("node_disk_written_bytes_total", labels, zeros.clone()),
                ("node_disk_write_time_seconds_total", labels, zeros.clone()),
            ]);
        }
        series
    };
    let mut series = Vec::new();
    series.extend(disk(
        "sda",
        some(&["1000000", "1000100", "1000200", "50", "150"]),
        true,
    ));
    series.extend(disk("sdb", some(&["10", "NaN", "30", "+Inf", "50"]), true));
    series.extend(disk("sdc", some(&["1", "2", "3", "4", "5"]), false));
    series.push((
        "node_cpu_seconds_total",
        &[("cpu", "0"), ("mode", "idle")],
        some(&["10", "11", "12", "0.5", "1.5"]),
    ));
    series.push((
        "node_uname_info",
        &[("nodename", "edge2")],
        some(&["1", "1", "1", "1", "1"]),
    ));
    let body = matrix(&series, start);
    // Behind Basic auth, as a Prometheus server with web-config.yml is.
    let expected = format!(
        "authorization: Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("prom:{PROMETHEUS_PASSWORD}"))
    );
    let prometheus = ScriptedServer::start(move |_, request| {
        let authorized = request
            .headers
            .iter()
            .any(|header| header.eq_ignore_ascii_case(&expected));
        match (authorized, request.path.starts_with("/api/v1/query_range")) {
            (false, _) => Answer::status(401),
            (true, true) => Answer::ok(body.clone()),
            (true, false) => Answer::status(404),
        }
    });
    let (from, to) = (format!("{start}"), format!("{}", start + 4.0));
    let auth = dir.path().join("prometheus.auth");
    std::fs::write(&auth, format!("prom:{PROMETHEUS_PASSWORD}\n")).unwrap();
    let url = format!("http://prom@127.0.0.1:{}", prometheus.port);
    let refused = run(
        &["report", "--prometheus", &url, "--from", &from, "--to", &to],
        dir.path(),
    );
    let said = everything(&refused);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains("names the user prom and no password")
            && said.contains("--prometheus-basic-auth-file"),
        "{said}"
    );
    assert_eq!(prometheus.requests(), 0, "refused before any query");
    let wrong = format!("http://prom:wrong@127.0.0.1:{}", prometheus.port);
    let refused = run(
        &[
            "report",
            "--prometheus",
            &wrong,
            "--from",
            &from,
            "--to",
            &to,
        ],
        dir.path(),
    );
    let said = everything(&refused);
    assert!(said.contains("401") && !said.contains("wrong"), "{said}");
    let args = [
        "report",
        "--prometheus-basic-auth-file",
        auth.to_str().unwrap(),
        "--prometheus",
        &url,
        "--from",
        &from,
        "--to",
        &to,
        "--step",
        "1s",
    ];
    let report = run_json(&args, dir.path());
    assert!(
        !report.to_string().contains(PROMETHEUS_PASSWORD),
        "{report}"
    );
    assert!(
        report["about"]
            .to_string()
            .contains("http://prom:***@127.0.0.1"),
        "{}",
        report["about"]
    );
    let hosts = section(&report, "hosts");
    let rows = hosts["blocks"][0]["rows"].as_array().unwrap();
    let row = |device: &str| {
        rows.iter()
            .find(|row| row[0]["text"] == "edge2" && row[1]["text"] == device)
    };
    let sda = row("sda").unwrap_or_else(|| panic!("{hosts}"));
    assert_eq!(
        sda[3]["value"].as_f64(),
        Some(300.0),
        "100 + 100 + 100, the reboot's step a gap: {sda}"
    );
    let text = hosts.to_string();
    for impossible in ["4294967", "1.8446", "9.2233", "42939"] {
        assert!(!text.contains(impossible), "{impossible} in {text}");
    }
    assert!(
        row("sdb").is_none_or(|sdb| sdb[3]["value"].is_null()),
        "sdb had no two readable steps in a row: {hosts}"
    );
    assert!(row("sdc").is_none(), "sdc has no write series: {hosts}");
    assert!(
        text.contains("no node_disk_writes_completed_total"),
        "{text}"
    );
    assert!(
        text.contains("is NaN") && text.contains("went down"),
        "{text}"
    );
}

/// A host whose node_exporter lists partitions and an LVM volume beside
/// the disks under them (its default filter keeps `mmcblk0p1`, and `dm-*`):
/// the host's total in observe counts its whole disks once, not the same
/// I/O three times.
#[test]
fn a_host_s_total_counts_its_whole_disks_once() {
    let dir = scratch();
    let exporter = ScriptedServer::start(|n, _| {
        let reads = |per: usize| format!("{}", per * n);
        Answer::ok(
            format!(
                "{}{}{}{}{}node_disk_device_mapper_info{{device=\"dm-0\",name=\"vg0-root\"}} 1\n\
             node_cpu_seconds_total{{cpu=\"0\",mode=\"idle\"}} {n}\n\
             node_uname_info{{nodename=\"stack\"}} 1\n",
                node_disk("sda", &reads(100), 0.0),
                node_disk("sda1", &reads(100), 0.0),
                node_disk("dm-0", &reads(100), 0.0),
                node_disk("mmcblk0", &reads(10), 0.0),
                node_disk("mmcblk0p1", &reads(10), 0.0),
            ) + &node_disk("md0", &reads(50), 0.0),
        )
    });
    let agent = exporter.url();
    let record = dir.path().join("stack.strata");
    let args = [
        "observe",
        "--count",
        "3",
        "--interval",
        "500ms",
        "--all",
        "--agent",
        &agent,
        "--record",
        record.to_str().unwrap(),
    ];
    let output = run(&args, dir.path());
    let shown = everything(&output);
    assert!(output.status.success(), "{shown}");
    // `TIME LAYER NAME WHAT… r/s …`: the first number after the name.
    let reads_of = |line: &str, layer: &str, name: &str| -> Option<f64> {
        let mut words = line.split_whitespace().skip(1);
        (words.next()? == layer && words.next()? == name).then_some(())?;
        words.find_map(|word| word.parse().ok())
    };
    let mut checked = 0;
    let lines: Vec<&str> = shown.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        let Some(total) = reads_of(line, "device@all", "stack") else {
            continue;
        };
        let time = line.split_whitespace().next().unwrap();
        let device = |name: &str| {
            lines[..index]
                .iter()
                .rev()
                .filter(|line| line.starts_with(time))
                .find_map(|line| reads_of(line, "device@stack", name))
        };
        let (sda, mmc) = (device("sda").unwrap(), device("mmcblk0").unwrap());
        assert!(sda > 0.0, "{shown}");
        assert!(
            (total - (sda + mmc)).abs() < 0.2,
            "total {total} of sda {sda} + mmcblk0 {mmc}: {shown}"
        );
        checked += 1;
    }
    assert!(checked >= 2, "{checked} totals: {shown}");
    assert!(
        shown.contains("part of") && shown.contains(" dm "),
        "{shown}"
    );
    let report = run_json(&["report", record.to_str().unwrap()], dir.path());
    let hosts = section(&report, "hosts");
    let rows = hosts["blocks"][0]["rows"].as_array().unwrap();
    let devices: Vec<&str> = rows
        .iter()
        .filter(|row| row[0]["text"] == "stack")
        .map(|row| row[1]["text"].as_str().unwrap())
        .collect();
    assert_eq!(devices, ["mmcblk0", "sda"], "whole disks only: {hosts}");
    assert!(
        hosts
            .to_string()
            .contains("does not name the members of md0"),
        "{hosts}"
    );
}

/// An agent that answers after 3 s beside one that answers at once: the
/// 1 s interval holds for this machine's layers and the fast host's, which
/// have values every sample; the slow host's layers say why they have
/// none.
#[test]
fn a_slow_agent_holds_back_no_other_layer() {
    let dir = scratch();
    let answer = |n: usize, host: &str| {
        format!(
            "{}node_cpu_seconds_total{{cpu=\"0\",mode=\"idle\"}} {n}\n\
             node_uname_info{{nodename=\"{host}\"}} 1\n",
            node_disk("sda", &format!("{}", 10 * n), 0.0)
        )
    };
    let slow = ScriptedServer::start(move |n, _| match n {
        0 => Answer::ok(answer(n, "slow")),
        _ => Answer::ok(answer(n, "slow")).after(std::time::Duration::from_secs(3)),
    });
    let fast = ScriptedServer::start(move |n, _| Answer::ok(answer(n, "fast")));
    let (slow_url, fast_url) = (slow.url(), fast.url());
    let args = [
        "observe",
        "--count",
        "5",
        "--interval",
        "1s",
        "--agent",
        &slow_url,
        "--agent",
        &fast_url,
        "--json",
    ];
    let lines = observed(&args, dir.path());
    assert_eq!(lines.len(), 5);
    for line in &lines {
        let interval = line["interval_s"].as_f64().unwrap();
        assert!(
            (0.9..1.3).contains(&interval),
            "interval {interval} s: {line}"
        );
        assert_eq!(line["layers"]["device@fast"]["status"], "values", "{line}");
        assert_eq!(line["layers"]["cpu"]["status"], "values", "{line}");
        let slow = &line["layers"]["device@slow"];
        assert_eq!(slow["status"], "failed", "{line}");
        let error = slow["error"].as_str().unwrap();
        assert!(error.contains("goes without it"), "{error}");
    }
}
