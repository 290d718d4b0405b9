//! Whether a MariaDB or MySQL server runs on this machine, proved rather
//! than assumed. A socket or a loopback address proves nothing (a server in
//! another network or PID namespace answers on its own 127.0.0.1), nor does
//! a data directory path that exists here (two Debian hosts both have
//! `/var/lib/mysql`). The server is local when its pid file, read here,
//! names a `mariadbd` or `mysqld` process here that serves strata's own
//! connection (the server's thread for it, `information_schema.PROCESSLIST`'s
//! `TID`, is one of that process's threads here) or, where the server does
//! not name its threads (MySQL), that began when the server says it began
//! (its `Uptime` before its `NOW()`: both on the wall clock, so a step of
//! the clock since the server began defeats it); and that process works
//! in the server's `@@datadir` (its working directory is there or, where
//! strata may not read that link, it sees the same mounts as strata).
//!
//! Not for: what is measured once the server is known to be local
//! (`environment`, `run`).

use mysql::prelude::Queryable;
use mysql::Conn;
use std::path::{Path, PathBuf};
use strata_probe::cpu::{process_start, same_mounts, ProcessStart};

/// The server's start from `NOW() - Uptime` (whole seconds) and from /proc
/// (ticks) differ by up to a second and a tick; more is another process.
const START_TOLERANCE_S: f64 = 2.0;

/// Where the server runs, as strata could prove it.
#[derive(Clone, Debug, PartialEq)]
pub enum Locality {
    /// On this machine, with its data directory here.
    Local {
        data_directory: PathBuf,
        server_pid: u32,
    },
    /// Not proved to be on this machine, and why.
    Remote { reason: String },
}

/// Where the server of `conn` runs, given its `@@datadir` and `@@pid_file`.
pub fn locate(conn: &mut Conn, data_dir: &str, pid_file: &str) -> Locality {
    match prove_local(conn, data_dir, pid_file) {
        Ok(server_pid) => Locality::Local {
            data_directory: PathBuf::from(data_dir),
            server_pid,
        },
        Err(reason) => Locality::Remote { reason },
    }
}

fn prove_local(conn: &mut Conn, data_dir: &str, pid_file: &str) -> Result<u32, String> {
    if data_dir.is_empty() {
        return Err("the server does not show its data directory".into());
    }
    let pid_path = Path::new(data_dir).join(pid_file);
    let text = std::fs::read_to_string(&pid_path).map_err(|error| {
        format!(
            "the server's pid file {} cannot be read here ({error}): the server is on another \
             host, or strata may not read its files",
            pid_path.display()
        )
    })?;
    let pid: u32 = text
        .trim()
        .parse()
        .map_err(|_| format!("{} here holds no process id", pid_path.display()))?;
    let process = process_start(pid).ok_or_else(|| {
        format!(
            "{} here names pid {pid}, and no such process runs here",
            pid_path.display()
        )
    })?;
    is_a_server_program(&process, pid)?;
    match connection_thread(conn) {
        Some(thread) => serves_the_connection(pid, thread)?,
        None => began_with_the_server(&process, pid, server_start(conn)?)?,
    }
    works_in(pid, Path::new(data_dir))?;
    Ok(pid)
}

/// The server's thread for this connection, as the server numbers it
/// (MariaDB's `information_schema.PROCESSLIST.TID`); `None` where the
/// server does not say (MySQL has no such column).
fn connection_thread(conn: &mut Conn) -> Option<u32> {
    let thread: Option<Option<u64>> = conn
        .query_first("SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()")
        .ok()?;
    thread
        .flatten()
        .and_then(|thread| u32::try_from(thread).ok())
}

/// Whether this machine's process `pid` has the thread `thread` that
/// serves strata's connection: a server in another PID namespace numbers
/// its threads apart from this machine's.
fn serves_the_connection(pid: u32, thread: u32) -> Result<(), String> {
    match Path::new(&format!("/proc/{pid}/task/{thread}")).exists() {
        true => Ok(()),
        false => Err(format!(
            "pid {pid} here has no thread {thread}, the server's thread for strata's connection: \
             another server (the one strata is connected to is on another host or in another \
             PID namespace)"
        )),
    }
}

