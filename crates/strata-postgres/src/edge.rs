//! PostgreSQL's edge of the measured window: its counters, its processes'
//! backend types and its start time, then every OS layer.
//!
//! Not for: turning two edges into figures (`figures`, and
//! `strata_run::accounting` for the layers every engine shares).

use crate::counters::snapshot;
use crate::read_path::backend_types;
use std::time::Instant;
use strata_probe::cpu::HostCpu;
use strata_run::edge::{Edge, ServerStart};
use strata_run::processes::ServerProcesses;

async fn postmaster_start(client: &tokio_postgres::Client) -> Option<ServerStart> {
    let row = client
        .query_one(
            "SELECT extract(epoch FROM pg_postmaster_start_time())::float8",
            &[],
        )
        .await
        .ok()?;
    Some(ServerStart {
        unix_s: row.get(0),
        read_at_unix_s: strata_core::time::unix_now_s(),
        source: "pg_postmaster_start_time()",
        resolution_s: 0.001,
    })
}

/// Takes an edge (`server_pids` starts with the postmaster's): the
/// processes' roles are asked first, then the database's counters, then
/// the OS counters, so the OS figures are never older than the
/// database's; only the tracer's counts lie between the database's
/// counters and /proc/diskstats, the rest comes after.
pub async fn take(client: &tokio_postgres::Client, version_num: u32, server_pids: &[u32]) -> Edge {
    let kinds = if server_pids.is_empty() {
        Default::default()
    } else {
        backend_types(client).await.unwrap_or_default()
    };
    // The server's processes' requests are counted under their backend
    // types from here on (the first edge's come before the window's);
    // named before the counters, so that nothing lies between the
    // database's and /proc/diskstats'.
    if let Err(why) = strata_run::block_trace::name_roles(&kinds) {
        strata_core::note::note(&format!(
            "strata: warning: block requests not counted by role: {why}"
        ));
    }
    let (database, database_error) = match snapshot(client, version_num).await {
        Ok(values) => (Some(values), None),
        Err(error) => (None, Some(format!("{error:#}"))),
    };
    let at = Instant::now();
    let (block_trace, disks) = strata_run::block_trace::with_diskstats();
    Edge {
        at,
        version_num,
        database,
        database_error,
        block_trace,
        agent_block_trace: None,
        disks,
        oom_kills: strata_probe::collectors::host_oom_kills(),
        server_start: postmaster_start(client).await,
        host_cpu: HostCpu::read().unwrap_or_default(),
        server: ServerProcesses::read(server_pids, kinds),
        own_cpu_s: {
            let (user, system) = strata_probe::cpu::own_cpu_seconds();
            user + system
        },
        processes_io: strata_run::tenants::ProcessIoSnapshot::read(),
        other_hosts: Vec::new(),
    }
}
