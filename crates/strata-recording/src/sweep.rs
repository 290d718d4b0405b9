//! What a `strata run --sweep-sessions` concluded: the database's curve
//! (one point per session count, each a measured window), its knee and its
//! latency-target answer, the database's own CPU per block, the storage's
//! curve beside it (`--calibration`) and the prediction checked against the
//! measurement (`--predict`). Every field name carries its unit.
//!
//! Not for: a point's whole figures (each is a `sweep_point` record,
//! [`crate::record::SweepPoint`]) or the arithmetic (strata-run's `sweep`, strata-model's
//! `predict`).

use serde::{Deserialize, Serialize};
use strata_core::verdict::Verdict;

/// The database's curve and what was learnt from it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SweepSummary {
    pub points: Vec<CurvePoint>,
    /// `--latency-target`, for statement p99.
    pub latency_target_ms: f64,
    /// The point with the most device read requests/s whose statement p99
    /// met the target.
    pub best_under_target: Option<u32>,
    /// The point with the most device read requests/s per ms of mean
    /// statement latency (Kleinrock's power): past it, more sessions buy
    /// latency, not reads.
    pub knee: Option<u32>,
    /// The one-session window on a cached data set that gave the CPU per
    /// block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_cpu: Option<DatabaseCpu>,
    /// The one-session window reading from the device that gave the CPU per
    /// device read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_reads: Option<DatabaseReads>,
    /// The window of more sessions than CPUs reading from the device that
    /// gave the wait for a CPU past the CPUs' queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_contention: Option<DatabaseContention>,
    /// The window of as many sessions as CPUs reading from the device,
    /// between one session and the contended window (where the sweep goes
    /// past the CPUs and the host has more than one): the model's figures
    /// run linearly through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_contention_at_cpus: Option<DatabaseContention>,
    /// `--calibration` or `--predict`: the storage's curve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<StorageCurve>,
    /// `--predict`: the model's answer per point, and its error.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prediction: Vec<PredictedPoint>,
    /// Points that were not run (Ctrl-C), named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<u32>,
}

impl SweepSummary {
    /// The windows of more sessions than one before the sweep, fewest
    /// sessions first.
    pub fn contention_windows(&self) -> Vec<&DatabaseContention> {
        [&self.database_contention_at_cpus, &self.database_contention]
            .into_iter()
            .flatten()
            .collect()
    }

    pub fn point(&self, sessions: u32) -> Option<&CurvePoint> {
        self.points.iter().find(|point| point.sessions == sessions)
    }

    /// How far the one-session point ran from the one-session reading
    /// window the prediction is anchored on: the device's time per read
    /// (r_await) and the CPU per device read of each; none where either
    /// lacks them.
    pub fn anchor_text(&self) -> Option<String> {
        let (reads, point) = (self.database_reads.as_ref()?, self.point(1)?);
        let window_latency_us = reads.device_read_latency_us?;
        let point_latency_us = point.device_read_latency_us?;
        let point_cpu_us = point.cpu_per_device_read_us?;
        Some(format!(
            "the anchor: the one-session point's device took {point_latency_us:.1} µs per read \
             ({:+.1}% against the reading window's {window_latency_us:.1}), its CPU per device \
             read {point_cpu_us:.2} µs ({:+.1}% against {:.2})",
            error_pct(point_latency_us, window_latency_us),
            error_pct(point_cpu_us, reads.cpu_per_device_read_us),
            reads.cpu_per_device_read_us
        ))
    }
}

/// A window's [`CurvePoint::quarter_spread_pct`] as its text says it:
/// " (its quarters' loops/s spread 4.2%)"; empty where not kept.
pub fn quarters_text(spread_pct: Option<f64>) -> String {
    spread_pct.map_or(String::new(), |pct| {
        format!(" (its quarters' loops/s spread {pct:.1}%)")
    })
}

/// (measured − reference) / reference, percent: a prediction's error, or
/// how far a point ran from the window it was taken against.
pub fn error_pct(measured: f64, reference: f64) -> f64 {
    (measured - reference) * 100.0 / reference
}

