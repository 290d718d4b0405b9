//! Running a throwaway server's programs as the right OS account and in the
//! right cgroup, for every engine: when strata runs as root, `initdb` and
//! `postgres` run as `postgres` (PostgreSQL refuses root), `mariadbd` as
//! `mysql`.
//!
//! Not for: creating OS accounts.

use anyhow::{bail, Context, Result};
use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

#[derive(Debug, Clone)]
pub struct ServerAccount {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

impl ServerAccount {
    /// The account `server` runs as when strata runs as root (`name`, an
    /// account other than root); `None` when strata is not root (the
    /// server then runs as strata's own user).
    pub fn unprivileged(name: &str, server: &str) -> Result<Option<ServerAccount>> {
        if unsafe { libc::geteuid() } != 0 {
            return Ok(None);
        }
        let account = Self::lookup(name)?;
        if account.uid == 0 {
            bail!("{server} refuses to run as root: OS account {name:?} has uid 0; choose another");
        }
        Ok(Some(account))
    }

    /// The OS account `name` from the password database, or why not.
    pub fn lookup(name: &str) -> Result<ServerAccount> {
        let c_name = CString::new(name).with_context(|| format!("OS account name {name:?}"))?;
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut buffer = vec![0 as libc::c_char; 16 * 1024];
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let status = unsafe {
            libc::getpwnam_r(
                c_name.as_ptr(),
                &mut entry,
                buffer.as_mut_ptr(),
                buffer.len(),
                &mut found,
            )
        };
        if status != 0 {
            let error = std::io::Error::from_raw_os_error(status);
            return Err(error).with_context(|| format!("looking up OS account {name:?}"));
        }
        if found.is_null() {
            bail!("OS account {name:?} does not exist (needed to run the server when strata runs as root)");
        }
        Ok(ServerAccount {
            name: name.to_string(),
            uid: entry.pw_uid,
            gid: entry.pw_gid,
        })
    }

    pub fn chown(&self, path: &Path) -> Result<()> {
        std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid))
            .with_context(|| format!("giving {} to OS account {}", path.display(), self.name))
    }
}

/// Makes the child join the cgroup whose `cgroup.procs` is given (while
/// still root) and then become `account`, between fork and exec, so the
/// program and everything it starts is charged to the cgroup from its
/// first page.
pub fn run_as(
    command: &mut Command,
    account: Option<&ServerAccount>,
    cgroup_procs: Option<&Path>,
) -> Result<()> {
    let cgroup_procs = cgroup_procs
        .map(|path| CString::new(path.as_os_str().as_bytes()))
        .transpose()
        .context("cgroup.procs path contains a NUL byte")?;
    let ids = account.map(|account| (account.uid, account.gid));
    let child_setup = move || {
        if let Some(procs) = &cgroup_procs {
            join_cgroup(procs)?;
        }
        if let Some((uid, gid)) = ids {
            become_account(uid, gid)?;
        }
        Ok(())
    };
    // SAFETY: the closure only makes async-signal-safe system calls
    // (open, write, close, setgroups, setgid, setuid) and allocates nothing.
    unsafe { command.pre_exec(child_setup) };
    Ok(())
}

/// Writing "0" to `cgroup.procs` moves the writing process (v1 and v2).
fn join_cgroup(procs: &CStr) -> std::io::Result<()> {
    let fd = unsafe { libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let written = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
    let write_error = std::io::Error::last_os_error();
    unsafe { libc::close(fd) };
    if written != 1 {
        return Err(write_error);
    }
    Ok(())
}

fn become_account(uid: u32, gid: u32) -> std::io::Result<()> {
    let groups = [gid];
    let failed = |status: libc::c_int| status != 0;
    if failed(unsafe { libc::setgroups(1, groups.as_ptr()) })
        || failed(unsafe { libc::setgid(gid) })
        || failed(unsafe { libc::setuid(uid) })
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Makes the child receive `signal` when the thread that starts it ends
/// (strata exiting any way, SIGKILL included), so that a throwaway server
/// cannot outlive the strata that owns it. Register it after [`run_as`]:
/// changing the account clears the setting, so it must come after. A
/// strata already gone before the child is set up sends the signal at once.
/// Start the child from a thread that lives as long as the server is
/// needed (the kernel watches the thread, not the process).
pub fn die_with_parent(command: &mut Command, signal: libc::c_int) {
    let parent = unsafe { libc::getpid() };
    let child_setup = move || {
        if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if unsafe { libc::getppid() } != parent {
            unsafe { libc::raise(signal) };
        }
        Ok(())
    };
    // SAFETY: prctl, getppid and raise are async-signal-safe; nothing is
    // allocated.
    unsafe { command.pre_exec(child_setup) };
}
