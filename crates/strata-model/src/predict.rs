//! The prediction of a SLOB run from the storage's curve: N sessions each
//! cycle through one device read at a time — the CPU to ask for it and use
//! it, then the device to read it, then any think time — so the run is a closed
//! queueing network of N users and three centres, solved exactly by
//! load-dependent MVA ([`crate::queue::mva_load_dependent`]):
//!
//! - the device, whose rate with j requests outstanding is what calibrate
//!   measured there (j over the mean latency, by Little's law; between
//!   measured levels interpolated, past the last one flat);
//! - the CPUs, `cpu_servers` servers of the CPU time per device read
//!   (rate min(j, servers) / CPU per read): every CPU of the host unless
//!   told fewer;
//! - a delay for what is neither (the wake-ups and round trips of one
//!   session's statement, and think time), which nobody queues for; and,
//!   past one session, the time a woken session waits for a CPU beyond
//!   what the CPUs' queue gives. On a VM that wait grows with the
//!   sessions, not with how busy the CPUs are (measured on 2 vCPUs:
//!   about 10 µs per device read for every other session, 28 µs at 4
//!   sessions to 152 µs at 16, the CPUs 46–62% busy), so it is fitted by
//!   [`fit_wait_per_device_read`] to a window of more sessions than CPUs
//!   and runs linearly in the sessions from none at one session.
//!
//! With prefetch (PostgreSQL's bitmap heap scan with
//! effective_io_concurrency ≥ 1) a session asks for the next block before
//! it works on this one, so part of its CPU time runs while the device
//! reads: that overlap (measured, never more than the device residence)
//! is spent at both centres at once. Waiting for a CPU is not hidden: the
//! session issues the next read only once it runs.
//!
//! A block is a device read when the database's and the page cache miss
//! it; measured, a statement's blocks cost it a few reads fewer (what the
//! page cache absorbed) or more (index pages that missed a small cache
//! too): the per-block work is spread over the device reads per block.
//! Statement latency is the sum of a statement's reads' cycles. Its p99
//! scales the waiting part — the device's time and the wait for a CPU,
//! not the CPU's own work — by what calibrate measured of whole batches
//! at the same depth (`--distribution sorted:BATCH` or `batches:BATCH`):
//! their p99 over their mean. A statement's reads share the device's slow
//! spells, so they are not independent; measured here, 256 reads at 1
//! outstanding had a p99 1.33–1.48 × their mean where independent reads
//! with the same spread would give 1.04–1.06; with more sessions than the
//! CPUs the host gives, a statement's waits for a CPU come in the same
//! spells (at 16 sessions on 1 CPU's worth, measured: p99 1.87 × the
//! mean, where scaling the device's part alone gave 1.28). Without batches
//! in the calibration the p99 adds 2.326 standard deviations of a sum of
//! independent reads, and says so.
//!
//! Updates ([`Updates`]): a share of the statements change a few rows
//! and commit. Their rows are read as a select's blocks are; each commit
//! is a wait for the WAL's flush, a delay taken from a measured commit;
//! and each changed row costs the device writes later (its block written
//! back, the WAL's own writes), which take the device's time as reads at
//! the same depth do. The statement latency is the selects'.
//!
//! Not for: reading a calibrate Recording or a run (strata-run's
//! `measured` gives the curve and the work per read as numbers), scans,
//! or a commit's time under load (a commit takes the time measured, at
//! every session count).

use crate::queue::{mva_load_dependent_overlapping, LoadDependentCentre};
use crate::{invalid, require_non_negative, require_positive, ModelError};
use serde::Serialize;

/// z of the standard normal's 99th percentile.
const Z_P99: f64 = 2.326_347_874;

/// What calibrate measured at one level of outstanding small reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoragePoint {
    /// Requests in flight (queue depth × jobs).
    pub outstanding: u32,
    pub iops: f64,
    pub mean_latency_s: f64,
    pub sd_latency_s: f64,
    pub p99_latency_s: f64,
    /// calibrate's own CPU time per request (user + system): the kernel's
    /// work to issue and complete one.
    pub cpu_per_io_s: f64,
    /// Whole sorted batches at this level, when calibrate read in them.
    pub batch: Option<BatchPoint>,
}

impl StoragePoint {
    /// Requests per second by Little's law: outstanding over mean latency.
    fn rate(&self) -> f64 {
        f64::from(self.outstanding) / self.mean_latency_s
    }
}

/// Sorted batches of reads, each timed whole, at one level of the curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchPoint {
    pub blocks_per_batch: u32,
    pub batches: u64,
    pub mean_s: f64,
    pub p99_s: f64,
}

impl BatchPoint {
    /// The p99 over the mean for `blocks` reads in a row: the measured
    /// ratio, its excess over 1 scaled by √(batch / blocks) when the
    /// statement reads another number of blocks than the batch did.
    pub fn p99_over_mean(&self, blocks: f64) -> f64 {
        let measured = self.p99_s / self.mean_s;
        let scale = (f64::from(self.blocks_per_batch) / blocks).sqrt();
        1.0 + (measured - 1.0) * scale
    }
}

/// The storage's curve: its points by outstanding requests, the first at 1
/// (so never empty: made only by [`StorageCurve::new`]).
#[derive(Debug, Clone, Serialize)]
pub struct StorageCurve {
    points: Vec<StoragePoint>,
}

impl StorageCurve {
    pub fn new(mut points: Vec<StoragePoint>) -> Result<StorageCurve, ModelError> {
        points.sort_by_key(|point| point.outstanding);
        points.dedup_by_key(|point| point.outstanding);
        if points.first().map(|point| point.outstanding) != Some(1) {
            return Err(invalid(
                "calibration",
                "the curve needs a point with 1 outstanding request (calibrate --sweep, or \
                 --workload small-random-read --qd 1)",
            ));
        }
        for point in &points {
            require_positive("calibration", point.mean_latency_s)?;
            require_non_negative("calibration", point.sd_latency_s)?;
        }
        Ok(StorageCurve { points })
    }

    pub fn points(&self) -> &[StoragePoint] {
        &self.points
    }

    /// The device's rate with `outstanding` requests at it: outstanding /
    /// mean latency, linear in between measured levels, flat past the last.
    pub fn rate(&self, outstanding: u32) -> f64 {
        self.rate_at(f64::from(outstanding))
    }

    /// [`StorageCurve::rate`] at a fractional `outstanding` (at least 1).
    pub fn rate_at(&self, outstanding: f64) -> f64 {
        self.between(outstanding.max(1.0), StoragePoint::rate)
    }

    /// The mean latency with `outstanding` requests at the device
    /// (fractional, at least 1), as the model's device has it:
    /// outstanding over the interpolated rate.
    pub fn latency_at(&self, outstanding: f64) -> f64 {
        let outstanding = outstanding.max(1.0);
        outstanding / self.between(outstanding, StoragePoint::rate)
    }

    /// A figure of the curve at `outstanding` (fractional), linear between
    /// the measured levels around it, the nearest end's outside them.
    fn between(&self, outstanding: f64, figure: impl Fn(&StoragePoint) -> f64) -> f64 {
        let level = |point: &StoragePoint| f64::from(point.outstanding);
        linear_between(&self.points, outstanding, level, figure)
    }

    /// The kernel's CPU per device read: the least-squares slope of the
    /// CPU seconds per second calibrate spent against the requests per
    /// second it completed, over its levels — the marginal cost of one more
    /// read, without the fixed cost a level pays whatever its rate (a
    /// polling driver, timers); one level's own figure when the curve has
    /// one level or no rising slope.
    pub fn cpu_per_io_s(&self) -> f64 {
        let pairs: Vec<(f64, f64)> = self
            .points
            .iter()
            .map(|point| (point.iops, point.cpu_per_io_s * point.iops))
            .collect();
        let count = pairs.len() as f64;
        let mean_x = pairs.iter().map(|p| p.0).sum::<f64>() / count;
        let mean_y = pairs.iter().map(|p| p.1).sum::<f64>() / count;
        let covariance: f64 = pairs.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
        let variance: f64 = pairs.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
        let lowest = || {
            self.points
                .iter()
                .map(|point| point.cpu_per_io_s)
                .fold(f64::INFINITY, f64::min)
        };
        match covariance / variance {
            slope if slope.is_finite() && slope > 0.0 => slope,
            _ => lowest(),
        }
    }

