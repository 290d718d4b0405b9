//! The server's processes at an edge and over the measured window, grouped
//! by what PostgreSQL says each one is (`pg_stat_activity.backend_type`:
//! client backend, io worker, checkpointer, …): CPU time, run-queue delay
//! (`/proc/PID/schedstat`) and bytes read from devices (`/proc/PID/io`).
//! With `io_method=worker` the io workers, not the backends, issue the
//! data-file reads, so the server's device reads land on them.
//!
//! Not for: PostgreSQL's own counters (`edge`), or the Recording's
//! per-second process samples (strata-probe's process collector).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};
use strata_probe::collectors::{parse_proc_io, parse_schedstat};
use strata_probe::cpu::{process_cpu_ticks, reaped_children_cpu_ticks, ticks_per_second};
pub use strata_recording::run::ProcessGroupFigures;

/// What one process had used at an edge.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcessUse {
    /// User + system ticks.
    pub cpu_ticks: u64,
    pub run_delay_ns: Option<u64>,
    /// `read_bytes` of `/proc/PID/io` (sent to the block layer); for the
    /// postmaster it includes its reaped children's.
    pub read_bytes: Option<u64>,
}

impl ProcessUse {
    /// `None` for a process gone or a zombie: an exited process's time is
    /// counted once, in its parent's reaped totals, when it is reaped (read
    /// alive as well while hundreds of backends exit at a window's end, it
    /// was counted twice: 2.3 CPUs on a 2-CPU host).
    fn read(pid: u32) -> Option<ProcessUse> {
        if !strata_probe::collectors::is_running(pid) {
            return None;
        }
        let (user, system) = process_cpu_ticks(pid)?;
        let run_delay_ns = std::fs::read_to_string(format!("/proc/{pid}/schedstat"))
            .ok()
            .and_then(|text| parse_schedstat(&text))
            .map(|(_, delay, _)| delay);
        let read_bytes = std::fs::read_to_string(format!("/proc/{pid}/io"))
            .ok()
            .and_then(|text| parse_proc_io(&text).ok())
            .and_then(|fields| {
                fields
                    .into_iter()
                    .find_map(|(key, value)| (key == "read_bytes").then_some(value))
            });
        Some(ProcessUse {
            cpu_ticks: user + system,
            run_delay_ns,
            read_bytes,
        })
    }
}

/// The server's processes at one edge.
#[derive(Clone, Debug, Default)]
pub struct ServerProcesses {
    pub postmaster: Option<u32>,
    pub by_pid: BTreeMap<u32, ProcessUse>,
    /// From `pg_stat_activity` at this edge (the postmaster is not listed).
    pub backend_types: BTreeMap<u32, String>,
    /// Ticks of the postmaster's children that exited and were reaped.
    pub reaped_ticks: u64,
}

impl ServerProcesses {
    /// `pids` starts with the postmaster's. The processes are read again
    /// when the postmaster reaped a child while they were read (its
    /// reaped totals moved), so that a process that exited then is counted
    /// once: alive or reaped, never both nor neither.
    pub fn read(pids: &[u32], backend_types: BTreeMap<u32, String>) -> ServerProcesses {
        let postmaster = pids.first().copied();
        let (pids, backend_types) = settled(pids, backend_types);
        let reaped = || postmaster.and_then(reaped_children_cpu_ticks).unwrap_or(0);
        let mut reaped_before = reaped();
        let mut attempt = 1;
        loop {
            let by_pid = pids
                .iter()
                .filter_map(|&pid| Some((pid, ProcessUse::read(pid)?)))
                .collect();
            let reaped_ticks = reaped();
            if reaped_ticks == reaped_before || attempt == CONSISTENT_READ_ATTEMPTS {
                return ServerProcesses {
                    postmaster,
                    by_pid,
                    backend_types,
                    reaped_ticks,
                };
            }
            reaped_before = reaped_ticks;
            attempt += 1;
        }
    }

    fn kind_of(&self, pid: u32) -> String {
        if Some(pid) == self.postmaster {
            return "postmaster".to_string();
        }
        self.backend_types
            .get(&pid)
            .cloned()
            .unwrap_or_else(|| UNSETTLED.to_string())
    }

    fn exited_since(&self, start: &ServerProcesses) -> Vec<u32> {
        start
            .by_pid
            .keys()
            .filter(|pid| !self.by_pid.contains_key(pid) && Some(**pid) != start.postmaster)
            .copied()
            .collect()
    }
}

