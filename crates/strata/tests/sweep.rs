//! Predict, run, score: a calibrate Recording made here of the test's own
//! filesystem (ext4 on a loop device), a prediction from it
//! (`strata model predict`) whose inputs are that Recording's points, and
//! a short `strata run --sweep-sessions 1,2,4 --predict` on a throwaway
//! cluster on the same filesystem: one Recording with every point, rising
//! session counts each connected in full, a knee and a latency-target
//! answer consistent with the points (worked out here again), and the
//! prediction's error computed from the measurement; the same on
//! MariaDB's throwaway server; Ctrl-C keeps the points done.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock, RwLockReadGuard};
use strata_core::histogram::LatencyHistogram;
use strata_recording::Recording;
use strata_testkit::loopdev::{own_filesystem, LoopDevice};

/// 8 KiB random reads at 1, 2 and 4 outstanding, no large streams.
/// The MariaDB sweep compares InnoDB's page reads with the device's read
/// requests over 3 s windows, each edge reading one right after the other:
/// a sweep in the next test thread starves both CPUs and pushes the two
/// reads apart (0.80 of InnoDB's reads seen so, with tasks waiting for a
/// CPU 69% of the window). It runs alone; the others beside each other.
static MEASURING: RwLock<()> = RwLock::new(());

fn beside_the_others() -> RwLockReadGuard<'static, ()> {
    MEASURING.read().unwrap_or_else(PoisonError::into_inner)
}

fn calibrate(dir: &Path) -> PathBuf {
    calibrate_with(dir, "cal.strata", &["--max-qd", "4"])
}

fn calibrate_with(dir: &Path, name: &str, options: &[&str]) -> PathBuf {
    let record = dir.join(name);
    let args = [
        "calibrate",
        "--sweep",
        "--max-streams",
        "0",
        "--engine",
        "psync",
        "--duration",
        "1s",
        "--ramp",
        "0s",
        "--size",
        "64MiB",
        "--record",
    ];
    let mut all = args.to_vec();
    all.push(record.to_str().unwrap());
    all.extend(options);
    run_json(&all, dir);
    record
}

/// The least-squares slope of calibrate's CPU seconds per second against
/// its reads per second.
fn marginal_cpu_per_read(levels: &[Value]) -> f64 {
    let pairs: Vec<(f64, f64)> = levels
        .iter()
        .map(|level| {
            let iops = level["iops"].as_f64().unwrap();
            (iops, level["cpu_per_io_s"].as_f64().unwrap() * iops)
        })
        .collect();
    let n = pairs.len() as f64;
    let (mean_x, mean_y) = (
        pairs.iter().map(|p| p.0).sum::<f64>() / n,
        pairs.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let covariance: f64 = pairs.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let variance: f64 = pairs.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    match covariance / variance {
        slope if slope > 0.0 => slope,
        _ => levels
            .iter()
            .map(|l| l["cpu_per_io_s"].as_f64().unwrap())
            .fold(f64::INFINITY, f64::min),
    }
}

#[test]
fn a_prediction_reads_its_storage_curve_from_a_real_calibrate_recording() {
    let _beside = beside_the_others();
    let (_device, dir) = own_filesystem(256);
    let calibration = calibrate(&dir);
    let recording = Recording::read(&calibration).unwrap();
    let mut measured = Vec::new();
    for point in recording.point_results() {
        let mut latency = LatencyHistogram::new();
        for encoded in point.histograms.values() {
            latency.merge(&LatencyHistogram::from_base64(&encoded.read_lat_ns_hdr).unwrap());
        }
        let outstanding: usize = point
            .point
            .groups
            .iter()
            .map(|g| g.queue_depth * g.jobs)
            .sum();
        measured.push((
            outstanding as u64,
            point.point.small_iops(),
            latency.mean_ns(),
        ));
    }
    measured.sort_by_key(|m| m.0);
    assert_eq!(measured.iter().map(|m| m.0).collect::<Vec<_>>(), [1, 2, 4]);
    let args = [
        "model",
        "predict",
        "--calibration",
        calibration.to_str().unwrap(),
        "--cpu-per-block",
        "20us",
        "--sessions",
        "1,4",
        "--cpus",
        "2",
    ];
    let document = run_json(&args, &dir);
    let levels = document["curve"]["points"].as_array().unwrap();
    for (level, (outstanding, iops, mean_ns)) in levels.iter().zip(&measured) {
        assert_eq!(level["outstanding"], *outstanding);
        assert!((level["iops"].as_f64().unwrap() - iops).abs() < 1e-6 * iops);
        let mean_s = level["mean_latency_s"].as_f64().unwrap();
        assert!((mean_s - mean_ns * 1e-9).abs() < 1e-12, "{level}");
    }
    let cpu_per_io_s = marginal_cpu_per_read(levels);
    assert!(cpu_per_io_s > 0.0);
    let one = &document["points"][0];
    let (device_s, cpu_s) = (measured[0].2 * 1e-9, 20e-6 + cpu_per_io_s);
    let by_hand = 1.0 / (device_s + cpu_s);
    let predicted = one["device_read_requests_per_s"].as_f64().unwrap();
    assert!(
        (predicted - by_hand).abs() < 1e-6 * by_hand,
        "{predicted} vs {by_hand}"
    );
    // 10 µs of the CPU while the device reads is counted once.
    let overlapped = run_json(
        &[&args[..], &["--overlap-per-block", "10us"]].concat(),
        &dir,
    );
    let by_hand = 1.0 / (device_s + cpu_s - 10e-6);
    let faster = overlapped["points"][0]["device_read_requests_per_s"]
        .as_f64()
        .unwrap();
    assert!(
        (faster - by_hand).abs() < 1e-6 * by_hand,
        "{faster} vs {by_hand}"
    );
    let four = document["points"][1]["device_read_requests_per_s"]
        .as_f64()
        .unwrap();
    assert!(
        four > predicted,
        "4 sessions predict more reads than 1: {four} vs {predicted}"
    );
    let explained = run(&[&args[..], &["--explain"]].concat(), &dir);
    let text = String::from_utf8_lossy(&explained.stdout);
    assert!(text.contains("μ(1) = 1 /"), "{text}");
    assert!(
        text.contains("X = n / (Z + W + R_device + R_cpu − overlap)"),
        "{text}"
    );
    assert!(text.contains("independent reads"), "{text}");
    // One CPU the host gives, of 2: never more reads, and said.
    let one_cpu = run_json(&[&args[..], &["--cpu-servers", "1"]].concat(), &dir);
    let fewer = one_cpu["points"][1]["device_read_requests_per_s"]
        .as_f64()
        .unwrap();
    assert!(fewer <= four, "{fewer} vs {four}");
    assert_eq!(one_cpu["work"]["cpu_servers"], 1.0);
    let refused = run(&[&args[..], &["--cpu-servers", "3"]].concat(), &dir);
    let stderr = stderr_of(&refused);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("cpu-servers") && stderr.contains("give 1 to the 2 CPUs"),
        "{stderr}"
    );
    // A session that keeps 2 reads in flight: a read takes the device 1 /
    // its rate at 2 outstanding, and the device holds 2 × the session's
    // share of time there.
    let ahead = run_json(
        &[&args[..], &["--session-reads-in-flight", "2"]].concat(),
        &dir,
    );
    assert_eq!(ahead["work"]["session_reads_in_flight"], 2.0);
    let at_two_s = measured[1].2 * 1e-9 / 2.0;
    let by_hand = 1.0 / (at_two_s + cpu_s);
    let one_ahead = &ahead["points"][0];
    let predicted = one_ahead["device_read_requests_per_s"].as_f64().unwrap();
    assert!(
        (predicted - by_hand).abs() < 1e-6 * by_hand,
        "{predicted} vs {by_hand}"
    );
    let outstanding = one_ahead["device_outstanding"].as_f64().unwrap();
    let expected = 2.0 * by_hand * at_two_s;
    assert!(
        (outstanding - expected).abs() < 1e-6 * expected,
        "{outstanding} vs {expected}"
    );
    let refused = run(
        &[&args[..], &["--session-reads-in-flight", "0.5"]].concat(),
        &dir,
    );
    let stderr = stderr_of(&refused);
    assert!(!refused.status.success());
    assert!(stderr.contains("session-reads-in-flight"), "{stderr}");
    assert_updates_by_hand(&args, (device_s, cpu_s), &dir);
}

