//! The names of layers and of the metrics strata reads back from them,
//! defined once: the collectors write them, the report reads them. Every
//! metric name carries its unit (`_bytes`, `_ms`, `_ns`, `_ticks`) or
//! counts what it says (`read_requests`, never `reads`); and the name a
//! strata agent serves each under in Prometheus's exposition (`served`),
//! so that a reader of an agent's series finds them again.
//!
//! Not for: the full list of what each collector writes (docs/observe.md).

use strata_core::metrics::{Metric, MetricKind};

/// Layers, as `layers` records key them.
pub mod layer {
    pub const DEVICE: &str = "device";
    pub const CPU: &str = "cpu";
    pub const MEMORY: &str = "memory";
    pub const NET: &str = "net";
    pub const NFS: &str = "nfs";
    pub const NFS_SERVER: &str = "nfs_server";
    pub const PROCESS: &str = "process";
    pub const POSTGRES: &str = "postgres";
    pub const MARIADB: &str = "mariadb";
    pub const BLOCKTRACE: &str = "blocktrace";
    /// The family a strata agent serves each layer's state under: 1 with
    /// values in the sample, 0 absent or failed (label `layer`).
    pub const UP_FAMILY: &str = "strata_layer_up";
}

/// The `blocktrace` layer (block requests traced one by one), labelled
/// `device` and `op`: counters of requests, of requests per doubling
/// bucket of device time (label `under_us`), gauges of each interval's
/// device time percentiles.
pub mod blocktrace {
    pub const REQUESTS: &str = "requests";
    pub const DEVICE_TIME_REQUESTS: &str = "device_time_requests";
    pub const UNDER_US: &str = "under_us";
    pub const DEVICE_P50_NS: &str = "device_p50_ns";
    pub const DEVICE_P99_NS: &str = "device_p99_ns";
    pub const DEVICE_MAX_NS: &str = "device_max_ns";
    /// The Prometheus histogram families a strata agent serves of every
    /// request traced on its host, labelled `device` and `operation`.
    pub const DEVICE_SECONDS_FAMILY: &str = "strata_block_request_device_seconds";
    pub const QUEUE_SECONDS_FAMILY: &str = "strata_block_request_queue_seconds";
    pub const SECONDS_FAMILY: &str = "strata_block_request_seconds";
    /// The counter a strata agent serves of the requests its tracer saw
    /// start and not end (found when the kernel reused the request), by
    /// `device` and `operation`.
    pub const ENDS_MISSED_FAMILY: &str = "strata_block_request_ends_missed_total";
}

/// The `device` layer's counters (`/proc/diskstats`), labelled `device`,
/// `kind`, `rotational` and for md `md_level`, `chunk_bytes`, `md_members`.
pub mod device {
    pub const READ_REQUESTS: &str = "read_requests";
    pub const WRITE_REQUESTS: &str = "write_requests";
    pub const READ_BYTES: &str = "read_bytes";
    pub const WRITE_BYTES: &str = "write_bytes";
    pub const READ_MS: &str = "read_ms";
    pub const WRITE_MS: &str = "write_ms";
    pub const BUSY_MS: &str = "busy_ms";
    pub const WEIGHTED_MS: &str = "weighted_ms";
}

/// The `cpu` layer (`/proc/stat`, PSI): tick counters in
/// `strata_core::metrics::CPU_TICK_COUNTERS`, and these.
pub mod cpu {
    pub const IDLE_TICKS: &str = "idle_ticks";
    pub const CPUS: &str = "cpus";
    pub const PROCS_RUNNING: &str = "procs_running";
    pub const PRESSURE_SOME_US: &str = "pressure_some_us";
}

/// The `process` layer (`/proc/PID/schedstat`), labelled `pid`, `comm`.
pub mod process {
    pub const CPU_NS: &str = "cpu_ns";
    pub const RUN_DELAY_NS: &str = "run_delay_ns";
}

/// The `nfs` layer (`/proc/self/mountstats`), labelled `mount`, `op`.
pub mod nfs {
    pub const OPS: &str = "ops";
    pub const BYTES_SENT: &str = "bytes_sent";
    pub const BYTES_RECEIVED: &str = "bytes_received";
    /// Every per-op counter, in the kernel's order (statvers 1.1; `errors`
    /// since Linux 5.3); times are cumulative milliseconds.
    pub const OP_COUNTERS: [&str; 9] = [
        OPS,
        "transmissions",
        "timeouts",
        BYTES_SENT,
        BYTES_RECEIVED,
        "queue_ms",
        "rtt_ms",
        "execute_ms",
        "errors",
    ];
}

/// The `nfs_server` layer: an NFS server's own count of the READ and WRITE
/// calls it served, per export (nfs-ganesha's), labelled `server`,
/// `export`, `protocol` (`NFSv3`, `NFSv40`, …) and `op` (`READ`, `WRITE`).
/// `latency_ns` is the server's own time on the calls, added up.
pub mod nfs_server {
    pub const OPS: &str = "ops";
    pub const ERRORS: &str = "errors";
    pub const REQUESTED_BYTES: &str = "requested_bytes";
    pub const TRANSFERRED_BYTES: &str = "transferred_bytes";
    pub const LATENCY_NS: &str = "latency_ns";
    pub const QUEUE_NS: &str = "queue_ns";
    pub const COUNTERS: [&str; 6] = [
        OPS,
        ERRORS,
        REQUESTED_BYTES,
        TRANSFERRED_BYTES,
        LATENCY_NS,
        QUEUE_NS,
    ];
}

/// The `net` layer (`/proc/net/dev`), labelled `interface`.
pub mod net {
    pub const RECEIVE_BYTES: &str = "receive_bytes";
    pub const TRANSMIT_BYTES: &str = "transmit_bytes";
}