/// The database-level figures of one point.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CurvePoint {
    pub sessions: u32,
    /// When the point's measured window began, Unix seconds (the layer
    /// samples' clock).
    pub window_start_unix_s: f64,
    pub window_s: f64,
    /// Read requests of the data devices per second; `None` where no device
    /// was measured (a server on another host without an agent).
    pub device_read_requests_per_s: Option<f64>,
    pub database_blocks_read_per_s: f64,
    pub statement_mean_ms: f64,
    pub statement_p50_ms: f64,
    pub statement_p99_ms: f64,
    /// The database's own time per block read (PostgreSQL's
    /// blk_read_time over blks_read; MariaDB's performance_schema wait on
    /// its data files per read); `None` where the database kept none.
    pub block_read_latency_us: Option<f64>,
    /// The host's CPUs' busy share over the window, percent; `None` where
    /// the host's CPU was not observed at both edges.
    #[serde(default)]
    pub host_cpu_busy_pct: Option<f64>,
    /// CPU seconds of the server and the driver per database block read.
    pub cpu_per_block_us: f64,
    /// The same CPU over the window's device read requests, µs, and those
    /// requests per block the statements touched (one row each, cached or
    /// not: the model's block); `None` where the window read nothing from
    /// a device or its CPU was not measured (and in Recordings made before
    /// they were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_per_device_read_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_reads_per_block: Option<f64>,
    pub absorbed_pct: Option<f64>,
    /// The data devices' read requests in flight on average (r/s ×
    /// r_await, Little's law) and their mean read latency (iostat's
    /// r_await), µs; `None` where no device was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_reads_in_flight: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_read_latency_us: Option<f64>,
    /// calibrate's mean latency at as many outstanding reads as the
    /// devices had in flight, µs (with `--calibration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_latency_us: Option<f64>,
    /// Share of the window in which some task waited for a CPU
    /// (`/proc/pressure/cpu`'s `some`), percent; `None` without PSI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_pct: Option<f64>,
    /// The storage's read requests/s at as many outstanding requests as
    /// sessions (the calibrate curve, interpolated), and the share of it
    /// this point reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_share_pct: Option<f64>,
    /// Where the storage's capacity the point left unused went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortfall: Option<String>,
    /// What the point's updates did, where its statements updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updates: Option<PointUpdates>,
    /// How steady the window ran: its loops per second in each quarter
    /// of it, the highest less the lowest over their mean, percent
    /// ([`crate::run::quarter_spread_pct`]). None under 4 seconds, and in
    /// Recordings made before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarter_spread_pct: Option<f64>,
    pub verdict: Verdict,
}

/// A point's updates: their rows and COMMITs, the time the sessions spent
/// committing (the WAL's flush), and the data devices' writes.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct PointUpdates {
    pub rows_updated_per_s: f64,
    pub commits_per_s: f64,
    pub commit_mean_ms: f64,
    /// The sessions' share of the window spent in COMMIT, percent.
    pub commit_time_pct: f64,
    /// Write requests of the data devices per second: changed blocks
    /// written back, and the WAL's where it shares their device.
    pub device_write_requests_per_s: f64,
}

/// One session reading a cached data set: the CPU per block of the
/// database and the driver, measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DatabaseCpu {
    pub window_s: f64,
    /// Table blocks the session's statements touched (one row per block).
    pub blocks: f64,
    pub buffer_hit_pct: f64,
    /// CPU seconds of the server and the driver over the window.
    pub cpu_s: f64,
    pub cpu_per_block_us: f64,
    pub elapsed_per_block_us: f64,
}

impl DatabaseCpu {
    /// The session's time per block that was not CPU: wake-ups and round
    /// trips.
    pub fn delay_per_block_us(&self) -> f64 {
        (self.elapsed_per_block_us - self.cpu_per_block_us).max(0.0)
    }
}