    /// The latency's standard deviation as a share of its mean at
    /// `outstanding`.
    pub fn spread_at(&self, outstanding: f64) -> f64 {
        self.between(outstanding.max(1.0), |point| {
            point.sd_latency_s / point.mean_latency_s
        })
    }

    /// Whether every level timed whole batches (with at least 100
    /// of them, so that a p99 is one).
    pub fn has_batches(&self) -> bool {
        self.points.iter().all(|point| {
            point
                .batch
                .as_ref()
                .is_some_and(|batch| batch.batches >= 100)
        })
    }

    /// The p99 over the mean of `blocks` reads in a row at `outstanding`:
    /// from the batches when every level has them, else from independent
    /// reads with the spread of one (2.326 σ √blocks over blocks × mean).
    pub fn statement_p99_over_mean(&self, outstanding: f64, blocks: f64) -> f64 {
        if self.has_batches() {
            return self.between(outstanding.max(1.0), |point| {
                point
                    .batch
                    .as_ref()
                    .map_or(f64::NAN, |batch| batch.p99_over_mean(blocks))
            });
        }
        1.0 + Z_P99 * self.spread_at(outstanding) / blocks.sqrt()
    }
}

/// What each session does per block, measured on the database itself.
#[derive(Debug, Clone, Serialize)]
pub struct BlockWork {
    /// CPU time per block (database server and driver) with the block
    /// cached, measured.
    pub cpu_per_cached_block_s: f64,
    /// The kernel's CPU per device read ([`StorageCurve::cpu_per_io_s`]).
    pub cpu_per_io_s: f64,
    /// Time per block that is neither CPU nor device: one session's
    /// elapsed time per cached block less its CPU time.
    pub delay_per_block_s: f64,
    /// Think time per block: the think time per statement over its blocks.
    pub think_per_block_s: f64,
    /// Blocks (rows, one per block) per statement.
    pub blocks_per_statement: f64,
    pub cpus: u32,
    /// The CPUs the model's CPU centre has, at most `cpus`: all of them
    /// unless told fewer (`strata model predict --cpu-servers`).
    pub cpu_servers: f64,
    /// CPU time per block that runs while the device reads (prefetch):
    /// measured by one session reading from the device, as its CPU and
    /// the device's latency at 1 outstanding less its time per read.
    pub overlap_per_block_s: f64,
    /// Device read requests per block: measured by one session reading
    /// from the device (below 1 by what the page cache absorbed, above 1
    /// where index pages miss too); 1 when not measured.
    pub device_reads_per_block: f64,
    /// Device reads one session keeps in flight while it reads, at least 1:
    /// more where the server reads ahead of its scan (PostgreSQL 18's read
    /// streams, up to effective_io_concurrency), measured by one session
    /// reading from the device (r/s × r_await); 1 when not measured. The
    /// model's device serves sessions × this many requests.
    pub session_reads_in_flight: f64,
    /// How many times calibrate's time per read the device takes for one
    /// session: what the overlap cannot take of one session's time per
    /// read against calibrate's (a read stream's reads on a device faster
    /// than calibrate's, its CPU all hidden already); 1 when not measured.
    /// Linear from it to the contended window's
    /// [`ContendedReads::device_slowdown`].
    pub one_session_device_slowdown: f64,
    /// The reads in flight per session and the device reads per block
    /// measured with more sessions (a window of more sessions than CPUs):
    /// a read stream looks further ahead the longer its reads take, and
    /// a small cache holds less of each session's index pages the more
    /// sessions share it. None where not measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contended_reads: Option<ContendedReads>,
    /// The same figures measured with as many sessions as CPUs, where a
    /// sweep measured them below the contended window: between one
    /// session and the contended window each figure runs linearly through
    /// these at their count (a VM's device and its statements' spread
    /// step up as soon as a second session runs, measured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_cpus_reads: Option<ContendedReads>,
    /// The database's own statements' p99 over their mean, measured by one
    /// session reading from the device: where given, a statement's p99 is
    /// its predicted mean × this (linear from it to the contended window's
    /// where that window kept one, as [`BlockWork::at`] gives), instead of
    /// calibrate's spread on its waits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statement_p99_over_mean: Option<f64>,
    /// The statements that update, where some do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updates: Option<Updates>,
}

/// A statement as the model takes it: its blocks (rows, one per block)
/// and its think time spread over them; and the statements that update
/// instead, where some do.
#[derive(Debug, Clone, Copy)]
pub struct Statement {
    pub blocks: f64,
    pub think_per_block_s: f64,
    pub updates: Option<Updates>,
}

/// The statements that update instead of selecting (SLOB's UPDATE_PCT):
/// each changes `rows` rows (one per block, found through the index as a
/// select's are) and commits.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Updates {
    /// Share of statements that update, 0 to 1.
    pub share: f64,
    /// Rows each update changes (`--update-work-unit`).
    pub rows: f64,
    /// One commit's time, seconds: the session's wait for the WAL's flush,
    /// measured (a run's COMMITs, or calibrate's log writes).
    pub commit_s: f64,
    /// Device write requests per changed row: its block written back and
    /// the WAL's writes, measured by a run that updated; 1 when not.
    pub device_writes_per_row: f64,
}

/// What `sessions` sessions measured of their device reads: in flight
/// per session, per block where measured, their statements' p99 over
/// their mean where kept, and how much slower the device served them.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ContendedReads {
    pub sessions: u32,
    pub per_session: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_reads_per_block: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statement_p99_over_mean: Option<f64>,
    /// The device's latency for these sessions' reads over calibrate's at
    /// their depth: with other sessions' CPU work running while a read is
    /// in flight, a VM's device answers later than calibrate's idle CPUs
    /// saw. The model's device serves this count of sessions this many
    /// times slower, linear from one session's
    /// ([`BlockWork::one_session_device_slowdown`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_slowdown: Option<f64>,
    /// The CPU (server and driver) these sessions spent per device read,
    /// seconds: less than one session's where a busy VM's CPUs no longer
    /// pay for halting and waking at every read. The model's CPU per read
    /// runs linearly from one session's to this at the window's count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_per_device_read_s: Option<f64>,
    /// Time per device read these sessions spent neither at a CPU nor at
    /// the device beyond what the model's queue for the CPUs gives (woken
    /// sessions waiting for a vCPU), fitted so that the model reaches the
    /// window's rate ([`fit_wait_per_device_read`]). The model's wait runs
    /// linearly in the sessions, from none at one session through this at
    /// the window's count and on past it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_per_device_read_s: Option<f64>,
}

impl BlockWork {
    /// Work known by its CPU alone: `cpu_per_cached_block_s` per block and
    /// `cpu_per_io_s` per device read on every one of `cpus`; one device
    /// read per block and one in flight per session, nothing neither CPU
    /// nor device, no overlap, calibrate's spread for the p99.
    pub fn of_cpu(
        cpu_per_cached_block_s: f64,
        cpu_per_io_s: f64,
        statement: Statement,
        cpus: u32,
    ) -> BlockWork {
        BlockWork {
            cpu_per_cached_block_s,
            cpu_per_io_s,
            delay_per_block_s: 0.0,
            think_per_block_s: statement.think_per_block_s,
            blocks_per_statement: statement.blocks,
            cpus,
            cpu_servers: f64::from(cpus),
            overlap_per_block_s: 0.0,
            device_reads_per_block: 1.0,
            session_reads_in_flight: 1.0,
            one_session_device_slowdown: 1.0,
            contended_reads: None,
            at_cpus_reads: None,
            statement_p99_over_mean: None,
            updates: statement.updates,
        }
    }

