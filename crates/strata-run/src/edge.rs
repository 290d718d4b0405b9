//! A snapshot of every layer at one edge of the measured window. Two edges
//! make an interval; `accounting` turns them into figures.
//!
//! Not for: sampling on an interval during the run (that is `observe`'s
//! sampler, a later issue).

use crate::processes::ServerProcesses;
use std::collections::BTreeMap;
use std::time::Instant;
use strata_probe::cpu::HostCpu;
use strata_probe::diskstats::DiskStat;

/// A database's raw monotonic counters at one moment, by name (PostgreSQL's
/// `view.column`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct DatabaseCounters {
    pub values: BTreeMap<String, f64>,
}

impl DatabaseCounters {
    /// `self − earlier` for every key present in both.
    pub fn delta(&self, earlier: &DatabaseCounters) -> BTreeMap<String, f64> {
        self.values
            .iter()
            .filter_map(|(key, after)| {
                let before = earlier.values.get(key)?;
                Some((key.clone(), after - before))
            })
            .collect()
    }
}

/// Every layer's raw counters at one moment.
pub struct Edge {
    pub at: Instant,
    /// The server's version as a number (PostgreSQL's `server_version_num`);
    /// 0 for an engine that has none.
    pub version_num: u32,
    /// None when the server could not be asked (it went away) or the
    /// engine's counters are accounted apart (`SlobOutcome::engine_figures`).
    pub database: Option<DatabaseCounters>,
    pub database_error: Option<String>,
    pub disks: Vec<DiskStat>,
    pub host_cpu: HostCpu,
    /// CPU, run delay and device reads of each server process then alive,
    /// with its backend type.
    pub server: ServerProcesses,
    /// strata's own user + system CPU seconds.
    pub own_cpu_s: f64,
    /// Every process's block-layer bytes, to name other tenants.
    pub processes_io: crate::tenants::ProcessIoSnapshot,
    /// Processes the OOM killer ended on this host since boot.
    pub oom_kills: Option<u64>,
    /// When the server last started, as the server says; `None` when it
    /// could not be asked or strata runs the engine in its own process.
    pub server_start: Option<ServerStart>,
    /// Other hosts' counters (`--agent` after the first), from their
    /// agents now.
    pub other_hosts: Vec<HostEdge>,
    /// Every block request traced on this host so far, read beside `disks`
    /// ([`crate::block_trace`]); `None` without tracing, or with the disks
    /// of another host.
    pub block_trace: Option<strata_probe::blocktrace::TraceSnapshot>,
    /// The requests the server host's agent traced there (`--agent`), as
    /// it served them now; `None` without an agent, or when it did not
    /// answer.
    pub agent_block_trace: Option<AgentBlockTrace>,
}

/// The server host's agent's traced requests at one edge.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentBlockTrace {
    /// The agent's host, as it names itself.
    pub host: String,
    /// What it served of its tracer (`/blocktrace`), or why it did not.
    pub trace: Result<strata_agent::traced::AgentTrace, String>,
}

/// Another host's counters at one edge, as its agent gave them.
#[derive(Clone, Debug, PartialEq)]
pub struct HostEdge {
    pub host: String,
    /// The disks followed there.
    pub disks: Vec<DiskStat>,
    pub host_cpu: HostCpu,
    pub cpus: Option<f64>,
    /// Why the agent gave nothing now.
    pub missing: Option<String>,
}

/// When a server started, as Unix seconds, and what says so.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerStart {
    pub unix_s: f64,
    /// This machine's clock when it was read.
    pub read_at_unix_s: f64,
    /// `pg_postmaster_start_time()`, or MariaDB's `Uptime` subtracted from
    /// this machine's clock.
    pub source: &'static str,
    /// How far two readings of one start may differ (MariaDB's `Uptime`
    /// counts whole seconds, and the two clocks are read apart).
    pub resolution_s: f64,
}

