//! `strata run` on throwaway PostgreSQL 18 clusters (`--pg-bin`, binaries
//! from scripts/install-test-deps) next to Debian's 15: the database's own
//! read requests and bytes from pg_stat_io beside the devices' requests,
//! WAL writes and syncs from pg_stat_io, `--io-method` and `--direct-io`
//! and the read path the result reports, and on 15 the 18-only figures
//! absent with their reason and the 18-only options refused. Each cluster
//! lives on a filesystem of its own and is gone afterwards.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use strata_testkit::loopdev::own_filesystem;
use strata_testkit::postgres::pg18_bin_dir;

const SMALL: [&str; 10] = [
    "--schemas",
    "2",
    "--scale",
    "2048",
    "--shared-buffers",
    "16MiB",
    "--duration",
    "3s",
    "--warmup",
    "1s",
];

const PG15_BIN: &str = "/usr/lib/postgresql/15/bin";

fn run_with(bin_dir: &Path, dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["run", "--pg-bin", bin_dir.to_str().unwrap()];
    args.extend(SMALL);
    args.extend(extra);
    let document = run_json(&args, dir);
    assert_nothing_left_behind(dir);
    document
}

/// The server-process group of `backend_type` that was alive at the end.
fn process_group<'a>(result: &'a Value, backend_type: &str) -> Option<&'a Value> {
    result["cpu"]["server_processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|group| group["backend_type"] == backend_type && group["exited"] == false)
}

/// Every server process is named by its role: the auxiliary processes by
/// `pg_stat_activity` or their title, the sessions' backends as the client
/// backends closed at the window's end.
fn assert_every_process_named(result: &Value) {
    let groups = result["cpu"]["server_processes"].as_array().unwrap();
    let names: Vec<&str> = groups
        .iter()
        .map(|group| group["backend_type"].as_str().unwrap())
        .collect();
    for role in [
        "postmaster",
        "checkpointer",
        "background writer",
        "walwriter",
    ] {
        assert!(names.contains(&role), "{role} missing: {names:?}");
    }
    assert!(
        !names
            .iter()
            .any(|name| name.contains("untitled") || name.contains("not in pg_stat_activity")),
        "{names:?}"
    );
    let sessions = groups
        .iter()
        .find(|group| group["exited"] == true)
        .expect("the sessions' backends, closed at the window's end");
    assert_eq!(sessions["backend_type"], "client backend", "{names:?}");
}

#[test]
fn pg18_read_requests_and_bytes_agree_with_the_device_and_io_workers_do_the_reads() {
    let (_device, dir) = own_filesystem(512);
    let document = run_with(&pg18_bin_dir(), &dir, &["--io-method", "worker"]);
    assert_every_process_named(&document["result"]);
    assert_eq!(
        document["environment"]["server_version_num"]
            .as_u64()
            .unwrap()
            / 10_000,
        18
    );
    let read_path = &document["environment"]["read_path"];
    assert_eq!(read_path["io_method"], "worker");
    assert_eq!(read_path["data_files"], "buffered");
    let result = &document["result"];
    let database = &result["database"];
    let requests = database["read_requests"].as_f64().expect("read_requests");
    let bytes = database["read_bytes"].as_f64().expect("read_bytes");
    let blocks = database["blocks_read"].as_f64().unwrap();
    let device_requests = result["devices"][0]["read_requests"].as_f64().unwrap();
    eprintln!("PG18: {requests} read requests ({bytes} bytes), {blocks} blocks read, {device_requests} device read requests");
    assert!(device_requests > 0.0, "{result}");
    assert!(
        requests >= device_requests * 0.5 && requests <= blocks,
        "database read requests {requests} against device requests {device_requests} and blocks read {blocks}"
    );
    // pg_stat_io covers the whole cluster, blks_read this database only.
    assert!(
        bytes >= requests * 8192.0 && bytes <= blocks * 8192.0 * 1.01,
        "{bytes} bytes for {requests} requests of {blocks} blocks"
    );
    assert!(database.get("unavailable").is_none(), "{database}");
    let workers = process_group(result, "io worker").expect("an io worker group");
    let device_bytes = result["devices"][0]["read_bytes"].as_f64().unwrap();
    assert!(
        workers["device_read_bytes"].as_f64().unwrap() > device_bytes / 2.0,
        "the io workers issued the reads: {workers} of {device_bytes} bytes"
    );
}

