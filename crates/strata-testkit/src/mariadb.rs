//! A MariaDB server on another host ([`HostedMariaDb`]): installed by
//! `mariadb-install-db` into a temporary directory of the shared filesystem
//! (so its data directory's path exists here too) and run in a
//! [`NamespaceHost`], listening on the host's address only, without grant
//! checks (a test's server, reached by nothing else).
//!
//! Knows no strata-mariadb type.

use crate::host::NamespaceHost;
use crate::process::wait_until;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

pub struct HostedMariaDb {
    pub data_dir: PathBuf,
    pub address: Ipv4Addr,
    pub port: u16,
    dir: tempfile::TempDir,
}

impl HostedMariaDb {
    pub const PORT: u16 = 3306;

    /// Installs the server and starts it on `host`; returns once it
    /// answers.
    pub fn start(host: &mut NamespaceHost) -> HostedMariaDb {
        let dir = tempfile::tempdir_in("/tmp").unwrap();
        let data_dir = dir.path().join("data");
        let datadir = format!("--datadir={}", data_dir.display());
        // Temporary files of its own: bootstraps sharing /tmp fail now
        // and then (strata-mariadb's server.rs).
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        let tmpdir = format!("--tmpdir={}", dir.path().join("tmp").display());
        let status = Command::new("mariadb-install-db")
            .args(["--no-defaults", &datadir, &tmpdir, "--user=root"])
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("mariadb-install-db (package mariadb-server)");
        assert!(status.success(), "mariadb-install-db for the hosted server");
        let bind = format!("--bind-address={}", host.address);
        let port = format!("--port={}", Self::PORT);
        let socket = format!("--socket={}", dir.path().join("mariadbd.sock").display());
        let error_log = format!("--log-error={}", dir.path().join("error.log").display());
        let args = [
            "--no-defaults",
            &datadir,
            &tmpdir,
            "--user=root",
            &bind,
            &port,
            &socket,
            &error_log,
            "--pid-file=mariadbd.pid",
            "--skip-grant-tables",
            "--skip-name-resolve",
            "--innodb-buffer-pool-size=32M",
        ];
        let _ = host.spawn("/usr/sbin/mariadbd", &args, None, Stdio::null());
        let server = HostedMariaDb {
            data_dir,
            address: host.address,
            port: Self::PORT,
            dir,
        };
        server.wait_until_ready();
        server
    }

    /// `mysql://root@ADDRESS:PORT/DATABASE`.
    pub fn url(&self, database: &str) -> String {
        format!("mysql://root@{}:{}/{database}", self.address, self.port)
    }

    fn wait_until_ready(&self) {
        let log = self.dir.path().join("error.log");
        let what = format!("the hosted MariaDB (see {})", log.display());
        wait_until(Duration::from_secs(60), &what, || {
            Command::new("mariadb-admin")
                .args(["--no-defaults", "-h", &self.address.to_string()])
                .args(["-P", &self.port.to_string(), "-u", "root", "ping"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success())
        });
    }
}
