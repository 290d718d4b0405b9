//! What the MariaDB tests share: a silent observer, run options, the
//! machine's server, and checks that a throwaway server left nothing behind.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;
use strata_mariadb::{MariaDbRunConfig, MariaDbServer, ServerOptions};
use strata_run::outcome::RunObserver;
use strata_slob::load::LoadProgress;
use strata_slob::schema::SchemaPlan;
use strata_slob::session::{AccessDistribution, DriverOptions, StopAfter, WorkloadOptions};

/// The MariaDB running on the machine.
pub const MACHINE_URL: &str = "mysql://root@127.0.0.1:3306";
pub const START_HINT: &str =
    "start it with: start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd";

pub struct Quiet;

impl RunObserver for Quiet {
    fn phase(&mut self, _message: &str) {}
    fn loading(&mut self, _progress: &LoadProgress) {}
    fn running(
        &mut self,
        _elapsed: Duration,
        _expected: Option<Duration>,
        _loops: u64,
        _alive: u64,
    ) {
    }
}

pub fn plan(schemas: u32, blocks: u64) -> SchemaPlan {
    SchemaPlan {
        schemas,
        single_schema: false,
        blocks_per_schema: blocks,
        scan_table_blocks: 0,
        random_data: true,
    }
}

pub fn workload(update_pct: f64) -> WorkloadOptions {
    WorkloadOptions {
        work_unit: 16,
        update_pct,
        update_work_unit: 4,
        scan_pct: 0.0,
        think_time: None,
        think_every: 1,
        hotspot: None,
        hot_schema_every: None,
        distribution: AccessDistribution::Uniform,
    }
}

pub fn driver(plan: SchemaPlan, update_pct: f64, threads_per_schema: u32) -> DriverOptions {
    DriverOptions {
        plan,
        workload: workload(update_pct),
        threads_per_schema,
        sessions: None,
        stop_after: StopAfter::Duration {
            warmup: Duration::from_millis(500),
            duration: Duration::from_secs(2),
        },
        seed: 42,
        tolerate_failures: false,
        outlier_threshold: None,
    }
}

/// A directory for throwaway servers, in cargo's scratch space.
pub fn parent_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("strata-mariadb-tests");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `parent`, or a directory on its filesystem that the `mysql` account can
/// reach when `parent` sits under a private directory.
pub fn server_options(parent: &Path) -> ServerOptions {
    let request = strata_db::workdir::WorkDirRequest::Near {
        dir: parent.to_path_buf(),
        what: "the tests' scratch directory",
    };
    let account = strata_mariadb::server_os_account();
    ServerOptions {
        work_dir: strata_db::workdir::WorkDir::resolve(&request, account.as_ref()).unwrap(),
        buffer_pool_bytes: strata_mariadb::DEFAULT_BUFFER_POOL_BYTES,
        performance_schema: false,
    }
}

pub fn config(server: MariaDbServer, driver: DriverOptions) -> MariaDbRunConfig {
    MariaDbRunConfig {
        server,
        replace: false,
        driver,
        setup_only: false,
        record: None,
        command: vec![
            "strata".into(),
            "run".into(),
            "--engine".into(),
            "mariadb".into(),
        ],
        options: serde_json::json!({}),
    }
}

/// Entries strata made in `parent` (none should outlive a run).
pub fn leftovers(parent: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(parent)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("strata-mariadb-")
        })
        .collect()
}

/// Whether a process `pid` exists and is a mariadbd.
pub fn mariadbd_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|name| name.starts_with("mariadbd"))
}

/// mariadbd processes whose command line names `dir`.
pub fn servers_in(dir: &Path) -> Vec<u32> {
    let needle = dir.to_string_lossy().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(&needle))
        })
        .collect()
}