/// One session reading the data set from the device as the sweep will: the
/// CPU of the server and the driver per device read request, the whole read
/// path (the kernel's page cache and completion, PostgreSQL's buffer
/// replacement) included. Its throughput is not the model's input.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DatabaseReads {
    pub window_s: f64,
    pub device_read_requests: u64,
    /// CPU seconds of the server and the driver over the window.
    pub cpu_s: f64,
    pub cpu_per_device_read_us: f64,
    /// The window over its device reads: one session's time per read.
    pub elapsed_per_device_read_us: f64,
    /// calibrate's time per read at the window's reads in flight (at least
    /// 1): the mean latency at 1 outstanding read for a session that reads
    /// one block at a time.
    pub storage_latency_us: f64,
    /// CPU per device read that ran while the device read: CPU per read +
    /// the storage's time per read − the window's, at least 0 and at most
    /// the CPU per read.
    pub overlap_per_device_read_us: f64,
    /// How many times the storage's time per read the model's device takes
    /// for one session: what the overlap cannot take of the window's time
    /// per read against the storage's (the window's time per read over the
    /// storage's where it ran faster even with all its CPU hidden; its time
    /// less its CPU over the storage's where it ran slower even with none),
    /// else 1; 1 in Recordings made before it was kept.
    #[serde(default = "one")]
    pub device_slowdown: f64,
    /// Whether the server reads ahead of its scans (PostgreSQL's
    /// effective_io_concurrency above 0), which is what lets them overlap.
    pub prefetch: bool,
    /// Blocks the statements touched (one row each); 0 in Recordings made
    /// before it was kept.
    #[serde(default)]
    pub blocks: f64,
    /// Device read requests per block the statements touched: below 1 by what the page cache absorbed, above 1 where index
    /// pages miss the database's cache too (InnoDB's small pool). 1 in
    /// Recordings made before it was measured.
    #[serde(default = "one")]
    pub device_reads_per_block: f64,
    /// The data devices' reads in flight over the window (r/s × r_await):
    /// above 1 where the server reads ahead of its scan (PostgreSQL 18's
    /// read streams). 1 in Recordings made before it was measured, and
    /// where no device was measured.
    #[serde(default = "one")]
    pub device_reads_in_flight: f64,
    /// The data devices' mean read latency over the window (iostat's
    /// r_await), µs; None where no device was measured, and in Recordings
    /// made before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_read_latency_us: Option<f64>,
    /// The window's statements: their mean and p99, ms. None in Recordings
    /// made before they were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement_mean_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement_p99_ms: Option<f64>,
    /// Where the window's statements updated (`--update-pct`): what the
    /// model's updates take from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updates: Option<ReadingUpdates>,
    /// How steady the window ran: its loops per second in each quarter
    /// of it, the highest less the lowest over their mean, percent
    /// ([`crate::run::quarter_spread_pct`]). None under 4 seconds, and in
    /// Recordings made before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarter_spread_pct: Option<f64>,
}

/// The reading window's updates: the workload's share of statements that
/// update and rows per update, and what they measured, their COMMITs (the
/// session's waits for the WAL's flush) and the data devices' writes.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct ReadingUpdates {
    /// Share of statements that update, 0 to 1.
    pub share: f64,
    pub rows_per_update: f64,
    pub commits: u64,
    pub commit_mean_us: f64,
    pub rows_updated: u64,
    /// Write requests of the data devices (changed blocks written back,
    /// the WAL's where it shares their device).
    pub device_write_requests: u64,
}

impl ReadingUpdates {
    /// The data devices' write requests per row updated.
    pub fn device_writes_per_row(&self) -> f64 {
        self.device_write_requests as f64 / self.rows_updated.max(1) as f64
    }
}

impl DatabaseReads {
    /// The time per device read the session spent in COMMIT, µs; 0
    /// without updates.
    pub fn commit_per_device_read_us(&self) -> f64 {
        self.updates.map_or(0.0, |updates| {
            updates.commits as f64 * updates.commit_mean_us
                / self.device_read_requests.max(1) as f64
        })
    }

    /// The data devices' write requests per device read request; 0
    /// without updates.
    pub fn device_writes_per_read(&self) -> f64 {
        self.updates.map_or(0.0, |updates| {
            updates.device_write_requests as f64 / self.device_read_requests.max(1) as f64
        })
    }

    /// The reads in flight the model gives one session: the window's, at
    /// least 1 (a session that reads one block at a time holds fewer only
    /// while it works between reads).
    pub fn session_reads_in_flight(&self) -> f64 {
        self.device_reads_in_flight.max(1.0)
    }

