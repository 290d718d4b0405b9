//! One pass over every process in /proc, for `strata observe --top N`: each
//! process's raw counters (device bytes and system calls from
//! `/proc/PID/io`, CPU ticks and start time from `/proc/PID/stat`, run-queue
//! delay from its threads' `schedstat`), its command line, and what it is
//! to a database on this machine (PostgreSQL's process title, mysqld or
//! mariadbd).
//!
//! Not for: rates, ranking or PID reuse across scans (strata-observe's
//! `top` compares two scans), or the chosen processes of the `process` layer
//! (`collectors::ProcessDelayCollector`).

use crate::collectors::{parse_proc_io, thread_schedstat_sums};
use std::io::ErrorKind;
use std::path::Path;

/// Longest command line kept, in characters.
pub const COMMAND_CHARS: usize = 120;

/// Every process found in one pass over /proc.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcessScan {
    /// Seconds since boot when the pass began (`/proc/uptime`), on the
    /// clock of the processes' start times.
    pub uptime_s: f64,
    /// Clock ticks per second (USER_HZ) of `start_ticks` and `cpu_ticks`.
    pub ticks_per_second: f64,
    pub processes: Vec<ProcessCounters>,
}

/// One process's raw counters at one scan.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcessCounters {
    pub pid: u32,
    /// `/proc/PID/stat` field 22, ticks after boot.
    pub start_ticks: u64,
    pub command: String,
    pub database: Option<&'static str>,
    pub role: Option<String>,
    /// utime + stime (fields 14 and 15), every thread, exited ones included.
    pub cpu_ticks: u64,
    /// `schedstat` field 2 summed over the threads alive now.
    pub run_delay_ns: Option<u64>,
    /// `None` when `/proc/PID/io` could not be read (not ours to read).
    pub io: Option<IoCounters>,
}

/// `/proc/PID/io`'s storage-layer bytes and system calls.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IoCounters {
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// `None` on a kernel that does not give them.
    pub syscr: Option<u64>,
    pub syscw: Option<u64>,
}

/// Every process now; one that exits while it is read is left out.
pub fn scan() -> ProcessScan {
    let uptime_s = std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    let processes = std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
                .filter_map(read_process)
                .collect()
        })
        .unwrap_or_default();
    ProcessScan {
        uptime_s,
        ticks_per_second: crate::cpu::ticks_per_second(),
        processes,
    }
}

/// One process's counters; `None` when it is gone or a zombie.
fn read_process(pid: u32) -> Option<ProcessCounters> {
    let dir = Path::new("/proc").join(pid.to_string());
    let stat = parse_stat(&std::fs::read_to_string(dir.join("stat")).ok()?)?;
    if matches!(stat.state, 'Z' | 'X') {
        return None;
    }
    let cmdline = std::fs::read(dir.join("cmdline")).ok()?;
    let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
    let command = command_of(&cmdline, comm.trim_end());
    let (database, role) = database_role(&command).unzip();
    let io = match std::fs::read_to_string(dir.join("io")) {
        Ok(text) => Some(io_counters(&text)?),
        Err(error) if error.kind() == ErrorKind::NotFound => return None,
        Err(_) => None,
    };
    Some(ProcessCounters {
        pid,
        start_ticks: stat.start_ticks,
        command,
        database,
        role,
        cpu_ticks: stat.cpu_ticks,
        run_delay_ns: thread_schedstat_sums(&dir).map(|(_, delay)| delay),
        io,
    })
}

/// The fields of `/proc/PID/stat` the top list reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StatFields {
    pub state: char,
    pub cpu_ticks: u64,
    pub start_ticks: u64,
}

/// Parses `/proc/PID/stat`; the command name may hold spaces and
/// parentheses, so fields are counted after the last `)` (field 3 first).
pub fn parse_stat(text: &str) -> Option<StatFields> {
    let after_name = text.get(text.rfind(')')? + 1..)?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let number = |field: usize| fields.get(field - 3)?.parse::<u64>().ok();
    Some(StatFields {
        state: fields.first()?.chars().next()?,
        cpu_ticks: number(14)? + number(15)?,
        start_ticks: number(22)?,
    })
}

/// `/proc/PID/io`'s counters; `None` when it lacks the byte counters.
pub fn io_counters(text: &str) -> Option<IoCounters> {
    let fields = parse_proc_io(text).ok()?;
    let field = |name: &str| fields.iter().find(|(key, _)| key == name).map(|f| f.1);
    Some(IoCounters {
        read_bytes: field("read_bytes")?,
        write_bytes: field("write_bytes")?,
        syscr: field("syscr"),
        syscw: field("syscw"),
    })
}

/// The command line, its arguments joined by spaces, control characters
/// as spaces, cut to [`COMMAND_CHARS`] with `…`; `[comm]` for a kernel
/// thread (no command line).
pub fn command_of(cmdline: &[u8], comm: &str) -> String {
    let text = String::from_utf8_lossy(cmdline);
    let joined: String = text
        .trim_end_matches('\0')
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let joined = joined.trim_end();
    if joined.is_empty() {
        return format!("[{comm}]");
    }
    match joined.char_indices().nth(COMMAND_CHARS - 1) {
        Some((cut, _)) => format!("{}…", &joined[..cut]),
        None => joined.to_string(),
    }
}

/// PostgreSQL's processes other than client backends, as their process
/// titles begin (the longer of two names sharing a beginning first), from
/// 9.x's stats collector to 18's io workers.
pub const POSTGRES_TITLED_ROLES: [&str; 21] = [
    "logger",
    "stats collector",
    "checkpointer",
    "background writer",
    "walwriter",
    "autovacuum launcher",
    "autovacuum worker",
    "logical replication launcher",
    "logical replication parallel apply worker",
    "logical replication parallel worker",
    "logical replication tablesync worker",
    "logical replication apply worker",
    "logical replication worker",
    "archiver",
    "startup",
    "walreceiver",
    "walsender",
    "walsummarizer",
    "slotsync worker",
    "io worker",
    "parallel worker",
];

