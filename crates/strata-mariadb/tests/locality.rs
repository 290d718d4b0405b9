//! A MariaDB server is local only when strata proves it: the machine's own
//! server, reached over TCP at 127.0.0.1, is, with its data directory and
//! its process; a server on another host whose data directory's path and
//! pid file exist here too (the shared filesystem of a namespace host) is
//! not, and a run against it says its host is not observed.

mod common;

use common::*;
use mysql::prelude::Queryable;
use strata_mariadb::locality::{locate, Locality};
use strata_testkit::host::NamespaceHost;
use strata_testkit::mariadb::HostedMariaDb;

fn settings(conn: &mut mysql::Conn) -> (String, String) {
    conn.query_first("SELECT @@datadir, @@pid_file")
        .unwrap()
        .unwrap()
}

#[test]
fn the_machine_s_server_is_local_with_its_directory_and_process() {
    let mut conn = mysql::Conn::new(mysql::Opts::from_url(MACHINE_URL).unwrap())
        .unwrap_or_else(|error| panic!("the machine's MariaDB: {error}; {START_HINT}"));
    let (data_dir, pid_file) = settings(&mut conn);
    let Locality::Local {
        data_directory,
        server_pid,
    } = locate(&mut conn, &data_dir, &pid_file)
    else {
        panic!("the machine's own server is not local");
    };
    assert_eq!(data_directory, std::path::PathBuf::from(&data_dir));
    let comm = std::fs::read_to_string(format!("/proc/{server_pid}/comm")).unwrap();
    assert!(comm.starts_with("mariadbd"), "pid {server_pid} is {comm}");
}

#[test]
fn a_server_on_another_host_with_the_same_paths_here_is_remote() {
    let mut host = NamespaceHost::create(3);
    let server = HostedMariaDb::start(&mut host);
    let url = server.url("mysql");
    let mut conn = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    let (data_dir, pid_file) = settings(&mut conn);
    let pid_path = std::path::Path::new(&data_dir).join(&pid_file);
    assert!(
        pid_path.is_file(),
        "the trap: {} exists here too",
        pid_path.display()
    );
    let Locality::Remote { reason } = locate(&mut conn, &data_dir, &pid_file) else {
        panic!("a server in another host's namespaces was taken for local");
    };
    assert!(reason.contains("not the server"), "{reason}");
}
