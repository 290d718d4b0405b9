//! A server is local only when strata proves it: a throwaway cluster here
//! is, with its own data directory and postmaster; a server on another
//! host whose data directory's path exists here too (the shared filesystem
//! of a namespace host: the trap two Debian hosts set) is not, and none of
//! its processes are followed.

mod common;

use common::*;
use strata_postgres::cluster::ThrowawayCluster;
use strata_postgres::collector::local_backend_pids;
use strata_postgres::connect::ConnectionTarget;
use strata_postgres::locality::{locate, Locality};
use strata_testkit::host::NamespaceHost;
use strata_testkit::postgres::{debian_bin_dir, HostedPostgres};
use tokio::runtime::Runtime;

#[test]
fn a_throwaway_cluster_here_is_local_with_its_own_directory_and_postmaster() {
    let runtime = Runtime::new().unwrap();
    let cluster = ThrowawayCluster::start(&cluster_options()).expect("starting cluster");
    let client = runtime.block_on(client_for(&cluster.connection_string()));
    let Locality::Local {
        data_directory,
        postmaster_pid,
    } = runtime.block_on(locate(&client))
    else {
        panic!("a cluster strata started here is not local");
    };
    assert_eq!(
        std::fs::canonicalize(&data_directory).unwrap(),
        std::fs::canonicalize(cluster.data_dir()).unwrap()
    );
    assert_eq!(postmaster_pid, cluster.postmaster_pid());
    let target = ConnectionTarget::parse(&cluster.connection_string()).unwrap();
    let followed = local_backend_pids(&target).unwrap();
    assert!(
        !followed.is_empty(),
        "its background processes are followed"
    );
    assert!(followed
        .iter()
        .all(|pid| cluster.server_pids().contains(pid)));
}

#[test]
fn a_server_on_another_host_is_remote_though_its_data_directory_s_path_exists_here() {
    let runtime = Runtime::new().unwrap();
    let mut host = NamespaceHost::create(0);
    let server = HostedPostgres::start(&mut host, &debian_bin_dir());
    let client = runtime.block_on(client_for(&server.url()));
    let shown = runtime.block_on(show(&client, "data_directory"));
    assert!(
        std::path::Path::new(&shown).join("postmaster.pid").exists(),
        "the trap is set: the server's data directory {shown} exists here, postmaster.pid and all"
    );
    let locality = runtime.block_on(locate(&client));
    let Locality::Remote { reason } = locality else {
        panic!("a server in another host's namespaces was taken for a local one");
    };
    assert!(
        reason.contains("another host or in another PID namespace")
            || reason.contains("is not on this machine"),
        "{reason}"
    );
    let target = ConnectionTarget::parse(&server.url()).unwrap();
    assert_eq!(
        local_backend_pids(&target).unwrap(),
        Vec::<u32>::new(),
        "none of this machine's processes are the remote server's"
    );
}
