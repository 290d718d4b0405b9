//! A snapshot of every layer at one edge of the measured window. Two edges
//! make an interval; `accounting` turns them into figures.
//!
//! Not for: sampling on an interval during the run (that is `observe`'s
//! sampler, a later issue).

use std::collections::BTreeMap;
use std::time::Instant;
use strata_db::postgres::counters::{snapshot, PgSnapshot};
use strata_probe::cpu::{process_cpu_ticks, reaped_children_cpu_ticks, HostCpu};
use strata_probe::diskstats::{read_diskstats, DiskStat};

/// Every layer's raw counters at one moment.
pub struct Edge {
    pub at: Instant,
    /// None when the server could not be asked (it went away).
    pub database: Option<PgSnapshot>,
    pub database_error: Option<String>,
    pub disks: Vec<DiskStat>,
    pub host_cpu: HostCpu,
    /// User + system ticks of each server process then alive.
    pub server_ticks: BTreeMap<u32, u64>,
    /// Ticks of the server's processes that had exited, as the postmaster
    /// counts its reaped children.
    pub server_reaped_ticks: u64,
    /// strata's own user + system CPU seconds.
    pub own_cpu_s: f64,
}

/// Takes an edge (`server_pids` starts with the postmaster's); the
/// database is asked first, then the OS counters, so the
/// OS figures are never older than the database's.
pub async fn take(client: &tokio_postgres::Client, version_num: u32, server_pids: &[u32]) -> Edge {
    let postmaster = server_pids.first().copied();
    let (database, database_error) = match snapshot(client, version_num).await {
        Ok(values) => (Some(values), None),
        Err(error) => (None, Some(format!("{error:#}"))),
    };
    Edge {
        at: Instant::now(),
        database,
        database_error,
        disks: read_diskstats().unwrap_or_default(),
        host_cpu: HostCpu::read().unwrap_or_default(),
        server_ticks: server_pids
            .iter()
            .filter_map(|&pid| process_cpu_ticks(pid).map(|(user, system)| (pid, user + system)))
            .collect(),
        server_reaped_ticks: postmaster.and_then(reaped_children_cpu_ticks).unwrap_or(0),
        own_cpu_s: {
            let (user, system) = strata_probe::cpu::own_cpu_seconds();
            user + system
        },
    }
}

/// Server CPU ticks used between two edges: processes alive at the end
/// count from the start edge (or their birth); processes that exited count
/// through the postmaster's reaped-children total, less what they had
/// already used at the start edge.
pub fn server_ticks_between(start: &Edge, end: &Edge) -> u64 {
    let alive: u64 = end
        .server_ticks
        .iter()
        .map(|(pid, ticks)| ticks.saturating_sub(start.server_ticks.get(pid).copied().unwrap_or(0)))
        .sum();
    let exited_before_start: u64 = start
        .server_ticks
        .iter()
        .filter(|(pid, _)| !end.server_ticks.contains_key(pid))
        .map(|(_, ticks)| ticks)
        .sum();
    let reaped = end
        .server_reaped_ticks
        .saturating_sub(start.server_reaped_ticks);
    (alive + reaped).saturating_sub(exited_before_start)
}