    /// The model's cycle is one device read: the CPU of one, a cached
    /// block's share and the read path's.
    pub fn cpu_per_device_read_s(&self) -> f64 {
        self.cpu_per_cached_block_s / self.device_reads_per_block + self.cpu_per_io_s
    }

    /// A per-block time (delay, think time, overlap) per device read.
    fn per_device_read(&self, per_block_s: f64) -> f64 {
        per_block_s / self.device_reads_per_block
    }

    /// Device reads in flight per session with `sessions` sessions: one
    /// session's, linear from it through each window's at its count, the
    /// contended window's past it.
    pub fn reads_in_flight_at(&self, sessions: u32) -> f64 {
        self.along_windows(sessions, self.session_reads_in_flight, |contended| {
            Some(contended.per_session)
        })
    }

    /// Device reads per block with `sessions` sessions, the same way.
    pub fn device_reads_per_block_at(&self, sessions: u32) -> f64 {
        self.along_windows(sessions, self.device_reads_per_block, |contended| {
            contended.device_reads_per_block
        })
    }

    /// How many times slower than calibrate's curve the device serves
    /// `sessions` sessions: one session's (the reading window's), linear
    /// through each window's slowdown at its count and flat past the
    /// contended window; one session's where no window measured one.
    pub fn device_slowdown_at(&self, sessions: u32) -> f64 {
        self.along_windows(sessions, self.one_session_device_slowdown, |contended| {
            contended.device_slowdown
        })
    }

    /// One session's figure `one`, linear from it through each window's
    /// at its count ([`BlockWork::windows`]), the last window's past it;
    /// `one` where no window has the figure.
    fn along_windows(
        &self,
        sessions: u32,
        one: f64,
        figure: impl Fn(&ContendedReads) -> Option<f64>,
    ) -> f64 {
        let knots = self.knots(one, figure);
        linear_between(&knots, f64::from(sessions), |knot| knot.0, |knot| knot.1)
    }

    /// The wait per device read with `sessions` sessions: none for one,
    /// linear through each window's fitted wait at its count
    /// ([`ContendedReads::wait_per_device_read_s`]), and past the last
    /// window along the line through the last two (none at one session
    /// where there is one window): a wait per other session, as measured.
    pub fn wait_at(&self, sessions: u32) -> f64 {
        let wait = |window: &ContendedReads| window.wait_per_device_read_s;
        let knots = self.knots(0.0, wait);
        let past = f64::from(sessions);
        match knots.len() {
            count if count > 1 && past > knots[count - 1].0 => {
                line_through(knots[count - 2], knots[count - 1], past).max(0.0)
            }
            _ => self.along_windows(sessions, 0.0, wait),
        }
    }

    /// One session's `one` at 1 and each window's figure at its count,
    /// where it has one.
    fn knots(&self, one: f64, figure: impl Fn(&ContendedReads) -> Option<f64>) -> Vec<(f64, f64)> {
        let windows = self.windows().filter_map(|window| {
            let value = figure(window)?;
            Some((f64::from(window.sessions), value))
        });
        std::iter::once((1.0, one)).chain(windows).collect()
    }

    /// This work with `wait_s` the wait per device read of its window of
    /// `sessions` sessions.
    pub fn with_wait(&self, sessions: u32, wait_s: f64) -> BlockWork {
        let waited = |window: ContendedReads| match window.sessions == sessions {
            true => ContendedReads {
                wait_per_device_read_s: Some(wait_s),
                ..window
            },
            false => window,
        };
        BlockWork {
            contended_reads: self.contended_reads.map(waited),
            at_cpus_reads: self.at_cpus_reads.map(waited),
            ..self.clone()
        }
    }

    /// The windows of more than one session the work was measured with,
    /// fewest sessions first: as many sessions as CPUs, then the contended
    /// window.
    pub fn windows(&self) -> impl Iterator<Item = &ContendedReads> {
        let contended = self.contended_reads.as_ref().filter(|w| w.sessions > 1);
        let below = contended.map_or(u32::MAX, |window| window.sessions);
        let at_cpus = (self.at_cpus_reads.as_ref())
            .filter(|window| window.sessions > 1 && window.sessions < below);
        at_cpus.into_iter().chain(contended)
    }

    /// The read path's CPU per device read with `sessions` sessions: one
    /// session's, linear through each window's (its CPU per device read
    /// less its share of a cached block's), the contended window's past it.
    pub fn read_path_cpu_at(&self, sessions: u32) -> f64 {
        self.along_windows(sessions, self.cpu_per_io_s, |contended| {
            let reads_per_block = contended
                .device_reads_per_block
                .unwrap_or(self.device_reads_per_block);
            Some(read_path_cpu_s(
                contended.cpu_per_device_read_s?,
                self.cpu_per_cached_block_s,
                reads_per_block,
            ))
        })
    }

    /// The work at `sessions`: its device reads per block, its CPU per
    /// device read and its statements' p99 over their mean there, the
    /// overlap per device read as measured.
    pub fn at(&self, sessions: u32) -> BlockWork {
        let reads_per_block = self.device_reads_per_block_at(sessions);
        BlockWork {
            device_reads_per_block: reads_per_block,
            cpu_per_io_s: self.read_path_cpu_at(sessions),
            overlap_per_block_s: self.overlap_per_block_s * reads_per_block
                / self.device_reads_per_block,
            statement_p99_over_mean: self.statement_p99_over_mean.map(|one| {
                self.along_windows(sessions, one, |window| window.statement_p99_over_mean)
            }),
            ..self.clone()
        }
    }

    /// How the statements' p99 over their mean runs past one session, as
    /// the prediction says it: linear through the windows' that kept one.
    pub fn spread_text(&self) -> String {
        let knots: Vec<String> = (self.windows())
            .filter_map(|window| {
                let ratio = window.statement_p99_over_mean?;
                Some(format!("{} sessions' {ratio:.2}", window.sessions))
            })
            .collect();
        match self.statement_p99_over_mean.is_some() && !knots.is_empty() {
            true => format!(", linear to {} and flat past", knots.join(", then to ")),
            false => String::new(),
        }
    }

    /// Device read requests per statement (a select's).
    pub fn reads_per_statement(&self) -> f64 {
        self.blocks_per_statement * self.device_reads_per_block
    }

    /// Device read requests per statement of the mix: a select's, or an
    /// update's rows with [`Updates::share`] of them.
    pub fn reads_per_mixed_statement(&self) -> f64 {
        let blocks = match self.updates {
            Some(updates) => {
                (1.0 - updates.share) * self.blocks_per_statement + updates.share * updates.rows
            }
            None => self.blocks_per_statement,
        };
        blocks * self.device_reads_per_block
    }

    /// The time per device read that is neither CPU nor device, W aside:
    /// the delay per block and, per statement of the mix, the think time
    /// and the commits' waits.
    pub fn delay_per_device_read(&self) -> f64 {
        let commit_s = self.updates.map_or(0.0, |u| u.share * u.commit_s);
        let think_s = self.think_per_block_s * self.blocks_per_statement;
        self.per_device_read(self.delay_per_block_s)
            + (think_s + commit_s) / self.reads_per_mixed_statement()
    }

    /// Device write requests per device read request: the updates' changed
    /// rows' ([`Updates::device_writes_per_row`]); 0 without updates.
    pub fn device_writes_per_read(&self) -> f64 {
        self.updates.map_or(0.0, |u| {
            u.share * u.rows * u.device_writes_per_row / self.reads_per_mixed_statement()
        })
    }
}

/// The read path's CPU per device read: a window's CPU per device read
/// less its share of a cached block's (`reads_per_block` device reads per
/// block), at least 0; seconds.
pub fn read_path_cpu_s(
    per_device_read_s: f64,
    per_cached_block_s: f64,
    reads_per_block: f64,
) -> f64 {
    (per_device_read_s - per_cached_block_s / reads_per_block).max(0.0)
}