    /// The window's statements' p99 over their mean, at least 1.
    pub fn statement_p99_over_mean(&self) -> Option<f64> {
        p99_over_mean(self.statement_mean_ms, self.statement_p99_ms)
    }
}

/// A window's statements' p99 over their mean, at least 1; none where
/// either was not kept or the mean is 0.
fn p99_over_mean(mean_ms: Option<f64>, p99_ms: Option<f64>) -> Option<f64> {
    let (mean, p99) = (mean_ms?, p99_ms?);
    (mean > 0.0).then(|| (p99 / mean).max(1.0))
}

/// More sessions than CPUs reading the data set from the device as the
/// sweep will: what they reached, and the time per device read they spent
/// waiting for a CPU beyond what the model's queue for the CPUs gives,
/// fitted so that the model's device read requests/s at this many
/// sessions is what they reached. A host that runs a woken task on any
/// idle CPU leaves none; a VM whose vCPUs run late leaves a wait that
/// grows with the sessions.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DatabaseContention {
    pub sessions: u32,
    pub window_s: f64,
    pub device_read_requests_per_s: f64,
    /// The model's device read requests/s at `sessions` without the wait.
    pub predicted_with_every_cpu_per_s: f64,
    pub cpus: u32,
    /// The wait per device read, µs: none where not fitted, or in
    /// Recordings made before it was (they fitted fewer CPUs instead;
    /// `strata model predict --from` fits the wait from the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_per_device_read_us: Option<f64>,
    /// Whether the CPUs held the window back (some task waited for one
    /// at least a fifth of it, or that is unknown), so that the wait was
    /// fitted; else the model has none, but in the window of as many
    /// sessions as CPUs where the contended window's is fitted. True in
    /// Recordings made before it was kept.
    #[serde(default = "yes")]
    pub fitted: bool,
    /// The data devices' reads in flight over the window (r/s × r_await).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_reads_in_flight: Option<f64>,
    /// The data devices' read requests over the blocks the sessions'
    /// statements touched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_reads_per_block: Option<f64>,
    /// The server's and the driver's CPU per device read request, µs. None
    /// in Recordings made before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_per_device_read_us: Option<f64>,
    /// Where the sessions updated: the data devices' write requests per
    /// read request. The model's device takes a read's time for each, so
    /// the window's device latency is taken over calibrate's × (1 + this).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_writes_per_read: Option<f64>,
    /// The host's CPUs' busy share over the window, percent; `None` where
    /// the host's CPU was not observed at both edges.
    #[serde(default)]
    pub host_cpu_busy_pct: Option<f64>,
    /// Share of the window some task waited for a CPU (PSI), percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_pct: Option<f64>,
    /// The window's statements: their mean and p99, ms. None in Recordings
    /// made before they were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement_mean_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement_p99_ms: Option<f64>,
    /// How steady the window ran: its loops per second in each quarter
    /// of it, the highest less the lowest over their mean, percent
    /// ([`crate::run::quarter_spread_pct`]). None under 4 seconds, and in
    /// Recordings made before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarter_spread_pct: Option<f64>,
}

impl DatabaseContention {
    /// The window's statements' p99 over their mean, at least 1.
    pub fn statement_p99_over_mean(&self) -> Option<f64> {
        p99_over_mean(self.statement_mean_ms, self.statement_p99_ms)
    }

    /// How the CPUs were measured by `windows` (fewest sessions first), as
    /// the prediction and the report say it; none without a window.
    pub fn windows_text(windows: &[&DatabaseContention]) -> Option<String> {
        let first = windows.first()?;
        let each: Vec<String> = windows.iter().map(|window| window.text()).collect();
        let waits = windows
            .iter()
            .any(|w| w.wait_per_device_read_us > Some(0.0));
        let wait = match waits {
            true => {
                "; the model's wait runs linearly in the sessions from none at one session \
                 through each window's, and past the last on the line through the last two"
            }
            false => "",
        };
        Some(format!(
            "its {} CPUs and a wait for them ({}{wait})",
            first.cpus,
            each.join("; ")
        ))
    }

