//! A throwaway `mariadbd`: `mariadb-install-db` into a new directory
//! `strata-mariadb-*` under a parent directory, the server on a private Unix
//! socket in it (no TCP) with its temporary files there too, a small buffer
//! pool and `O_DIRECT` data files, and
//! on drop a clean shutdown (SIGTERM, then SIGKILL after a minute) and the
//! directory removed. When strata runs as root the server runs as the
//! `mysql` account if it exists and can reach the directory, else as root
//! (`--user=root`, which mariadbd accepts when told). The server gets
//! SIGKILL if the thread that started it dies without dropping it.
//!
//! Not for: servers strata did not start (`target`), or loading data.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::target::MariaDbTarget;
use strata_db::account::ServerAccount;
use strata_db::workdir::{first_unreachable, WorkDir};
use strata_probe::collectors::is_running;

/// The buffer pool of a throwaway server by default: small, so that a
/// data set of a few hundred MiB is read from the device.
pub const DEFAULT_BUFFER_POOL_BYTES: u64 = 16 << 20;

const START_LIMIT: Duration = Duration::from_secs(60);
const STOP_LIMIT: Duration = Duration::from_secs(60);
const SOCKET_PATH_MAX: usize = 100;
/// A throwaway server's directory is `<work dir>/.strata-mariadb-<pid>-<random>`.
const LEFTOVER_PREFIX: &str = ".strata-mariadb-";
/// Where Debian and most distributions put the server.
const SERVER_PATHS: &[&str] = &[
    "/usr/sbin/mariadbd",
    "/usr/libexec/mariadbd",
    "/usr/bin/mariadbd",
];

#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// The server's directory is made inside it (see `strata_db::workdir`).
    pub work_dir: WorkDir,
    pub buffer_pool_bytes: u64,
    /// `performance_schema=ON` (per-file I/O counts and timings).
    pub performance_schema: bool,
}

/// What the throwaway server is, as the environment shows it.
#[derive(Clone, Debug, Serialize)]
pub struct ThrowawayInfo {
    pub work_directory: WorkDir,
    pub directory: PathBuf,
    pub socket: PathBuf,
    pub os_account: String,
    pub pid: u32,
}

