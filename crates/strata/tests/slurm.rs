//! The shards under a real scheduler: a one-node Slurm (Debian's slurmctld,
//! slurmd and munge, started by the test) runs `deploy/slurm/strata-run.sbatch`
//! with three tasks; Slurm gives each its shard (SLURM_PROCID of
//! SLURM_NTASKS) and the run its id (the job's), and the script's last
//! step merges the three Recordings into one run.

mod common;

use common::*;
use strata_recording::Recording;
use strata_testkit::slurm::OneNodeSlurm;

#[test]
fn sbatch_runs_three_shards_that_merge_into_one_run() {
    let dir = scratch();
    let plan = ["--schemas", "3", "--scale", "8MiB"];
    let cluster = KeptCluster::set_up(&plan, dir.path());
    let slurm = OneNodeSlurm::start(4);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/slurm/strata-run.sbatch"
    );
    let output = std::process::Command::new("sbatch")
        .args(["--wait", "--ntasks=3"])
        .arg(format!("--chdir={}", dir.path().display()))
        .arg(script)
        .args(plan)
        .args(["--warmup", "1s", "--duration", "3s"])
        .envs(slurm.env())
        .env("STRATA_DB", &cluster.connection)
        .env("STRATA", env!("CARGO_BIN_EXE_strata"))
        .output()
        .expect("sbatch (slurm-client): run scripts/install-test-deps");
    let said = String::from_utf8_lossy(&output.stdout);
    let job = said
        .split_whitespace()
        .last()
        .unwrap_or_else(|| panic!("sbatch said {said}"))
        .to_string();
    let log =
        std::fs::read_to_string(dir.path().join(format!("strata-{job}.out"))).unwrap_or_default();
    assert!(output.status.success(), "the job failed: {said}\n{log}");
    let merged = Recording::read(&dir.path().join(format!("strata-{job}.strata")))
        .unwrap_or_else(|error| panic!("{error:#}\n{log}"));
    let shards = merged.header.environment.merged_shards.as_ref().unwrap();
    assert_eq!(shards.run_id, format!("slurm-{job}"));
    let numbers: Vec<u32> = shards
        .merged
        .iter()
        .map(|summary| summary.shard.shard)
        .collect();
    assert_eq!(numbers, [1, 2, 3]);
    assert!(shards.missing.is_empty());
    let loops: u64 = shards.merged.iter().map(|summary| summary.loops).sum();
    assert_eq!(merged.run_result().unwrap().figures.workload.loops, loops);
    eprintln!(
        "Slurm job {job}: {loops} loops, start skew {:?} ms",
        shards.start_skew_ms
    );
}
