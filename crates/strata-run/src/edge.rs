//! A snapshot of every layer at one edge of the measured window. Two edges
//! make an interval; `accounting` turns them into figures.
//!
//! Not for: sampling on an interval during the run (that is `observe`'s
//! sampler, a later issue).

use crate::processes::ServerProcesses;
use std::time::Instant;
use strata_db::postgres::counters::{snapshot, PgSnapshot};
use strata_db::postgres::read_path::backend_types;
use strata_probe::cpu::HostCpu;
use strata_probe::diskstats::{read_diskstats, DiskStat};

/// Every layer's raw counters at one moment.
pub struct Edge {
    pub at: Instant,
    /// `server_version_num` of the server asked.
    pub version_num: u32,
    /// None when the server could not be asked (it went away).
    pub database: Option<PgSnapshot>,
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
}

/// Takes an edge (`server_pids` starts with the postmaster's); the
/// database is asked first, then the OS counters, so the
/// OS figures are never older than the database's.
pub async fn take(client: &tokio_postgres::Client, version_num: u32, server_pids: &[u32]) -> Edge {
    let (database, database_error) = match snapshot(client, version_num).await {
        Ok(values) => (Some(values), None),
        Err(error) => (None, Some(format!("{error:#}"))),
    };
    let kinds = if server_pids.is_empty() {
        Default::default()
    } else {
        backend_types(client).await.unwrap_or_default()
    };
    Edge {
        at: Instant::now(),
        version_num,
        database,
        database_error,
        disks: read_diskstats().unwrap_or_default(),
        host_cpu: HostCpu::read().unwrap_or_default(),
        server: ServerProcesses::read(server_pids, kinds),
        own_cpu_s: {
            let (user, system) = strata_probe::cpu::own_cpu_seconds();
            user + system
        },
        processes_io: crate::tenants::ProcessIoSnapshot::read(),
    }
}
