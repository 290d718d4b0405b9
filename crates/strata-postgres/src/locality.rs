//! Whether a server runs on this machine, proved rather than assumed. A
//! path that exists here proves nothing: two Debian hosts both have
//! `/var/lib/postgresql/15/main`, and a server in another PID or mount
//! namespace names paths that exist here too. The server is local when
//! its session's backend (`pg_backend_pid()`) is a `postgres` process here
//! that began when the server says the backend began, and its data
//! directory is the one that backend's parent, the postmaster, runs in:
//! the directory's `postmaster.pid` names that parent or, where strata may
//! not read that file, the postmaster sees the same mounts as strata.
//!
//! Not for: what is measured once the server is known to be local (`run`,
//! `collector`).

use std::path::{Path, PathBuf};
use strata_probe::cpu::{process_start, same_mounts, ProcessStart};
use tokio_postgres::Client;

/// The backend's start as the server gives it and as /proc gives it may
/// differ by the clock tick and the fork; more than this is another process.
const START_TOLERANCE_S: f64 = 1.0;

/// Where the server runs, as strata could prove it.
#[derive(Clone, Debug, PartialEq)]
pub enum Locality {
    /// On this machine, with its data directory here.
    Local {
        data_directory: PathBuf,
        postmaster_pid: u32,
    },
    /// Not proved to be on this machine, and why.
    Remote { reason: String },
}

/// Where the server of `client` runs.
pub async fn locate(client: &Client) -> Locality {
    match prove_local(client).await {
        Ok((data_directory, postmaster_pid)) => Locality::Local {
            data_directory,
            postmaster_pid,
        },
        Err(reason) => Locality::Remote { reason },
    }
}

async fn prove_local(client: &Client) -> Result<(PathBuf, u32), String> {
    let row = client
        .query_one(
            "SELECT pid, extract(epoch FROM backend_start)::float8 FROM pg_stat_activity \
             WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .map_err(|error| format!("the server did not say which process serves strata: {error}"))?;
    let backend = row.get::<_, i32>(0) as u32;
    let backend_start_unix_s: f64 = row.get(1);
    let data_directory = client
        .query_one("SHOW data_directory", &[])
        .await
        .map(|row| PathBuf::from(row.get::<_, String>(0)))
        .map_err(|_| {
            "the server does not show its data directory to this role (it needs superuser or \
             pg_read_all_settings)"
                .to_string()
        })?;
    let process = process_start(backend).ok_or_else(|| {
        format!("the process serving strata (pid {backend} on the server) is not on this machine")
    })?;
    is_the_backend(&process, backend, backend_start_unix_s)?;
    runs_in(&data_directory, process.parent)?;
    Ok((data_directory, process.parent))
}

/// Whether this machine's process `pid` is the server's backend: a
/// `postgres` that began when the server says its backend began.
fn is_the_backend(
    process: &ProcessStart,
    pid: u32,
    backend_start_unix_s: f64,
) -> Result<(), String> {
    if !process.comm.starts_with("postgres") {
        return Err(format!(
            "pid {pid} here is `{}`, not the server's backend (the server is on another host or \
             in another PID namespace)",
            process.comm
        ));
    }
    let apart_s = (process.started_unix_s - backend_start_unix_s).abs();
    if apart_s > START_TOLERANCE_S {
        return Err(format!(
            "pid {pid} here began {apart_s:.1} s apart from the server's backend: another \
             process (the server is on another host or in another PID namespace)"
        ));
    }
    Ok(())
}

/// Whether the postmaster `postmaster_pid` runs in `data_directory` as
/// this machine sees it.
fn runs_in(data_directory: &Path, postmaster_pid: u32) -> Result<(), String> {
    let shown = data_directory.display();
    match std::fs::read_to_string(data_directory.join("postmaster.pid")) {
        Ok(text) => {
            let named = text
                .lines()
                .next()
                .and_then(|line| line.trim().parse::<u32>().ok());
            if named == Some(postmaster_pid) {
                Ok(())
            } else {
                Err(format!(
                    "{shown} here is not the server's data directory: its postmaster.pid names \
                     {}, the server's postmaster is pid {postmaster_pid}",
                    named.map_or("no process".to_string(), |pid| format!("pid {pid}"))
                ))
            }
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "{shown} here holds no postmaster.pid: it is not the running server's data directory"
        )),
        Err(_) if same_mounts(postmaster_pid) => Ok(()),
        Err(error) => Err(format!(
            "{shown}/postmaster.pid cannot be read ({error}) and the server's postmaster sees \
             other mounts than strata: run strata as root or as the server's OS user"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(comm: &str, started_unix_s: f64) -> ProcessStart {
        ProcessStart {
            comm: comm.to_string(),
            parent: 1,
            started_unix_s,
        }
    }

    #[test]
    fn another_program_or_another_start_is_not_the_backend() {
        assert!(is_the_backend(&process("postgres", 100.2), 7, 100.0).is_ok());
        let error = is_the_backend(&process("sshd", 100.0), 7, 100.0).unwrap_err();
        assert!(error.contains("`sshd`"), "{error}");
        let error = is_the_backend(&process("postgres", 160.0), 7, 100.0).unwrap_err();
        assert!(error.contains("60.0 s apart"), "{error}");
    }

    #[test]
    fn a_directory_whose_postmaster_pid_names_another_process_is_not_the_server_s() {
        let dir = tempfile::tempdir().unwrap();
        let error = runs_in(dir.path(), 4242).unwrap_err();
        assert!(error.contains("holds no postmaster.pid"), "{error}");
        std::fs::write(dir.path().join("postmaster.pid"), "77\n/x\n").unwrap();
        let error = runs_in(dir.path(), 4242).unwrap_err();
        assert!(error.contains("names pid 77"), "{error}");
        std::fs::write(dir.path().join("postmaster.pid"), "4242\n/x\n").unwrap();
        assert!(runs_in(dir.path(), 4242).is_ok());
        assert!(same_mounts(std::process::id()));
    }
}
