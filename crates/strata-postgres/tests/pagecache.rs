//! A throwaway cluster whose page cache is limited by a memory cgroup:
//! every server process is in it, and reading a table bigger than the limit
//! leaves the cgroup's page cache under the limit.

mod common;

use common::*;
use strata_db::pagecache::{server_memory_limit_bytes, PageCacheMethod};
use strata_postgres::cluster::ThrowawayCluster;
use strata_testkit::process::process_cgroups;

const MIB: u64 = 1 << 20;

fn in_cgroup(pid: u32, cgroup_name: &str) -> bool {
    process_cgroups(pid).lines().any(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next(), fields.next(), fields.next());
        let memory_hierarchy = controllers == Some("")
            || controllers.is_some_and(|c| c.split(',').any(|c| c == "memory"));
        memory_hierarchy && path.is_some_and(|path| path.ends_with(&format!("/{cgroup_name}")))
    })
}

#[tokio::test]
async fn limited_server_runs_in_cgroup_and_reading_a_big_table_keeps_page_cache_under_limit() {
    let mut options = cluster_options();
    options.shared_buffers_bytes = 32 * MIB;
    options.page_cache_limit_bytes = Some(32 * MIB);
    let cluster = ThrowawayCluster::start(&options).expect("starting a limited cluster");

    let (cgroup_dir, limit_file) = match cluster.page_cache() {
        PageCacheMethod::CgroupV2 { path, .. } => (path.clone(), path.join("memory.max")),
        PageCacheMethod::CgroupV1 { path, .. } => {
            (path.clone(), path.join("memory.limit_in_bytes"))
        }
        other => panic!("expected a memory cgroup, got {other:?}"),
    };
    let limit: u64 = std::fs::read_to_string(&limit_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let client = client_for(&cluster.connection_string()).await;
    assert_eq!(limit, server_memory_limit_bytes(32 * MIB, 32 * MIB));
    assert_eq!(limit, (32 + 64 + 32) * MIB);

    let cgroup_name = cgroup_dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        in_cgroup(cluster.postmaster_pid(), &cgroup_name),
        "{}",
        process_cgroups(cluster.postmaster_pid())
    );
    let backend_pid: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0);
    assert!(
        in_cgroup(backend_pid as u32, &cgroup_name),
        "{}",
        process_cgroups(backend_pid as u32)
    );

    client
        .batch_execute(
            "CREATE UNLOGGED TABLE big AS SELECT g, repeat('x', 500) AS filler \
             FROM generate_series(1, 500000) g; CHECKPOINT",
        )
        .await
        .expect("creating the table");
    let table_bytes: i64 = client
        .query_one("SELECT pg_relation_size('big')", &[])
        .await
        .unwrap()
        .get(0);
    assert!(
        table_bytes as u64 > limit,
        "table {table_bytes} B is not bigger than the limit {limit} B"
    );
    let rows: i64 = client
        .query_one("SELECT count(*) FROM big", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(rows, 500_000);

    let cgroup = cluster.memory_cgroup().expect("the cluster's cgroup");
    let page_cache = cgroup.page_cache_bytes().expect("reading memory.stat");
    let usage = cgroup.usage_bytes().expect("reading memory usage");
    eprintln!(
        "table {table_bytes} B, cgroup page cache {page_cache} B, usage {usage} B, limit {limit} B"
    );
    assert!(
        page_cache <= limit,
        "page cache {page_cache} B over the limit {limit} B"
    );
    assert!(usage <= limit, "usage {usage} B over the limit {limit} B");
    assert!(
        page_cache >= 16 * MIB,
        "the reads were not charged to the cgroup: {page_cache} B"
    );

    drop(client);
    cluster.stop_and_remove().expect("stopping the cluster");
    assert!(
        !cgroup_dir.exists(),
        "{} still exists",
        cgroup_dir.display()
    );
}
