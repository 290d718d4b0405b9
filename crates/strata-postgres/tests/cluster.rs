//! A throwaway cluster made by initdb: who runs it, how it is reached, and
//! that nothing is left behind however it ends.

mod common;

use common::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use strata_postgres::cluster::ThrowawayCluster;
use strata_testkit::process::{is_running, process_uid, running_as_root, uid_of};

struct Leftovers {
    dirs: Vec<PathBuf>,
    pids: Vec<u32>,
}

impl Leftovers {
    fn of(cluster: &ThrowawayCluster) -> Leftovers {
        Leftovers {
            dirs: vec![
                cluster.data_dir().to_path_buf(),
                cluster.socket_dir().to_path_buf(),
            ],
            pids: cluster.server_pids(),
        }
    }

    fn assert_gone(&self) {
        for dir in &self.dirs {
            assert!(!dir.exists(), "{} still exists", dir.display());
        }
        let running: Vec<u32> = self
            .pids
            .iter()
            .copied()
            .filter(|&pid| is_running(pid))
            .collect();
        assert!(running.is_empty(), "server processes {running:?} still run");
    }
}

#[tokio::test]
async fn cluster_runs_as_service_account_on_private_socket_and_stop_removes_everything() {
    let cluster = ThrowawayCluster::start(&cluster_options()).expect("starting cluster");
    let expected_uid = if running_as_root() {
        uid_of("postgres")
    } else {
        unsafe { libc::geteuid() }
    };
    assert_eq!(process_uid(cluster.postmaster_pid()), expected_uid);

    let socket_dir = std::fs::metadata(cluster.socket_dir()).unwrap();
    assert_eq!(socket_dir.permissions().mode() & 0o777, 0o700);
    assert_eq!(socket_dir.uid(), expected_uid);
    assert!(cluster
        .socket_dir()
        .join(format!(".s.PGSQL.{}", cluster.port()))
        .exists());
    let name = cluster
        .data_dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        name.starts_with(&format!(".strata-pg-{}-", std::process::id())),
        "{name}"
    );
    assert_eq!(cluster.wal_dir(), cluster.data_dir().join("pg_wal"));
    assert!(cluster.version_num() >= 100000, "{}", cluster.version_num());

    let over_socket = client_for(&cluster.connection_string()).await;
    let tcp = format!(
        "host=127.0.0.1 port={} user=strata dbname=postgres",
        cluster.port()
    );
    let over_tcp = client_for(&tcp).await;
    let server_addr = "SELECT coalesce(host(inet_server_addr()), 'socket')";
    let via_socket: String = over_socket
        .query_one(server_addr, &[])
        .await
        .unwrap()
        .get(0);
    let via_tcp: String = over_tcp.query_one(server_addr, &[]).await.unwrap().get(0);
    assert_eq!(
        (via_socket.as_str(), via_tcp.as_str()),
        ("socket", "127.0.0.1")
    );
    assert_eq!(show(&over_tcp, "shared_buffers").await, "128MB");
    assert_eq!(show(&over_tcp, "track_io_timing").await, "on");
    assert_eq!(show(&over_tcp, "fsync").await, "on");
    assert_eq!(show(&over_tcp, "max_connections").await, "1100");

    let leftovers = Leftovers::of(&cluster);
    assert!(
        leftovers.pids.len() > 3,
        "postmaster and children: {:?}",
        leftovers.pids
    );
    drop((over_socket, over_tcp));
    cluster.stop_and_remove().expect("stopping cluster");
    leftovers.assert_gone();
}

#[test]
fn two_clusters_started_at_once_get_different_ports_and_drop_leaves_nothing() {
    let options = cluster_options();
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(|| ThrowawayCluster::start(&options));
        let second = scope.spawn(|| ThrowawayCluster::start(&options));
        (
            first.join().unwrap().unwrap(),
            second.join().unwrap().unwrap(),
        )
    });
    assert_ne!(first.port(), second.port());
    assert_ne!(first.data_dir(), second.data_dir());
    let leftovers = [Leftovers::of(&first), Leftovers::of(&second)];
    drop(first);
    drop(second);
    for leftover in &leftovers {
        leftover.assert_gone();
    }
}

#[tokio::test]
async fn killed_postmaster_fails_connections_and_cleanup_still_works() {
    let cluster = ThrowawayCluster::start(&cluster_options()).expect("starting cluster");
    let client = client_for(&cluster.connection_string()).await;
    client
        .simple_query("SELECT 1")
        .await
        .expect("query before the kill");
    let leftovers = Leftovers::of(&cluster);

    cluster.kill_postmaster();
    let deadline = Instant::now() + Duration::from_secs(5);
    while client.simple_query("SELECT 1").await.is_ok() {
        assert!(
            Instant::now() < deadline,
            "the session still answers 5 s after the kill"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let target =
        strata_postgres::connect::ConnectionTarget::parse(&cluster.connection_string()).unwrap();
    assert!(strata_postgres::connect::connect(&target).await.is_err());

    cluster
        .stop_and_remove()
        .expect("removing a cluster whose postmaster was killed");
    leftovers.assert_gone();
}

#[test]
fn server_that_cannot_start_reports_its_log_and_leaves_nothing_behind() {
    let parent_dir = common::work_dir().join(format!("failing-start-{}", std::process::id()));
    std::fs::create_dir_all(&parent_dir).unwrap();
    let mut options = cluster_options();
    options.parent_dir = parent_dir.clone();
    options
        .settings
        .push(("shared_buffers".into(), "not-a-size".into()));

    let error = ThrowawayCluster::start(&options)
        .err()
        .expect("a bad setting must fail");
    let message = format!("{error:#}");
    assert!(message.contains("server.log"), "{message}");
    assert!(
        message.contains(r#""shared_buffers": "not-a-size""#),
        "{message}"
    );
    let left: Vec<_> = std::fs::read_dir(&parent_dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    std::fs::remove_dir(&parent_dir).unwrap();
}
