//! Helpers shared by the integration tests: where clusters live, what
//! /proc says about a process, and connecting.
#![allow(dead_code)]

pub mod slob;

use std::path::PathBuf;
use strata_db::workdir::{WorkDir, WorkDirRequest};
use strata_postgres::cluster::{server_account, ClusterOptions};
use strata_postgres::connect::{connect, ConnectionTarget};

/// Clusters live under the target directory, or, when the checkout sits
/// under a directory the `postgres` account cannot reach (a clone in
/// /root), in a directory on the same filesystem that it can.
pub fn cluster_options() -> ClusterOptions {
    ClusterOptions {
        parent_dir: work_dir(),
        ..ClusterOptions::default()
    }
}

/// The tests' scratch directory as strata would resolve it for the server.
pub fn work_dir() -> PathBuf {
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&scratch).expect("creating CARGO_TARGET_TMPDIR");
    let request = WorkDirRequest::Near {
        dir: scratch,
        what: "the tests' scratch directory",
    };
    let account = server_account(None).expect("the server's OS account");
    WorkDir::resolve(&request, account.as_ref())
        .expect("a work directory")
        .path
}

pub fn running_as_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// A process is running when /proc has it and it is not a zombie.
pub fn is_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z") | Some("X") | None)
        }
        Err(_) => false,
    }
}

/// The real uid from /proc/<pid>/status.
pub fn process_uid(pid: u32) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("reading status");
    let line = status
        .lines()
        .find(|line| line.starts_with("Uid:"))
        .expect("Uid line");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

pub fn uid_of(user: &str) -> u32 {
    let name = std::ffi::CString::new(user).unwrap();
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    assert!(!entry.is_null(), "OS account {user} does not exist");
    unsafe { (*entry).pw_uid }
}

/// The lines of /proc/<pid>/cgroup.
pub fn process_cgroups(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup")).expect("reading /proc/PID/cgroup")
}

pub async fn client_for(conninfo: &str) -> tokio_postgres::Client {
    let target = ConnectionTarget::parse(conninfo).expect("parsing conninfo");
    connect(&target).await.expect("connecting")
}

pub async fn show(client: &tokio_postgres::Client, setting: &str) -> String {
    let row = client
        .query_one(&format!("SHOW {setting}"), &[])
        .await
        .unwrap();
    row.get(0)
}

/// Where scripts/install-test-deps puts PostgreSQL 18's server binaries
/// (`$STRATA_PG18_BIN` overrides it).
pub fn pg18_bin_dir() -> PathBuf {
    let dir = std::env::var_os("STRATA_PG18_BIN").map_or_else(
        || PathBuf::from("/opt/strata/postgresql-18/bin"),
        PathBuf::from,
    );
    assert!(
        dir.join("postgres").is_file() && dir.join("initdb").is_file(),
        "PostgreSQL 18 server binaries are not in {}: run scripts/install-test-deps as root",
        dir.display()
    );
    dir
}

/// [`cluster_options`] with PostgreSQL 18's binaries.
pub fn pg18_cluster_options() -> ClusterOptions {
    ClusterOptions {
        bin_dir: Some(pg18_bin_dir()),
        ..cluster_options()
    }
}
