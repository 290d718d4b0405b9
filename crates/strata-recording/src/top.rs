//! The processes busiest at the device and on a CPU over one interval, as
//! `strata observe --top N` showed them: the body of a `top` record, and
//! the `top` member of each `observe --format json` line.
//!
//! Not for: reading /proc (strata-probe's `top`), turning counters into
//! rates or ranking (strata-observe's `top`), or printing.

use serde::{Deserialize, Serialize};

/// The top processes of one interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopProcesses {
    /// The `t_s` of the `layers` record (the sample) this interval ends at.
    pub t_s: f64,
    /// Seconds over which the rates were measured (between two scans of
    /// /proc).
    pub interval_s: f64,
    /// How many processes were asked for (`--top N`).
    pub limit: u32,
    /// Processes alive at both ends of the interval, or started within it.
    pub processes_seen: u32,
    /// Of those, processes whose `/proc/PID/io` could not be read (another
    /// user's, without root or CAP_SYS_PTRACE): their I/O figures are null.
    pub io_unreadable: u32,
    /// At most `limit`, busiest first: by block requests traced per
    /// second where the block layer is traced, else by device MB/s read +
    /// written; then by CPU.
    pub processes: Vec<TopProcess>,
    /// How they were ranked, in words.
    #[serde(default)]
    pub ranked_by: String,
}

/// One process over one interval. I/O figures are `None` (null) when the
/// kernel would not show them, never 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopProcess {
    pub pid: u32,
    /// `/proc/PID/stat` field 22: clock ticks after boot; with `pid` it
    /// names one process even when the PID is reused.
    pub start_ticks: u64,
    /// The command line (`/proc/PID/cmdline`, arguments joined by spaces,
    /// shortened to 120 characters), or `[comm]` for a kernel thread.
    pub command: String,
    /// The database the process belongs to (`postgresql`, `mariadb`,
    /// `mysql`), when its command line says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// Its role there: PostgreSQL's process title (`postmaster`,
    /// `checkpointer`, `walwriter`, `backend`…), `server` for mysqld or
    /// mariadbd.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// `read_bytes` of /proc/PID/io: bytes the process caused to be read
    /// from the storage layer, MB (10^6 bytes) per second.
    pub read_mb_per_s: Option<f64>,
    /// `write_bytes`: bytes sent to the storage layer, MB per second.
    pub write_mb_per_s: Option<f64>,
    /// `syscr`: read system calls per second (not device requests).
    pub read_syscalls_per_s: Option<f64>,
    /// `syscw`: write system calls per second.
    pub write_syscalls_per_s: Option<f64>,
    /// utime + stime of /proc/PID/stat as % of one CPU (over 100 for a
    /// process busy on several).
    pub cpu_pct: f64,
    /// Time its threads were runnable but waiting for a CPU
    /// (`schedstat`'s second field, summed over threads), ms per second;
    /// `None` without schedstat or when a thread's exit made the sum drop.
    pub run_delay_ms_per_s: Option<f64>,
    /// Block requests it submitted (traced one by one, every device), per
    /// second, read and written; `None` where the block layer is not
    /// traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traced_read_requests_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traced_write_requests_per_s: Option<f64>,
    /// Those requests' mean device time (issue → end), ms; `None` without
    /// a request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traced_device_time_mean_ms: Option<f64>,
}

impl TopProcess {
    /// Block requests traced per second, read + written; 0 when not traced.
    pub fn traced_requests_per_s(&self) -> f64 {
        self.traced_read_requests_per_s.unwrap_or(0.0)
            + self.traced_write_requests_per_s.unwrap_or(0.0)
    }

    /// Device MB/s read + written; 0 when not readable (ranked last).
    pub fn device_mb_per_s(&self) -> f64 {
        self.read_mb_per_s.unwrap_or(0.0) + self.write_mb_per_s.unwrap_or(0.0)
    }
}