    /// What the window measured and what the model took from it.
    fn text(&self) -> String {
        let waited = self.cpu_pressure_pct.map_or(String::new(), |pct| {
            format!(", some task waiting for one {pct:.0}% of the window")
        });
        let in_flight = self.device_reads_in_flight.map_or(String::new(), |reads| {
            format!(
                ", {:.2} device reads in flight per session",
                reads / f64::from(self.sessions)
            )
        });
        let per_block = self
            .device_reads_per_block
            .map_or(String::new(), |k| format!(", {k:.3} per block"));
        let cpu = self.cpu_per_device_read_us.map_or(String::new(), |us| {
            format!(", {us:.2} µs of CPU per device read")
        });
        let spread = self
            .statement_p99_over_mean()
            .map_or(String::new(), |ratio| {
                format!(", statement p99 {ratio:.2} × their mean")
            });
        let steady = quarters_text(self.quarter_spread_pct);
        let wait = match (self.fitted, self.wait_per_device_read_us) {
            (_, Some(us)) if us > 0.0 => format!(
                ": {us:.2} µs per device read waiting for a CPU beyond the model's queue for them"
            ),
            (_, Some(_)) => ": the model reaches that without a wait, so it has none".to_string(),
            (false, None) => ": not the CPUs, so the model has no wait".to_string(),
            (true, None) => {
                ": a Recording from before the wait was kept (strata model predict --from fits \
                 it)"
                .to_string()
            }
        };
        let busy = self
            .host_cpu_busy_pct
            .map_or("not observed".to_string(), |busy| {
                format!("{busy:.0}% busy")
            });
        format!(
            "{} sessions reading from the device reached {:.0} device read requests/s in {:.1} \
             s{steady}{in_flight}{per_block}{cpu}{spread} where the model without a wait gives {:.0}; CPUs \
             {busy}{waited}{wait}",
            self.sessions,
            self.device_read_requests_per_s,
            self.window_s,
            self.predicted_with_every_cpu_per_s,
        )
    }
}

fn one() -> f64 {
    1.0
}

fn yes() -> bool {
    true
}

/// calibrate's random reads of the database's block, by outstanding
/// requests.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StorageCurve {
    /// The calibrate Recording it came from.
    pub calibration: String,
    pub levels: Vec<StorageLevel>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StorageLevel {
    pub outstanding: u32,
    pub iops: f64,
    pub mean_latency_us: f64,
    pub p99_latency_us: f64,
}

/// The model's answer for one point, and the measurement's distance from it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PredictedPoint {
    pub sessions: u32,
    pub device_read_requests_per_s: f64,
    pub device_outstanding: f64,
    pub block_read_latency_us: f64,
    /// The model's time per device read at the device (its requests there
    /// over their rate, as iostat's r_await), µs; the CPU of the database
    /// and its driver per device read; device reads per block. `None` in
    /// Recordings made before they were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_read_latency_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_per_device_read_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_reads_per_block: Option<f64>,
    pub cpu_busy_pct: f64,
    pub statement_mean_ms: f64,
    pub statement_p99_ms: f64,
    /// (measured − predicted) / predicted, percent; `None` until measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_error_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement_p99_error_pct: Option<f64>,
    /// What the errors are made of, where the point measured its devices
    /// and the model kept its figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_sources: Option<ErrorSources>,
}

