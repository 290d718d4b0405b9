//! The figures of a MariaDB run: InnoDB's own counters over the window
//! (`SHOW GLOBAL STATUS` through this crate's `collector`, and
//! performance_schema's file summaries when it is on) beside strata-run's
//! accounting of the OS edges (devices under the data and redo directories,
//! host, server and strata CPU, the sessions' workload), and the
//! reconciliation of InnoDB's read requests with the devices'.
//!
//! Counters: `Innodb_pages_read` counts pages, `Innodb_data_reads` read
//! requests (one request may bring several pages: read-ahead), and
//! `Innodb_data_read` their bytes. Redo: `Innodb_log_writes`,
//! `Innodb_os_log_written`; `Innodb_os_log_fsyncs` exists up to MariaDB
//! 10.7 only — from 10.8 the redo syncs are counted in `Innodb_data_fsyncs`.
//!
//! Not for: taking the edges at the right moments (strata-slob's
//! `threads`) or printing.

use crate::collector::MariaDbCollector;
use mysql::prelude::Queryable;
use serde::Serialize;
use std::collections::BTreeMap;
use strata_core::metrics::{Collected, Collector};
use strata_probe::cpu::{own_cpu_seconds, HostCpu};
use strata_run::accounting::{account, Absorption, RunDevices, RunFigures};
use strata_run::edge::{Edge, ServerStart};
use strata_run::processes::ServerProcesses;
use strata_slob::session::RunOutcome;
use strata_slob::threads::Watcher;

/// InnoDB's counters (by the collector's series key) and the OS at one moment.
pub struct WindowEdge {
    pub innodb: Result<BTreeMap<String, f64>, String>,
    pub os: Edge,
}

/// Takes edges: InnoDB first, then the OS, so the OS figures are never
/// older than the database's.
pub(crate) struct EdgeTaker {
    pub collector: MariaDbCollector,
    /// To connect again when the server went away between edges.
    pub url: String,
    /// The throwaway server's process: once it died, nothing waits for it.
    pub throwaway_pid: Option<u32>,
    /// A connection for KILL QUERY.
    pub admin: mysql::Conn,
    /// The server's process when it runs on this machine.
    pub server_pids: Vec<u32>,
    /// `--agent`: the server host's devices and CPU replace this machine's.
    pub agent: Option<std::sync::Arc<strata_run::server_host::ServerHostAgent>>,
    /// The other hosts' agents (`--agent` after the first).
    pub others: strata_run::server_host::OtherHostEdges,
    /// The layer sampler's, when it runs: each edge is a sample's end too.
    pub sample_clock: Option<strata_observe::background::SampleClock>,
}

impl EdgeTaker {
    fn innodb_counters(&mut self) -> Result<BTreeMap<String, f64>, String> {
        match self.collector.collect() {
            Ok(Collected::Metrics { metrics }) => Ok(metrics
                .into_iter()
                .map(|metric| (metric.series_key(), metric.value))
                .collect()),
            Ok(Collected::Absent { reason }) => Err(reason),
            Ok(Collected::Partial { unreadable, .. }) => Err(format!("{unreadable:?}")),
            Err(error) => Err(format!("{error:#}")),
        }
    }

    /// `Uptime` subtracted from this machine's clock: a later edge whose
    /// start moved by more than two seconds saw a restarted server.
    fn server_start(&mut self) -> Option<ServerStart> {
        let uptime_s = self.collector.uptime_s().ok()?;
        let now_s = strata_core::time::unix_now_s();
        Some(ServerStart {
            unix_s: now_s - uptime_s,
            read_at_unix_s: now_s,
            source: "MariaDB's Uptime",
            resolution_s: 2.0,
        })
    }

    /// The server's threads are counted under their roles by the block
    /// tracer from here on (the first edge's before the window's).
    fn name_thread_roles(&mut self) {
        if self.server_pids.is_empty() {
            return;
        }
        let own = [
            u64::from(self.admin.connection_id()),
            self.collector.connection_id(),
        ];
        let roles = crate::roles::thread_roles(&mut self.admin, &self.server_pids, &own);
        if let Err(why) = strata_run::block_trace::name_roles(&roles) {
            strata_core::note::note(&format!(
                "strata: warning: block requests not counted by role: {why}"
            ));
        }
    }

    /// mariadbd is one process with threads, not a postmaster with
    /// children: its own `/proc/PID/io` reads are its device reads.
    fn server_processes(&self) -> ServerProcesses {
        let kinds = self
            .server_pids
            .iter()
            .map(|pid| (*pid, SERVER_PROCESS.to_string()))
            .collect();
        let mut processes = ServerProcesses::read(&self.server_pids, kinds);
        processes.postmaster = None;
        processes.reaped_ticks = 0;
        processes
    }
}

