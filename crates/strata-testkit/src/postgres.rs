//! Where PostgreSQL's server binaries are on a test machine, and a server
//! on another host ([`HostedPostgres`]) made from them directly.
//!
//! Knows no strata-postgres type: a test server built from those (cluster
//! options, throwaway clusters, clients) stays in that crate's tests.

use crate::host::NamespaceHost;
use crate::process::wait_until;
use std::io::Write;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Where scripts/install-test-deps puts PostgreSQL 18's server binaries
/// (`$STRATA_PG18_BIN` overrides it); panics, naming the way to install
/// them, when `postgres` or `initdb` is missing there.
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

/// The newest Debian PostgreSQL's server binaries
/// (`/usr/lib/postgresql/<major>/bin`); panics, naming the way to install
/// them, when there are none.
pub fn debian_bin_dir() -> PathBuf {
    let newest = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .max();
    let dir = PathBuf::from(format!(
        "/usr/lib/postgresql/{}/bin",
        newest.expect("no /usr/lib/postgresql/<major>: run scripts/install-test-deps as root")
    ));
    assert!(
        dir.join("postgres").is_file(),
        "no server in {}",
        dir.display()
    );
    dir
}

/// A PostgreSQL server on another host ([`NamespaceHost`]), as the OS user
/// `postgres`: its data directory made by initdb in a temporary directory
/// of the shared filesystem (so its path exists here too), listening on
/// the host's address only, trusting the test's side of the veth.
pub struct HostedPostgres {
    pub data_dir: PathBuf,
    pub address: Ipv4Addr,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl HostedPostgres {
    pub const PORT: u16 = 5432;

    /// Makes the cluster and starts it on `host`; returns once it accepts
    /// connections.
    pub fn start(host: &mut NamespaceHost, bin_dir: &Path) -> HostedPostgres {
        Self::start_with(host, bin_dir, &[])
    }

    /// [`HostedPostgres::start`] with `settings` (`NAME=VALUE`) given to
    /// the server.
    pub fn start_with(
        host: &mut NamespaceHost,
        bin_dir: &Path,
        settings: &[&str],
    ) -> HostedPostgres {
        let dir = tempfile::tempdir_in("/tmp").unwrap();
        let data_dir = dir.path().join("data");
        std::fs::create_dir(&data_dir).unwrap();
        chown_to_postgres(dir.path());
        chown_to_postgres(&data_dir);
        let initdb = bin_dir.join("initdb");
        let status = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(&initdb)
            .args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"])
            .arg(&data_dir)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "initdb for the hosted server failed");
        let mut hba = std::fs::OpenOptions::new()
            .append(true)
            .open(data_dir.join("pg_hba.conf"))
            .unwrap();
        writeln!(hba, "host all all {}/30 trust", host.peer_address).unwrap();
        let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
        let data = data_dir.to_str().unwrap();
        let listen = format!("listen_addresses={}", host.address);
        let port = Self::PORT.to_string();
        let mut args = vec!["-D", data, "-k", data, "-c", &listen, "-p", &port];
        for setting in settings {
            args.extend(["-c", setting]);
        }
        let postgres = bin_dir.join("postgres");
        let _ = host.spawn(
            postgres.to_str().unwrap(),
            &args,
            Some("postgres"),
            log.into(),
        );
        let server = HostedPostgres {
            data_dir,
            address: host.address,
            port: Self::PORT,
            _dir: dir,
        };
        server.wait_until_ready(bin_dir);
        server
    }

    /// `postgresql://postgres@ADDRESS:PORT/postgres`.
    pub fn url(&self) -> String {
        format!(
            "postgresql://postgres@{}:{}/postgres",
            self.address, self.port
        )
    }

    fn wait_until_ready(&self, bin_dir: &Path) {
        let log = self._dir.path().join("server.log");
        let what = format!("the hosted PostgreSQL (see {})", log.display());
        wait_until(Duration::from_secs(30), &what, || {
            Command::new(bin_dir.join("pg_isready"))
                .args(["-q", "-h", &self.address.to_string()])
                .args(["-p", &self.port.to_string()])
                .status()
                .is_ok_and(|status| status.success())
        });
    }
}

fn chown_to_postgres(path: &Path) {
    let name = std::ffi::CString::new("postgres").unwrap();
    let account = unsafe { libc::getpwnam(name.as_ptr()) };
    assert!(
        !account.is_null(),
        "no OS user postgres: run scripts/install-test-deps"
    );
    let (uid, gid) = unsafe { ((*account).pw_uid, (*account).pw_gid) };
    let path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::chown(path.as_ptr(), uid, gid) }, 0, "chown");
}
