//! The roles of a host's PostgreSQL processes read from their titles, as
//! `ps` shows them (`postgres: walwriter`, `postgres: 15/main:
//! checkpointer`, `postgres: app shop 10.0.0.9(51234) idle`), for a
//! strata agent that has no connection to the database: the role is the
//! `backend_type` pg_stat_activity would give, "client backend" for a
//! session's process. A client whose user is named like a background
//! process's type would be read as that process.
//!
//! Not for: MariaDB, whose threads carry no names of their own (every one
//! is `mariadbd`), or a database reached over a connection (its own
//! catalogue says better).

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;

/// The kernel's number for its first PID namespace (`PROC_PID_INIT_INO`).
const INITIAL_PID_NAMESPACE: u64 = 0xEFFF_FFFC;

/// PostgreSQL's `backend_type`s other than "client backend", as its
/// processes' titles begin (a background worker's title is its name,
/// which begins with its type).
const BACKEND_TYPES: [&str; 19] = [
    "archiver",
    "autovacuum launcher",
    "autovacuum worker",
    "background writer",
    "checkpointer",
    "io worker",
    "logger",
    "slotsync worker",
    "startup",
    "walreceiver",
    "walsender",
    "walsummarizer",
    "walwriter",
    "logical replication launcher",
    "logical replication apply worker",
    "logical replication parallel worker",
    "logical replication tablesync worker",
    "logical replication worker",
    "parallel worker",
];

/// The role a PostgreSQL process's title gives; `None` for a title that is
/// not a PostgreSQL child's (the postmaster's is its command line).
pub fn postgres_role(title: &str) -> Option<&'static str> {
    let rest = title.strip_prefix("postgres: ")?;
    // With cluster_name set, the title is "postgres: CLUSTER: …".
    let after_cluster = rest.split_once(": ").map(|(_, after)| after);
    let begins_with = |text: &str, kind: &str| {
        text.strip_prefix(kind)
            .is_some_and(|after| after.is_empty() || after.starts_with(' '))
    };
    [Some(rest), after_cluster]
        .into_iter()
        .flatten()
        .find_map(|text| {
            BACKEND_TYPES
                .into_iter()
                .find(|kind| begins_with(text, kind))
        })
        .or(Some("client backend"))
}

/// Every PostgreSQL child process in this /proc by its role.
pub fn postgres_roles() -> BTreeMap<u32, &'static str> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return BTreeMap::new();
    };
    entries
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            if comm.trim_end() != "postgres" {
                return None;
            }
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let title = String::from_utf8_lossy(&cmdline);
            let title = title.trim_end_matches(['\0', ' ']);
            Some((pid, postgres_role(title)?))
        })
        .collect()
}

/// Why the process ids in /proc are not the kernel's own (those the block
/// tracer sees): this process is in a PID namespace of its own (a
/// container without the host's PIDs). `None` in the host's.
pub fn pid_namespace_apart() -> Option<String> {
    let inode = std::fs::metadata("/proc/self/ns/pid").ok()?.ino();
    (inode != INITIAL_PID_NAMESPACE).then(|| {
        "strata runs in a PID namespace of its own, whose process ids are not the kernel's \
         (run the agent in the host's PID namespace: hostPID in a container)"
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::postgres_role;

    #[test]
    fn a_title_gives_the_backend_type_pg_stat_activity_would() {
        let cases = [
            ("postgres: 15/main: checkpointer", Some("checkpointer")),
            ("postgres: walwriter", Some("walwriter")),
            ("postgres: io worker 2", Some("io worker")),
            (
                "postgres: autovacuum worker shop",
                Some("autovacuum worker"),
            ),
            (
                "postgres: 16/main: logical replication launcher",
                Some("logical replication launcher"),
            ),
            (
                "postgres: parallel worker for PID 4242",
                Some("parallel worker"),
            ),
            (
                "postgres: app shop 10.0.0.9(51234) SELECT",
                Some("client backend"),
            ),
            (
                "postgres: 15/main: app shop [local] idle",
                Some("client backend"),
            ),
            (
                "postgres: walwriterish db [local] idle",
                Some("client backend"),
            ),
            ("/usr/lib/postgresql/15/bin/postgres -D /srv/db", None),
        ];
        for (title, role) in cases {
            assert_eq!(postgres_role(title), role, "{title}");
        }
    }
}