/// How long an edge waits for a server that went away to come back, so that
/// a restart is named as one rather than as missing counters.
const RECONNECT_LIMIT: std::time::Duration = std::time::Duration::from_secs(15);

/// The server's process group in the CPU figures.
pub const SERVER_PROCESS: &str = "mariadbd";

impl Watcher<u32> for EdgeTaker {
    type Edge = WindowEdge;

    fn take_edge(&mut self) -> WindowEdge {
        // Before the edge's counters, so that nothing lies between InnoDB's
        // and /proc/diskstats'.
        self.name_thread_roles();
        if let Some(clock) = &self.sample_clock {
            clock.sample_now();
        }
        let mut innodb = self.innodb_counters();
        let deadline = std::time::Instant::now() + RECONNECT_LIMIT;
        let throwaway_died = self
            .throwaway_pid
            .is_some_and(|pid| !strata_probe::collectors::is_running(pid));
        while innodb.is_err() && !throwaway_died && std::time::Instant::now() < deadline {
            match MariaDbCollector::connect(&self.url) {
                Ok(collector) => {
                    self.collector = collector;
                    innodb = self.innodb_counters();
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(200)),
            }
        }
        // Only the tracer's counts lie between InnoDB's counters and
        // /proc/diskstats; the rest comes after.
        let at = std::time::Instant::now();
        let (block_trace, disks) = strata_run::block_trace::with_diskstats();
        let server_start = self.server_start();
        let (user, system) = own_cpu_seconds();
        let mut os = Edge {
            at,
            version_num: 0,
            database: None,
            database_error: None,
            block_trace,
            agent_block_trace: None,
            disks,
            host_cpu: HostCpu::read().unwrap_or_default(),
            server: self.server_processes(),
            own_cpu_s: user + system,
            processes_io: strata_run::tenants::ProcessIoSnapshot::read(),
            server_start,
            oom_kills: strata_probe::collectors::host_oom_kills(),
            other_hosts: Vec::new(),
        };
        match &self.agent {
            Some(agent) => agent.onto_blocking(&mut os, &self.others),
            None => os.other_hosts = self.others.take_blocking(),
        }
        WindowEdge { innodb, os }
    }

    fn stop_statements(&mut self, connection_ids: &[u32]) {
        for id in connection_ids {
            let _ = self.admin.query_drop(format!("KILL QUERY {id}"));
        }
    }
}

/// performance_schema's I/O on one kind of InnoDB file over the window.
#[derive(Clone, Debug, Serialize)]
pub struct FileIoFigures {
    /// `wait/io/file/innodb/innodb_data_file` or `…/innodb_log_file`.
    pub event: String,
    pub reads: f64,
    pub read_bytes: f64,
    pub read_wait_ms: f64,
    pub read_us_per_read: f64,
    pub writes: f64,
    pub write_bytes: f64,
    pub write_wait_ms: f64,
    pub write_us_per_write: f64,
    /// fsync, open and close: mostly fsync.
    pub misc_wait_ms: f64,
}

/// What InnoDB counted over the window. A figure the server cannot give is
/// absent with its reason in `unavailable`, never 0.
#[derive(Clone, Debug, Serialize)]
pub struct InnoDbFigures {
    /// `Innodb_pages_read`: pages, whatever request brought them.
    pub pages_read: f64,
    pub pages_read_per_s: f64,
    /// `Innodb_data_reads`: read requests to data files.
    pub read_requests: f64,
    pub read_requests_per_s: f64,
    /// `Innodb_data_read`: bytes of those requests.
    pub read_bytes: f64,
    pub read_mb_per_s: f64,
    pub pages_per_read_request: f64,
    /// `Innodb_buffer_pool_reads`: logical reads the buffer pool missed.
    pub buffer_pool_reads: f64,
    /// Over the edges' interval, as the devices' rates.
    pub buffer_pool_reads_per_s: f64,
    pub buffer_pool_read_requests: f64,
    pub buffer_pool_hit_pct: f64,
    pub data_writes: f64,
    pub data_written_bytes: f64,
    /// `Innodb_data_fsyncs`: data files, and from MariaDB 10.8 the redo log too.
    pub data_fsyncs: f64,
    /// `Innodb_log_writes`: redo log write requests.
    pub log_writes: f64,
    pub log_written_bytes: f64,
    pub log_mb_per_s: f64,
    /// `Innodb_os_log_fsyncs` (up to MariaDB 10.7, MySQL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_fsyncs: Option<f64>,
    /// `Com_commit`: explicit COMMIT statements.
    pub commits: f64,
    pub commits_per_s: f64,
    /// performance_schema file summaries; empty when it is off.
    pub files: Vec<FileIoFigures>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub unavailable: BTreeMap<&'static str, String>,
    /// Every counter's change over the window, by the collector's series key.
    pub counters: BTreeMap<String, f64>,
}

