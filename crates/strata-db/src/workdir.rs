//! Where a throwaway server's files, or strata's own scratch files, live:
//! the directory named with `--work-dir`, else the current directory, else —
//! when the server's OS account cannot reach the current directory (a clone
//! under `/root`, mode 0700) — a directory on the same filesystem that it
//! can reach, so the data set still lands on the storage the user meant to
//! test.
//!
//! Not for: making or removing the server's own directories (each throwaway
//! server makes its directory inside the work directory and removes it), or
//! changing the permissions of the user's directories.

use crate::account::ServerAccount;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What the user asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum WorkDirRequest {
    /// `--work-dir DIR`: used as it is, or refused.
    Explicit(PathBuf),
    /// No `--work-dir`: `dir` (the current directory, described as `what`),
    /// or a reachable directory on its filesystem.
    Near { dir: PathBuf, what: &'static str },
}

impl WorkDirRequest {
    /// `--work-dir` when given, else the current directory.
    pub fn from_option(work_dir: Option<&Path>) -> Result<WorkDirRequest> {
        Ok(match work_dir {
            Some(dir) => WorkDirRequest::Explicit(dir.to_path_buf()),
            None => WorkDirRequest::Near {
                dir: std::env::current_dir().context("reading the current directory")?,
                what: "the current directory",
            },
        })
    }
}

/// The chosen directory and why, as the output and the Recording say it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkDir {
    pub path: PathBuf,
    pub reason: String,
}

/// Temporary directories tried, in order, when the current directory cannot
/// be reached; only those on the current directory's filesystem count.
const SHARED_TEMPORARY_DIRS: [&str; 2] = ["/var/tmp", "/tmp"];

impl WorkDir {
    /// Resolves `request` for files that `account` (the server's OS
    /// account; `None` when strata itself uses them) must reach. Every check
    /// is done here, before any work starts.
    pub fn resolve(request: &WorkDirRequest, account: Option<&ServerAccount>) -> Result<WorkDir> {
        match request {
            WorkDirRequest::Explicit(dir) => explicit(dir, account),
            WorkDirRequest::Near { dir, what } => near(dir, what, account),
        }
    }
}

fn explicit(dir: &Path, account: Option<&ServerAccount>) -> Result<WorkDir> {
    let shown = dir.display();
    let metadata =
        std::fs::metadata(dir).with_context(|| format!("--work-dir {shown}: cannot use it"))?;
    if !metadata.is_dir() {
        bail!("--work-dir {shown}: not a directory");
    }
    let path = dir
        .canonicalize()
        .with_context(|| format!("--work-dir {shown}: resolving it"))?;
    if !writable_by_strata(&path) {
        bail!("--work-dir {shown}: strata cannot create files there (not writable, or a read-only filesystem)");
    }
    if let Some(account) = account {
        if let Some(blocker) = first_unreachable(&path, account) {
            bail!(
                "--work-dir {shown}: OS account {} cannot reach it ({blocker}); choose a directory \
                 whose every parent that account may search (chmod o+x), or another --os-user",
                account.name
            );
        }
    }
    Ok(WorkDir {
        path,
        reason: "--work-dir".into(),
    })
}

fn near(dir: &Path, what: &str, account: Option<&ServerAccount>) -> Result<WorkDir> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("resolving {what} {}", dir.display()))?;
    let blocker =
        account.and_then(|account| first_unreachable(&dir, account).map(|b| (account, b)));
    let Some((account, blocker)) = blocker else {
        return Ok(WorkDir {
            path: dir,
            reason: what.to_string(),
        });
    };
    let device = std::fs::metadata(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .dev();
    let unreachable = format!(
        "{what} {} cannot be reached by OS account {} ({blocker})",
        dir.display(),
        account.name
    );
    match reachable_on_device(&dir, device, account) {
        Some(path) => Ok(WorkDir {
            reason: format!(
                "{unreachable}; {} is on the same filesystem (device {}), so the data still lands \
                 on the same storage",
                path.display(),
                device_name(device)
            ),
            path,
        }),
        None => bail!(
            "{unreachable}, and no directory on its filesystem (device {}) that {} can reach was \
             found ({}, then the parents of {}): give --work-dir DIR, a directory on the storage to \
             test that {} can reach, or run strata from one",
            device_name(device),
            account.name,
            SHARED_TEMPORARY_DIRS.join(", "),
            dir.display(),
            account.name
        ),
    }
}