/// A fifth of the statements update 8 rows and COMMIT in 500 µs: per
/// device read, 0.2 × 500 µs over the mix's 0.8 × 256 + 0.2 × 8 reads,
/// and a read's time at the device for each changed row's write; without
/// a COMMIT's time, refused.
fn assert_updates_by_hand(args: &[&str], (device_s, cpu_s): (f64, f64), dir: &Path) {
    let mix = [args, &["--update-pct", "20", "--commit-time", "500us"]].concat();
    let updating = run_json(&mix, dir);
    let reads = 0.8 * 256.0 + 0.2 * 8.0;
    let writes_per_read = 0.2 * 8.0 / reads;
    let by_hand = 1.0 / (device_s * (1.0 + writes_per_read) + cpu_s + 0.2 * 500e-6 / reads);
    let point = &updating["points"][0];
    let predicted = point["device_read_requests_per_s"].as_f64().unwrap();
    assert!(
        (predicted - by_hand).abs() < 1e-6 * by_hand,
        "{predicted} vs {by_hand}"
    );
    let commits = point["updates"]["commits_per_s"].as_f64().unwrap();
    let expected = by_hand * 0.2 / reads;
    assert!(
        (commits - expected).abs() < 1e-6 * expected,
        "{commits} vs {expected}"
    );
    let refused = run(&[args, &["--update-pct", "20"]].concat(), dir);
    let stderr = stderr_of(&refused);
    assert!(!refused.status.success());
    assert!(stderr.contains("--commit-time"), "{stderr}");
}