/// The role a PostgreSQL process title names after `postgres: ` (with or
/// without a `cluster_name:` before it): one of [`POSTGRES_TITLED_ROLES`],
/// or `None` for a client backend's title (`user db [local] SELECT`).
pub fn postgres_titled_role(title: &str) -> Option<&'static str> {
    let untitled = title.split_once(": ").map(|(_, rest)| rest);
    [Some(title), untitled]
        .into_iter()
        .flatten()
        .find_map(|title| {
            POSTGRES_TITLED_ROLES
                .iter()
                .find(|role| title.starts_with(**role))
                .copied()
        })
}

/// The database a command line belongs to and its role there:
/// `postgres: [CLUSTER: ]TITLE` is an auxiliary process by its title, else
/// a backend (`user db [local] SELECT`); the `postgres` binary itself is
/// the postmaster; `mariadbd` and `mysqld` are servers.
pub fn database_role(command: &str) -> Option<(&'static str, String)> {
    if let Some(title) = command.strip_prefix("postgres: ") {
        let role = postgres_titled_role(title).unwrap_or("backend");
        return Some(("postgresql", role.to_string()));
    }
    let program = command.split(' ').next()?.rsplit('/').next()?;
    match program {
        "postgres" | "postmaster" => Some(("postgresql", "postmaster".to_string())),
        "mariadbd" => Some(("mariadb", "server".to_string())),
        "mysqld" => Some(("mysql", "server".to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// /proc/PID/stat of a PostgreSQL checkpointer, captured here, and a
    /// made-up one whose name holds `) (`.
    const STAT: &str = "2232 (postgres) S 2231 2232 2232 0 -1 4194368 606 0 1 0 5 22 0 0 20 0 1 0 3571 222830592 7712 18446744073709551615 94800184107008 94800189563353 140725625100496 0 0 0 4194304 24145920 536873479 1 0 0 17 1 0 0 0 0 0 94800192043088 94800192260810 94800284581888 140725625106078 140725625106200 140725625106200 140725625106388 0";
    const ODD_STAT: &str = "77 (a) (b c) R 1 77 77 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 999 0 0";

    #[test]
    fn stat_fields_are_counted_after_the_name() {
        let stat = parse_stat(STAT).unwrap();
        assert_eq!(
            (stat.state, stat.cpu_ticks, stat.start_ticks),
            ('S', 27, 3571)
        );
        let odd = parse_stat(ODD_STAT).unwrap();
        assert_eq!((odd.state, odd.cpu_ticks, odd.start_ticks), ('R', 11, 999));
        assert_eq!(parse_stat("12 (x) S 1 2"), None);
    }

    #[test]
    fn io_counters_keep_syscalls_only_where_given() {
        let full = "rchar: 10\nwchar: 0\nsyscr: 3\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        let io = io_counters(full).unwrap();
        assert_eq!(
            (io.read_bytes, io.write_bytes, io.syscr),
            (4096, 8192, Some(3))
        );
        let bare = io_counters("read_bytes: 1\nwrite_bytes: 2\n").unwrap();
        assert_eq!((bare.syscr, bare.syscw), (None, None));
        assert_eq!(io_counters("rchar: 1\n"), None);
    }

    #[test]
    fn command_lines_are_joined_and_shortened() {
        assert_eq!(
            command_of(b"dd\0if=/x\0of=/dev/null\0", "dd"),
            "dd if=/x of=/dev/null"
        );
        assert_eq!(command_of(b"", "kworker/0:1"), "[kworker/0:1]");
        let long = command_of(&vec![b'a'; 500], "a");
        assert_eq!(long.chars().count(), COMMAND_CHARS);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn database_roles_come_from_the_process_title() {
        let role = |command: &str| database_role(command).map(|(db, role)| format!("{db} {role}"));
        let title = command_of(b"postgres: 15/main: checkpointer \0\0\0\0", "postgres");
        assert_eq!(title, "postgres: 15/main: checkpointer");
        assert_eq!(role(&title).unwrap(), "postgresql checkpointer");
        assert_eq!(
            role("postgres: checkpointer").unwrap(),
            "postgresql checkpointer"
        );
        assert_eq!(
            role("postgres: 15/main: user db [local] SELECT").unwrap(),
            "postgresql backend"
        );
        assert_eq!(
            role("postgres: user db 10.0.0.1(5432) idle").unwrap(),
            "postgresql backend"
        );
        assert_eq!(
            role("postgres: walsender rep 10.0.0.2(4000) streaming").unwrap(),
            "postgresql walsender"
        );
        assert_eq!(
            role("/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main").unwrap(),
            "postgresql postmaster"
        );
        assert_eq!(role("/usr/sbin/mariadbd").unwrap(), "mariadb server");
        assert_eq!(
            role("/usr/sbin/mysqld --user=mysql").unwrap(),
            "mysql server"
        );
        assert_eq!(role("dd if=/x of=/dev/null"), None);
        assert_eq!(role("/usr/bin/postgres-exporter"), None);
    }

    #[test]
    fn a_scan_finds_this_process_with_its_counters() {
        let scan = scan();
        let me = scan
            .processes
            .iter()
            .find(|process| process.pid == std::process::id())
            .expect("this test process");
        assert!(me.io.is_some(), "our own /proc/PID/io is readable");
        assert!(me.cpu_ticks > 0 || me.start_ticks > 0);
        assert!(scan.uptime_s * scan.ticks_per_second >= me.start_ticks as f64);
    }
}