/// Removes the throwaway servers an earlier strata left in `work_dir` when
/// it was killed (the directory's strata pid no longer runs): the mariadbd
/// still running there is killed first. Returns a note for each.
pub fn remove_abandoned(work_dir: &Path) -> Vec<String> {
    let what = "an abandoned throwaway MariaDB server's directory";
    strata_db::leftovers::abandoned(work_dir, LEFTOVER_PREFIX)
        .into_iter()
        .map(|leftover| {
            let pid_file = leftover.path.join("mariadbd.pid");
            let running = std::fs::read_to_string(pid_file)
                .ok()
                .and_then(|text| text.trim().parse::<u32>().ok())
                .filter(|&pid| {
                    std::fs::read_link(format!("/proc/{pid}/exe"))
                        .is_ok_and(|exe| exe.to_string_lossy().contains("mariadbd"))
                });
            if let Some(pid) = running {
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                let deadline = Instant::now() + STOP_LIMIT;
                while is_running(pid) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            match std::fs::remove_dir_all(&leftover.path) {
                Ok(()) => leftover.removed_note(what),
                Err(error) => leftover.kept_note(what, &error.into()),
            }
        })
        .collect()
}

pub struct ThrowawayServer {
    child: Child,
    dir: Option<tempfile::TempDir>,
    info: ThrowawayInfo,
}

impl ThrowawayServer {
    /// Installs and starts a server; returns once it accepts connections.
    /// Everything made is removed again when this fails.
    pub fn start(options: &ServerOptions, interrupt: &AtomicBool) -> Result<ThrowawayServer> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("{LEFTOVER_PREFIX}{}-", std::process::id()))
            .tempdir_in(&options.work_dir.path)
            .with_context(|| {
                format!("making a directory in {}", options.work_dir.path.display())
            })?;
        let socket = dir.path().join("mysqld.sock");
        anyhow::ensure!(
            socket.as_os_str().len() <= SOCKET_PATH_MAX,
            "the socket path {} is longer than Unix sockets allow: run strata from a shorter directory",
            socket.display()
        );
        let account = server_account(dir.path())?;
        make_tmpdir(dir.path(), &account)?;
        install(dir.path(), &account)?;
        let child = spawn(dir.path(), &socket, &account, options)?;
        let info = ThrowawayInfo {
            work_directory: options.work_dir.clone(),
            directory: dir.path().to_path_buf(),
            socket,
            os_account: account.name,
            pid: child.id(),
        };
        let mut server = ThrowawayServer {
            child,
            dir: Some(dir),
            info,
        };
        server.wait_until_ready(interrupt)?;
        Ok(server)
    }

    /// Says so when the server is no longer running (killed or crashed)
    /// while strata still needs it; `None` while it runs.
    pub fn death(&self) -> Option<String> {
        (!is_running(self.info.pid)).then(|| {
            format!(
                "the throwaway mariadbd (pid {}) stopped running before the window ended (killed \
                 or crashed); the session failures below say when",
                self.info.pid
            )
        })
    }

    pub fn info(&self) -> &ThrowawayInfo {
        &self.info
    }

    pub fn data_dir(&self) -> PathBuf {
        self.info.directory.join("data")
    }

    /// The server as root over its socket, database `database`.
    pub fn target(&self, database: &str) -> MariaDbTarget {
        MariaDbTarget::socket(&self.info.socket, "root", database)
    }

    fn wait_until_ready(&mut self, interrupt: &AtomicBool) -> Result<()> {
        let deadline = Instant::now() + START_LIMIT;
        let probe = self.target("mysql");
        loop {
            let attempt = match self.info.socket.exists() {
                true => probe.connect_server().map(drop),
                false => Err(anyhow::anyhow!("no socket yet")),
            };
            let Err(error) = attempt else { return Ok(()) };
            if let Some(status) = self.child.try_wait()? {
                bail!(
                    "mariadbd exited ({status}) before accepting connections: {}",
                    self.log_tail()
                );
            }
            if interrupt.load(Ordering::Relaxed) {
                bail!("interrupted while mariadbd was starting");
            }
            if Instant::now() > deadline {
                bail!(
                    "mariadbd did not accept connections within {} s ({error:#}): {}",
                    START_LIMIT.as_secs(),
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log_tail(&self) -> String {
        let log =
            std::fs::read_to_string(self.info.directory.join("error.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(12)..].join("\n")
    }
}

impl Drop for ThrowawayServer {
    fn drop(&mut self) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + STOP_LIMIT;
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(dir) = self.dir.take() {
            let _ = dir.close();
        }
    }
}

/// The OS account the server runs as.
struct Account {
    name: String,
    uid: u32,
    gid: u32,
}

/// The OS account a throwaway mariadbd runs as when strata is root: `mysql`
/// when it exists; `None` when strata is not root, or there is no `mysql`
/// (the server then runs as strata's own user).
pub fn server_os_account() -> Option<ServerAccount> {
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    ServerAccount::lookup("mysql").ok()
}

/// strata's own user; when root, `mysql` if it can reach `dir` (the
/// directory is then given to it), else root.
fn server_account(dir: &Path) -> Result<Account> {
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let own = |name: &str| Account {
        name: name.to_string(),
        uid,
        gid,
    };
    if uid != 0 {
        let name = std::env::var("USER").unwrap_or_else(|_| uid.to_string());
        return Ok(own(&name));
    }
    match server_os_account() {
        Some(mysql) if first_unreachable(dir, &mysql).is_none() => {
            mysql.chown(dir)?;
            Ok(Account {
                name: mysql.name,
                uid: mysql.uid,
                gid: mysql.gid,
            })
        }
        _ => Ok(own("root")),
    }
}

/// Settings of both `mariadb-install-db` and `mariadbd`. The server's
/// temporary files go to a directory of its own: two bootstraps sharing
/// /tmp fail now and then (`Could not remove temporary table
/// '/tmp/#sql-temptable-…'`: 2 of 12 seen here, 4 at a time; 0 of 20 with
/// a directory each), and nothing is left in /tmp.
fn common_args(dir: &Path, account: &Account) -> Vec<String> {
    vec![
        "--no-defaults".into(),
        format!("--datadir={}", dir.join("data").display()),
        format!("--tmpdir={}", dir.join("tmp").display()),
        format!("--user={}", account.name),
    ]
}

/// The server's temporary directory, inside its own, owned by its account.
fn make_tmpdir(dir: &Path, account: &Account) -> Result<()> {
    let tmpdir = dir.join("tmp");
    std::fs::create_dir(&tmpdir).with_context(|| format!("making {}", tmpdir.display()))?;
    std::os::unix::fs::chown(&tmpdir, Some(account.uid), Some(account.gid))
        .with_context(|| format!("giving {} to {}", tmpdir.display(), account.name))
}

fn install(dir: &Path, account: &Account) -> Result<()> {
    let output = Command::new("mariadb-install-db")
        .args(common_args(dir, account))
        .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
        .stdin(Stdio::null())
        .output()
        .context("running mariadb-install-db (package mariadb-server)")?;
    if !output.status.success() {
        bail!(
            "mariadb-install-db failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let _ = std::os::unix::fs::chown(dir.join("data"), Some(account.uid), Some(account.gid));
    Ok(())
}

fn server_binary() -> PathBuf {
    SERVER_PATHS
        .iter()
        .map(PathBuf::from)
        .find(|path| path.exists())
        .unwrap_or_else(|| PathBuf::from("mariadbd"))
}

fn spawn(dir: &Path, socket: &Path, account: &Account, options: &ServerOptions) -> Result<Child> {
    let binary = server_binary();
    let mut command = Command::new(&binary);
    command
        .args(common_args(dir, account))
        .arg(format!("--socket={}", socket.display()))
        .arg(format!("--pid-file={}", dir.join("mariadbd.pid").display()))
        .arg(format!("--log-error={}", dir.join("error.log").display()))
        .arg(format!(
            "--innodb-buffer-pool-size={}",
            options.buffer_pool_bytes
        ))
        .arg(format!(
            "--performance-schema={}",
            if options.performance_schema {
                "ON"
            } else {
                "OFF"
            }
        ))
        .args([
            "--skip-networking",
            "--innodb-flush-method=O_DIRECT",
            "--innodb-log-file-size=64M",
            "--max-connections=1024",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if account.uid != unsafe { libc::geteuid() } {
        let account = ServerAccount {
            name: account.name.clone(),
            uid: account.uid,
            gid: account.gid,
        };
        strata_db::account::run_as(&mut command, Some(&account), None)?;
    }
    strata_db::account::die_with_parent(&mut command, libc::SIGKILL);
    command
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))
}