/// The model's answer for one session count.
#[derive(Debug, Clone, Serialize)]
pub struct Predicted {
    pub sessions: u32,
    pub device_read_requests_per_s: f64,
    /// Requests at the device, waiting or served.
    pub device_outstanding: f64,
    /// Time a block read spends at the device.
    pub block_read_latency_s: f64,
    /// Each device read's time at the device, waiting or served: the
    /// requests there over their rate (Little's law, iostat's r_await).
    pub device_read_latency_s: f64,
    /// The CPU per device read of the database and its driver at this
    /// count ([`BlockWork::cpu_per_device_read_s`] of [`BlockWork::at`]).
    pub cpu_per_device_read_s: f64,
    /// Device reads per block at this count
    /// ([`BlockWork::device_reads_per_block_at`]).
    pub device_reads_per_block: f64,
    /// Time a block spends at the CPUs, waiting for one included.
    pub cpu_residence_s: f64,
    /// Of the two, the time spent at both at once (prefetch): the
    /// measured overlap, at most the device residence.
    pub overlap_s: f64,
    /// Time per device read waiting for a CPU beyond the CPUs' queue
    /// ([`BlockWork::wait_at`]).
    pub wait_s: f64,
    pub cpu_utilization: f64,
    pub statement_latency_mean_s: f64,
    pub statement_latency_p99_s: f64,
    /// The p99 over the mean of a statement's time at the device
    /// ([`StorageCurve::statement_p99_over_mean`]).
    pub device_p99_over_mean: f64,
    /// Whether that ratio is calibrate's whole batches (else independent
    /// reads).
    pub p99_from_batches: bool,
    /// What the updates do at this count, where some statements update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updates: Option<PredictedUpdates>,
}

/// The updates' share of a predicted point: the device writes their
/// changed rows cost, their commits, and an update's mean latency (its
/// rows read as a select's blocks are, and its commit).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PredictedUpdates {
    pub device_write_requests_per_s: f64,
    pub commits_per_s: f64,
    pub update_latency_mean_s: f64,
}

/// A window's figures, each where it has it, as the model takes them.
fn check_window(window: &ContendedReads) -> Result<(), ModelError> {
    if let Some(reads_per_block) = window.device_reads_per_block {
        require_positive("device-reads-per-block", reads_per_block)?;
    }
    if window.per_session.is_nan() || window.per_session < 1.0 {
        return Err(invalid(
            "session-reads-in-flight",
            "a session keeps at least 1 device read in flight",
        ));
    }
    if let Some(slowdown) = window.device_slowdown {
        require_positive("device-slowdown", slowdown)?;
    }
    if let Some(cpu_s) = window.cpu_per_device_read_s {
        require_positive("cpu-per-device-read", cpu_s)?;
    }
    if let Some(wait_s) = window.wait_per_device_read_s {
        require_non_negative("wait-per-device-read", wait_s)?;
    }
    match window.statement_p99_over_mean {
        Some(ratio) if ratio.is_nan() || ratio < 1.0 => Err(invalid(
            "statement-p99-over-mean",
            "a p99 is at least the mean: give 1 or more",
        )),
        _ => Ok(()),
    }
}

/// The line through `from` and `to` (x, y) at `x`, on past them.
fn line_through(from: (f64, f64), to: (f64, f64), x: f64) -> f64 {
    from.1 + (x - from.0) / (to.0 - from.0) * (to.1 - from.1)
}

/// The `figure` of `items` (in rising `at`) at `x`: linear between the two
/// around it, the nearest end's outside them; NaN without items.
fn linear_between<T>(
    items: &[T],
    x: f64,
    at: impl Fn(&T) -> f64,
    figure: impl Fn(&T) -> f64,
) -> f64 {
    let after = items.partition_point(|item| at(item) < x);
    match (
        after.checked_sub(1).and_then(|i| items.get(i)),
        items.get(after),
    ) {
        (Some(low), Some(high)) => {
            let low_point = (at(low), figure(low));
            line_through(low_point, (at(high), figure(high)), x)
        }
        (None, Some(end)) | (Some(end), None) => figure(end),
        (None, None) => f64::NAN,
    }
}

/// The prediction at each of `sessions`.
pub fn predict(
    curve: &StorageCurve,
    work: &BlockWork,
    sessions: &[u32],
) -> Result<Vec<Predicted>, ModelError> {
    require_positive("device-reads-per-block", work.device_reads_per_block)?;
    require_positive("cpu-per-block", work.cpu_per_device_read_s())?;
    require_positive("work-unit", work.blocks_per_statement)?;
    let one_session = ContendedReads {
        sessions: 1,
        per_session: work.session_reads_in_flight,
        device_reads_per_block: None,
        statement_p99_over_mean: work.statement_p99_over_mean,
        device_slowdown: Some(work.one_session_device_slowdown),
        cpu_per_device_read_s: None,
        wait_per_device_read_s: None,
    };
    for window in std::iter::once(&one_session).chain(work.windows()) {
        check_window(window)?;
    }
    if sessions.contains(&0) {
        return Err(invalid("sessions", "give at least 1 session"));
    }
    if work.cpus == 0 {
        return Err(invalid("cpus", "there must be at least 1 CPU"));
    }
    if !(1.0..=f64::from(work.cpus)).contains(&work.cpu_servers) {
        return Err(invalid(
            "cpu-servers",
            format!("give 1 to the {} CPUs the host has", work.cpus),
        ));
    }
    require_non_negative("overlap-per-block", work.overlap_per_block_s)?;
    if let Some(updates) = work.updates {
        if !(0.0..=1.0).contains(&updates.share) {
            return Err(invalid("update-pct", "give 0 to 100"));
        }
        require_positive("update-work-unit", updates.rows)?;
        require_non_negative("commit-time", updates.commit_s)?;
        require_non_negative(
            "device-writes-per-updated-row",
            updates.device_writes_per_row,
        )?;
    }
    sessions
        .iter()
        .map(|&n| predict_at(curve, work, n))
        .collect()
}

/// The model at `sessions`: an MVA of that many sessions whose device
/// holds [`BlockWork::reads_in_flight_at`] that count per session, each
/// block [`BlockWork::device_reads_per_block_at`] it.
fn predict_at(
    curve: &StorageCurve,
    work: &BlockWork,
    sessions: u32,
) -> Result<Predicted, ModelError> {
    let work = &work.at(sessions);
    let in_flight = work.reads_in_flight_at(sessions);
    let slowdown = work.device_slowdown_at(sessions);
    let writes_per_read = work.device_writes_per_read();
    let device_visit = 1.0 + writes_per_read;
    let centres = [
        LoadDependentCentre {
            name: "device".into(),
            rates: (1..=sessions)
                .map(|j| curve.rate_at(f64::from(j) * in_flight) / (slowdown * device_visit))
                .collect(),
        },
        LoadDependentCentre {
            name: "cpu".into(),
            rates: (1..=sessions)
                .map(|j| f64::from(j).min(work.cpu_servers) / work.cpu_per_device_read_s())
                .collect(),
        },
    ];
    let wait_s = work.wait_at(sessions);
    let delay_s = work.delay_per_device_read() + wait_s;
    let select_delay_s =
        work.per_device_read(work.delay_per_block_s + work.think_per_block_s) + wait_s;
    let overlap = |residence_s: &[f64]| {
        work.per_device_read(work.overlap_per_block_s)
            .min(work.cpu_per_device_read_s())
            .min(residence_s[0])
    };
    let steps = mva_load_dependent_overlapping(&centres, delay_s, sessions, overlap)?;
    let step = &steps[sessions as usize - 1];
    let (device_s, cpu_s) = (step.residence_s[0], step.residence_s[1]);
    let overlap_s = overlap(&step.residence_s);
    let reads = work.reads_per_statement();
    let outstanding = step.queue_length[0] * in_flight;
    let device_ratio = curve.statement_p99_over_mean(outstanding, reads);
    let mean = reads * (device_s + cpu_s + select_delay_s - overlap_s);
    let waited_s = device_s + (cpu_s - work.cpu_per_device_read_s()).max(0.0) + wait_s;
    Ok(Predicted {
        sessions,
        device_read_requests_per_s: step.throughput,
        device_outstanding: outstanding,
        block_read_latency_s: device_s,
        device_read_latency_s: outstanding / step.throughput,
        cpu_per_device_read_s: work.cpu_per_device_read_s(),
        device_reads_per_block: work.device_reads_per_block,
        cpu_residence_s: cpu_s,
        overlap_s,
        wait_s,
        cpu_utilization: step.throughput * work.cpu_per_device_read_s() / f64::from(work.cpus),
        statement_latency_mean_s: mean,
        statement_latency_p99_s: match work.statement_p99_over_mean {
            Some(ratio) => mean * ratio,
            None => mean + reads * waited_s * (device_ratio - 1.0),
        },
        device_p99_over_mean: device_ratio,
        p99_from_batches: curve.has_batches(),
        updates: work.updates.map(|updates| PredictedUpdates {
            device_write_requests_per_s: step.throughput * writes_per_read,
            commits_per_s: step.throughput * updates.share / work.reads_per_mixed_statement(),
            update_latency_mean_s: updates.rows
                * work.device_reads_per_block
                * (device_s + cpu_s + select_delay_s - overlap_s)
                + updates.commit_s,
        }),
    })
}

