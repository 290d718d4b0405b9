//! What the MariaDB tests share beyond strata-testkit: the machine's server,
//! run options, where throwaway servers live, and checks that a throwaway
//! server left nothing behind.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use strata_mariadb::{MariaDbRunConfig, MariaDbServer, ServerOptions};
use strata_slob::schema::SchemaPlan;
use strata_slob::session::{DriverOptions, WorkloadOptions};
use strata_testkit::process::processes_naming;
use strata_testkit::slob::{driver_options, read_only_workload, timed};

/// The MariaDB running on the machine.
pub const MACHINE_URL: &str = "mysql://root@127.0.0.1:3306";
pub const START_HINT: &str =
    "start it with: start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd";

/// The runs' driver options: selects of 16 keys, `update_pct` percent
/// updates of 4 keys, half a second of warm-up, 2 s measured, seed 42.
pub fn driver(plan: SchemaPlan, update_pct: f64, threads_per_schema: u32) -> DriverOptions {
    let workload = WorkloadOptions {
        update_pct,
        update_work_unit: 4,
        update_pad_bytes: 0,
        ..read_only_workload(16)
    };
    driver_options(plan, workload, threads_per_schema, timed(500, 2000))
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
        agent: None,
        other_agents: Vec::new(),
        sweep: None,
    }
}

/// Entries strata made in `parent` (none should outlive a run).
pub fn leftovers(parent: &Path) -> Vec<PathBuf> {
    strata_testkit::files::leftovers(parent, "strata-mariadb-")
}

/// Whether a process `pid` exists and is a mariadbd.
pub fn mariadbd_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|name| name.starts_with("mariadbd"))
}

/// The processes (mariadbd among them) whose command line names `dir`.
pub fn servers_in(dir: &Path) -> Vec<u32> {
    processes_naming(dir)
        .into_iter()
        .map(|(pid, _)| pid)
        .collect()
}