/// The first of the shared temporary directories, then the parents of
/// `dir` (nearest first), on filesystem `device`, that `account` can
/// reach and strata can write.
fn reachable_on_device(dir: &Path, device: u64, account: &ServerAccount) -> Option<PathBuf> {
    let temporary = SHARED_TEMPORARY_DIRS
        .iter()
        .filter_map(|dir| Path::new(dir).canonicalize().ok());
    let parents = dir.ancestors().skip(1).map(Path::to_path_buf);
    temporary.chain(parents).find(|dir| {
        std::fs::metadata(dir).is_ok_and(|metadata| metadata.is_dir() && metadata.dev() == device)
            && writable_by_strata(dir)
            && first_unreachable(dir, account).is_none()
    })
}

/// The first directory from `/` down to `dir` (inclusive) that `account`
/// may not search, described with its mode and owner; `None` when every
/// one lets it through. Read from the mode bits, as the kernel checks them
/// (owner, then group — the account's primary and supplementary groups —,
/// then others); ACLs are not read.
pub fn first_unreachable(dir: &Path, account: &ServerAccount) -> Option<String> {
    let groups = account_groups(account);
    let mut chain: Vec<&Path> = dir.ancestors().collect();
    chain.reverse();
    chain.into_iter().find_map(|step| {
        let Ok(metadata) = std::fs::metadata(step) else {
            return Some(format!("{} cannot be read", step.display()));
        };
        let mode = metadata.mode();
        let search_bit = if metadata.uid() == account.uid {
            0o100
        } else if groups.contains(&metadata.gid()) {
            0o010
        } else {
            0o001
        };
        (mode & search_bit == 0).then(|| {
            format!(
                "{}: mode {:04o}, owner uid {}",
                step.display(),
                mode & 0o7777,
                metadata.uid()
            )
        })
    })
}

/// The account's primary group and its supplementary groups.
fn account_groups(account: &ServerAccount) -> Vec<u32> {
    let Ok(name) = CString::new(account.name.as_str()) else {
        return vec![account.gid];
    };
    let mut groups = vec![0 as libc::gid_t; 256];
    let mut count = groups.len() as libc::c_int;
    let status =
        unsafe { libc::getgrouplist(name.as_ptr(), account.gid, groups.as_mut_ptr(), &mut count) };
    if status < 0 {
        return vec![account.gid];
    }
    groups.truncate(count.max(0) as usize);
    groups
}

fn writable_by_strata(dir: &Path) -> bool {
    let Ok(path) = CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    unsafe { libc::access(path.as_ptr(), libc::W_OK | libc::X_OK) == 0 }
}

fn device_name(device: u64) -> String {
    format!("{}:{}", libc::major(device), libc::minor(device))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn nobody() -> ServerAccount {
        ServerAccount {
            name: "nobody".into(),
            uid: 65534,
            gid: 65534,
        }
    }

    #[test]
    fn a_private_parent_is_named_with_its_mode() {
        let outer = tempfile::tempdir().unwrap();
        std::fs::set_permissions(outer.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let inner = outer.path().join("clone");
        std::fs::create_dir(&inner).unwrap();
        let blocker = first_unreachable(&inner, &nobody()).expect("0700 blocks others");
        assert!(
            blocker.starts_with(&format!("{}: mode 0700", outer.path().display())),
            "{blocker}"
        );
        std::fs::set_permissions(outer.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(0o711)).unwrap();
        assert_eq!(first_unreachable(&inner, &nobody()), None);
    }

    #[test]
    fn explicit_values_that_cannot_work_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, b"x").unwrap();
        let missing = dir.path().join("missing");
        for (path, expected) in [(&file, "not a directory"), (&missing, "cannot use it")] {
            let error = WorkDir::resolve(&WorkDirRequest::Explicit(path.clone()), None)
                .unwrap_err()
                .to_string();
            assert!(error.starts_with("--work-dir "), "{error}");
            assert!(error.contains(expected), "{error}");
        }
        let ok = WorkDir::resolve(&WorkDirRequest::Explicit(dir.path().into()), None).unwrap();
        assert_eq!(ok.path, dir.path().canonicalize().unwrap());
        assert_eq!(ok.reason, "--work-dir");
    }
}
