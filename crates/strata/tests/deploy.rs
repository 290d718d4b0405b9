//! The Kubernetes manifests of deploy/kubernetes/, checked offline: each
//! parses as what it says it is; the shards' Indexed Job runs as many pods
//! at once as it has completions and as `--shards` says; every variable its
//! command uses is defined; every mount has its volume; and each
//! container's command, run here as its shell would run it (the strata
//! binary on PATH, the pod's variables set), is one strata accepts: it gets
//! past its options to the first thing a pod would do.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn manifest(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy/kubernetes")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    serde_yaml::from_str(&text).unwrap_or_else(|error| panic!("{name}: {error}"))
}

fn container(workload: &Value) -> &Value {
    &workload["spec"]["template"]["spec"]["containers"][0]
}

/// Each volume mount names one of the pod's volumes.
fn mounts_have_volumes(workload: &Value) {
    let pod = &workload["spec"]["template"]["spec"];
    let volumes: Vec<&str> = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|volume| volume["name"].as_str().unwrap())
        .collect();
    for mount in container(workload)["volumeMounts"].as_array().unwrap() {
        let name = mount["name"].as_str().unwrap();
        assert!(volumes.contains(&name), "mount {name} has no volume");
    }
}

/// The container's `sh -c` script run here with `env`, strata on PATH and
/// its `/recordings/` volume under `dir`; its stderr.
fn run_script(workload: &Value, env: &[(&str, &str)], dir: &Path) -> String {
    let container = container(workload);
    assert_eq!(container["command"], serde_json::json!(["sh", "-c"]));
    let recordings = dir.join("recordings");
    std::fs::create_dir_all(&recordings).unwrap();
    let script = container["args"][0]
        .as_str()
        .unwrap()
        .replace("/recordings/", &format!("{}/", recordings.display()));
    let bin = Path::new(env!("CARGO_BIN_EXE_strata")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let output = std::process::Command::new("sh")
        .args(["-c", &script])
        .env("PATH", path)
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_shards_job_is_an_indexed_job_whose_pods_strata_accepts() {
    let job = manifest("strata-shards-job.yaml");
    assert_eq!(job["apiVersion"], "batch/v1");
    assert_eq!(job["kind"], "Job");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(
        spec["completions"], spec["parallelism"],
        "every shard at once"
    );
    let script = container(&job)["args"][0].as_str().unwrap();
    let shards = format!("--shards {}", spec["completions"]);
    assert!(script.contains(&shards), "{script} lacks {shards}");
    let defined: Vec<&str> = container(&job)["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|variable| variable["name"].as_str().unwrap())
        .collect();
    for used in ["STRATA_DB", "RUN_ID"] {
        assert!(defined.contains(&used), "{used} is used but not defined");
    }
    mounts_have_volumes(&job);
    let dir = scratch();
    let stderr = run_script(
        &job,
        &[
            ("STRATA_DB", "host=/nonexistent port=1 user=strata dbname=x"),
            ("RUN_ID", "strata-run-1"),
            ("JOB_COMPLETION_INDEX", "0"),
        ],
        dir.path(),
    );
    assert!(
        !stderr.contains("Usage:"),
        "strata refused the pod's options: {stderr}"
    );
    assert!(stderr.contains("cannot connect to PostgreSQL"), "{stderr}");
    let recording = dir.path().join("recordings/strata-run-1-1.strata");
    let report = run(&["report", recording.to_str().unwrap()], dir.path());
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(text.contains("cannot connect to PostgreSQL"), "{text}");
}

#[test]
fn the_merge_job_and_the_agents_daemonset_are_well_formed() {
    let merge = manifest("strata-merge-job.yaml");
    assert_eq!(merge["kind"], "Job");
    mounts_have_volumes(&merge);
    let dir = scratch();
    let stderr = run_script(&merge, &[], dir.path());
    assert!(!stderr.contains("Usage:"), "{stderr}");
    assert!(stderr.contains("recordings/strata-run-1-*"), "{stderr}");

    let agents = manifest("strata-agent-daemonset.yaml");
    assert_eq!(agents["kind"], "DaemonSet");
    let spec = &agents["spec"];
    assert_eq!(
        spec["selector"]["matchLabels"],
        spec["template"]["metadata"]["labels"]
    );
    mounts_have_volumes(&agents);
    let container = container(&agents);
    assert_eq!(container["command"], serde_json::json!(["strata"]));
    let mut args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arg| {
            let arg = arg.as_str().unwrap().replace("$(NODE_NAME)", "node-1");
            arg.replace("0.0.0.0:9477", "127.0.0.1:0")
        })
        .collect();
    args.extend(["--count", "1", "--interval", "100ms"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let sampled = run(&args, dir.path());
    assert!(sampled.status.success(), "{}", stderr_of(&sampled));
}