#[test]
fn pg18_updates_give_wal_writes_and_syncs_from_pg_stat_io() {
    let (_device, dir) = own_filesystem(512);
    let document = run_with(&pg18_bin_dir(), &dir, &["--update-pct", "50"]);
    let database = &document["result"]["database"];
    assert!(database["wal_writes"].as_f64().unwrap() > 0.0, "{database}");
    assert!(database["wal_syncs"].as_f64().unwrap() > 0.0, "{database}");
    assert!(database["wal_bytes"].as_f64().unwrap() > 0.0, "{database}");
}

#[test]
fn pg18_sync_reads_with_direct_io_say_so_and_the_backends_do_the_reads() {
    let (_device, dir) = own_filesystem(512);
    let document = run_with(
        &pg18_bin_dir(),
        &dir,
        &["--io-method", "sync", "--direct-io"],
    );
    let read_path = &document["environment"]["read_path"];
    assert_eq!(read_path["io_method"], "sync");
    assert_eq!(read_path["data_files"], "direct");
    let result = &document["result"];
    assert!(result["database"]["read_requests"].as_f64().unwrap() > 0.0);
    assert!(process_group(result, "io worker").is_none(), "{result}");
    let backends = result["cpu"]["server_processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|group| group["exited"] == true)
        .expect("the sessions' backends exited in the window");
    assert!(backends["backend_type"]
        .as_str()
        .unwrap()
        .contains("client backend"));
    assert!(backends["device_read_bytes"].as_f64().unwrap() > 0.0);
}

#[test]
fn pg15_lacks_the_18_only_figures_with_their_reason_and_refuses_18_only_options() {
    let (_device, dir) = own_filesystem(512);
    let pg15 = Path::new(PG15_BIN);
    let document = run_with(pg15, &dir, &[]);
    assert_every_process_named(&document["result"]);
    let database = &document["result"]["database"];
    for field in ["read_requests", "read_bytes", "read_requests_per_s"] {
        assert!(database.get(field).is_none(), "{field} on 15: {database}");
    }
    for field in [
        "read_requests",
        "read_requests_per_s",
        "read_bytes",
        "read_mb_per_s",
    ] {
        let reason = database["unavailable"][field].as_str().unwrap_or_default();
        assert!(
            reason.contains("pg_stat_io arrived in 16"),
            "{field}: {reason}"
        );
    }
    assert!(
        database["wal_syncs"].is_number(),
        "pg_stat_wal has them on 15"
    );
    assert!(document["environment"]["read_path"]["unavailable"]["io_method"].is_string());
    for (option, expected) in [
        (vec!["--io-method", "worker"], "--io-method worker"),
        (vec!["--direct-io"], "--direct-io"),
    ] {
        let mut args = vec!["run", "--pg-bin", PG15_BIN];
        args.extend(SMALL);
        args.extend(option);
        let output = run(&args, &dir);
        let stderr = stderr_of(&output);
        assert!(!output.status.success());
        assert!(stderr.contains(expected), "{stderr}");
        assert!(stderr.contains("PostgreSQL 15"), "{stderr}");
        assert_nothing_left_behind(&dir);
    }
    let output = run(&["run", "--io-method", "direct"], &dir);
    assert!(stderr_of(&output).contains("sync, worker, io_uring"));
}

#[test]
fn pg18_build_without_io_uring_refuses_it_naming_what_it_offers() {
    let (_device, dir) = own_filesystem(512);
    let bin_dir = pg18_bin_dir();
    let mut args = vec!["run", "--pg-bin", bin_dir.to_str().unwrap()];
    args.extend(SMALL);
    args.extend(["--io-method", "io_uring"]);
    let output = run(&args, &dir);
    let stderr = stderr_of(&output);
    assert!(!output.status.success());
    assert!(
        stderr.contains("--io-method io_uring") && stderr.contains("accepts only sync, worker"),
        "{stderr}"
    );
    assert_nothing_left_behind(&dir);
}