/// The wait per device read at `sessions` (a window's count: the wait of
/// the window of that count is set) at which the model's device read
/// requests/s there equal `measured_per_s`, by bisection (the rate falls
/// as the wait grows); none when the model without a wait gives no more
/// than measured.
pub fn fit_wait_per_device_read(
    curve: &StorageCurve,
    work: &BlockWork,
    sessions: u32,
    measured_per_s: f64,
) -> Result<f64, ModelError> {
    require_positive("measured read requests/s", measured_per_s)?;
    let rate = |wait_s: f64| -> Result<f64, ModelError> {
        let with = work.with_wait(sessions, wait_s);
        Ok(predict(curve, &with, &[sessions])?[0].device_read_requests_per_s)
    };
    let (mut low, mut high) = (0.0, f64::from(sessions) / measured_per_s);
    if rate(low)? <= measured_per_s {
        return Ok(low);
    }
    for _ in 0..60 {
        let middle = (low + high) / 2.0;
        match rate(middle)? > measured_per_s {
            true => low = middle,
            false => high = middle,
        }
    }
    Ok((low + high) / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(outstanding: u32, mean_us: f64) -> StoragePoint {
        StoragePoint {
            outstanding,
            iops: f64::from(outstanding) / (mean_us * 1e-6),
            mean_latency_s: mean_us * 1e-6,
            sd_latency_s: mean_us * 0.5e-6,
            p99_latency_s: mean_us * 3e-6,
            cpu_per_io_s: 0.0,
            batch: None,
        }
    }

    /// A contended window of `sessions` that measured one read in flight
    /// per session and nothing else.
    fn contended(sessions: u32) -> ContendedReads {
        ContendedReads {
            sessions,
            per_session: 1.0,
            device_reads_per_block: None,
            statement_p99_over_mean: None,
            device_slowdown: None,
            cpu_per_device_read_s: None,
            wait_per_device_read_s: None,
        }
    }

    /// A block's work with nothing but what a test names: 4 blocks per
    /// statement, 2 CPUs, one read per block and in flight.
    fn plain_work() -> BlockWork {
        let statement = Statement {
            blocks: 4.0,
            think_per_block_s: 0.0,
            updates: None,
        };
        BlockWork::of_cpu(0.0, 0.0, statement, 2)
    }

    #[test]
    fn the_latency_at_a_fractional_depth_is_the_depth_over_the_interpolated_rate() {
        let curve = StorageCurve::new(vec![point(1, 50.0), point(2, 80.0)]).unwrap();
        // 1.5 outstanding: the rate halfway between 20,000 and 25,000/s.
        let expected = 1.5 / 22_500.0;
        assert!((curve.latency_at(1.5) - expected).abs() < 1e-12);
        assert!((curve.latency_at(0.4) - 50e-6).abs() < 1e-12);
        assert!((curve.latency_at(4.0) - 4.0 / 25_000.0).abs() < 1e-12);
    }

    #[test]
    fn the_rate_is_interpolated_and_flat_past_the_last_level() {
        let curve = StorageCurve::new(vec![point(4, 200.0), point(1, 100.0)]).unwrap();
        assert!((curve.rate(1) - 10_000.0).abs() < 1e-6);
        assert!((curve.rate(4) - 20_000.0).abs() < 1e-6);
        assert!((curve.rate(2) - (10_000.0 + 10_000.0 / 3.0)).abs() < 1e-6);
        assert!((curve.rate(64) - 20_000.0).abs() < 1e-6);
        assert!(StorageCurve::new(vec![point(2, 100.0)]).is_err());
    }

    #[test]
    fn the_kernel_s_cpu_per_read_is_the_marginal_cost() {
        // 0.4 CPU-s/s fixed + 10 µs per read: 10k/s → 50 µs each, 40k/s → 20 µs.
        let mut low = point(1, 100.0);
        (low.iops, low.cpu_per_io_s) = (10_000.0, 50e-6);
        let mut high = point(4, 100.0);
        (high.iops, high.cpu_per_io_s) = (40_000.0, 20e-6);
        let curve = StorageCurve::new(vec![low.clone(), high]).unwrap();
        assert!((curve.cpu_per_io_s() - 10e-6).abs() < 1e-12);
        let one = StorageCurve::new(vec![low]).unwrap();
        assert!((one.cpu_per_io_s() - 50e-6).abs() < 1e-12);
    }

    #[test]
    fn one_session_is_the_sum_of_its_parts() {
        let curve = StorageCurve::new(vec![point(1, 100.0)]).unwrap();
        let work = BlockWork {
            cpu_per_cached_block_s: 15e-6,
            cpu_per_io_s: 5e-6,
            delay_per_block_s: 10e-6,
            ..plain_work()
        };
        let predicted = &predict(&curve, &work, &[1]).unwrap()[0];
        assert!((predicted.device_read_requests_per_s - 1.0 / 130e-6).abs() < 1e-6);
        assert!((predicted.statement_latency_mean_s - 4.0 * 130e-6).abs() < 1e-12);
        let sd = 50e-6 * 2.0;
        assert!((predicted.statement_latency_p99_s - (520e-6 + Z_P99 * sd)).abs() < 1e-12);
    }

    #[test]
    fn a_block_of_two_device_reads_is_two_cycles_sharing_its_work() {
        let curve = StorageCurve::new(vec![point(1, 100.0)]).unwrap();
        let work = BlockWork {
            cpu_per_cached_block_s: 20e-6,
            cpu_per_io_s: 5e-6,
            delay_per_block_s: 10e-6,
            device_reads_per_block: 2.0,
            ..plain_work()
        };
        let predicted = &predict(&curve, &work, &[1]).unwrap()[0];
        // Per read: 100 µs at the device, 20 / 2 + 5 µs of CPU, 10 / 2 µs delay.
        assert!((predicted.device_read_requests_per_s - 1.0 / 120e-6).abs() < 1e-6);
        assert!((predicted.statement_latency_mean_s - 8.0 * 120e-6).abs() < 1e-12);
        assert!((predicted.cpu_utilization - 15e-6 / 120e-6 / 2.0).abs() < 1e-12);
    }

    #[test]
    fn the_measured_overlap_is_spent_once() {
        let curve = StorageCurve::new(vec![point(1, 100.0)]).unwrap();
        let work = BlockWork {
            cpu_per_cached_block_s: 30e-6,
            cpu_per_io_s: 10e-6,
            delay_per_block_s: 5e-6,
            overlap_per_block_s: 25e-6,
            ..plain_work()
        };
        let predicted = &predict(&curve, &work, &[1]).unwrap()[0];
        // 5 + 100 + 40 − 25 µs.
        assert!((predicted.device_read_requests_per_s - 1.0 / 120e-6).abs() < 1e-6);
        assert!((predicted.overlap_s - 25e-6).abs() < 1e-12);
        assert!((predicted.statement_latency_mean_s - 4.0 * 120e-6).abs() < 1e-12);
        // Never more than the CPU per block, nor than the device's time.
        let all = BlockWork {
            overlap_per_block_s: 1.0,
            ..work
        };
        let predicted = &predict(&curve, &all, &[1]).unwrap()[0];
        assert!((predicted.overlap_s - 40e-6).abs() < 1e-12);
    }

    #[test]
    fn a_session_that_reads_ahead_keeps_its_reads_at_the_device() {
        // 2 outstanding: 25,000/s; 8: 50,000/s.
        let curve =
            StorageCurve::new(vec![point(1, 50.0), point(2, 80.0), point(8, 160.0)]).unwrap();
        let work = BlockWork {
            cpu_per_cached_block_s: 10e-6,
            cpus: 4,
            cpu_servers: 4.0,
            overlap_per_block_s: 10e-6,
            session_reads_in_flight: 2.0,
            ..plain_work()
        };
        // One session, its CPU hidden under its 2 reads: the device's rate at 2.
        let one = &predict(&curve, &work, &[1, 4]).unwrap();
        assert!((one[0].device_read_requests_per_s - 25_000.0).abs() < 1e-6);
        assert!((one[0].device_outstanding - 2.0).abs() < 1e-9);
        // Four sessions hold up to 8 at the device, at most its 50,000/s.
        assert!(one[1].device_read_requests_per_s <= 50_000.0 + 1e-6);
        assert!(one[1].device_outstanding > 2.0 * one[0].device_outstanding);
        // Measured with 3 sessions at 4 each: 3 with 2, linear to it, then 4.
        let deeper = BlockWork {
            contended_reads: Some(ContendedReads {
                per_session: 4.0,
                ..contended(3)
            }),
            ..work.clone()
        };
        let at: Vec<f64> = [1, 2, 3, 8]
            .iter()
            .map(|&n| deeper.reads_in_flight_at(n))
            .collect();
        assert_eq!(at, [2.0, 3.0, 4.0, 4.0]);
        let two = &predict(&curve, &deeper, &[2]).unwrap()[0];
        let alone = &predict(&curve, &work, &[2]).unwrap()[0];
        assert!(two.device_outstanding > alone.device_outstanding);
        let none = BlockWork {
            session_reads_in_flight: 0.5,
            ..work
        };
        assert!(predict(&curve, &none, &[1]).is_err());
    }

    #[test]
    fn more_sessions_read_the_contended_window_s_device_reads_per_block() {
        let curve = StorageCurve::new(vec![point(1, 50.0), point(8, 160.0)]).unwrap();
        let work = BlockWork {
            cpu_per_cached_block_s: 10e-6,
            cpu_per_io_s: 20e-6,
            overlap_per_block_s: 5.5e-6,
            device_reads_per_block: 1.1,
            ..plain_work()
        };
        let crowded = BlockWork {
            contended_reads: Some(ContendedReads {
                device_reads_per_block: Some(1.5),
                ..contended(5)
            }),
            ..work.clone()
        };
        // 1.1 at one session, linear to 1.5 at 5 sessions, 1.5 past them.
        for (sessions, expected) in [(1, 1.1), (3, 1.3), (5, 1.5), (16, 1.5)] {
            let at = crowded.device_reads_per_block_at(sessions);
            assert!((at - expected).abs() < 1e-12, "{sessions}: {at}");
        }
        // At 5 sessions: 1.5 reads per block, the overlap per read kept (5 µs).
        let five = crowded.at(5);
        assert!((five.overlap_per_block_s - 7.5e-6).abs() < 1e-15);
        let alone = &predict(&curve, &work, &[1]).unwrap()[0];
        let one = &predict(&curve, &crowded, &[1]).unwrap()[0];
        assert_eq!(
            one.device_read_requests_per_s,
            alone.device_read_requests_per_s
        );
        // A statement of 4 blocks is 6 device reads; 5 sessions cycling
        // through them without think time: mean = 6 × 5 / X (Little).
        let at_five = &predict(&curve, &crowded, &[5]).unwrap()[0];
        let by_little = 6.0 * 5.0 / at_five.device_read_requests_per_s;
        assert!((at_five.statement_latency_mean_s - by_little).abs() < 1e-9 * by_little);
        let as_measured = &predict(&curve, &work, &[5]).unwrap()[0];
        assert!(at_five.device_read_requests_per_s > as_measured.device_read_requests_per_s);
        let nothing = BlockWork {
            contended_reads: Some(ContendedReads {
                device_reads_per_block: Some(0.0),
                ..crowded.contended_reads.unwrap()
            }),
            ..work
        };
        assert!(predict(&curve, &nothing, &[1]).is_err());
    }

    #[test]
    fn the_device_serves_one_session_as_slowly_as_its_reading_window() {
        let curves = (
            StorageCurve::new(vec![point(1, 50.0), point(8, 160.0)]),
            StorageCurve::new(vec![point(1, 100.0), point(8, 320.0)]),
        );
        let (Ok(curve), Ok(halved)) = curves else {
            panic!("two curves of two levels");
        };
        let work = BlockWork {
            cpu_per_cached_block_s: 30e-6,
            cpus: 2,
            cpu_servers: 2.0,
            ..plain_work()
        };
        let slower = BlockWork {
            one_session_device_slowdown: 2.0,
            ..work.clone()
        };
        // Without a contended window, one session's at every count.
        for sessions in [1, 2, 16] {
            assert_eq!(slower.device_slowdown_at(sessions), 2.0);
        }
        // With one, linear from one session's to the window's.
        let toward = BlockWork {
            contended_reads: Some(ContendedReads {
                device_slowdown: Some(1.0),
                ..contended(6)
            }),
            ..slower.clone()
        };
        for (sessions, expected) in [(1, 2.0), (2, 1.8), (6, 1.0), (16, 1.0)] {
            let slowdown = toward.device_slowdown_at(sessions);
            assert!(
                (slowdown - expected).abs() < 1e-12,
                "{sessions}: {slowdown}"
            );
        }
        // Twice calibrate's latency is the halved curve's answer.
        let rate = |curve: &StorageCurve, work: &BlockWork, sessions: u32| {
            let Ok(predicted) = predict(curve, work, &[sessions]) else {
                panic!("the model at {sessions} sessions");
            };
            predicted[0].device_read_requests_per_s
        };
        for sessions in [1, 4] {
            let (with, by_hand) = (
                rate(&curve, &slower, sessions),
                rate(&halved, &work, sessions),
            );
            assert!(
                (with - by_hand).abs() < 1e-9 * by_hand,
                "{sessions}: {with} {by_hand}"
            );
        }
        let none = BlockWork {
            one_session_device_slowdown: 0.0,
            ..work
        };
        assert!(predict(&curve, &none, &[1]).is_err());
    }

    #[test]
    fn the_device_serves_more_sessions_as_slowly_as_the_contended_window() {
        let curve = StorageCurve::new(vec![point(1, 50.0), point(8, 160.0)]).unwrap();
        // The same curve at half the rate: every latency twice calibrate's.
        let halved = StorageCurve::new(vec![point(1, 100.0), point(8, 320.0)]).unwrap();
        let work = BlockWork {
            cpu_per_cached_block_s: 30e-6,
            cpus: 2,
            cpu_servers: 2.0,
            ..plain_work()
        };
        let slowed = BlockWork {
            contended_reads: Some(ContendedReads {
                device_slowdown: Some(2.0),
                ..contended(6)
            }),
            ..work.clone()
        };
        // 1 at one session, linear to 2 at 6 sessions, 2 past them.
        for (sessions, expected) in [(1, 1.0), (2, 1.2), (6, 2.0), (16, 2.0)] {
            assert_eq!(slowed.device_slowdown_at(sessions), expected);
        }
        assert_eq!(work.device_slowdown_at(16), 1.0);
        let rate = |curve: &StorageCurve, work: &BlockWork, sessions: u32| {
            predict(curve, work, &[sessions]).unwrap()[0].device_read_requests_per_s
        };
        // One session is the anchor; from 6 on, the halved curve's answer.
        assert_eq!(rate(&curve, &slowed, 1), rate(&curve, &work, 1));
        let two = rate(&curve, &slowed, 2);
        assert!(two < rate(&curve, &work, 2) && two > rate(&halved, &work, 2));
        for sessions in [6, 16] {
            let (with, by_hand) = (
                rate(&curve, &slowed, sessions),
                rate(&halved, &work, sessions),
            );
            assert!(
                (with - by_hand).abs() < 1e-9 * by_hand,
                "{sessions}: {with} {by_hand}"
            );
            assert!(with < rate(&curve, &work, sessions));
        }
        let none = BlockWork {
            contended_reads: Some(ContendedReads {
                device_slowdown: Some(0.0),
                ..slowed.contended_reads.unwrap()
            }),
            ..work
        };
        assert!(predict(&curve, &none, &[2]).is_err());
    }

    #[test]
    fn more_sessions_spend_the_contended_window_s_cpu_per_device_read() {
        let curve = StorageCurve::new(vec![point(1, 50.0), point(8, 100.0)]).unwrap();
        // One session: 2 µs cached per block + 40 µs the read path's.
        let work = BlockWork {
            cpu_per_cached_block_s: 2e-6,
            cpu_per_io_s: 40e-6,
            cpus: 1,
            cpu_servers: 1.0,
            ..plain_work()
        };
        // 5 sessions spent 22 µs per device read at 2 device reads per
        // block: 1 µs of it the cached share, 21 µs the read path's.
        let cheaper = BlockWork {
            contended_reads: Some(ContendedReads {
                device_reads_per_block: Some(2.0),
                cpu_per_device_read_s: Some(22e-6),
                ..contended(5)
            }),
            ..work.clone()
        };
        for (sessions, expected_us) in [(1, 40.0), (3, 30.5), (5, 21.0), (16, 21.0)] {
            let read_path_us = cheaper.read_path_cpu_at(sessions) * 1e6;
            assert!(
                (read_path_us - expected_us).abs() < 1e-9,
                "{sessions}: {read_path_us}"
            );
        }
        assert_eq!(work.read_path_cpu_at(16), 40e-6);
        // On one CPU the CPU bounds the rate from 5 sessions on: 1 / 22 µs.
        let rate = |work: &BlockWork, sessions: u32| {
            predict(&curve, work, &[sessions]).unwrap()[0].device_read_requests_per_s
        };
        assert_eq!(rate(&cheaper, 1), rate(&work, 1));
        let sixteen = rate(&cheaper, 16);
        assert!(
            sixteen <= 1.0 / 22e-6 && sixteen > 0.95 / 22e-6,
            "{sixteen}"
        );
        assert!(rate(&work, 16) <= 1.0 / 42e-6 && rate(&work, 16) < sixteen);
        let none = BlockWork {
            contended_reads: Some(ContendedReads {
                cpu_per_device_read_s: Some(0.0),
                ..cheaper.contended_reads.unwrap()
            }),
            ..work
        };
        assert!(predict(&curve, &none, &[2]).is_err());
    }

    #[test]
    fn the_wait_is_fitted_to_a_contended_window_and_runs_linearly_in_the_sessions() {
        // A device that answers in 100 µs at any depth and 1 ns of CPU per
        // read: a cycle is 100 µs, 1 ns and the wait, and nothing queues.
        let curve = StorageCurve::new(vec![point(1, 100.0), point(64, 100.0)]).unwrap();
        let work = BlockWork {
            cpu_per_cached_block_s: 1e-9,
            contended_reads: Some(contended(8)),
            ..plain_work()
        };
        // 8 sessions reached 8 / 150 µs: 50 µs less 1 ns of wait per read.
        let measured = 8.0 / 150e-6;
        let wait_s = fit_wait_per_device_read(&curve, &work, 8, measured).unwrap();
        assert!((wait_s - (50e-6 - 1e-9)).abs() < 1e-12, "{wait_s}");
        let fitted = BlockWork {
            contended_reads: Some(ContendedReads {
                wait_per_device_read_s: Some(wait_s),
                ..contended(8)
            }),
            ..work.clone()
        };
        // 15 sessions: 14 others, twice the window's 7, so twice the wait.
        let at_15 = &predict(&curve, &fitted, &[15]).unwrap()[0];
        assert!((at_15.wait_s - 2.0 * wait_s).abs() < 1e-15);
        let expected = 15.0 / (100e-6 + 1e-9 + 2.0 * wait_s);
        assert!((at_15.device_read_requests_per_s - expected).abs() < expected * 1e-6);
        assert_eq!(predict(&curve, &fitted, &[1]).unwrap()[0].wait_s, 0.0);
        let negative = BlockWork {
            contended_reads: Some(ContendedReads {
                wait_per_device_read_s: Some(-1e-6),
                ..contended(8)
            }),
            ..work.clone()
        };
        assert!(predict(&curve, &negative, &[8]).is_err());
        // A window that reached more than the model without a wait gives.
        assert_eq!(
            fit_wait_per_device_read(&curve, &work, 8, 1e9).unwrap(),
            0.0
        );
    }

    #[test]
    fn a_window_at_the_cpus_count_bends_every_figure_and_is_fitted_its_own_wait() {
        let curve = StorageCurve::new(vec![point(1, 100.0), point(64, 100.0)]).unwrap();
        let window = |sessions: u32, slowdown: f64, spread: f64| ContendedReads {
            device_slowdown: Some(slowdown),
            statement_p99_over_mean: Some(spread),
            per_session: slowdown,
            device_reads_per_block: Some(slowdown),
            ..contended(sessions)
        };
        let work = BlockWork {
            cpu_per_cached_block_s: 1e-9,
            statement_p99_over_mean: Some(1.5),
            contended_reads: Some(window(6, 1.3, 1.7)),
            at_cpus_reads: Some(window(2, 1.4, 2.1)),
            ..plain_work()
        };
        // (sessions, slowdown, spread): one session's, each window's at
        // its count, the line between them, the contended window's past.
        let by_hand = [
            (1, 1.0, 1.5),
            (2, 1.4, 2.1),
            (4, 1.35, 1.9),
            (6, 1.3, 1.7),
            (16, 1.3, 1.7),
        ];
        for (sessions, slowdown, spread) in by_hand {
            let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
            assert!(
                close(work.device_slowdown_at(sessions), slowdown),
                "{sessions}"
            );
            let at = work.at(sessions);
            assert!(
                close(at.statement_p99_over_mean.unwrap(), spread),
                "{sessions}"
            );
            assert!(
                close(work.reads_in_flight_at(sessions), slowdown),
                "{sessions}"
            );
            assert!(close(at.device_reads_per_block, slowdown), "{sessions}");
        }
        // A window at or past the contended window's count is not one.
        let past = BlockWork {
            at_cpus_reads: Some(window(6, 9.0, 9.0)),
            ..work.clone()
        };
        assert_eq!(past.windows().count(), 1);
        assert!((past.device_slowdown_at(4) - (1.0 + 0.6 * 0.3)).abs() < 1e-12);
        // Each window's wait is fitted at its count alone; between them
        // the wait is their line, past the last the line from none at one
        // session through it.
        let rate = |work: &BlockWork, sessions: u32| {
            predict(&curve, work, &[sessions]).unwrap()[0].device_read_requests_per_s
        };
        let two = fit_wait_per_device_read(&curve, &work, 2, rate(&work, 2) * 0.9).unwrap();
        let waited = work.with_wait(2, two);
        let six = fit_wait_per_device_read(&curve, &waited, 6, rate(&waited, 6) * 0.8).unwrap();
        let waited = waited.with_wait(6, six);
        assert!(two > 0.0 && six > two);
        assert!((rate(&waited, 2) - rate(&work, 2) * 0.9).abs() < 1e-6 * rate(&work, 2));
        assert_eq!(waited.wait_at(1), 0.0);
        assert!((waited.wait_at(4) - (two + six) / 2.0).abs() < 1e-15);
        assert!((waited.wait_at(11) - (six + (six - two) * 5.0 / 4.0)).abs() < 1e-15);
        let bad = BlockWork {
            at_cpus_reads: Some(window(2, 0.0, 2.1)),
            ..work
        };
        assert!(predict(&curve, &bad, &[4]).is_err());
    }

    #[test]
    fn the_database_s_own_spread_gives_the_statement_p99() {
        let curve = StorageCurve::new(vec![point(1, 100.0), point(4, 200.0)]).unwrap();
        let work = BlockWork {
            cpu_per_cached_block_s: 20e-6,
            statement_p99_over_mean: Some(1.8),
            ..plain_work()
        };
        for predicted in predict(&curve, &work, &[1, 4]).unwrap() {
            let by_hand = predicted.statement_latency_mean_s * 1.8;
            assert!((predicted.statement_latency_p99_s - by_hand).abs() < 1e-15);
        }
        let below = BlockWork {
            statement_p99_over_mean: Some(0.9),
            ..work.clone()
        };
        assert!(predict(&curve, &below, &[1]).is_err());
        // 3.0 alone, 2.0 measured with 5 sessions: linear to them, flat past.
        let crowded = BlockWork {
            statement_p99_over_mean: Some(3.0),
            contended_reads: Some(ContendedReads {
                statement_p99_over_mean: Some(2.0),
                ..contended(5)
            }),
            ..work.clone()
        };
        let predicted = predict(&curve, &crowded, &[1, 3, 5, 16]).unwrap();
        for (point, ratio) in predicted.iter().zip([3.0, 2.5, 2.0, 2.0]) {
            let by_hand = point.statement_latency_mean_s * ratio;
            assert!(
                (point.statement_latency_p99_s - by_hand).abs() < 1e-12,
                "{}: {}",
                point.sessions,
                point.statement_latency_p99_s / point.statement_latency_mean_s
            );
        }
        assert_eq!(
            crowded.spread_text(),
            ", linear to 5 sessions' 2.00 and flat past"
        );
        // Without one session's ratio, calibrate's spread: the window's is
        // not used alone.
        let unmeasured = BlockWork {
            statement_p99_over_mean: None,
            ..crowded.clone()
        };
        assert_eq!(unmeasured.at(5).statement_p99_over_mean, None);
        let contended_below = BlockWork {
            contended_reads: Some(ContendedReads {
                statement_p99_over_mean: Some(0.5),
                ..crowded.contended_reads.unwrap()
            }),
            ..crowded
        };
        assert!(predict(&curve, &contended_below, &[1]).is_err());
    }

    #[test]
    fn whole_batches_give_the_statement_p99() {
        let batch = |mean_ms: f64, p99_ms: f64| BatchPoint {
            blocks_per_batch: 4,
            batches: 1_000,
            mean_s: mean_ms * 1e-3,
            p99_s: p99_ms * 1e-3,
        };
        let mut one = point(1, 100.0);
        one.batch = Some(batch(0.4, 0.6));
        let mut four = point(4, 200.0);
        four.batch = Some(batch(0.8, 1.6));
        let curve = StorageCurve::new(vec![one.clone(), four]).unwrap();
        assert!(curve.has_batches());
        assert!((curve.statement_p99_over_mean(1.0, 4.0) - 1.5).abs() < 1e-12);
        assert!((curve.statement_p99_over_mean(4.0, 4.0) - 2.0).abs() < 1e-12);
        assert!((curve.statement_p99_over_mean(2.5, 4.0) - 1.75).abs() < 1e-12);
        // A statement of 16 blocks: the excess over 1 shrinks by √(4 / 16).
        assert!((curve.statement_p99_over_mean(1.0, 16.0) - 1.25).abs() < 1e-12);
        let work = BlockWork {
            cpu_per_cached_block_s: 20e-6,
            ..plain_work()
        };
        let predicted = &predict(&curve, &work, &[1]).unwrap()[0];
        assert!(predicted.p99_from_batches);
        // 4 × 120 µs, and the device's 4 × 100 µs half again.
        let p99 = 4.0 * 120e-6 + 4.0 * 100e-6 * 0.5;
        assert!((predicted.statement_latency_p99_s - p99).abs() < 1e-12);
        // A level with too few batches for a p99: independent reads.
        one.batch = Some(BatchPoint {
            batches: 99,
            ..batch(0.4, 0.6)
        });
        // With more sessions than the model's CPUs, the wait for one
        // is scaled too; the CPU's own work is not.
        let crowded = BlockWork {
            cpu_per_cached_block_s: 200e-6,
            cpu_servers: 1.0,
            ..work.clone()
        };
        let at_four = &predict(&curve, &crowded, &[4]).unwrap()[0];
        assert!(at_four.cpu_residence_s > 2.0 * 200e-6);
        let waited = at_four.block_read_latency_s + at_four.cpu_residence_s - 200e-6;
        let ratio = at_four.device_p99_over_mean;
        let p99 = at_four.statement_latency_mean_s + 4.0 * waited * (ratio - 1.0);
        assert!((at_four.statement_latency_p99_s - p99).abs() < 1e-12);
        let thin = StorageCurve::new(vec![one]).unwrap();
        assert!(!thin.has_batches());
        assert!(!predict(&thin, &work, &[1]).unwrap()[0].p99_from_batches);
    }

    #[test]
    fn updates_add_their_commits_to_each_cycle_and_their_writes_to_the_device() {
        // A device of 100 µs at every depth, 20 µs of CPU per read, one
        // session: X = 1 / (device + CPU + commit share), worked by hand.
        let curve = StorageCurve::new(vec![point(1, 100.0), point(64, 6_400.0)]).unwrap();
        let updates = Updates {
            share: 0.5,
            rows: 2.0,
            commit_s: 300e-6,
            device_writes_per_row: 1.0,
        };
        let statement = Statement {
            blocks: 4.0,
            think_per_block_s: 0.0,
            updates: Some(updates),
        };
        let work = BlockWork::of_cpu(20e-6, 0.0, statement, 2);
        let predicted = &predict(&curve, &work, &[1]).unwrap()[0];
        // A statement of the mix reads 0.5 × 4 + 0.5 × 2 = 3 blocks, and
        // commits 0.5 times: 50 µs per read. Its changed row writes 1 per
        // 3 reads, so each read takes the device 4/3 × 100 µs.
        let device_s = 100e-6 * 4.0 / 3.0;
        let rate = 1.0 / (device_s + 20e-6 + 50e-6);
        assert!((predicted.device_read_requests_per_s - rate).abs() < 1e-6);
        assert!((predicted.block_read_latency_s - device_s).abs() < 1e-12);
        let Some(done) = predicted.updates else {
            panic!("a mix with updates predicts them");
        };
        assert!((done.device_write_requests_per_s - rate / 3.0).abs() < 1e-6);
        assert!((done.commits_per_s - rate * 0.5 / 3.0).abs() < 1e-6);
        let update_s = 2.0 * (device_s + 20e-6) + 300e-6;
        assert!((done.update_latency_mean_s - update_s).abs() < 1e-12);
        // A select's statement holds no commit: its 4 reads' cycles.
        let select_s = 4.0 * (device_s + 20e-6);
        assert!((predicted.statement_latency_mean_s - select_s).abs() < 1e-12);
        // No update at all is the model without updates.
        let none = BlockWork {
            updates: Some(Updates {
                share: 0.0,
                ..updates
            }),
            ..work.clone()
        };
        let without = BlockWork {
            updates: None,
            ..work.clone()
        };
        let (a, b) = (
            &predict(&curve, &none, &[1, 4]).unwrap(),
            &predict(&curve, &without, &[1, 4]).unwrap(),
        );
        for (a, b) in a.iter().zip(b) {
            let relative = (a.device_read_requests_per_s - b.device_read_requests_per_s).abs()
                / b.device_read_requests_per_s;
            assert!(relative < 1e-12);
        }
        let wrong = BlockWork {
            updates: Some(Updates {
                share: 1.5,
                ..updates
            }),
            ..work
        };
        let error = predict(&curve, &wrong, &[1]).unwrap_err();
        assert!(error.to_string().contains("update-pct"), "{error}");
    }
}
