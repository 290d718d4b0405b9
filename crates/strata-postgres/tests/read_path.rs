//! The read path of real servers: what PostgreSQL 15 and 18 report, and a
//! throwaway PostgreSQL 18 cluster restarted with another io_method and
//! direct I/O for data files.

mod common;

use common::*;
use strata_postgres::cluster::ThrowawayCluster;
use strata_postgres::read_path::{backend_types, ReadPathRequest, ReadPathSettings, MONITOR_ROLE};
use strata_testkit::process::is_running;

async fn settings_of(cluster: &ThrowawayCluster) -> ReadPathSettings {
    let client = client_for(&cluster.connection_string()).await;
    ReadPathSettings::read(&client, cluster.version_num())
        .await
        .unwrap()
}

#[tokio::test]
async fn postgresql_15_has_neither_io_method_nor_direct_io() {
    let cluster = ThrowawayCluster::start(&cluster_options()).expect("starting cluster");
    let settings = settings_of(&cluster).await;
    assert_eq!(settings.io_method, None);
    assert_eq!(settings.direct_data, None);
    let request = ReadPathRequest {
        io_method: Some("sync".into()),
        direct_io: false,
    };
    let error = settings.check_offered(&request).unwrap_err().to_string();
    assert!(error.starts_with("--io-method sync"), "{error}");
}

#[tokio::test]
async fn postgresql_18_restarts_with_sync_reads_and_direct_io_for_data() {
    let mut cluster = ThrowawayCluster::start(&pg18_cluster_options()).expect("starting cluster");
    let data_dir = cluster.data_dir().to_path_buf();
    let before = settings_of(&cluster).await;
    assert_eq!(before.io_method.as_deref(), Some("worker"));
    assert!(before.io_methods_offered.contains(&"sync".to_string()));
    assert_eq!(before.direct_data, Some(false));
    let client = client_for(&cluster.connection_string()).await;
    let kinds = backend_types(&client).await.unwrap();
    assert!(kinds.values().any(|kind| kind == "io worker"), "{kinds:?}");
    let own_pid: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(kinds[&(own_pid as u32)], MONITOR_ROLE, "{kinds:?}");
    drop(client);

    let request = ReadPathRequest {
        io_method: Some("sync".into()),
        direct_io: true,
    };
    let old_postmaster = cluster.postmaster_pid();
    cluster
        .restart_with(&before.settings_for(&request))
        .expect("restarting");
    assert_ne!(cluster.postmaster_pid(), old_postmaster);
    assert!(!is_running(old_postmaster));
    let after = settings_of(&cluster).await;
    assert_eq!(after.io_method.as_deref(), Some("sync"));
    assert_eq!(after.direct_data, Some(true));
    assert!(after.settings_for(&request).is_empty());
    cluster.stop_and_remove().unwrap();
    assert!(!data_dir.exists());
}