/// InnoDB's read requests beside the devices' under the data directory.
#[derive(Clone, Debug, Serialize)]
pub struct ReadReconciliation {
    pub innodb_read_requests: f64,
    pub innodb_read_bytes: f64,
    pub innodb_pages_read: f64,
    pub device_read_requests: u64,
    pub device_read_bytes: u64,
    /// Device read requests per InnoDB read request: about 1 when every
    /// read is physical (O_DIRECT); below 1 when a cache absorbed reads;
    /// above 1 when other readers shared the devices or requests were split.
    pub device_requests_per_innodb_request: f64,
    pub device_bytes_per_innodb_byte: f64,
    /// What mariadbd itself read from devices (`/proc/PID/io` `read_bytes`),
    /// when it runs on this machine: no other process's reads are in it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_device_read_bytes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_bytes_per_innodb_byte: Option<f64>,
}

/// The window's figures: strata-run's accounting of the OS and the
/// workload, with InnoDB's beside it.
#[derive(Clone, Debug, Serialize)]
pub struct MariaDbFigures {
    #[serde(flatten)]
    pub run: RunFigures,
    pub innodb: Option<InnoDbFigures>,
    pub reads: Option<ReadReconciliation>,
}

/// Below this many device read requests per InnoDB read request, reads did
/// not reach the device.
const ABSORBED_RATIO: f64 = 0.5;

pub(crate) fn mariadb_figures(
    start: &WindowEdge,
    end: &WindowEdge,
    outcome: &RunOutcome,
    devices: &RunDevices,
    page_bytes: u32,
) -> MariaDbFigures {
    let mut run = account(&start.os, &end.os, None, outcome, devices);
    let seconds = (end.os.at - start.os.at).as_secs_f64();
    let innodb = match (&start.innodb, &end.innodb) {
        (Ok(before), Ok(after)) => Some(innodb_figures(&delta(before, after), seconds)),
        (Err(error), _) | (_, Err(error)) => {
            run.warnings.push(format!(
                "InnoDB counters at an edge of the window are missing: {error}"
            ));
            None
        }
    };
    let reads = innodb
        .as_ref()
        .filter(|_| run.devices_unobserved.is_none())
        .map(|innodb| reconcile(innodb, &run));
    if let (Some(innodb), Some(reads)) = (&innodb, &reads) {
        run.absorption = Some(absorption(innodb, reads, page_bytes));
        warn_about_reads(&mut run.warnings, reads);
    }
    MariaDbFigures { run, innodb, reads }
}

impl MariaDbFigures {
    /// After a restart: InnoDB's counters from both sides of it are not one
    /// run's, so they are never subtracted.
    pub(crate) fn leave_out_innodb_counters(&mut self) {
        if self.innodb.take().is_some() {
            self.reads = None;
            self.run.absorption = None;
            self.run.warnings.push(
                "InnoDB's counters are left out: the server restarted inside the window".into(),
            );
        }
    }
}

fn delta(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    after
        .iter()
        .filter_map(|(key, value)| Some((key.clone(), value - before.get(key)?)))
        .filter(|(key, _)| key != "performance_schema_on{}")
        .collect()
}

fn per_s(count: f64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count / seconds
    } else {
        0.0
    }
}

fn ratio(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole
    } else {
        0.0
    }
}

fn innodb_figures(counters: &BTreeMap<String, f64>, seconds: f64) -> InnoDbFigures {
    let value = |name: &str| counters.get(&format!("{name}{{}}")).copied().unwrap_or(0.0);
    let (pages_read, read_requests) = (value("innodb_pages_read"), value("innodb_data_reads"));
    let read_bytes = value("innodb_data_read_bytes");
    let (misses, requests) = (
        value("innodb_buffer_pool_reads"),
        value("innodb_buffer_pool_read_requests"),
    );
    let log_fsyncs = counters.get("innodb_os_log_fsyncs{}").copied();
    let mut unavailable = BTreeMap::new();
    if log_fsyncs.is_none() {
        unavailable.insert("log_fsyncs", "this server has no Innodb_os_log_fsyncs (MariaDB 10.8 and later): the redo log's fsyncs are counted in data_fsyncs".to_string());
    }
    let files = file_figures(counters);
    if files.is_empty() {
        unavailable.insert("files", "performance_schema is off (it can only be switched on at server start; MariaDB's default is off)".to_string());
    }
    InnoDbFigures {
        pages_read,
        pages_read_per_s: per_s(pages_read, seconds),
        read_requests,
        read_requests_per_s: per_s(read_requests, seconds),
        read_bytes,
        read_mb_per_s: per_s(read_bytes / 1e6, seconds),
        pages_per_read_request: ratio(pages_read, read_requests),
        buffer_pool_reads: misses,
        buffer_pool_reads_per_s: per_s(misses, seconds),
        buffer_pool_read_requests: requests,
        buffer_pool_hit_pct: 100.0 * (1.0 - ratio(misses, requests)),
        data_writes: value("innodb_data_writes"),
        data_written_bytes: value("innodb_data_written_bytes"),
        data_fsyncs: value("innodb_data_fsyncs"),
        log_writes: value("innodb_log_writes"),
        log_written_bytes: value("innodb_os_log_written_bytes"),
        log_mb_per_s: per_s(value("innodb_os_log_written_bytes") / 1e6, seconds),
        log_fsyncs,
        commits: value("com_commit"),
        commits_per_s: per_s(value("com_commit"), seconds),
        files,
        unavailable,
        counters: counters.clone(),
    }
}