#[test]
fn sorted_batches_timed_whole_give_the_statement_p99() {
    let _beside = beside_the_others();
    let (_device, dir) = own_filesystem(256);
    let options = ["--max-qd", "2", "--distribution", "sorted:8"];
    let calibration = calibrate_with(&dir, "sorted.strata", &options);
    let recording = Recording::read(&calibration).unwrap();
    let mut ratios = Vec::new();
    for point in recording.point_results() {
        let group = &point.point.groups[0];
        let batches = group.batches.as_ref().expect("sorted batches are timed");
        assert_eq!(batches.blocks_per_batch, 8);
        let encoded = &point.histograms[&group.label];
        let whole = LatencyHistogram::from_base64(&encoded.batch_lat_ns_hdr).unwrap();
        let reads = LatencyHistogram::from_base64(&encoded.read_lat_ns_hdr).unwrap();
        assert_eq!(whole.count(), batches.latency.count);
        assert!(whole.count() >= 100, "{batches:?}");
        // psync: one thread per outstanding request, each reading its
        // batches' 8 blocks in a row.
        let outstanding = (group.queue_depth * group.jobs) as f64;
        let ratio = whole.mean_ns() / (reads.mean_ns() * 8.0);
        assert!((0.95..1.3).contains(&ratio), "{outstanding}: {ratio}");
        let p99_over_mean = whole.percentile_ns(99.0) as f64 / whole.mean_ns();
        ratios.push((outstanding, p99_over_mean));
    }
    ratios.sort_by(|a, b| a.0.total_cmp(&b.0));
    let args = [
        "model",
        "predict",
        "--calibration",
        calibration.to_str().unwrap(),
        "--cpu-per-block",
        "5us",
        "--sessions",
        "1",
        "--work-unit",
        "8",
        "--cpus",
        "2",
    ];
    let document = run_json(&args, &dir);
    let one = &document["points"][0];
    assert_eq!(one["p99_from_batches"], true);
    // One session keeps under one request outstanding: level 1's ratio.
    let ratio = one["device_p99_over_mean"].as_f64().unwrap();
    assert!((ratio - ratios[0].1).abs() < 1e-9, "{ratio} vs {ratios:?}");
    let (mean, p99) = (
        one["statement_latency_mean_s"].as_f64().unwrap(),
        one["statement_latency_p99_s"].as_f64().unwrap(),
    );
    let device_s = one["block_read_latency_s"].as_f64().unwrap();
    let by_hand = mean + 8.0 * device_s * (ratios[0].1 - 1.0);
    assert!((p99 - by_hand).abs() < 1e-12, "{p99} vs {by_hand}");
    let explained = run(&[&args[..], &["--explain"]].concat(), &dir);
    let text = String::from_utf8_lossy(&explained.stdout);
    assert!(text.contains("batches of 8 sorted reads"), "{text}");
    assert!(text.contains("calibrate's batches timed whole"), "{text}");
    // The database's own spread, given: p99 = mean × it, said so.
    let spread = run_json(
        &[&args[..], &["--statement-p99-over-mean", "1.7"]].concat(),
        &dir,
    );
    let given = &spread["points"][0];
    let by_hand = given["statement_latency_mean_s"].as_f64().unwrap() * 1.7;
    let p99 = given["statement_latency_p99_s"].as_f64().unwrap();
    assert!((p99 - by_hand).abs() < 1e-12, "{p99} vs {by_hand}");
    let refused = run(
        &[&args[..], &["--statement-p99-over-mean", "0.5"]].concat(),
        &dir,
    );
    assert!(!refused.status.success());
    assert!(
        stderr_of(&refused).contains("statement-p99-over-mean"),
        "{}",
        stderr_of(&refused)
    );
    let printed = run(
        &[
            "calibrate",
            "--workload",
            "small-random-read",
            "--qd",
            "1",
            "--distribution",
            "sorted:8",
            "--duration",
            "1s",
            "--ramp",
            "0s",
            "--size",
            "64MiB",
        ],
        &dir,
    );
    let text = String::from_utf8_lossy(&printed.stdout);
    assert!(printed.status.success(), "{}", stderr_of(&printed));
    let table = text
        .split("Batches — each sorted batch timed whole")
        .nth(1)
        .unwrap_or_else(|| panic!("the batch table: {text}"));
    let row = table.lines().nth(2).unwrap_or_default();
    let blocks = row
        .split("qd=1")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next());
    assert_eq!(blocks, Some("8"), "{table}");
}

/// A filesystem of its own for a short sweep, its calibration made there,
/// and the sweep's Recording's path.
fn short_sweep_on_its_filesystem() -> (LoopDevice, PathBuf, PathBuf, PathBuf) {
    let (device, dir) = own_filesystem(768);
    let calibration = calibrate(&dir);
    let record = dir.join("sweep.strata");
    (device, dir, calibration, record)
}

/// `strata run`'s arguments for a sweep of 1, 2 and 4 sessions on two
/// 64 MiB schemas (3 s windows) predicted from `calibration`, recorded in
/// `record`, with `extra`.
fn short_sweep<'a>(calibration: &'a Path, record: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--schemas",
        "2",
        "--scale",
        "64MiB",
        "--shared-buffers",
        "16MiB",
        "--sweep-sessions",
        "1,2,4",
        "--warmup",
        "1s",
        "--duration",
        "3s",
        "--predict",
        calibration.to_str().unwrap(),
        "--record",
        record.to_str().unwrap(),
        "--json",
    ];
    args.extend(extra);
    args
}

