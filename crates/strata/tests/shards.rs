//! Many drivers, one run: three shards (`strata run --shard I/3`) as three
//! processes against one kept cluster meet at the rendezvous and start
//! together; merged, their loops and statements are the sum of the shards',
//! the merged select histogram is every statement's (its p99 is the p99 of
//! the union, computed here from the shards' own histograms), the
//! database's counters are counted once, and the windows began under 50 ms
//! apart. A shard killed mid-run is named missing; a shard whose fellows
//! never come fails naming them; a shard of another run is refused.

mod common;

use common::*;
use hdrhistogram::serialization::Deserializer;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use strata_recording::Recording;

const PLAN: [&str; 4] = ["--schemas", "3", "--scale", "8MiB"];

/// Shard `index` of `count` of `run_id` against `dbs` with `more`
/// options, recording to `shard-RUN-I.strata`.
fn shard_on(
    dbs: &[&str],
    run_id: &str,
    (index, count): (u32, u32),
    more: &[&str],
    dir: &Path,
) -> (Child, PathBuf) {
    let record = dir.join(format!("shard-{run_id}-{index}.strata"));
    let shard = format!("{index}/{count}");
    let mut args = vec!["run"];
    for db in dbs {
        args.extend(["--db", db]);
    }
    args.extend(["--shard", &shard, "--run-id", run_id, "--json", "--record"]);
    args.push(record.to_str().unwrap());
    args.extend(more);
    let child = strata()
        .args(&args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (child, record)
}

/// Shard `index` of `count` of `run_id` on the kept cluster.
fn shard(
    cluster: &KeptCluster,
    run_id: &str,
    (index, count): (u32, u32),
    dir: &Path,
) -> (Child, PathBuf) {
    let mut more = vec![
        "--warmup",
        "1s",
        "--duration",
        "3s",
        "--rendezvous-timeout",
        "60s",
    ];
    more.extend(PLAN);
    shard_on(&[&cluster.connection], run_id, (index, count), &more, dir)
}

fn finished(child: Child) -> serde_json::Value {
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "a shard failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The p99 of every value the shards' histograms hold, from their
/// recorded values: the rank-based percentile of the union, ns.
fn union_p99_ns(shards: &[Recording]) -> u64 {
    let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
    for shard in shards {
        let encoded = &shard.run_result().unwrap().histograms.select_lat_ns_hdr;
        let bytes =
            base64::Engine::decode(&base64::engine::general_purpose::STANDARD, encoded).unwrap();
        let histogram: hdrhistogram::Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .unwrap();
        for value in histogram.iter_recorded() {
            *counts.entry(value.value_iterated_to()).or_default() += value.count_at_value();
        }
    }
    let total: u64 = counts.values().sum();
    let rank = (0.99 * total as f64).ceil() as u64;
    let mut seen = 0;
    for (value, count) in counts {
        seen += count;
        if seen >= rank {
            return value;
        }
    }
    panic!("no values")
}

#[test]
fn three_shards_start_together_and_merge_exactly() {
    let dir = scratch();
    let cluster = KeptCluster::set_up(&PLAN, dir.path());
    let started: Vec<(Child, PathBuf)> = (1..=3)
        .map(|index| shard(&cluster, "merge-test", (index, 3), dir.path()))
        .collect();
    let mut paths = Vec::new();
    let mut documents = Vec::new();
    for (child, path) in started {
        documents.push(finished(child));
        paths.push(path);
    }
    let merged_path = dir.path().join("merged.strata");
    let mut merge = vec!["merge", "-o", merged_path.to_str().unwrap()];
    merge.extend(paths.iter().map(|path| path.to_str().unwrap()));
    let merged_run = run(&merge, dir.path());
    assert!(merged_run.status.success(), "{}", stderr_of(&merged_run));
    let merged = Recording::read(&merged_path).unwrap();
    let figures = &merged.run_result().unwrap().figures;
    let sum = |field: &str| -> u64 {
        documents
            .iter()
            .map(|document| document["result"]["workload"][field].as_u64().unwrap())
            .sum()
    };
    assert_eq!(figures.workload.loops, sum("loops"));
    assert_eq!(figures.workload.sql_statements, sum("sql_statements"));
    let sessions: Vec<u64> = documents
        .iter()
        .map(|document| document["result"]["sessions"]["started"].as_u64().unwrap())
        .collect();
    assert_eq!(sessions, [1, 1, 1], "one session of each schema per shard");

    let shards: Vec<Recording> = paths
        .iter()
        .map(|path| Recording::read(path).unwrap())
        .collect();
    let select = &figures.workload.operations["select"].latency;
    let counts: u64 = documents
        .iter()
        .map(|document| {
            document["result"]["workload"]["operations"]["select"]["count"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert_eq!(select.count, counts, "every statement of every shard");
    let union_ns = union_p99_ns(&shards) as f64;
    assert!(
        (select.lat_p99_us * 1e3 - union_ns).abs() <= 1.0,
        "merged p99 {} µs, the union's {} µs",
        select.lat_p99_us,
        union_ns / 1e3
    );

    let commits =
        |document: &serde_json::Value| document["result"]["database"]["commits"].as_f64().unwrap();
    let database = figures.database.as_ref().unwrap();
    assert_eq!(
        database.commits,
        commits(&documents[0]),
        "the server's counters once"
    );
    let each: f64 = documents.iter().map(commits).sum();
    assert!(
        database.commits < each,
        "not once per shard: {} of {each}",
        database.commits
    );

    let merged_shards = merged.header.environment.merged_shards.as_ref().unwrap();
    let skew_ms = merged_shards.start_skew_ms.unwrap();
    eprintln!(
        "start skew {skew_ms:.1} ms; loops {}",
        figures.workload.loops
    );
    assert!(
        skew_ms < 50.0,
        "the shards' windows began {skew_ms} ms apart"
    );
    assert!(merged_shards.missing.is_empty());

    let mut report = vec!["report"];
    report.extend(paths.iter().map(|path| path.to_str().unwrap()));
    let shown = run(&report, dir.path());
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains("3 of 3 of run merge-test") && text.contains("Shards"),
        "{text}"
    );
}

#[test]
fn a_missing_shard_is_named_and_another_run_s_is_refused() {
    let dir = scratch();
    let cluster = KeptCluster::set_up(&PLAN, dir.path());
    let mut started: Vec<(Child, PathBuf)> = (1..=3)
        .map(|index| shard(&cluster, "kill-test", (index, 3), dir.path()))
        .collect();
    let (mut killed, _) = started.pop().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(4));
    killed.kill().unwrap();
    let _ = killed.wait();
    let paths: Vec<PathBuf> = started
        .into_iter()
        .map(|(child, path)| {
            finished(child);
            path
        })
        .collect();
    let mut args = vec!["report", "--json"];
    args.extend(paths.iter().map(|path| path.to_str().unwrap()));
    let output = run(&args, dir.path());
    assert!(output.status.success(), "{}", stderr_of(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("shards 3 of 3 of run kill-test are missing") && text.contains("MISSING"),
        "{text}"
    );

    let mut lonely = vec![
        "--warmup",
        "0s",
        "--duration",
        "1s",
        "--rendezvous-timeout",
        "2s",
    ];
    lonely.extend(PLAN);
    let (alone, _) = shard_on(
        &[&cluster.connection],
        "lonely",
        (1, 2),
        &lonely,
        dir.path(),
    );
    let waited = alone.wait_with_output().unwrap();
    assert!(!waited.status.success(), "a shard alone does not run");
    let said = String::from_utf8_lossy(&waited.stderr);
    assert!(
        said.contains("shards 2 of 2 of run lonely did not check in"),
        "{said}"
    );

    let (other, other_path) = shard(&cluster, "other-run", (1, 1), dir.path());
    let _ = other.wait_with_output();
    let mixed = run(
        &[
            "report",
            paths[0].to_str().unwrap(),
            other_path.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(!mixed.status.success());
    assert!(
        stderr_of(&mixed).contains("shards of different runs are not merged"),
        "{}",
        stderr_of(&mixed)
    );
}

/// Shards spread over two servers (`--db A --db B`): shard 1 drives A,
/// shard 2 drives B; merged, the database's commits are both servers'
/// (each counted once), and the machine's devices, which both servers share
/// here, are listed once.
#[test]
fn shards_on_two_servers_count_each_server_once() {
    let dir = scratch();
    let plan = ["--schemas", "2", "--scale", "8MiB"];
    let servers = [
        KeptCluster::set_up(&plan, dir.path()),
        KeptCluster::set_up(&plan, dir.path()),
    ];
    let dbs = [
        servers[0].connection.as_str(),
        servers[1].connection.as_str(),
    ];
    let mut more = vec!["--warmup", "0s", "--duration", "2s"];
    more.extend(plan);
    let children: Vec<(Child, PathBuf)> = (1..=2)
        .map(|index| shard_on(&dbs, "two-servers", (index, 2), &more, dir.path()))
        .collect();
    let mut documents = Vec::new();
    let mut paths = Vec::new();
    for (child, path) in children {
        documents.push(finished(child));
        paths.push(path);
    }
    let servers_seen: Vec<&str> = documents
        .iter()
        .map(|document| document["environment"]["shard"]["server"].as_str().unwrap())
        .collect();
    assert_ne!(
        servers_seen[0], servers_seen[1],
        "two servers: {servers_seen:?}"
    );
    let merged = strata_run::merge::merge_files(&paths).unwrap();
    let figures = &merged.run_result().unwrap().figures;
    let commits: f64 = documents
        .iter()
        .map(|document| document["result"]["database"]["commits"].as_f64().unwrap())
        .sum();
    assert_eq!(figures.database.as_ref().unwrap().commits, commits);
    let first_devices = documents[0]["result"]["devices"].as_array().unwrap().len();
    assert_eq!(
        figures.devices.len(),
        first_devices,
        "one machine's devices once"
    );
}
