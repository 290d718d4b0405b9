//! What an earlier strata left behind when it could not clean up (SIGKILL,
//! the OOM killer, a power cut): throwaway servers' directories and
//! cgroups, calibrate's temporary files. Each is named
//! `<prefix><pid>-<random>…` by the strata that made it; the pid says
//! whether its owner still runs. Found here; each maker removes its own
//! kind, since only it knows how (a server to stop, a mark to check).
//!
//! Not for: anything whose owner still runs (another strata at work in the
//! same directory), or any name strata did not make.

use std::path::{Path, PathBuf};

/// A file or directory in `dir` named by a strata whose process is gone.
#[derive(Debug, Clone, PartialEq)]
pub struct Leftover {
    pub path: PathBuf,
    /// The pid in its name: the strata that made it, no longer running.
    pub owner_pid: u32,
}

impl Leftover {
    /// "removed <path> (<what>), left by strata pid N, which no longer runs".
    pub fn removed_note(&self, what: &str) -> String {
        format!(
            "strata: removed {} ({what}), left by strata pid {}, which no longer runs",
            self.path.display(),
            self.owner_pid
        )
    }

    /// The same when it could not be removed, with why.
    pub fn kept_note(&self, what: &str, error: &anyhow::Error) -> String {
        format!(
            "strata: {} ({what}) was left by strata pid {}, which no longer runs, and could not \
             be removed: {error:#}",
            self.path.display(),
            self.owner_pid
        )
    }
}

/// The pid in `name` when it is `<prefix><pid>-…`.
pub fn owner_pid(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    let (pid, random) = rest.split_once('-')?;
    if random.is_empty() || !pid.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok().filter(|&pid| pid > 0)
}

/// Whether a process with this pid exists (a zombie counts as gone). A pid
/// reused by another program counts as running: the leftover is kept.
pub use strata_probe::collectors::is_running as is_alive;

/// Every entry of `dir` named `<prefix><pid>-…` whose pid no longer runs
/// (and is not this process), oldest name first; none when `dir` cannot be
/// read.
pub fn abandoned(dir: &Path, prefix: &str) -> Vec<Leftover> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<Leftover> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let owner_pid = owner_pid(name.to_str()?, prefix)?;
            let gone = owner_pid != std::process::id() && !is_alive(owner_pid);
            gone.then(|| Leftover {
                path: entry.path(),
                owner_pid,
            })
        })
        .collect();
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pid_is_read_from_strata_names_only() {
        assert_eq!(
            owner_pid(".strata-pg-4242-0badcafe", ".strata-pg-"),
            Some(4242)
        );
        assert_eq!(
            owner_pid(".strata-pg-4242-0badcafe-sock", ".strata-pg-"),
            Some(4242)
        );
        assert_eq!(owner_pid(".strata-pg-42x-0bad", ".strata-pg-"), None);
        assert_eq!(owner_pid(".strata-pg-4242", ".strata-pg-"), None);
        assert_eq!(owner_pid(".strata-pg-4242-", ".strata-pg-"), None);
        assert_eq!(owner_pid(".strata-pg-0-ab", ".strata-pg-"), None);
        assert_eq!(owner_pid("strata-pg-4242-ab", ".strata-pg-"), None);
    }

    #[test]
    fn only_names_whose_owner_is_gone_are_abandoned() {
        let dir = tempfile::tempdir().unwrap();
        let gone = gone_pid();
        let mine = std::process::id();
        for name in [
            format!(".strata-x-{gone}-aa"),
            format!(".strata-x-{mine}-bb"),
            ".strata-x-1-cc".to_string(),
            "unrelated".to_string(),
        ] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let found = abandoned(dir.path(), ".strata-x-");
        assert_eq!(
            found,
            vec![Leftover {
                path: dir.path().join(format!(".strata-x-{gone}-aa")),
                owner_pid: gone,
            }]
        );
    }

    /// A pid no process has: one that ran and was reaped.
    fn gone_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!is_alive(pid));
        pid
    }
}
