//! What the SLOB integration tests share beyond strata-testkit's plans and
//! workloads: a throwaway PostgreSQL cluster made by initdb, a client to
//! it, and loading a plan into it.
#![allow(dead_code)]

use std::sync::atomic::AtomicBool;

use strata_postgres::cluster::{ClusterOptions, ThrowawayCluster};
use strata_postgres::load::{setup, LoadOptions, LoadReport};
use strata_slob::schema::SchemaPlan;
use tokio_postgres::{Client, Config, NoTls};

pub struct TestServer {
    pub cluster: ThrowawayCluster,
    pub config: Config,
}

/// A fresh cluster under the target directory (which the `postgres`
/// account can reach when the tests run as root).
pub fn start_server(shared_buffers_bytes: u64, settings: &[(&str, &str)]) -> TestServer {
    let options = ClusterOptions {
        parent_dir: super::work_dir(),
        os_user: None,
        shared_buffers_bytes,
        settings: settings
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect(),
        page_cache_limit_bytes: None,
        bin_dir: None,
        survives_strata: false,
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