/// The restart between two edges, with what it rests on and when, as the
/// cause of a failed run; `None` when the server kept running or when
/// either edge lacks its start.
pub fn restart_between(start: &Edge, end: &Edge) -> Option<String> {
    restart(
        start.server_start.as_ref()?,
        end.server_start.as_ref()?,
        (end.at - start.at).as_secs_f64(),
    )
}

fn restart(before: &ServerStart, after: &ServerStart, window_s: f64) -> Option<String> {
    let moved_s = after.unix_s - before.unix_s;
    if moved_s.abs() <= before.resolution_s.max(after.resolution_s) {
        return None;
    }
    let started_after_s = after.unix_s - before.read_at_unix_s;
    let when = if (0.0..=window_s + after.resolution_s).contains(&started_after_s) {
        format!("it started again {started_after_s:.1} s after the window began")
    } else {
        format!("its start time moved by {moved_s:.1} s")
    };
    Some(format!(
        "the server restarted inside the window ({when}, by {}): counters from both sides \
         of a restart are not one run, so the database figures are left out",
        after.source
    ))
}

/// The OOM kills inside strata's own memory cgroup.
pub struct CgroupOomKills<'a> {
    pub path: &'a std::path::Path,
    pub limit_bytes: u64,
    /// Since the cgroup was made.
    pub kills: u64,
    /// Seconds into the window when the count first grew, to the second,
    /// when it grew inside the window.
    pub first_in_window_s: Option<f64>,
}

/// Why the run failed when the kernel's OOM killer ended a process inside
/// strata's own memory cgroup: its directory, limit, and when.
pub fn oom_cause(cgroup: Option<CgroupOomKills<'_>>) -> Option<String> {
    let cgroup = cgroup.filter(|cgroup| cgroup.kills > 0)?;
    let when = cgroup.first_in_window_s.map_or(String::new(), |seconds| {
        format!(", the first about {seconds:.0} s into the window")
    });
    Some(format!(
        "the kernel's OOM killer ended {} process(es) inside strata's own memory cgroup {} \
         (limit {}){when}: the limit that keeps the page cache small left too little room \
         for the server's memory, which is strata's fault (--page-cache-limit none runs \
         without the cgroup)",
        cgroup.kills,
        cgroup.path.display(),
        strata_core::units::format_size(cgroup.limit_bytes)
    ))
}

/// OOM kills anywhere on the host in the window (`/proc/vmstat`
/// `oom_kill`, which counts every cgroup's too), as a warning: whether one
/// ended a process of the run shows in the sessions and the server.
pub fn host_oom_warning(start: &Edge, end: &Edge) -> Option<String> {
    let kills = end.oom_kills?.checked_sub(start.oom_kills?)?;
    (kills > 0).then(|| {
        format!(
            "the kernel's OOM killer ended {kills} process(es) on this host in the window \
             (/proc/vmstat oom_kill, any cgroup's): memory ran short somewhere"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::{restart, ServerStart};

    fn mariadb(unix_s: f64, read_at_unix_s: f64) -> ServerStart {
        ServerStart {
            unix_s,
            read_at_unix_s,
            source: "MariaDB's Uptime",
            resolution_s: 2.0,
        }
    }

    #[test]
    fn a_start_that_moved_past_the_resolution_is_a_restart_and_says_when() {
        let before = mariadb(1000.0, 5000.0);
        assert_eq!(restart(&before, &mariadb(1001.5, 5040.0), 40.0), None);
        let text = restart(&before, &mariadb(5012.0, 5040.0), 40.0).unwrap();
        assert!(
            text.contains("it started again 12.0 s after the window began, by MariaDB's Uptime"),
            "{text}"
        );
        let skewed = restart(&before, &mariadb(900.0, 5040.0), 40.0).unwrap();
        assert!(
            skewed.contains("its start time moved by -100.0 s"),
            "{skewed}"
        );
    }
}