/// One `FileIoFigures` per file event the collector reported.
fn file_figures(counters: &BTreeMap<String, f64>) -> Vec<FileIoFigures> {
    let events: Vec<String> = counters
        .keys()
        .filter_map(|key| key.strip_prefix("file_reads{event=")?.strip_suffix('}'))
        .map(str::to_string)
        .collect();
    events
        .into_iter()
        .map(|event| {
            let value = |name: &str| {
                counters
                    .get(&format!("{name}{{event={event}}}"))
                    .copied()
                    .unwrap_or(0.0)
            };
            let (reads, writes) = (value("file_reads"), value("file_writes"));
            let (read_wait_ps, write_wait_ps) =
                (value("file_read_wait_ps"), value("file_write_wait_ps"));
            FileIoFigures {
                reads,
                read_bytes: value("file_read_bytes"),
                read_wait_ms: read_wait_ps / 1e9,
                read_us_per_read: ratio(read_wait_ps / 1e6, reads),
                writes,
                write_bytes: value("file_write_bytes"),
                write_wait_ms: write_wait_ps / 1e9,
                write_us_per_write: ratio(write_wait_ps / 1e6, writes),
                misc_wait_ms: value("file_misc_wait_ps") / 1e9,
                event,
            }
        })
        .collect()
}

fn reconcile(innodb: &InnoDbFigures, run: &RunFigures) -> ReadReconciliation {
    let data_devices = run.devices.iter().filter(|device| device.role != "wal");
    let (device_read_requests, device_read_bytes) = data_devices
        .fold((0, 0), |(requests, bytes), device| {
            (requests + device.read_requests, bytes + device.read_bytes)
        });
    let server_device_read_bytes = run
        .cpu
        .server_processes
        .iter()
        .filter_map(|group| group.device_read_bytes)
        .reduce(|total, bytes| total + bytes);
    ReadReconciliation {
        innodb_read_requests: innodb.read_requests,
        innodb_read_bytes: innodb.read_bytes,
        innodb_pages_read: innodb.pages_read,
        device_read_requests,
        device_read_bytes,
        device_requests_per_innodb_request: ratio(
            device_read_requests as f64,
            innodb.read_requests,
        ),
        device_bytes_per_innodb_byte: ratio(device_read_bytes as f64, innodb.read_bytes),
        server_device_read_bytes,
        server_bytes_per_innodb_byte: server_device_read_bytes
            .map(|bytes| ratio(bytes, innodb.read_bytes)),
    }
}

/// strata-run's absorption in InnoDB pages: `database_blocks_read` is
/// `Innodb_pages_read` and `device_read_blocks` the device bytes in pages.
fn absorption(innodb: &InnoDbFigures, reads: &ReadReconciliation, page_bytes: u32) -> Absorption {
    let device_read_blocks = reads.device_read_bytes as f64 / f64::from(page_bytes.max(1));
    let absorbed_blocks = (innodb.pages_read - device_read_blocks).max(0.0);
    Absorption {
        database_blocks_read: innodb.pages_read,
        device_read_requests: reads.device_read_requests,
        device_read_bytes: reads.device_read_bytes,
        device_read_blocks,
        absorbed_blocks,
        absorbed_pct: 100.0 * ratio(absorbed_blocks, innodb.pages_read),
    }
}

fn warn_about_reads(warnings: &mut Vec<String>, reads: &ReadReconciliation) {
    if reads.innodb_read_requests >= 100.0
        && reads.device_requests_per_innodb_request < ABSORBED_RATIO
    {
        warnings.push(format!(
            "the devices under the data directory saw {} read requests for InnoDB's {:.0}: reads were \
             absorbed before the device (data files not opened with O_DIRECT?), so this is not a storage result",
            reads.device_read_requests, reads.innodb_read_requests
        ));
    }
}
