//! The roles of mariadbd's threads, for the block tracer to count each
//! request under: with performance_schema on, each thread's own name
//! (`performance_schema.threads`: `sql/one_connection`,
//! `innodb/page_cleaner_thread`, `innodb/thread_pool_thread`, …); without
//! it, a client connection's thread by `information_schema.PROCESSLIST`'s
//! `TID` and every other thread of the server as one background role. The
//! kernel's io_uring workers inside the server are named as such.
//!
//! Not for: tracing (`strata_probe::blocktrace`), or the CPU's process
//! groups (`figures`).

use mysql::prelude::Queryable;
use std::collections::BTreeMap;

/// A client connection's thread, as performance_schema names it.
pub const CONNECTION: &str = "sql/one_connection";
/// A connection strata asks its questions on.
pub const OWN_CONNECTION: &str = "sql/one_connection (strata's own)";
/// A thread of the server that is not a connection, with
/// performance_schema off (InnoDB's page cleaner, log writer, thread pool,
/// … are not told apart).
pub const BACKGROUND: &str = "mariadbd thread, not a connection";
/// The kernel's workers for the server's io_uring requests.
pub const IO_URING_WORKER: &str = "io_uring worker (kernel, for mariadbd)";

/// Every thread of the server's processes with its role, asked on
/// `connection`; strata's own connections are `own` (their ids).
pub fn thread_roles(
    connection: &mut mysql::Conn,
    server_pids: &[u32],
    own: &[u64],
) -> BTreeMap<u32, String> {
    let mut roles: BTreeMap<u32, String> = server_pids
        .iter()
        .flat_map(|pid| threads_of(*pid))
        .map(|(thread, command)| {
            let role = match command.starts_with("iou-wrk") {
                true => IO_URING_WORKER,
                false => BACKGROUND,
            };
            (thread, role.to_string())
        })
        .collect();
    let named = named_by_performance_schema(connection, own);
    let named = match named.is_empty() {
        true => connections_by_processlist(connection, own),
        false => named,
    };
    for (thread, role) in named {
        if let Some(known) = roles.get_mut(&thread) {
            *known = role;
        }
    }
    roles
}

/// (thread id, its name) of each thread of `pid`.
fn threads_of(pid: u32) -> Vec<(u32, String)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| {
            let thread = task.file_name().to_str()?.parse().ok()?;
            let command = std::fs::read_to_string(task.path().join("comm")).ok()?;
            Some((thread, command.trim_end().to_string()))
        })
        .collect()
}

fn named_by_performance_schema(connection: &mut mysql::Conn, own: &[u64]) -> Vec<(u32, String)> {
    let rows: Vec<(u64, String, Option<u64>)> = connection
        .query(
            "SELECT THREAD_OS_ID, NAME, PROCESSLIST_ID FROM performance_schema.threads \
             WHERE THREAD_OS_ID IS NOT NULL",
        )
        .unwrap_or_default();
    rows.into_iter()
        .filter_map(|(thread, name, id)| {
            let role = match id.is_some_and(|id| own.contains(&id)) {
                true => OWN_CONNECTION.to_string(),
                false => name.strip_prefix("thread/").unwrap_or(&name).to_string(),
            };
            Some((u32::try_from(thread).ok()?, role))
        })
        .collect()
}

fn connections_by_processlist(connection: &mut mysql::Conn, own: &[u64]) -> Vec<(u32, String)> {
    let rows: Vec<(Option<u64>, u64)> = connection
        .query("SELECT TID, ID FROM information_schema.PROCESSLIST WHERE COMMAND <> 'Daemon'")
        .unwrap_or_default();
    rows.into_iter()
        .filter_map(|(thread, id)| {
            let role = match own.contains(&id) {
                true => OWN_CONNECTION,
                false => CONNECTION,
            };
            Some((u32::try_from(thread?).ok()?, role.to_string()))
        })
        .collect()
}
