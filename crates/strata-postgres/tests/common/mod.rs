//! Helpers shared by the integration tests beyond strata-testkit: where
//! clusters live, which binaries they run, and connecting.
#![allow(dead_code)]

pub mod slob;

use std::path::PathBuf;
use strata_db::workdir::{WorkDir, WorkDirRequest};
use strata_postgres::cluster::{server_account, ClusterOptions};
use strata_postgres::connect::{connect, ConnectionTarget};
use strata_testkit::postgres::pg18_bin_dir;

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

/// [`cluster_options`] with PostgreSQL 18's binaries.
pub fn pg18_cluster_options() -> ClusterOptions {
    ClusterOptions {
        bin_dir: Some(pg18_bin_dir()),
        ..cluster_options()
    }
}
