//! Throwaway clusters an earlier strata left when it was killed: its data
//! and socket directories `.strata-pg-<pid>-<random>[-sock]` and its cgroup
//! `strata-pg-<pid>-<random>`, found by the dead owner's pid, the server
//! still running in them stopped, and removed.
//!
//! Not for: a cluster kept with `--keep` (its data directory holds
//! [`KEPT_MARK`]), or one whose strata still runs.

use super::processes;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};
use strata_db::leftovers::{self, Leftover};

/// The file `keep` leaves in a kept cluster's data directory: a cluster
/// with it is the user's now and never removed as a leftover.
pub const KEPT_MARK: &str = "strata-kept";
const DIR_PREFIX: &str = ".strata-pg-";
const CGROUP_PREFIX: &str = "strata-pg-";
const STOP_WAIT: Duration = Duration::from_secs(10);

/// Removes every abandoned cluster in `parent_dir` (and its socket
/// directory there or in the temporary directory) and every abandoned
/// cgroup; returns a note for each thing removed or that could not be.
pub fn remove_abandoned(parent_dir: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    let Ok(parent_dir) = parent_dir.canonicalize() else {
        return notes;
    };
    let (sockets, data_dirs): (Vec<Leftover>, Vec<Leftover>) =
        leftovers::abandoned(&parent_dir, DIR_PREFIX)
            .into_iter()
            .partition(|leftover| leftover.path.to_string_lossy().ends_with("-sock"));
    for data_dir in data_dirs {
        if data_dir.path.join(KEPT_MARK).exists() {
            continue;
        }
        let what = "an abandoned throwaway PostgreSQL cluster's data directory";
        notes.push(match remove_data_dir(&data_dir.path) {
            Ok(stopped) => data_dir.removed_note(&format!("{what}{stopped}")),
            Err(error) => data_dir.kept_note(what, &error),
        });
    }
    let in_temp = leftovers::abandoned(&std::env::temp_dir(), DIR_PREFIX)
        .into_iter()
        .filter(|leftover| leftover.path.to_string_lossy().ends_with("-sock"));
    for socket_dir in sockets.into_iter().chain(in_temp) {
        if server_running_in(&socket_dir.path) {
            continue;
        }
        let what = "an abandoned throwaway PostgreSQL cluster's socket directory";
        notes.push(match std::fs::remove_dir_all(&socket_dir.path) {
            Ok(()) => socket_dir.removed_note(what),
            Err(error) => socket_dir.kept_note(what, &error.into()),
        });
    }
    let cgroups = strata_db::pagecache::remove_abandoned_cgroups(CGROUP_PREFIX);
    notes.extend(cgroups.iter().map(|cgroup| {
        cgroup.removed_note("an abandoned throwaway PostgreSQL cluster's memory cgroup")
    }));
    notes
}

/// Stops the postmaster still running in `dir` (immediate shutdown, then
/// SIGKILL to every process working there) and removes the directory;
/// returns what was stopped, for the note.
fn remove_data_dir(dir: &Path) -> anyhow::Result<String> {
    let owner_uid = std::fs::metadata(dir)?.uid();
    let running = processes::processes_working_in(dir, owner_uid);
    let stopped = match postmaster_pid_of(dir) {
        Some(pid) if running.contains(&pid) => {
            stop(pid, dir, owner_uid)?;
            format!(", whose postmaster pid {pid} was still running and was stopped")
        }
        _ => String::new(),
    };
    std::fs::remove_dir_all(dir)?;
    Ok(stopped)
}

fn stop(postmaster: u32, dir: &Path, owner_uid: u32) -> anyhow::Result<()> {
    let gone = || {
        let deadline = Instant::now() + STOP_WAIT;
        while Instant::now() < deadline {
            if processes::processes_working_in(dir, owner_uid).is_empty() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    };
    processes::send_signal(postmaster, libc::SIGQUIT);
    if gone() {
        return Ok(());
    }
    for pid in processes::processes_working_in(dir, owner_uid) {
        processes::send_signal(pid, libc::SIGKILL);
    }
    match gone() {
        true => Ok(()),
        false => anyhow::bail!(
            "server processes working in {} still run after SIGQUIT and SIGKILL",
            dir.display()
        ),
    }
}

/// The postmaster's pid in a data directory's `postmaster.pid`.
fn postmaster_pid_of(dir: &Path) -> Option<u32> {
    first_line_pid(&dir.join("postmaster.pid"))
}

/// The pid on the first line of `postmaster.pid` or of a socket's
/// `.s.PGSQL.<port>.lock` (both start with it).
fn first_line_pid(file: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().next()?.trim().parse().ok()
}

/// Whether a server still running uses the socket directory `dir` (a kept
/// cluster's whose data directory is elsewhere).
fn server_running_in(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|entry| {
        let name = entry.file_name();
        let lock = name.to_string_lossy();
        lock.starts_with(".s.PGSQL.")
            && lock.ends_with(".lock")
            && first_line_pid(&entry.path()).is_some_and(leftovers::is_alive)
    })
}