#[test]
fn a_short_sweep_is_one_recording_whose_answers_follow_from_its_points() {
    let _beside = beside_the_others();
    let (_device, dir, calibration, record) = short_sweep_on_its_filesystem();
    let args = short_sweep(&calibration, &record, &["--latency-target", "10s"]);
    let output = run(&args, &dir);
    let stderr = stderr_of(&output);
    assert!(output.status.success(), "{stderr}");
    let predicted_at = stderr.find("prediction (closed MVA)").expect(&stderr);
    assert!(predicted_at < stderr.find("sweep point 1/3: 1 sessions").expect(&stderr));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_one_recording_with_every_point(&document, &record);
    let sweep = &document["sweep"];
    let points = sweep["points"].as_array().unwrap();
    let cpu = &sweep["database_cpu"];
    let reads = &sweep["database_reads"];
    let per_read = reads["cpu_per_device_read_us"].as_f64().unwrap();
    assert!(
        per_read > cpu["cpu_per_block_us"].as_f64().unwrap(),
        "{reads} vs {cpu}"
    );
    // PostgreSQL's default effective_io_concurrency on Linux is 1.
    assert_eq!(reads["prefetch"], true, "{reads}");
    let field = |name: &str| reads[name].as_f64().unwrap();
    let overlap = field("cpu_per_device_read_us") + field("storage_latency_us")
        - field("elapsed_per_device_read_us");
    let kept = field("overlap_per_device_read_us");
    let expected = overlap.clamp(0.0, field("cpu_per_device_read_us"));
    assert!((kept - expected).abs() < 1e-9, "{reads}");
    // What the overlap could not take goes to the model's device for one
    // session: its time per read there, with the overlap, is the window's.
    let device_us = field("storage_latency_us") * field("device_slowdown");
    let cycle_us = device_us + field("cpu_per_device_read_us") - kept;
    let elapsed_us = field("elapsed_per_device_read_us");
    assert!((cycle_us - elapsed_us).abs() < 1e-9 * elapsed_us, "{reads}");
    assert!(
        stderr.contains("the read path's per device read"),
        "{stderr}"
    );
    for point in points {
        assert!(
            point["block_read_latency_us"].as_f64().unwrap() > 0.0,
            "{point}"
        );
    }
    assert_steadiness_kept(&document, &stderr);
    assert_model_predict_from_the_sweep_is_its_prediction(sweep, &calibration, &record, &dir);
    let report = run_json(&["report", record.to_str().unwrap()], &dir);
    let section = report["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|section| section["id"] == "sweep")
        .expect("the report has the sweep's section");
    let chart = block(section, |block| {
        block["type"] == "chart" && block["id"] == "database_and_storage_curves"
    });
    let names = names(&chart["series"]);
    assert_eq!(
        names.len(),
        3,
        "database, storage and predicted curves: {names:?}"
    );
    assert_eq!(chart["series"][0]["points"].as_array().unwrap().len(), 3);
    assert_scored_in_the_report(section, sweep);
    assert_nothing_left_behind(&dir);
}

#[test]
fn a_sweep_that_updates_is_predicted_with_its_commits_and_its_writes() {
    let _beside = beside_the_others();
    let (_device, dir, calibration, record) = short_sweep_on_its_filesystem();
    let args = short_sweep(&calibration, &record, &["--update-pct", "50"]);
    let output = run(&args, &dir);
    let stderr = stderr_of(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("50.0% of statements update 8 rows and COMMIT"),
        "{stderr}"
    );
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    let sweep = &document["sweep"];
    let reads = &sweep["database_reads"];
    let updates = &reads["updates"];
    assert_eq!(updates["share"], 0.5, "{reads}");
    let field = |name: &str| reads[name].as_f64().unwrap();
    let count = |name: &str| updates[name].as_f64().unwrap();
    assert!(
        count("commits") > 0.0 && count("rows_updated") > 0.0,
        "{updates}"
    );
    assert!(count("commit_mean_us") > 0.0, "{updates}");
    // The one session's time per read, less its COMMITs' share, is the
    // model's cycle: the device's (calibrate's time × (1 + its writes per
    // read) × one session's slowdown) + its CPU − the overlap.
    let device_reads = field("device_read_requests");
    let committing_us = count("commits") * count("commit_mean_us") / device_reads;
    let writes_per_read = count("device_write_requests") / device_reads;
    let device_us =
        field("storage_latency_us") * (1.0 + writes_per_read) * field("device_slowdown");
    let cycle_us =
        device_us + field("cpu_per_device_read_us") - field("overlap_per_device_read_us");
    let elapsed_us = field("elapsed_per_device_read_us") - committing_us;
    assert!((cycle_us - elapsed_us).abs() < 1e-9 * elapsed_us, "{reads}");
    for point in sweep["points"].as_array().unwrap() {
        let done = &point["updates"];
        assert!(done["commits_per_s"].as_f64().unwrap() > 0.0, "{point}");
        assert!(done["commit_mean_ms"].as_f64().unwrap() > 0.0, "{point}");
        let shortfall = point["shortfall"].as_str().unwrap();
        assert!(shortfall.contains("COMMITs/s of"), "{shortfall}");
    }
    assert_model_predict_from_the_sweep_is_its_prediction(sweep, &calibration, &record, &dir);
    let model = model_from_sweep(&calibration, &record, "1", &dir);
    let work = &model["work"]["updates"];
    let commit_s = work["commit_s"].as_f64().unwrap();
    assert!(
        (commit_s - count("commit_mean_us") * 1e-6).abs() < 1e-12,
        "{work}"
    );
    let predicted = &model["points"][0];
    let commits_per_s = predicted["updates"]["commits_per_s"].as_f64().unwrap();
    let rate = predicted["device_read_requests_per_s"].as_f64().unwrap();
    let reads_per_statement = (0.5 * 256.0 + 0.5 * 8.0) * field("device_reads_per_block");
    assert!(
        (commits_per_s - rate * 0.5 / reads_per_statement).abs() < 1e-6 * commits_per_s,
        "{predicted}"
    );
    assert_nothing_left_behind(&dir);
}

/// The report section's block that `is` is true of.
fn block(section: &Value, is: impl Fn(&Value) -> bool) -> &Value {
    let blocks = section["blocks"].as_array().unwrap();
    blocks.iter().find(|block| is(block)).expect("the block")
}

/// The `name` of each of `items`.
fn names(items: &Value) -> Vec<&str> {
    let items = items.as_array().unwrap();
    items
        .iter()
        .map(|item| item["name"].as_str().unwrap())
        .collect()
}

/// The report's prediction table: per point, the errors and what they
/// are made of, as the Recording keeps them; and how far the one-session
/// point ran from the reading window the model is anchored on.
fn assert_scored_in_the_report(section: &Value, sweep: &Value) {
    let table = block(section, |block| {
        block["type"] == "table"
            && block["title"] == "Predicted before the sweep (closed MVA) against measured"
    });
    let anchor = block(section, |block| {
        block["type"] == "note"
            && block["text"].as_str().is_some_and(|text| {
                text.contains("the anchor: the one-session point's device took")
            })
    });
    assert!(
        anchor["text"]
            .as_str()
            .unwrap()
            .contains("reading window's"),
        "{anchor}"
    );
    let columns = names(&table["columns"]);
    let column = |name: &str| columns.iter().position(|c| *c == name).expect(name);
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for (row, predicted) in rows.iter().zip(sweep["prediction"].as_array().unwrap()) {
        let sources = &predicted["error_sources"];
        for (name, kept) in [
            ("in flight error", "device_reads_in_flight_pct"),
            ("time per read error", "device_read_latency_pct"),
            ("CPU per read error", "cpu_per_device_read_pct"),
        ] {
            let cell = row[column(name)]["value"].as_f64().expect(name);
            assert!(
                (cell - sources[kept].as_f64().unwrap()).abs() < 1e-9,
                "{row}"
            );
        }
    }
    let spread = column("measured window's quarters' spread");
    for (row, point) in rows.iter().zip(sweep["points"].as_array().unwrap()) {
        assert_eq!(
            row[spread]["value"].as_f64(),
            point["quarter_spread_pct"].as_f64(),
            "{row} vs {point}"
        );
    }
}

/// How steady each window ran: the last point's spread of loops/s over
/// its quarters is the one its seconds give, by hand (none under 4
/// seconds); the reading window (twice a point's 3 s) kept one and the
/// prediction's text says it.
fn assert_steadiness_kept(document: &Value, stderr: &str) {
    let seconds: Vec<f64> = document["result"]["per_second"]
        .as_array()
        .unwrap()
        .iter()
        .map(|second| second["loops"].as_f64().unwrap())
        .collect();
    let count = seconds.len();
    let last = document["sweep"]["points"]
        .as_array()
        .unwrap()
        .last()
        .unwrap();
    let kept = last["quarter_spread_pct"].as_f64();
    if count < 4 {
        assert_eq!(kept, None, "{last}");
    } else {
        let quarters: Vec<f64> = (0..4)
            .map(|q| {
                let part = &seconds[q * count / 4..(q + 1) * count / 4];
                part.iter().sum::<f64>() / part.len() as f64
            })
            .collect();
        let mean = quarters.iter().sum::<f64>() / 4.0;
        let highest = quarters.iter().copied().fold(f64::MIN, f64::max);
        let lowest = quarters.iter().copied().fold(f64::MAX, f64::min);
        let expected = (highest - lowest) * 100.0 / mean;
        assert!(
            (kept.unwrap() - expected).abs() < 1e-9,
            "{last} vs {seconds:?}"
        );
    }
    let reading = document["sweep"]["database_reads"]["quarter_spread_pct"]
        .as_f64()
        .expect("the reading window's spread");
    assert!(reading >= 0.0, "{reading}");
    assert!(
        stderr.contains(&format!("(its quarters' loops/s spread {reading:.1}%)")),
        "{stderr}"
    );
}

/// `strata model predict --calibration calibration --from record` at
/// `sessions`, its JSON.
fn model_from_sweep(calibration: &Path, record: &Path, sessions: &str, dir: &Path) -> Value {
    let args = [
        "model",
        "predict",
        "--calibration",
        calibration.to_str().unwrap(),
        "--from",
        record.to_str().unwrap(),
        "--sessions",
        sessions,
    ];
    run_json(&args, dir)
}

/// `strata model predict --from` the sweep's Recording, with the
/// calibration it was predicted from, is the sweep's own prediction: the
/// same inputs read back from the Recording, the same model.
fn assert_model_predict_from_the_sweep_is_its_prediction(
    sweep: &Value,
    calibration: &Path,
    record: &Path,
    dir: &Path,
) {
    let model = model_from_sweep(calibration, record, "1,2,4", dir);
    let rate = |point: &Value| point["device_read_requests_per_s"].as_f64().unwrap();
    let from_recording: Vec<f64> = model["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(rate)
        .collect();
    let said: Vec<f64> = sweep["prediction"]
        .as_array()
        .unwrap()
        .iter()
        .map(rate)
        .collect();
    assert_eq!(from_recording.len(), 3, "{model}");
    for (again, before) in from_recording.iter().zip(&said) {
        assert!(
            (again - before).abs() < 1e-6 * before,
            "{from_recording:?} vs {said:?}"
        );
    }
    for window in WINDOWS {
        assert_device_slowdown(sweep, &model, window);
        assert_contended_cpu(sweep, &model, window);
    }
    assert_matches_schema(&model, "model.schema.json");
}

/// The windows of several sessions before a sweep: as the sweep keeps
/// each, and as the model's work takes it.
const WINDOWS: [(&str, &str); 2] = [
    ("database_contention", "contended_reads"),
    ("database_contention_at_cpus", "at_cpus_reads"),
];

/// A window's CPU per device read, as the sweep kept it (µs, a real one:
/// between 1 µs and 10 ms), is the model's (seconds).
fn assert_contended_cpu(sweep: &Value, model: &Value, (kept, taken): (&str, &str)) {
    let contention = &sweep[kept];
    if contention.is_null() {
        return;
    }
    let kept_us = contention["cpu_per_device_read_us"].as_f64().unwrap();
    assert!((1.0..10_000.0).contains(&kept_us), "{contention}");
    let model_s = model["work"][taken]["cpu_per_device_read_s"]
        .as_f64()
        .unwrap();
    assert!(
        (model_s - kept_us * 1e-6).abs() < 1e-12,
        "{model_s} vs {kept_us} µs"
    );
}

/// `document` is what docs/`schema` says.
fn assert_matches_schema(document: &Value, schema: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(schema);
    let schema_document: Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema_document).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(document)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "docs/{schema}: {errors:?}");
}

