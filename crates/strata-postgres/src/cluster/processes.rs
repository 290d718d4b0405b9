//! The postmaster as a child process, the server's process tree, and
//! stopping it so that no server process is left running.
//!
//! Not for: per-process statistics (`strata-probe` reads those).

use anyhow::{bail, Context, Result};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

const FAST_SHUTDOWN_WAIT: Duration = Duration::from_secs(10);
const KILL_WAIT: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(20);

/// A running postmaster; stopped (with every process it started) on drop.
pub struct Postmaster {
    child: Child,
    data_dir: PathBuf,
    owner_uid: u32,
    finished: bool,
}

impl Postmaster {
    /// `data_dir` is the server's working directory and `owner_uid` the
    /// account it runs as: together they identify its orphaned children.
    pub fn new(child: Child, data_dir: &Path, owner_uid: u32) -> Postmaster {
        Postmaster {
            child,
            data_dir: data_dir.to_path_buf(),
            owner_uid,
            finished: false,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn exit_status(&mut self) -> Result<Option<ExitStatus>> {
        self.child
            .try_wait()
            .with_context(|| format!("checking on postmaster {}", self.pid()))
    }

    /// SIGKILL to the postmaster alone, as a crash would; its children are
    /// left to notice. [`Postmaster::stop`] still cleans up after this.
    pub fn kill(&self) {
        send_signal(self.pid(), libc::SIGKILL);
    }

    /// Leaves the server running when this value is dropped.
    pub fn detach(mut self) {
        self.finished = true;
    }

    /// Fast shutdown (SIGINT), then after [`FAST_SHUTDOWN_WAIT`] SIGKILL to
    /// the whole process tree; then SIGKILL to any orphan still working in
    /// the data directory, until none is left.
    pub fn stop(&mut self) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        if !self.signal_and_wait(libc::SIGINT, FAST_SHUTDOWN_WAIT)? {
            for pid in process_tree(self.pid()) {
                send_signal(pid, libc::SIGKILL);
            }
            self.child
                .wait()
                .with_context(|| format!("waiting for killed postmaster {}", self.pid()))?;
        }
        self.kill_orphans()
    }

    /// True when the postmaster has exited within `wait`.
    fn signal_and_wait(&mut self, signal: libc::c_int, wait: Duration) -> Result<bool> {
        if self.exit_status()?.is_some() {
            return Ok(true);
        }
        send_signal(self.pid(), signal);
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if self.exit_status()?.is_some() {
                return Ok(true);
            }
            std::thread::sleep(POLL);
        }
        Ok(false)
    }

    fn kill_orphans(&self) -> Result<()> {
        let deadline = Instant::now() + KILL_WAIT;
        loop {
            let orphans = processes_working_in(&self.data_dir, self.owner_uid);
            if orphans.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "server processes {orphans:?} (working in {}) still run after SIGKILL",
                    self.data_dir.display()
                );
            }
            for pid in orphans {
                send_signal(pid, libc::SIGKILL);
            }
            std::thread::sleep(POLL);
        }
    }
}

impl Drop for Postmaster {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

pub(super) fn send_signal(pid: u32, signal: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        unsafe { libc::kill(pid, signal) };
    }
}

/// `root` and all its descendants alive now, found through the parent pid
/// in `/proc/<pid>/stat`.
pub fn process_tree(root: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = all_pids()
        .filter_map(|pid| Some((pid, parent_pid(pid)?)))
        .collect();
    let mut tree = Vec::new();
    if parents.iter().any(|&(pid, _)| pid == root) {
        tree.push(root);
    }
    let mut next = 0;
    while next < tree.len() {
        let parent = tree[next];
        tree.extend(
            parents
                .iter()
                .filter(|&&(_, ppid)| ppid == parent)
                .map(|&(pid, _)| pid),
        );
        next += 1;
    }
    tree
}

fn all_pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
}

/// The fourth field of `/proc/<pid>/stat`; the second (the command name in
/// parentheses) may hold spaces and parentheses, so fields count from the
/// last `)`. Zombies count as gone.
fn parent_pid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after_name) = stat.rsplit_once(')')?;
    let mut fields = after_name.split_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    fields.next()?.parse().ok()
}

/// Live processes of `owner_uid` whose working directory is `dir`: the
/// postmaster changes into its data directory and its children inherit it.
pub(super) fn processes_working_in(dir: &Path, owner_uid: u32) -> Vec<u32> {
    let own_pid = std::process::id();
    all_pids()
        .filter(|&pid| pid != own_pid)
        .filter(|&pid| {
            let proc_dir = PathBuf::from(format!("/proc/{pid}"));
            let owned = std::fs::metadata(&proc_dir).is_ok_and(|meta| meta.uid() == owner_uid);
            owned && std::fs::read_link(proc_dir.join("cwd")).is_ok_and(|cwd| cwd == dir)
        })
        .collect()
}
