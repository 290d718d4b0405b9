//! What the SLOB integration tests share: a throwaway PostgreSQL cluster
//! made by initdb, a client to it, and the plans and workloads the tests
//! vary.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use strata_postgres::cluster::{ClusterOptions, ThrowawayCluster};
use strata_postgres::load::{setup, LoadOptions, LoadReport};
use strata_slob::schema::SchemaPlan;
use strata_slob::session::{AccessDistribution, DriverOptions, StopAfter, WorkloadOptions};
use tokio_postgres::{Client, Config, NoTls};

pub struct TestServer {
    pub cluster: ThrowawayCluster,
    pub config: Config,
}

/// A fresh cluster under the target directory (which the `postgres`
/// account can reach when the tests run as root).
pub fn start_server(shared_buffers_bytes: u64, settings: &[(&str, &str)]) -> TestServer {
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&scratch).expect("creating CARGO_TARGET_TMPDIR");
    let request = strata_db::workdir::WorkDirRequest::Near {
        dir: scratch,
        what: "the tests' scratch directory",
    };
    let account = strata_postgres::cluster::server_account(None).expect("the server's OS account");
    let work_dir =
        strata_db::workdir::WorkDir::resolve(&request, account.as_ref()).expect("a work directory");
    let options = ClusterOptions {
        parent_dir: work_dir.path,
        os_user: None,
        shared_buffers_bytes,
        settings: settings
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect(),
        page_cache_limit_bytes: None,
        bin_dir: None,
    };
    let cluster = ThrowawayCluster::start(&options).expect("starting a throwaway cluster");
    let config = cluster
        .connection_string()
        .parse::<Config>()
        .expect("parsing the cluster's conninfo");
    TestServer { cluster, config }
}

pub async fn client(config: &Config) -> Client {
    let (client, connection) = config.connect(NoTls).await.expect("connecting");
    tokio::spawn(connection);
    client
}

pub async fn number(client: &Client, sql: &str) -> i64 {
    client
        .query_one(sql, &[])
        .await
        .unwrap_or_else(|error| panic!("{sql}: {error:?}"))
        .get(0)
}

pub fn plan(schemas: u32, blocks_per_schema: u64) -> SchemaPlan {
    SchemaPlan {
        schemas,
        single_schema: false,
        blocks_per_schema,
        scan_table_blocks: 0,
        random_data: true,
    }
}

pub async fn load(config: &Config, plan: &SchemaPlan, parallel: usize) -> LoadReport {
    let options = LoadOptions {
        plan: plan.clone(),
        parallel,
        replace: false,
    };
    let stop = AtomicBool::new(false);
    setup(config, &options, &|_| {}, &stop)
        .await
        .expect("setup")
}

pub fn read_only_workload(work_unit: u32) -> WorkloadOptions {
    WorkloadOptions {
        work_unit,
        update_pct: 0.0,
        update_work_unit: 8,
        scan_pct: 0.0,
        think_time: None,
        think_every: 1,
        hotspot: None,
        hot_schema_every: None,
        distribution: AccessDistribution::Uniform,
    }
}

pub fn timed(warmup_ms: u64, duration_ms: u64) -> StopAfter {
    StopAfter::Duration {
        warmup: Duration::from_millis(warmup_ms),
        duration: Duration::from_millis(duration_ms),
    }
}

pub fn driver_options(
    plan: SchemaPlan,
    workload: WorkloadOptions,
    threads_per_schema: u32,
    stop_after: StopAfter,
) -> DriverOptions {
    DriverOptions {
        plan,
        workload,
        threads_per_schema,
        sessions: None,
        stop_after,
        seed: 42,
        tolerate_failures: false,
        outlier_threshold: None,
    }
}
