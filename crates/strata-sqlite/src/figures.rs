//! The figures of a SQLite run, from the OS alone: SQLite has no I/O
//! counters, so the database layer is absent (with its reason) and the page
//! cache comparison is between the pages the sessions read — one row is one
//! page, so rows selected and updated plus the scan table's pages for each
//! scan — and what the devices under the file read. Everything else is
//! strata-run's own accounting of the two edges, plus strata's own device
//! reads as the one "server process" (in `cpu.server_processes`): unlike
//! the devices' counters, they hold no other process's I/O.
//!
//! Not for: running the sessions (strata-slob's `threads`) or printing
//! (strata-run's `output`).

use rusqlite::InterruptHandle;
use strata_observe::background::SampleClock;
use strata_probe::collectors::parse_proc_io;
use strata_probe::cpu::{own_cpu_seconds, HostCpu};
use strata_run::accounting::{account, Absorption, RunDevices, RunFigures, ABSORBED_WARNING_PCT};
use strata_run::edge::Edge;
use strata_run::processes::{ProcessGroupFigures, ServerProcesses};
use strata_slob::session::RunOutcome;
use strata_slob::threads::Watcher;

/// Why the database layer is absent.
pub const NO_DATABASE_COUNTERS: &str = "SQLite has no I/O counters: the database layer is absent; the page cache figures compare the pages the sessions read (one row per page) with the device read requests";

/// What SQLite's I/O is called among the run's processes.
pub const STRATA_PROCESS: &str = "strata (SQLite runs in its session threads)";

/// The OS at one moment, and what strata's own threads had read from
/// devices (`read_bytes` of `/proc/self/io`): SQLite runs inside strata, so
/// strata's CPU and reads are the engine's.
pub struct SqliteEdge {
    pub os: Edge,
    pub strata_read_bytes: Option<u64>,
}

/// Takes an edge: devices, host CPU, strata's own CPU and device reads.
pub fn take_edge(version_num: u32) -> SqliteEdge {
    let (user, system) = own_cpu_seconds();
    let at = std::time::Instant::now();
    let (block_trace, disks) = strata_run::block_trace::with_diskstats();
    let os = Edge {
        at,
        version_num,
        database: None,
        database_error: None,
        block_trace,
        agent_block_trace: None,
        disks,
        host_cpu: HostCpu::read().unwrap_or_default(),
        server: ServerProcesses::default(),
        own_cpu_s: user + system,
        processes_io: strata_run::tenants::ProcessIoSnapshot::read(),
        oom_kills: strata_probe::collectors::host_oom_kills(),
        server_start: None,
        other_hosts: Vec::new(),
    };
    SqliteEdge {
        os,
        strata_read_bytes: own_read_bytes(),
    }
}

/// The starting thread's side of a run: takes the OS edges, and
/// interrupts the sessions' statements in flight.
pub(crate) struct EdgeTaker {
    pub version_num: u32,
    /// The layer sampler's, when it runs: each edge is a sample's end too.
    pub sample_clock: Option<SampleClock>,
}

impl Watcher<InterruptHandle> for EdgeTaker {
    type Edge = SqliteEdge;

    fn take_edge(&mut self) -> SqliteEdge {
        if let Some(clock) = &self.sample_clock {
            clock.sample_now();
        }
        take_edge(self.version_num)
    }

    fn stop_statements(&mut self, handles: &[InterruptHandle]) {
        for handle in handles {
            handle.interrupt();
        }
    }
}

fn own_read_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/io").ok()?;
    parse_proc_io(&text)
        .ok()?
        .into_iter()
        .find_map(|(key, value)| (key == "read_bytes").then_some(value))
}

/// Pages the sessions read in the window: every row selected or updated is
/// a page of its own, and every scan reads the whole scan table. Index and
/// interior pages are not counted (they mostly stay in SQLite's cache).
pub fn pages_read(outcome: &RunOutcome, scan_table_pages: u64) -> u64 {
    outcome.rows_selected + outcome.rows_updated + outcome.scan.count() * scan_table_pages
}

/// strata-run's accounting of the window, with SQLite's page-cache
/// comparison and the reason the database layer is absent.
pub fn sqlite_figures(
    start: &SqliteEdge,
    end: &SqliteEdge,
    outcome: &RunOutcome,
    devices: &RunDevices,
    page_bytes: u32,
    scan_table_pages: u64,
) -> RunFigures {
    let mut figures = account(&start.os, &end.os, None, outcome, devices);
    figures.cpu.server_processes.push(ProcessGroupFigures {
        backend_type: STRATA_PROCESS.to_string(),
        processes: 1,
        exited: false,
        cpu_s: figures.cpu.strata_cpu_s,
        run_delay_ms: None,
        device_read_bytes: start
            .strata_read_bytes
            .zip(end.strata_read_bytes)
            .map(|(before, after)| after.saturating_sub(before) as f64),
    });
    let absorption = absorption(&figures, pages_read(outcome, scan_table_pages), page_bytes);
    figures.warnings.insert(0, NO_DATABASE_COUNTERS.to_string());
    if absorption.absorbed_pct > ABSORBED_WARNING_PCT {
        figures.warnings.push(format!(
            "{:.1}% of the pages the sessions read ({:.0} of {:.0}) never reached a device: SQLite's \
             own cache or the OS page cache absorbed them, so this is not a storage result",
            absorption.absorbed_pct, absorption.absorbed_blocks, absorption.database_blocks_read
        ));
    }
    figures.absorption = Some(absorption);
    figures
}

/// `database_blocks_read` holds the pages the sessions read and
/// `device_read_blocks` the device read bytes in pages of the file.
fn absorption(figures: &RunFigures, pages_read: u64, page_bytes: u32) -> Absorption {
    let data_devices = figures.devices.iter().filter(|device| device.role != "wal");
    let (device_read_requests, device_read_bytes) = data_devices
        .fold((0, 0), |(requests, bytes), device| {
            (requests + device.read_requests, bytes + device.read_bytes)
        });
    let pages_read = pages_read as f64;
    let device_read_blocks = device_read_bytes as f64 / f64::from(page_bytes);
    let absorbed_blocks = (pages_read - device_read_blocks).max(0.0);
    Absorption {
        database_blocks_read: pages_read,
        device_read_requests,
        device_read_bytes,
        device_read_blocks,
        absorbed_blocks,
        absorbed_pct: if pages_read > 0.0 {
            absorbed_blocks * 100.0 / pages_read
        } else {
            0.0
        },
    }
}