/// The device's slowdown at a window's count, computed by hand: its
/// device latency (in flight over r/s) over calibrate's at its depth;
/// calibrate's latency at a depth d (at least 1) is d over the rate
/// between its levels, each level's rate its outstanding over its mean
/// latency.
fn assert_device_slowdown(sweep: &Value, model: &Value, (kept, taken): (&str, &str)) {
    let contention = &sweep[kept];
    if contention.is_null() {
        return;
    }
    let levels: Vec<(f64, f64)> = model["curve"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|level| {
            let outstanding = level["outstanding"].as_f64().unwrap();
            (
                outstanding,
                outstanding / level["mean_latency_s"].as_f64().unwrap(),
            )
        })
        .collect();
    let latency_at = |depth: f64| {
        let depth = depth.max(1.0);
        depth / along(&levels, depth)
    };
    let number = |name: &str| contention[name].as_f64().unwrap();
    let in_flight = number("device_reads_in_flight");
    let writes_per_read = contention["device_writes_per_read"].as_f64().unwrap_or(0.0);
    let by_hand = in_flight
        / number("device_read_requests_per_s")
        / (latency_at(in_flight) * (1.0 + writes_per_read));
    let slowdown = model["work"][taken]["device_slowdown"].as_f64().unwrap();
    assert!(
        (slowdown - by_hand).abs() < 1e-9 * slowdown,
        "{slowdown} vs {by_hand}"
    );
}

