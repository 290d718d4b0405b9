//! What one window of a recording measured, layer by layer, as totals: the
//! one shape every kind of recording (run, calibrate, observe) is reduced to
//! before sections and findings are made from it.
//!
//! Not for: reading records (the `run`, `calibrate`, `observe` and `layers`
//! modules fill it) or laying it out (`sections`).

use crate::findings::{
    CommitFigures, CpuEvidence, DeviceWindow, OutlierFigures, OutlierSubmitters, RateSeries,
};
use strata_output::document::Window;
use strata_recording::names::{layer, mariadb, postgres};

/// PostgreSQL's block size, the default of a recording that names none.
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
    /// A run's listed block request outliers, by who submitted them.
    pub outlier_submitters: Option<OutlierSubmitters>,
    pub outliers: OutlierFigures,
    /// The individual I/Os over the threshold (calibrate's `io_outlier`).
    pub outlier_events: Vec<OutlierEvent>,
    /// The sessions' statements over the threshold (a run's
    /// `statement_outlier`).
    pub statement_outliers: Vec<StatementOutlierEvent>,
    /// Nothing faster than this was recorded one by one, ms.
    pub outlier_floor_ms: Option<f64>,
    pub steadiness: Option<RateSeries>,
    /// The database's block (or page) size: every "blocks" figure is in these.
    pub block_bytes: f64,
}

/// One of a run's statements over the threshold.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StatementOutlierEvent {
    /// Seconds from the recording's start.
    pub t_s: f64,
    pub session: u64,
    pub schema: String,
    pub operation: String,
    pub latency_ms: f64,
}

/// strata's own sessions (run) over the window.
#[derive(Debug, Clone, Default)]
pub(crate) struct WorkloadTotals {
    pub loops: f64,
    pub scans: f64,
    /// (t_s, loops/s), one per second of the window.
    pub loops_per_second: Vec<[f64; 2]>,
}

/// Which database's counters a [`DatabaseTotals`] holds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) enum DatabaseSource {
    #[default]
    Postgres,
    InnoDb,
}

impl DatabaseSource {
    /// The layer its per-second samples are recorded under.
    pub fn layer(self) -> &'static str {
        match self {
            DatabaseSource::Postgres => layer::POSTGRES,
            DatabaseSource::InnoDb => layer::MARIADB,
        }
    }

    /// The counter of blocks (pages) read from outside the database's cache.
    pub fn blocks_read_counter(self) -> &'static str {
        match self {
            DatabaseSource::Postgres => postgres::BLOCKS_READ,
            DatabaseSource::InnoDb => mariadb::PAGES_READ,
        }
    }

    /// What the database calls its log.
    pub fn log_name(self) -> &'static str {
        match self {
            DatabaseSource::Postgres => "WAL",
            DatabaseSource::InnoDb => "redo",
        }
    }

    /// What a "block read" is in this database.
    pub fn blocks_meaning(self) -> &'static str {
        match self {
            DatabaseSource::Postgres => {
                "shared-buffer misses: they include reads the OS page cache served"
            }
            DatabaseSource::InnoDb => "InnoDB buffer pool misses (Innodb_pages_read)",
        }
    }
}

/// The database's counters' changes over the window. A counter the
/// database does not have is NaN (printed n/a), never 0.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DatabaseTotals {
    pub source: DatabaseSource,
    /// Its reads pass through the OS page cache (not O_DIRECT), so a device
    /// can see fewer reads than it counts.
    pub through_page_cache: bool,
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
            source: DatabaseSource::Postgres,
            through_page_cache: true,
            blocks_read: counter(postgres::BLOCKS_READ)?,
            blocks_hit: value(postgres::BLOCKS_HIT),
            commits: value(postgres::COMMITS),
            wal_bytes: value(postgres::WAL_BYTES),
            wal_writes: value(postgres::WAL_WRITES),
            wal_syncs: value(postgres::WAL_SYNCS),
            wal_write_time_ms: value(postgres::WAL_WRITE_TIME_MS),
            wal_sync_time_ms: value(postgres::WAL_SYNC_TIME_MS),
            temp_files: value(postgres::TEMP_FILES),
            temp_bytes: value(postgres::TEMP_BYTES),
            block_read_time_ms: value(postgres::BLOCK_READ_TIME_MS),
            read_requests: None,
            read_bytes: None,
        })
    }

    /// From InnoDB's status counters as the mariadb layer names them
    /// (`innodb_pages_read`, `innodb_data_reads`); `None` without pages read.
    /// `direct`: the data files are opened with O_DIRECT.
    pub fn from_innodb(
        counter: &dyn Fn(&str) -> Option<f64>,
        direct: bool,
    ) -> Option<DatabaseTotals> {
        let value = |name: &str| counter(name).unwrap_or(f64::NAN);
        let misses = value(mariadb::BUFFER_POOL_READS);
        Some(DatabaseTotals {
            source: DatabaseSource::InnoDb,
            through_page_cache: !direct,
            blocks_read: counter(mariadb::PAGES_READ)?,
            blocks_hit: value(mariadb::BUFFER_POOL_READ_REQUESTS) - misses,
            commits: value(mariadb::COMMITS),
            wal_bytes: value(mariadb::LOG_WRITTEN_BYTES),
            wal_writes: value(mariadb::LOG_WRITES),
            wal_syncs: value(mariadb::LOG_FSYNCS),
            wal_write_time_ms: f64::NAN,
            wal_sync_time_ms: f64::NAN,
            temp_files: f64::NAN,
            temp_bytes: f64::NAN,
            block_read_time_ms: f64::NAN,
            read_requests: counter(mariadb::DATA_READS),
            read_bytes: counter(mariadb::DATA_READ_BYTES),
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
            outlier_submitters: None,
            outliers: OutlierFigures::default(),
            outlier_events: Vec::new(),
            statement_outliers: Vec::new(),
            outlier_floor_ms: None,
            steadiness: None,
            block_bytes: BLOCK_BYTES,
        }
    }

    /// The block size as printed in labels: `8 KiB`, `16 KiB`.
    pub fn block_label(&self) -> String {
        strata_core::units::format_size(self.block_bytes as u64)
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