/// The name of a process still between states after [`SETTLE_LIMIT`].
const UNSETTLED: &str = "untitled server process (starting or exiting)";

/// How many times an edge reads the processes for one read during which
/// the postmaster reaped no child.
const CONSISTENT_READ_ATTEMPTS: u32 = 5;

/// How long an edge waits for a server process between states to be
/// titled or gone.
const SETTLE_LIMIT: Duration = Duration::from_secs(1);

/// `pids` still alive, each named, once none is between states: a process
/// neither in `pg_stat_activity` nor titled was just forked by the
/// postmaster (it still has the postmaster's command line) or is exiting
/// (its command line released, or a zombie not yet reaped), as a
/// session's backend is when the window ends. The edge waits up to
/// [`SETTLE_LIMIT`] for each to take its title or be reaped, so that it is
/// named by its role or counted with the exited through the postmaster's
/// reaped totals, never half in each. The per-second sampler names the
/// processes it follows the same way.
pub fn settled(
    pids: &[u32],
    backend_types: BTreeMap<u32, String>,
) -> (Vec<u32>, BTreeMap<u32, String>) {
    let deadline = Instant::now() + SETTLE_LIMIT;
    loop {
        let alive: Vec<u32> = pids
            .iter()
            .enumerate()
            .filter(|&(index, pid)| index == 0 || Path::new(&format!("/proc/{pid}/stat")).exists())
            .map(|(_, pid)| *pid)
            .collect();
        let named = name_every_process(&alive, backend_types.clone());
        let between_states = alive.iter().skip(1).any(|pid| !named.contains_key(pid));
        if !between_states || Instant::now() >= deadline {
            return (alive, named);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `backend_types` (from `pg_stat_activity`) with every other process of
/// `pids` but the first (the postmaster) named by its process title.
fn name_every_process(
    pids: &[u32],
    mut backend_types: BTreeMap<u32, String>,
) -> BTreeMap<u32, String> {
    for pid in pids.iter().skip(1) {
        if !backend_types.contains_key(pid) {
            if let Some(role) = role_from_title(&command_line(*pid)) {
                backend_types.insert(*pid, role);
            }
        }
    }
    backend_types
}

/// The server's processes `pids` (the postmaster's first) not in `watched`,
/// named by their titles, as the per-second sampler names those the server
/// starts after sampling began: `postmaster`, an auxiliary process by its
/// role, any other server process a `client backend`. A process not yet
/// titled (just forked) is left out until it is.
pub fn named_by_title(pids: &[u32], watched: &[u32]) -> BTreeMap<u32, String> {
    let postmaster = pids.first();
    pids.iter()
        .filter(|pid| !watched.contains(pid))
        .filter_map(|&pid| {
            let role = if Some(&pid) == postmaster {
                "postmaster"
            } else {
                let rest = server_title(&command_line(pid))?;
                strata_probe::top::postgres_titled_role(&rest).unwrap_or("client backend")
            };
            Some((pid, role.to_string()))
        })
        .collect()
}

/// `/proc/PID/cmdline`, empty when the process is gone.
fn command_line(pid: u32) -> String {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// What follows `postgres: ` in a server process's command line, its NULs
/// as spaces; `None` for what is not a server process's title.
fn server_title(command_line: &str) -> Option<String> {
    let title = command_line.trim_end_matches('\0').replace('\0', " ");
    title.strip_prefix("postgres: ").map(str::to_string)
}

/// The role a PostgreSQL process title (`postgres: logger`, or with a
/// `cluster_name`, `postgres: 15/main: logger`) names: a process
/// `pg_stat_activity` does not list (the logger on every version, the stats
/// collector up to 14) or not yet (a backend still starting) by its name,
/// any other title a client backend; `None` for what is not a server
/// process's title.
pub fn role_from_title(command_line: &str) -> Option<String> {
    let rest = server_title(command_line)?;
    let role = strata_probe::top::postgres_titled_role(&rest)
        .unwrap_or("client backend (not yet in pg_stat_activity)");
    Some(role.to_string())
}

/// Server CPU ticks used between two edges: processes alive at the end
/// count from the start edge (or their birth); processes that exited count
/// through the postmaster's reaped-children total, less what they had
/// already used at the start edge.
pub fn server_ticks_between(start: &ServerProcesses, end: &ServerProcesses) -> u64 {
    let alive: u64 = end
        .by_pid
        .iter()
        .map(|(pid, used)| used.cpu_ticks.saturating_sub(start_ticks(start, *pid)))
        .sum();
    let exited_before_start: u64 = start
        .by_pid
        .iter()
        .filter(|(pid, _)| !end.by_pid.contains_key(pid))
        .map(|(_, used)| used.cpu_ticks)
        .sum();
    let reaped = end.reaped_ticks.saturating_sub(start.reaped_ticks);
    (alive + reaped).saturating_sub(exited_before_start)
}

fn start_ticks(start: &ServerProcesses, pid: u32) -> u64 {
    start.by_pid.get(&pid).map_or(0, |used| used.cpu_ticks)
}

/// The window's use per kind of process: those alive at the end by their
/// backend type, then those that exited during it as one group.
pub fn groups_between(start: &ServerProcesses, end: &ServerProcesses) -> Vec<ProcessGroupFigures> {
    let mut groups: BTreeMap<String, ProcessGroupFigures> = BTreeMap::new();
    for (pid, used) in &end.by_pid {
        let kind = end.kind_of(*pid);
        let before = start.by_pid.get(pid).cloned().unwrap_or_default();
        let group = groups
            .entry(kind.clone())
            .or_insert_with(|| ProcessGroupFigures {
                backend_type: kind,
                ..ProcessGroupFigures::default()
            });
        group.processes += 1;
        group.cpu_s += used.cpu_ticks.saturating_sub(before.cpu_ticks) as f64 / ticks_per_second();
        if Some(*pid) == end.postmaster {
            continue;
        }
        add(
            &mut group.run_delay_ms,
            used.run_delay_ns,
            before.run_delay_ns,
            1e6,
        );
        add(
            &mut group.device_read_bytes,
            used.read_bytes,
            before.read_bytes,
            1.0,
        );
    }
    let mut groups: Vec<ProcessGroupFigures> = groups.into_values().collect();
    groups.extend(exited_group(start, end));
    groups
}

/// `total += (after − before) / divisor` when `after` was read.
fn add(total: &mut Option<f64>, after: Option<u64>, before: Option<u64>, divisor: f64) {
    if let Some(after) = after {
        let grown = after.saturating_sub(before.unwrap_or(0)) as f64 / divisor;
        *total = Some(total.unwrap_or(0.0) + grown);
    }
}

/// The processes alive at the start edge and gone at the end, through the
/// postmaster's totals for its reaped children (CPU ticks, and its
/// `/proc/PID/io`, which includes them).
fn exited_group(start: &ServerProcesses, end: &ServerProcesses) -> Option<ProcessGroupFigures> {
    let exited = end.exited_since(start);
    if exited.is_empty() {
        return None;
    }
    let kinds: BTreeSet<String> = exited.iter().map(|pid| start.kind_of(*pid)).collect();
    let at_start = |field: fn(&ProcessUse) -> Option<u64>| -> u64 {
        exited
            .iter()
            .filter_map(|pid| field(start.by_pid.get(pid)?))
            .sum()
    };
    let reaped_ticks = end.reaped_ticks.saturating_sub(start.reaped_ticks);
    let postmaster_read = |edge: &ServerProcesses| {
        edge.postmaster
            .and_then(|pid| edge.by_pid.get(&pid)?.read_bytes)
    };
    let device_read_bytes = match (postmaster_read(start), postmaster_read(end)) {
        (Some(before), Some(after)) => Some(
            after
                .saturating_sub(before)
                .saturating_sub(at_start(|used| used.read_bytes)) as f64,
        ),
        _ => None,
    };
    Some(ProcessGroupFigures {
        backend_type: kinds.into_iter().collect::<Vec<_>>().join(" + "),
        processes: exited.len(),
        exited: true,
        cpu_s: reaped_ticks.saturating_sub(at_start(|used| Some(used.cpu_ticks))) as f64
            / ticks_per_second(),
        run_delay_ms: None,
        device_read_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Titles as PostgreSQL 15 to 18 set them, with and without Debian's
    /// `cluster_name`.
    #[test]
    fn every_process_title_names_a_role() {
        for (title, role) in [
            ("postgres: logger ", "logger"),
            ("postgres: 15/main: logger ", "logger"),
            ("postgres: 15/main: checkpointer ", "checkpointer"),
            ("postgres: background writer ", "background writer"),
            ("postgres: 17/main: walsummarizer ", "walsummarizer"),
            ("postgres: io worker 2", "io worker"),
            ("postgres: autovacuum worker strata", "autovacuum worker"),
            (
                "postgres: 15/main: strata strata [local] SELECT",
                "client backend (not yet in pg_stat_activity)",
            ),
        ] {
            assert_eq!(role_from_title(title).as_deref(), Some(role), "{title}");
        }
        assert_eq!(
            role_from_title("/usr/lib/postgresql/15/bin/postgres\0-D\0/x\0"),
            None
        );
    }

    fn spawn(script: &str) -> Result<std::process::Child, String> {
        std::process::Command::new("bash")
            .args(["-c", script])
            .spawn()
            .map_err(|error| format!("bash: {error}"))
    }

    /// A child that takes a PostgreSQL title 0.2 s after it starts, like a
    /// backend the postmaster just forked, is waited for and named by it.
    #[test]
    fn a_process_not_yet_titled_is_waited_for_and_named() -> Result<(), String> {
        let mut child = spawn("sleep 0.2; exec -a 'postgres: checkpointer' sleep 5")?;
        let started = Instant::now();
        let (alive, named) = settled(&[std::process::id(), child.id()], BTreeMap::new());
        let waited = started.elapsed();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(alive, [std::process::id(), child.id()]);
        assert_eq!(
            named.get(&child.id()).map(String::as_str),
            Some("checkpointer")
        );
        assert!(waited >= Duration::from_millis(150), "{waited:?}");
        assert!(waited < SETTLE_LIMIT, "{waited:?}");
        Ok(())
    }

    /// An exiting child is waited for until it is reaped and then left out
    /// (it counts with the exited); one never reaped stays, unsettled,
    /// after the limit.
    #[test]
    fn an_exiting_process_is_left_out_once_reaped() -> Result<(), String> {
        let mut reaped = spawn("sleep 0.2")?;
        let reaped_pid = reaped.id();
        let reaper = std::thread::spawn(move || reaped.wait());
        let mut zombie = spawn("exit 0")?;
        std::thread::sleep(Duration::from_millis(100));
        let own = std::process::id();
        let started = Instant::now();
        let (alive, named) = settled(&[own, reaped_pid, zombie.id()], BTreeMap::new());
        let waited = started.elapsed();
        let _ = zombie.wait();
        let _ = reaper.join();
        assert_eq!(alive, [own, zombie.id()]);
        assert!(!named.contains_key(&zombie.id()), "{named:?}");
        assert!(waited >= SETTLE_LIMIT, "{waited:?}");
        Ok(())
    }

    fn edge(processes: &[(u32, u64, u64, &str)], reaped_ticks: u64) -> ServerProcesses {
        ServerProcesses {
            postmaster: Some(1),
            by_pid: processes
                .iter()
                .map(|&(pid, ticks, read, _)| {
                    let used = ProcessUse {
                        cpu_ticks: ticks,
                        run_delay_ns: Some(ticks * 1_000_000),
                        read_bytes: Some(read),
                    };
                    (pid, used)
                })
                .collect(),
            backend_types: processes
                .iter()
                .filter(|process| process.0 != 1)
                .map(|&(pid, _, _, kind)| (pid, kind.to_string()))
                .collect(),
            reaped_ticks,
        }
    }

    #[test]
    fn io_workers_and_exited_backends_are_told_apart() {
        let start = edge(
            &[
                (1, 10, 0, ""),
                (2, 5, 100, "io worker"),
                (3, 7, 0, "client backend"),
                (4, 7, 0, "client backend"),
            ],
            50,
        );
        let end = edge(&[(1, 11, 4000, ""), (2, 25, 9100, "io worker")], 90);
        let groups = groups_between(&start, &end);
        let kinds: Vec<(&str, bool)> = groups
            .iter()
            .map(|group| (group.backend_type.as_str(), group.exited))
            .collect();
        assert_eq!(
            kinds,
            [
                ("io worker", false),
                ("postmaster", false),
                ("client backend", true)
            ]
        );
        let ticks = ticks_per_second();
        assert_eq!(groups[0].device_read_bytes, Some(9000.0));
        assert_eq!(groups[0].cpu_s, 20.0 / ticks);
        assert_eq!(groups[0].run_delay_ms, Some(20.0));
        assert_eq!(groups[1].device_read_bytes, None);
        assert_eq!(groups[2].processes, 2);
        assert_eq!(groups[2].cpu_s, (40.0 - 14.0) / ticks);
        assert_eq!(groups[2].device_read_bytes, Some(4000.0));
        assert_eq!(server_ticks_between(&start, &end), 1 + 20 + 40 - 14);
    }
}