/// The windows of several sessions before a 1, 2, 4 sweep, when the
/// machine has fewer than 4 CPUs: more sessions than CPUs, 3 × the CPUs
/// (at most 4), whose wait for the CPUs is fitted when tasks waited for
/// them; and as many sessions as CPUs where that is 2 or 3, whose wait is
/// fitted when its tasks waited or the other window's was.
fn assert_contention_window(sweep: &Value) {
    let cpus = std::thread::available_parallelism().unwrap().get() as u64;
    let (contention, at_cpus) = (
        &sweep["database_contention"],
        &sweep["database_contention_at_cpus"],
    );
    if cpus >= 4 {
        assert!(contention.is_null() && at_cpus.is_null(), "{sweep}");
        return;
    }
    let waited = |window: &Value| {
        window["cpu_pressure_pct"]
            .as_f64()
            .is_none_or(|pct| pct >= 20.0)
    };
    let fitted = waited(contention);
    assert_eq!(contention["fitted"], fitted, "{contention}");
    assert_window(contention, ((3 * cpus).min(4), cpus), fitted);
    match cpus {
        1 => assert!(at_cpus.is_null(), "{at_cpus}"),
        _ => {
            assert_eq!(at_cpus["fitted"], waited(at_cpus), "{at_cpus}");
            assert_window(at_cpus, (cpus, cpus), fitted || waited(at_cpus));
        }
    }
}

/// The line through `knots` (x, y; rising x) at `x`: the first's y before
/// them, the last's past them.
fn along(knots: &[(f64, f64)], x: f64) -> f64 {
    match knots.iter().position(|(at, _)| *at >= x) {
        Some(0) => knots[0].1,
        Some(i) => {
            let ((low, low_y), (high, high_y)) = (knots[i - 1], knots[i]);
            low_y + (x - low) / (high - low) * (high_y - low_y)
        }
        None => knots[knots.len() - 1].1,
    }
}

/// A window of `sessions` on `cpus`: what it reached and what the model
/// without a wait gives there, its device reads; its wait where
/// `fitted`: above 0 where the sessions reached less than the model
/// without it, 0 where they reached as much.
fn assert_window(window: &Value, (sessions, cpus): (u64, u64), fitted: bool) {
    assert_eq!(window["sessions"].as_u64(), Some(sessions), "{window}");
    assert_eq!(window["cpus"].as_u64(), Some(cpus));
    let measured = window["device_read_requests_per_s"].as_f64().unwrap();
    let every_cpu = window["predicted_with_every_cpu_per_s"].as_f64().unwrap();
    assert!(measured > 0.0 && every_cpu > 0.0, "{window}");
    for measured in ["device_reads_in_flight", "device_reads_per_block"] {
        assert!(
            window[measured].as_f64().unwrap() > 0.0,
            "{measured}: {window}"
        );
    }
    let wait_us = window["wait_per_device_read_us"].as_f64();
    match (fitted, wait_us) {
        (false, wait) => assert_eq!(wait, None, "{window}"),
        (true, Some(wait)) if measured >= every_cpu => assert_eq!(wait, 0.0, "{window}"),
        (true, Some(wait)) => assert!(wait > 0.0, "{window}"),
        (true, None) => panic!("a fitted window without its wait: {window}"),
    }
}