/// The `postgres` layer: `view_column` of pg_stat_database, pg_stat_wal…
/// (`window_database` records key the same counters `view.column`).
pub mod postgres {
    pub const BLOCKS_READ: &str = "database_blks_read";
    pub const BLOCKS_HIT: &str = "database_blks_hit";
    pub const COMMITS: &str = "database_xact_commit";
    pub const TEMP_FILES: &str = "database_temp_files";
    pub const TEMP_BYTES: &str = "database_temp_bytes";
    pub const BLOCK_READ_TIME_MS: &str = "database_blk_read_time_ms";
    pub const WAL_BYTES: &str = "wal_bytes";
    pub const WAL_WRITES: &str = "wal_write";
    pub const WAL_SYNCS: &str = "wal_sync";
    pub const WAL_WRITE_TIME_MS: &str = "wal_write_time_ms";
    pub const WAL_SYNC_TIME_MS: &str = "wal_sync_time_ms";
    pub const SAMPLES: &str = "samples";
    pub const ACTIVE_SESSION_SAMPLES: &str = "active_session_samples";
    pub const WAIT_EVENT_SAMPLES: &str = "wait_event_samples";
    /// The counters a report reads (those an agent's series give back).
    pub const READ_BY_REPORTS: [&str; 14] = [
        BLOCKS_READ,
        BLOCKS_HIT,
        COMMITS,
        TEMP_FILES,
        TEMP_BYTES,
        BLOCK_READ_TIME_MS,
        WAL_BYTES,
        WAL_WRITES,
        WAL_SYNCS,
        WAL_WRITE_TIME_MS,
        WAL_SYNC_TIME_MS,
        SAMPLES,
        ACTIVE_SESSION_SAMPLES,
        WAIT_EVENT_SAMPLES,
    ];
}

/// The `mariadb` layer: SHOW GLOBAL STATUS, lower case.
pub mod mariadb {
    pub const PAGES_READ: &str = "innodb_pages_read";
    pub const BUFFER_POOL_READS: &str = "innodb_buffer_pool_reads";
    pub const BUFFER_POOL_READ_REQUESTS: &str = "innodb_buffer_pool_read_requests";
    pub const COMMITS: &str = "com_commit";
    pub const LOG_WRITTEN_BYTES: &str = "innodb_os_log_written_bytes";
    pub const LOG_WRITES: &str = "innodb_log_writes";
    pub const LOG_FSYNCS: &str = "innodb_os_log_fsyncs";
    pub const DATA_READS: &str = "innodb_data_reads";
    pub const DATA_READ_BYTES: &str = "innodb_data_read_bytes";
    /// The counters a report reads (those an agent's series give back).
    pub const READ_BY_REPORTS: [&str; 9] = [
        PAGES_READ,
        BUFFER_POOL_READS,
        BUFFER_POOL_READ_REQUESTS,
        COMMITS,
        LOG_WRITTEN_BYTES,
        LOG_WRITES,
        LOG_FSYNCS,
        DATA_READS,
        DATA_READ_BYTES,
    ];
}

/// The labels that say which thing a metric is about.
pub mod label {
    pub const DEVICE: &str = "device";
    pub const KIND: &str = "kind";
    pub const ROTATIONAL: &str = "rotational";
    pub const MD_LEVEL: &str = "md_level";
    pub const CHUNK_BYTES: &str = "chunk_bytes";
    pub const MD_MEMBERS: &str = "md_members";
    pub const INTERFACE: &str = "interface";
    pub const OP: &str = "op";
    pub const SERVER: &str = "server";
    pub const EXPORT: &str = "export";
    pub const PROTOCOL: &str = "protocol";
    pub const RESOURCE: &str = "resource";
    pub const WAIT_EVENT: &str = "wait_event";
    pub const WAIT_EVENT_TYPE: &str = "wait_event_type";
}

/// A collector's unit suffix, the base unit served instead, and the factor
/// from one to the other. `_ticks` (USER_HZ) is scaled by the sample's
/// own ticks per second.
const UNITS: [(&str, &str, f64); 7] = [
    ("_ps", "_seconds", 1e-12),
    ("_ns", "_seconds", 1e-9),
    ("_us", "_seconds", 1e-6),
    ("_ms", "_seconds", 1e-3),
    ("_kib", "_bytes", 1024.0),
    ("_mbps", "_bytes_per_second", 125_000.0),
    ("_pct", "_ratio", 0.01),
];

/// The name a strata agent serves `metric` of `layer` under in
/// Prometheus's exposition (`strata_<layer>_<name>`, base units, `_total`
/// on counters), the factor its value is multiplied by, and the unit it
/// was converted from.
pub fn served(
    layer: &str,
    metric: &Metric,
    ticks_per_second: f64,
) -> (String, f64, Option<&'static str>) {
    let mut name = metric.name.clone();
    let mut factor = 1.0;
    let mut converted = None;
    if let Some(stem) = name.strip_suffix("_ticks") {
        name = format!("{stem}_seconds");
        factor = 1.0 / ticks_per_second;
        converted = Some("ticks of USER_HZ");
    }
    for (suffix, base, scale) in UNITS {
        if let Some(stem) = name.strip_suffix(suffix) {
            name = format!("{stem}{base}");
            factor = scale;
            converted = Some(suffix.trim_start_matches('_'));
        }
    }
    let clean: String = format!("strata_{layer}_{name}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = match metric.kind {
        MetricKind::Counter if !clean.ends_with("_total") => format!("{clean}_total"),
        _ => clean,
    };
    (name, factor, converted)
}
