//! What /proc and the account database say about processes and accounts:
//! whether a process still runs, as whom, in which cgroups, and which
//! processes name a directory on their command line.
//!
//! Not for starting or stopping processes, and not for what a process is
//! (a postmaster, a mariadbd): that is the engine's tests' business.

use std::path::Path;

/// Whether the tests run as root (effective uid 0).
pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A process is running when /proc has it and it is not a zombie.
pub fn is_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z") | Some("X") | None)
        }
        Err(_) => false,
    }
}

/// The real uid from /proc/<pid>/status.
pub fn process_uid(pid: u32) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("reading status");
    let line = status
        .lines()
        .find(|line| line.starts_with("Uid:"))
        .expect("Uid line");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The uid of OS account `user`; panics when there is no such account.
pub fn uid_of(user: &str) -> u32 {
    let name = std::ffi::CString::new(user).unwrap();
    // SAFETY: `name` is a NUL-terminated string that outlives the call; the
    // entry is read at once, before another getpw* call can reuse it.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    assert!(!entry.is_null(), "OS account {user} does not exist");
    unsafe { (*entry).pw_uid }
}

/// The lines of /proc/<pid>/cgroup.
pub fn process_cgroups(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup")).expect("reading /proc/PID/cgroup")
}

/// The processes whose command line contains `path`, each with its command
/// line (arguments joined by spaces).
pub fn processes_naming(path: &Path) -> Vec<(u32, String)> {
    let needle = path.to_string_lossy().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let pid = entry.ok()?.file_name().to_str()?.parse::<u32>().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            cmdline.contains(&needle).then_some((pid, cmdline))
        })
        .collect()
}

/// Asks `ready` every 200 ms until it says yes; panics after `limit`,
/// saying what did not become ready and where to look.
pub fn wait_until(limit: std::time::Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + limit;
    while !ready() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what} did not become ready in {limit:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// A TCP port free on 127.0.0.1 now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