/// A 1, 2, 4 sweep's document and Recording: rising sessions each
/// connected in full, device reads at every point, a latency-target
/// answer and a knee that follow from the points, the database's CPU per
/// block measured cached and per device read, the prediction's errors
/// from the measurement, the document as docs/run.schema.json says.
fn assert_one_recording_with_every_point(document: &Value, record: &Path) {
    let sweep = &document["sweep"];
    let points = sweep["points"].as_array().unwrap();
    let sessions: Vec<u64> = points
        .iter()
        .map(|p| p["sessions"].as_u64().unwrap())
        .collect();
    assert_eq!(sessions, [1, 2, 4]);
    let device = |p: &Value| p["device_read_requests_per_s"].as_f64().unwrap();
    for point in points {
        assert!(device(point) > 0.0, "{point}");
        assert!(
            point["database_blocks_read_per_s"].as_f64().unwrap() > 0.0,
            "{point}"
        );
    }
    let best = points
        .iter()
        .filter(|p| p["statement_p99_ms"].as_f64().unwrap() <= 10_000.0)
        .max_by(|a, b| device(a).total_cmp(&device(b)))
        .unwrap();
    assert_eq!(sweep["best_under_target"], best["sessions"]);
    let power = |p: &Value| device(p) / p["statement_mean_ms"].as_f64().unwrap();
    let knee = points
        .iter()
        .max_by(|a, b| power(a).total_cmp(&power(b)))
        .unwrap();
    assert_eq!(sweep["knee"], knee["sessions"]);
    let cpu = &sweep["database_cpu"];
    assert!(cpu["buffer_hit_pct"].as_f64().unwrap() > 99.0, "{cpu}");
    assert!(cpu["cpu_per_block_us"].as_f64().unwrap() > 0.0, "{cpu}");
    let reads = &sweep["database_reads"];
    assert!(
        reads["device_read_requests"].as_u64().unwrap() > 0,
        "{reads}"
    );
    let per_read = reads["cpu_per_device_read_us"].as_f64().unwrap();
    let by_hand =
        reads["cpu_s"].as_f64().unwrap() * 1e6 / reads["device_read_requests"].as_f64().unwrap();
    assert!((per_read - by_hand).abs() < 1e-6 * by_hand, "{reads}");
    let per_block =
        reads["device_read_requests"].as_f64().unwrap() / reads["blocks"].as_f64().unwrap();
    let kept = reads["device_reads_per_block"].as_f64().unwrap();
    assert!((kept - per_block).abs() < 1e-9 * per_block, "{reads}");
    assert!(kept > 0.5, "{reads}");
    assert!(
        reads["device_reads_in_flight"].as_f64().unwrap() > 0.0,
        "{reads}"
    );
    // The anchor's own r_await, which the one-session point is held to.
    assert!(
        reads["device_read_latency_us"].as_f64().unwrap() > 0.0,
        "{reads}"
    );
    for point in points {
        // Little's law over the data devices: in flight = r/s × r_await,
        // r/s over the span the edges' counters cover.
        let in_flight = point["device_reads_in_flight"].as_f64().unwrap();
        let latency_us = point["device_read_latency_us"].as_f64().unwrap();
        let per_s = in_flight / latency_us * 1e6;
        assert!(
            (per_s - device(point)).abs() < 1e-6 * device(point),
            "{point}"
        );
        assert!(
            point["storage_latency_us"].as_f64().unwrap() > 0.0,
            "{point}"
        );
    }
    assert_contention_window(sweep);
    let prediction = sweep["prediction"].as_array().unwrap();
    assert_eq!(prediction.len(), 3);
    // Each statement's p99: its predicted mean × the statements' p99 over
    // their mean, the one-session reading window's, linear through each
    // window's of several sessions at its session count, flat past them.
    let spread_of = |window: &Value| {
        window["statement_p99_ms"].as_f64().unwrap() / window["statement_mean_ms"].as_f64().unwrap()
    };
    let one = spread_of(&sweep["database_reads"]);
    let mut knots = vec![(1.0, one)];
    for (kept, _) in WINDOWS.iter().rev() {
        let window = &sweep[*kept];
        if !window.is_null() {
            knots.push((window["sessions"].as_f64().unwrap(), spread_of(window)));
        }
    }
    assert!(knots.iter().all(|(_, spread)| *spread >= 1.0), "{knots:?}");
    for (predicted, point) in prediction.iter().zip(points) {
        let spread = along(&knots, predicted["sessions"].as_f64().unwrap());
        let expected = (device(point) - device(predicted)) * 100.0 / device(predicted);
        let error = predicted["device_error_pct"].as_f64().unwrap();
        assert!((error - expected).abs() < 1e-6, "{predicted} vs {point}");
        let p99 = predicted["statement_p99_ms"].as_f64().unwrap();
        let by_hand = predicted["statement_mean_ms"].as_f64().unwrap() * spread;
        assert!((p99 - by_hand).abs() < 1e-9 * by_hand, "{predicted}");
        assert_error_sources(predicted, point);
        assert!(
            point["storage_share_pct"].as_f64().unwrap() > 0.0,
            "{point}"
        );
    }
    assert_matches_schema(document, "run.schema.json");
    let recording = Recording::read(record).unwrap();
    let whole: Vec<_> = recording.sweep_points().collect();
    assert_eq!(whole.len(), 3);
    for (point, sessions) in whole.iter().zip([1, 2, 4]) {
        assert_eq!(point.sessions, sessions);
        assert_eq!(point.figures.sessions.started, sessions);
        assert_eq!(point.figures.sessions.failed, 0);
    }
    let kept = recording.sweep().unwrap();
    assert_eq!(kept.knee, sweep["knee"].as_u64().map(|n| n as u32));
    assert_eq!(recording.run_result().unwrap().figures.sessions.started, 4);
}

/// The point's errors taken apart: the reads in flight and the time per
/// read against the model's (Little's law on both sides), which multiply
/// back to the r/s error, the CPU per device read and the device reads
/// per block against the model's, and the p99's mean and spread, which
/// multiply back to its error.
fn assert_error_sources(predicted: &Value, point: &Value) {
    let figure = |of: &Value, name: &str| of[name].as_f64().expect(name);
    let sources = &predicted["error_sources"];
    let pct = |name: &str| 1.0 + figure(sources, name) / 100.0;
    let model_latency_us = figure(predicted, "device_outstanding")
        / figure(predicted, "device_read_requests_per_s")
        * 1e6;
    let kept = figure(predicted, "device_read_latency_us");
    assert!((kept - model_latency_us).abs() < 1e-6 * kept, "{predicted}");
    for (measured, model, name) in [
        (
            "device_reads_in_flight",
            "device_outstanding",
            "device_reads_in_flight_pct",
        ),
        (
            "device_read_latency_us",
            "device_read_latency_us",
            "device_read_latency_pct",
        ),
        (
            "cpu_per_device_read_us",
            "cpu_per_device_read_us",
            "cpu_per_device_read_pct",
        ),
        (
            "device_reads_per_block",
            "device_reads_per_block",
            "device_reads_per_block_pct",
        ),
        (
            "statement_mean_ms",
            "statement_mean_ms",
            "statement_mean_pct",
        ),
    ] {
        let by_hand = figure(point, measured) / figure(predicted, model);
        assert!(
            (pct(name) - by_hand).abs() < 1e-9,
            "{name}: {predicted} vs {point}"
        );
    }
    let device = 1.0 + figure(predicted, "device_error_pct") / 100.0;
    let factors = pct("device_reads_in_flight_pct") / pct("device_read_latency_pct");
    assert!((device - factors).abs() < 1e-9, "{predicted}");
    let p99 = 1.0 + figure(predicted, "statement_p99_error_pct") / 100.0;
    let factors = pct("statement_mean_pct") * pct("statement_p99_over_mean_pct");
    assert!((p99 - factors).abs() < 1e-9, "{predicted}");
}

