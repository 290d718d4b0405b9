//! What one window of a recording measured, layer by layer, as totals: the
//! one shape every kind of recording (run, calibrate, observe) is reduced to
//! before sections and findings are made from it.
//!
//! Not for: reading records (the `run`, `calibrate`, `observe` and `layers`
//! modules fill it) or laying it out (`sections`).

use crate::document::Window;
use crate::findings::{CommitFigures, CpuEvidence, DeviceWindow, OutlierFigures, RateSeries};

/// PostgreSQL's block size: every "blocks" figure is in these.
pub(crate) const BLOCK_BYTES: f64 = 8192.0;

/// One window of a recording.
#[derive(Debug, Clone)]
pub(crate) struct Measured {
    /// Where the window lies, seconds from the recording's start.
    pub window: Window,
    pub window_s: f64,
    pub workload: Option<WorkloadTotals>,
    pub database: Option<DatabaseTotals>,
    /// Physical devices (or md arrays), never a disk twice.
    pub devices: Vec<DeviceWindow>,
    pub nfs: Option<NfsTotals>,
    pub nic: Option<NicTotals>,
    pub cpu: Option<CpuEvidence>,
    pub waits: Option<WaitSamples>,
    pub commit: Option<CommitFigures>,
    pub outliers: OutlierFigures,
    /// The individual I/Os over the threshold (calibrate's `io_outlier`).
    pub outlier_events: Vec<OutlierEvent>,
    pub steadiness: Option<RateSeries>,
}

/// strata's own sessions (run) over the window.
#[derive(Debug, Clone, Default)]
pub(crate) struct WorkloadTotals {
    pub loops: f64,
    pub scans: f64,
    /// (t_s, loops/s), one per second of the window.
    pub loops_per_second: Vec<[f64; 2]>,
}

/// PostgreSQL's counters' changes over the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DatabaseTotals {
    pub blocks_read: f64,
    pub blocks_hit: f64,
    pub commits: f64,
    pub wal_bytes: f64,
    pub wal_writes: f64,
    pub wal_syncs: f64,
    pub wal_write_time_ms: f64,
    pub wal_sync_time_ms: f64,
    pub temp_files: f64,
    pub temp_bytes: f64,
    pub block_read_time_ms: f64,
    /// PostgreSQL 18's own read requests and their bytes (pg_stat_io), from
    /// a run's result.
    pub read_requests: Option<f64>,
    pub read_bytes: Option<f64>,
}

impl DatabaseTotals {
    /// From counters named as the postgres layer names them
    /// (`database_blks_read`, `wal_sync`); `None` without `blks_read`.
    pub fn from_counters(counter: &dyn Fn(&str) -> Option<f64>) -> Option<DatabaseTotals> {
        let value = |name: &str| counter(name).unwrap_or(0.0);
        Some(DatabaseTotals {
            blocks_read: counter("database_blks_read")?,
            blocks_hit: value("database_blks_hit"),
            commits: value("database_xact_commit"),
            wal_bytes: value("wal_bytes"),
            wal_writes: value("wal_write"),
            wal_syncs: value("wal_sync"),
            wal_write_time_ms: value("wal_write_time_ms"),
            wal_sync_time_ms: value("wal_sync_time_ms"),
            temp_files: value("database_temp_files"),
            temp_bytes: value("database_temp_bytes"),
            block_read_time_ms: value("database_blk_read_time_ms"),
            read_requests: None,
            read_bytes: None,
        })
    }

    /// WAL write + sync time per sync, ms; `None` without syncs.
    pub fn log_write_avg_ms(&self) -> Option<f64> {
        (self.wal_syncs > 0.0)
            .then(|| (self.wal_write_time_ms + self.wal_sync_time_ms) / self.wal_syncs)
    }
}

/// The kernel NFS client over the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NfsTotals {
    pub read_ops: f64,
    pub read_bytes: f64,
    pub write_ops: f64,
    pub write_bytes: f64,
}

/// All network interfaces but loopback over the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NicTotals {
    pub receive_bytes: f64,
    pub transmit_bytes: f64,
}

/// PostgreSQL's 10 Hz wait-event sampling over the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct WaitSamples {
    /// How many times pg_stat_activity was sampled.
    pub polls: f64,
    /// Active sessions seen, summed over the polls.
    pub active_session_samples: f64,
    /// (wait event, wait event type, active sessions seen in it).
    pub events: Vec<(String, String, f64)>,
}

impl WaitSamples {
    /// Average active sessions: DB time in seconds per second.
    pub fn average_active_sessions(&self) -> Option<f64> {
        (self.polls > 0.0).then(|| self.active_session_samples / self.polls)
    }
}

/// One I/O slower than the threshold.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OutlierEvent {
    pub point: String,
    pub t_s: f64,
    pub group: String,
    pub operation: String,
    pub offset_bytes: f64,
    pub size_bytes: f64,
    pub latency_ms: f64,
}

impl Measured {
    /// Nothing measured yet over `window`.
    pub fn empty(window: Window) -> Measured {
        Measured {
            window,
            window_s: window.to_s - window.from_s,
            workload: None,
            database: None,
            devices: Vec::new(),
            nfs: None,
            nic: None,
            cpu: None,
            waits: None,
            commit: None,
            outliers: OutlierFigures::default(),
            outlier_events: Vec::new(),
            steadiness: None,
        }
    }

    pub fn device_read_requests(&self) -> f64 {
        self.devices.iter().map(|device| device.read_requests).sum()
    }

    pub fn device_read_bytes(&self) -> f64 {
        self.devices.iter().map(|device| device.read_bytes).sum()
    }

    pub fn device_write_requests(&self) -> f64 {
        self.devices
            .iter()
            .map(|device| device.write_requests)
            .sum()
    }

    pub fn device_write_bytes(&self) -> f64 {
        self.devices.iter().map(|device| device.write_bytes).sum()
    }

    /// The figure per second of the window.
    pub fn per_s(&self, total: f64) -> f64 {
        if self.window_s > 0.0 {
            total / self.window_s
        } else {
            f64::NAN
        }
    }
}