/// A point's errors taken apart, each factor (measured − predicted) /
/// predicted in percent. Device read requests/s are the reads in flight at
/// the devices over each read's time there (Little's law: iostat's aqu-sz
/// over r_await), for the point and the model alike, so 1 + the r/s error
/// is (1 + the in-flight error) / (1 + the latency error): a device that
/// took longer per read, or sessions that kept fewer reads there (more
/// time between reads: CPU, a wait for one, or reads the page cache
/// served). A statement's p99 is its mean times its p99 over its mean, so
/// 1 + the p99 error is (1 + the mean's) × (1 + the spread's).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorSources {
    pub device_reads_in_flight_pct: f64,
    pub device_read_latency_pct: f64,
    /// The CPU of the server and the driver per device read.
    pub cpu_per_device_read_pct: f64,
    /// Device reads per block the statements touched.
    pub device_reads_per_block_pct: f64,
    pub statement_mean_pct: f64,
    pub statement_p99_over_mean_pct: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_anchor_says_how_far_the_one_session_point_ran_from_the_reading_window() {
        let reads = DatabaseReads {
            window_s: 40.0,
            device_read_requests: 574_557,
            cpu_s: 23.17,
            cpu_per_device_read_us: 40.0,
            elapsed_per_device_read_us: 69.62,
            storage_latency_us: 48.19,
            overlap_per_device_read_us: 18.9,
            device_slowdown: 1.0,
            prefetch: true,
            blocks: 655_616.0,
            device_reads_per_block: 0.876,
            device_reads_in_flight: 0.66,
            device_read_latency_us: Some(46.0),
            statement_mean_ms: Some(15.6),
            statement_p99_ms: Some(28.1),
            updates: None,
            quarter_spread_pct: None,
        };
        let one = CurvePoint {
            sessions: 1,
            window_start_unix_s: 0.0,
            window_s: 20.0,
            device_read_requests_per_s: Some(13_373.0),
            database_blocks_read_per_s: 13_665.0,
            statement_mean_ms: 16.7,
            statement_p50_ms: 16.5,
            statement_p99_ms: 31.1,
            block_read_latency_us: Some(32.2),
            host_cpu_busy_pct: Some(42.0),
            cpu_per_block_us: 42.0,
            cpu_per_device_read_us: Some(43.0),
            device_reads_per_block: Some(0.97),
            absorbed_pct: Some(2.2),
            device_reads_in_flight: Some(0.66),
            device_read_latency_us: Some(49.68),
            storage_latency_us: Some(48.19),
            cpu_pressure_pct: None,
            storage_iops: None,
            storage_share_pct: None,
            shortfall: None,
            updates: None,
            quarter_spread_pct: None,
            verdict: Verdict::not_recorded(),
        };
        let mut summary = SweepSummary {
            points: vec![one],
            latency_target_ms: 100.0,
            best_under_target: None,
            knee: None,
            database_cpu: None,
            database_reads: Some(reads),
            database_contention: None,
            database_contention_at_cpus: None,
            storage: None,
            prediction: Vec::new(),
            not_run: Vec::new(),
        };
        assert_eq!(
            summary.anchor_text().as_deref(),
            Some(
                "the anchor: the one-session point's device took 49.7 µs per read (+8.0% against \
                 the reading window's 46.0), its CPU per device read 43.00 µs (+7.5% against \
                 40.00)"
            )
        );
        summary.points[0].device_read_latency_us = None;
        assert_eq!(summary.anchor_text(), None);
    }

    /// PostgreSQL 15's six sessions of 2026-11-28 06:52: 39,788 device
    /// read requests/s where the model with every CPU gave 48,553.
    fn six_sessions(wait_per_device_read_us: Option<f64>) -> DatabaseContention {
        DatabaseContention {
            sessions: 6,
            window_s: 20.0,
            device_read_requests_per_s: 39_788.0,
            predicted_with_every_cpu_per_s: 48_553.0,
            cpus: 2,
            wait_per_device_read_us,
            fitted: true,
            device_reads_in_flight: Some(3.72),
            device_reads_per_block: Some(0.861),
            cpu_per_device_read_us: Some(19.21),
            device_writes_per_read: None,
            host_cpu_busy_pct: Some(39.0),
            cpu_pressure_pct: Some(36.0),
            statement_mean_ms: None,
            statement_p99_ms: None,
            quarter_spread_pct: None,
        }
    }

    #[test]
    fn the_text_says_the_wait_and_where_there_is_none() {
        let fitted = six_sessions(Some(27.5)).text();
        assert!(
            fitted.contains("19.21 µs of CPU per device read"),
            "{fitted}"
        );
        assert!(
            fitted.contains("27.50 µs per device read waiting for a CPU"),
            "{fitted}"
        );
        let none = six_sessions(Some(0.0)).text();
        assert!(none.contains("reaches that without a wait"), "{none}");
        let old = six_sessions(None).text();
        assert!(old.contains("predict --from fits it"), "{old}");
        let not_cpus = DatabaseContention {
            fitted: false,
            ..six_sessions(None)
        };
        assert!(not_cpus.text().contains("not the CPUs"));
    }
}