#[test]
fn a_mariadb_sweep_is_predicted_and_measured_on_its_throwaway_server() {
    let _alone = MEASURING.write().unwrap_or_else(PoisonError::into_inner);
    let (_device, dir) = own_filesystem(768);
    let of_8_kib = calibrate(&dir);
    let refused = run(
        &[
            "run",
            "--engine",
            "mariadb",
            "--sweep-sessions",
            "1,2",
            "--predict",
            of_8_kib.to_str().unwrap(),
        ],
        &dir,
    );
    let stderr = stderr_of(&refused);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("no point of 16KiB random reads"),
        "{stderr}"
    );
    assert!(stderr.contains("--bs 16KiB"), "{stderr}");
    assert!(
        !stderr.contains("loading"),
        "refused before any work: {stderr}"
    );
    // InnoDB's lookups on shuffled keys read in no order: batches of 16 in
    // the order drawn, each timed whole (enough of them in 1 s per level).
    let options = [
        "--max-qd",
        "4",
        "--bs",
        "16KiB",
        "--distribution",
        "batches:16",
    ];
    let calibration = calibrate_with(&dir, "cal16.strata", &options);
    let record = dir.join("sweep.strata");
    let args = [
        "run",
        "--engine",
        "mariadb",
        "--schemas",
        "2",
        "--scale",
        "32MiB",
        "--sweep-sessions",
        "1,2,4",
        "--warmup",
        "1s",
        "--duration",
        "3s",
        "--latency-target",
        "10s",
        "--predict",
        calibration.to_str().unwrap(),
        "--record",
        record.to_str().unwrap(),
        "--json",
    ];
    let output = run(&args, &dir);
    let stderr = stderr_of(&output);
    assert!(output.status.success(), "{stderr}");
    let predicted_at = stderr.find("prediction (closed MVA)").expect(&stderr);
    assert!(predicted_at < stderr.find("sweep point 1/3: 1 sessions").expect(&stderr));
    assert!(stderr.contains("no prefetch"), "{stderr}");
    assert!(
        stderr.contains("statement p99 from the database's own statements at one session"),
        "{stderr}"
    );
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["environment"]["engine"], "mariadb");
    assert_one_recording_with_every_point(&document, &record);
    let sweep = &document["sweep"];
    assert_eq!(sweep["database_reads"]["prefetch"], false);
    for point in sweep["points"].as_array().unwrap() {
        // The sweep turns performance_schema on in the throwaway server:
        // InnoDB's own time per read of its data files.
        assert!(
            point["block_read_latency_us"].as_f64().unwrap() > 0.0,
            "{point}"
        );
        let blocks = point["database_blocks_read_per_s"].as_f64().unwrap();
        let device = point["device_read_requests_per_s"].as_f64().unwrap();
        // Both over the edges' interval, read beside each other: 0.967 to
        // 0.998 seen, and 0.949 with the whole suite running (some task
        // waiting for a CPU 65% of the window, the edges further apart).
        assert!(
            device >= 0.9 * blocks,
            "O_DIRECT: every page read reaches the device: {point}"
        );
    }
    let left: Vec<String> = strata_testkit::files::names(&dir)
        .into_iter()
        .filter(|name| name.starts_with("strata-mariadb-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(strata_processes_in(&dir).is_empty());
}

#[test]
fn ctrl_c_in_a_sweep_keeps_the_points_done_and_names_those_not_run() {
    let _beside = beside_the_others();
    let (_device, dir) = own_filesystem(512);
    let record = dir.join("stopped.strata");
    let args = [
        "run",
        "--schemas",
        "2",
        "--scale",
        "32MiB",
        "--shared-buffers",
        "16MiB",
        "--sweep-sessions",
        "1,2,4",
        "--warmup",
        "1s",
        "--duration",
        "4s",
        "--record",
        record.to_str().unwrap(),
        "--json",
    ];
    let (child, lines) = spawn_with_stderr_lines(&args, &dir);
    wait_for_phase(&lines, "sweep point 2/3: 2 sessions");
    wait_for_phase(&lines, "running");
    std::thread::sleep(std::time::Duration::from_secs(2));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let document: Value = serde_json::from_slice(&output.stdout).expect("the partial sweep");
    let sweep = &document["sweep"];
    let sessions: Vec<u64> = sweep["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["sessions"].as_u64().unwrap())
        .collect();
    assert_eq!(
        sessions,
        [1, 2],
        "the point done and the one stopped: {sweep}"
    );
    assert_eq!(sweep["not_run"], serde_json::json!([4]));
    assert_eq!(document["result"]["interrupted"], true);
    let recording = Recording::read(&record).unwrap();
    assert_eq!(recording.sweep_points().count(), 2);
    assert_nothing_left_behind(&dir);
}