/// When the server began, Unix seconds on its clock: `NOW()` less its
/// `Uptime`.
fn server_start(conn: &mut Conn) -> Result<f64, String> {
    let unanswered =
        |error: mysql::Error| format!("the server did not say when it started: {error}");
    let uptime: Option<(String, f64)> = conn
        .query_first("SHOW GLOBAL STATUS LIKE 'Uptime'")
        .map_err(unanswered)?;
    let now: Option<f64> = conn
        .query_first("SELECT UNIX_TIMESTAMP(NOW(6))")
        .map_err(unanswered)?;
    match (now, uptime) {
        (Some(now_unix_s), Some((_, uptime_s))) => Ok(now_unix_s - uptime_s),
        _ => Err("the server did not say when it started".into()),
    }
}

/// Whether this machine's process `pid` is a `mariadbd` or `mysqld`.
fn is_a_server_program(process: &ProcessStart, pid: u32) -> Result<(), String> {
    match process.comm.starts_with("mariadbd") || process.comm.starts_with("mysqld") {
        true => Ok(()),
        false => Err(format!(
            "pid {pid} here is `{}`, not the server (the server is on another host or in another \
             PID namespace)",
            process.comm
        )),
    }
}

/// Whether this machine's process `pid` began when the server says it
/// began.
fn began_with_the_server(
    process: &ProcessStart,
    pid: u32,
    started_unix_s: f64,
) -> Result<(), String> {
    let apart_s = (process.started_unix_s - started_unix_s).abs();
    if apart_s > START_TOLERANCE_S {
        return Err(format!(
            "pid {pid} here began {apart_s:.1} s apart from the server: another server (the one \
             strata is connected to is on another host or in another PID namespace)"
        ));
    }
    Ok(())
}

/// Whether the server process `pid` works in `data_dir` as this machine
/// sees it.
fn works_in(pid: u32, data_dir: &Path) -> Result<(), String> {
    let trimmed = |path: &Path| path.to_string_lossy().trim_end_matches('/').to_string();
    match std::fs::read_link(format!("/proc/{pid}/cwd")) {
        Ok(cwd) if trimmed(&cwd) == trimmed(data_dir) => Ok(()),
        Ok(cwd) => Err(format!(
            "pid {pid} here works in {}, not in the server's data directory {}",
            cwd.display(),
            data_dir.display()
        )),
        Err(_) if same_mounts(pid) => Ok(()),
        Err(error) => Err(format!(
            "pid {pid}'s working directory cannot be read ({error}) and it sees other mounts \
             than strata: run strata as root or as the server's OS user"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(comm: &str, started_unix_s: f64) -> ProcessStart {
        ProcessStart {
            comm: comm.into(),
            parent: 1,
            started_unix_s,
        }
    }

    #[test]
    fn another_program_or_another_start_is_not_the_server() {
        assert!(is_a_server_program(&process("mariadbd", 100.0), 7).is_ok());
        assert!(is_a_server_program(&process("mysqld", 100.0), 7).is_ok());
        let kernel_thread = is_a_server_program(&process("kthreadd", 100.0), 2);
        assert!(kernel_thread.unwrap_err().contains("not the server"));
        assert!(began_with_the_server(&process("mariadbd", 100.0), 7, 101.5).is_ok());
        assert!(began_with_the_server(&process("mysqld", 100.0), 7, 99.0).is_ok());
        let later = began_with_the_server(&process("mariadbd", 100.0), 7, 130.0);
        assert!(later.unwrap_err().contains("30.0 s apart"));
    }

    #[test]
    fn a_process_without_the_connection_s_thread_does_not_serve_it() {
        let here = std::process::id();
        let this_thread = unsafe { libc::gettid() } as u32;
        assert!(serves_the_connection(here, this_thread).is_ok());
        let other = serves_the_connection(here, u32::MAX - 1).unwrap_err();
        assert!(other.contains("has no thread"), "{other}");
    }

    #[test]
    fn a_process_working_elsewhere_does_not_serve_the_directory() {
        let here = std::process::id();
        let cwd = std::env::current_dir().unwrap();
        assert!(works_in(here, &cwd).is_ok());
        let error = works_in(here, Path::new("/var/lib/mysql-elsewhere")).unwrap_err();
        assert!(
            error.contains("not in the server's data directory"),
            "{error}"
        );
    }
}
