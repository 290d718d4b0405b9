//! The sweep's curve from its windows' figures: each point (the database's
//! rate, latency and device reads per block, its CPU per block and its
//! contention), the database's own work measured in the cached and
//! reading windows, and the summary (knee, latency target, the storage's
//! curve beside it).
//!
//! Not for: running the windows (`windows`), the prediction (`prediction`)
//! or the words (`text`).

use super::*;

/// The sweep's points as their windows end: what the Recording keeps of
/// each and the curve the conclusions are drawn from, kept, said and
/// judged the same way whichever engine ran the windows.
pub(crate) struct PointsSoFar<'a> {
    request: &'a SweepRequest,
    points: Vec<SweepPoint>,
    curve: Vec<CurvePoint>,
}

impl<'a> PointsSoFar<'a> {
    /// None yet of `request`'s points.
    pub fn of(request: &'a SweepRequest) -> PointsSoFar<'a> {
        PointsSoFar {
            request,
            points: Vec::new(),
            curve: Vec::new(),
        }
    }

    /// The options of the point of `sessions`, said as its phase; none once
    /// Ctrl-C came.
    pub fn next_point(
        &self,
        driver: &DriverOptions,
        sessions: u32,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> Option<DriverOptions> {
        if interrupt.load(Ordering::Relaxed) {
            return None;
        }
        let (done, total) = (self.points.len() + 1, self.request.sessions.len());
        observer.phase(&format!("sweep point {done}/{total}: {sessions} sessions"));
        Some(SweepRequest::point_options(driver, sessions))
    }

    /// Keeps one point's window (its session count and start, its figures
    /// and the database's blocks, its latencies) and says it; false when it
    /// failed, so that the sweep stops there (said).
    pub fn keep(
        &mut self,
        started: (u32, f64),
        (figures, blocks): (&RunFigures, &WindowBlocks),
        histograms: RunHistograms,
        observer: &mut dyn RunObserver,
    ) -> bool {
        let sessions = started.0;
        let storage = self.request.storage.as_ref();
        let point = curve_point(started, (figures, blocks), storage);
        observer.said(&point_line(&point));
        self.points.push(SweepPoint {
            sessions,
            figures: figures.clone(),
            histograms,
        });
        self.curve.push(point);
        let failed = matches!(figures.verdict, Verdict::Failed { .. });
        if failed {
            observer.phase(&format!(
                "the sweep stops: its {sessions}-session point failed: {}",
                figures.verdict.details().join("; ")
            ));
        }
        !failed
    }

    /// The points kept and the sweep's conclusions from them.
    pub fn finish(
        self,
        database_work: Option<DatabaseWork>,
        prediction: Vec<PredictedPoint>,
    ) -> (Vec<SweepPoint>, SweepSummary) {
        let (request, storage) = (self.request, self.request.storage.as_ref());
        let summary = summarize(self.curve, request, database_work, storage, prediction);
        (self.points, summary)
    }
}

/// What the database measured of itself before the sweep: CPU per block
/// cached, per device read, and more sessions than it has CPUs reading
/// from the device (`contention`), and as many as it has CPUs
/// (`at_cpus`).
#[derive(Clone, Debug)]
pub struct DatabaseWork {
    pub cpu: DatabaseCpu,
    pub reads: DatabaseReads,
    pub contention: Option<DatabaseContention>,
    pub at_cpus: Option<DatabaseContention>,
}

/// Why a window before the sweep lacks a figure the prediction needs: when
/// it failed (the server died or restarted, a memory cgroup's OOM kill),
/// its causes, since a restart leaves the device reads out and they would
/// read as none; else `otherwise`, what it measured. A failed window whose
/// figures are all there (a start edge taken late on a busy host) still
/// predicts: its figures are ratios over the same edges.
pub(super) fn lacking(verdict: &Verdict, otherwise: String) -> String {
    match verdict {
        Verdict::Failed { causes } => format!("the window failed: {}", causes.join("; ")),
        _ => otherwise,
    }
}

/// The CPU per device read of the reading window (the server's and the
/// driver's CPU seconds over the device's read requests), and how much of
/// it ran while the device read, against calibrate's latency at 1
/// outstanding.
pub(super) fn database_reads(
    figures: &RunFigures,
    storage: &Storage,
    (prefetch, workload): (bool, &WorkloadOptions),
) -> anyhow::Result<DatabaseReads> {
    let device_read_requests = figures
        .absorption
        .as_ref()
        .map_or(0, |absorption| absorption.device_read_requests);
    let cpu_s = figures.cpu.server_and_driver_cpu_s();
    let Some(cpu_per_device_read_us) = cpu_per_device_read_us(figures) else {
        let measured = format!(
            "the one-session window read {device_read_requests} requests from the device with \
             {cpu_s:.3} s of CPU (the data set must be larger than the caches, the server's \
             processes on this machine)"
        );
        bail!(
            "measuring the database's CPU per device read: {}",
            lacking(&figures.verdict, measured)
        );
    };
    let reads = device_read_requests as f64;
    let devices = device_reads(&figures.devices);
    let device_reads_in_flight = devices.map_or(1.0, |d| d.in_flight);
    let (statement_mean_ms, statement_p99_ms) = statement_ms(figures);
    let mut measured = DatabaseReads {
        window_s: figures.window_s,
        device_read_requests,
        cpu_s,
        cpu_per_device_read_us,
        elapsed_per_device_read_us: figures.window_s / reads * 1e6,
        storage_latency_us: storage.time_per_read_us(device_reads_in_flight),
        overlap_per_device_read_us: 0.0,
        device_slowdown: 1.0,
        prefetch,
        blocks: figures.workload.rows_selected as f64,
        device_reads_per_block: device_reads_per_block(figures).unwrap_or(1.0),
        device_reads_in_flight,
        device_read_latency_us: devices.map(|d| d.latency_us),
        statement_mean_ms,
        statement_p99_ms,
        updates: reading_updates(figures, workload),
        quarter_spread_pct: figures.quarter_spread_pct(),
    };
    (
        measured.overlap_per_device_read_us,
        measured.device_slowdown,
    ) = storage.one_session_anchor(&measured);
    Ok(measured)
}

/// The reading window's updates, where its workload updates and it
/// committed.
fn reading_updates(figures: &RunFigures, workload: &WorkloadOptions) -> Option<ReadingUpdates> {
    let commit = figures.workload.commits()?;
    if workload.update_pct <= 0.0 {
        return None;
    }
    Some(ReadingUpdates {
        share: workload.update_pct / 100.0,
        rows_per_update: f64::from(workload.update_work_unit),
        commits: commit.latency.count,
        commit_mean_us: commit.latency.lat_mean_us,
        rows_updated: figures.workload.rows_updated,
        device_write_requests: data_write_requests(&figures.devices),
    })
}

/// The write requests of the data devices (every one not only the
/// WAL's): changed blocks written back, and the WAL's where it shares
/// their device.
pub fn data_write_requests(devices: &[IostatFigures]) -> u64 {
    let data = devices.iter().filter(|device| device.role != "wal");
    data.map(|device| device.write_requests).sum()
}

/// A window's statements' mean and p99 latency, ms; none where it ran
/// none.
pub(super) fn statement_ms(figures: &RunFigures) -> (Option<f64>, Option<f64>) {
    let select = figures.workload.operations.get("select");
    (
        select.map(|s| s.latency.lat_mean_us / 1e3),
        select.map(|s| s.latency.lat_p99_us / 1e3),
    )
}

/// A window's device read requests over the table blocks its statements
/// touched (rows selected or updated, one per block); none where it read
/// or touched nothing.
pub(super) fn device_reads_per_block(figures: &RunFigures) -> Option<f64> {
    let reads = figures.absorption.as_ref()?.device_read_requests as f64;
    let blocks = (figures.workload.rows_selected + figures.workload.rows_updated) as f64;
    (reads > 0.0 && blocks > 0.0).then(|| reads / blocks)
}

/// A window's data devices' write requests per read request, where its
/// sessions updated; none where they did not or nothing was read.
pub(super) fn device_writes_per_read(figures: &RunFigures) -> Option<f64> {
    if figures.workload.rows_updated == 0 {
        return None;
    }
    let data = figures.devices.iter().filter(|device| device.role != "wal");
    let reads: u64 = data.map(|device| device.read_requests).sum();
    let writes = data_write_requests(&figures.devices);
    (reads > 0).then(|| writes as f64 / reads as f64)
}

/// A window's server and driver CPU over its device read requests, µs;
/// none where it read nothing or the server's CPU was not measured.
pub(super) fn cpu_per_device_read_us(figures: &RunFigures) -> Option<f64> {
    let reads = figures.absorption.as_ref()?.device_read_requests as f64;
    (reads > 0.0 && figures.cpu.server_cpu_s > 0.0)
        .then(|| figures.cpu.server_and_driver_cpu_s() / reads * 1e6)
}

/// What the database counted of its own block reads in one window: each
/// engine's counters in one shape (PostgreSQL's blks_read and
/// blk_read_time, InnoDB's buffer pool reads and performance_schema's
/// waits on its data files).
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowBlocks {
    /// Blocks (pages) the database's cache missed and it read.
    pub blocks_read: f64,
    pub blocks_read_per_s: f64,
    /// The database's own time per block read, where it keeps one.
    pub block_read_latency_us: Option<f64>,
    pub buffer_hit_pct: f64,
}

impl WindowBlocks {
    /// PostgreSQL's: pg_stat_database's blks_read, blk_read_time, hits.
    pub fn of_postgresql(figures: &RunFigures) -> WindowBlocks {
        figures
            .database
            .as_ref()
            .map_or(WindowBlocks::default(), |database| WindowBlocks {
                blocks_read: database.blocks_read,
                blocks_read_per_s: database.blocks_read_per_s,
                block_read_latency_us: Some(database.block_read_time_us_per_block),
                buffer_hit_pct: database.buffer_hit_pct,
            })
    }
}

/// The CPU per block of the cached window: the server's and the driver's
/// CPU seconds over the table blocks the statements touched.
pub fn database_cpu(figures: &RunFigures, database: &WindowBlocks) -> anyhow::Result<DatabaseCpu> {
    let blocks = figures.workload.rows_selected as f64;
    let cpu_s = figures.cpu.server_and_driver_cpu_s();
    if blocks <= 0.0 || figures.cpu.server_cpu_s <= 0.0 {
        let measured = format!(
            "the one-session window touched {blocks} blocks with {cpu_s:.3} s of CPU (the \
             server's processes must be on this machine)"
        );
        bail!(
            "measuring the database's CPU per block: {}",
            lacking(&figures.verdict, measured)
        );
    }
    Ok(DatabaseCpu {
        window_s: figures.window_s,
        blocks,
        buffer_hit_pct: database.buffer_hit_pct,
        cpu_s,
        cpu_per_block_us: cpu_s / blocks * 1e6,
        elapsed_per_block_us: figures.window_s / blocks * 1e6,
    })
}

/// The database-level figures of one point's window.
fn curve_point(
    (sessions, window_start_unix_s): (u32, f64),
    (figures, blocks): (&RunFigures, &WindowBlocks),
    storage: Option<&Storage>,
) -> CurvePoint {
    let select = figures.workload.operations.get("select");
    let ms = |us: f64| us / 1e3;
    let blocks_read = blocks.blocks_read;
    let device_reads = device_reads(&figures.devices);
    let device_read_requests_per_s = device_reads.map(|reads| reads.per_s).or_else(|| {
        let absorption = figures.absorption.as_ref()?;
        Some(absorption.device_read_requests as f64 / figures.window_s)
    });
    let cpu_s = figures.cpu.server_and_driver_cpu_s();
    let mut point = CurvePoint {
        sessions,
        window_start_unix_s,
        window_s: figures.window_s,
        device_read_requests_per_s,
        database_blocks_read_per_s: blocks.blocks_read_per_s,
        statement_mean_ms: select.map_or(0.0, |s| ms(s.latency.lat_mean_us)),
        statement_p50_ms: select.map_or(0.0, |s| ms(s.latency.lat_p50_us)),
        statement_p99_ms: select.map_or(0.0, |s| ms(s.latency.lat_p99_us)),
        block_read_latency_us: blocks.block_read_latency_us,
        host_cpu_busy_pct: figures.cpu.host_idle_pct.map(|idle| 100.0 - idle),
        cpu_per_block_us: if blocks_read > 0.0 {
            cpu_s / blocks_read * 1e6
        } else {
            0.0
        },
        cpu_per_device_read_us: cpu_per_device_read_us(figures),
        device_reads_per_block: device_reads_per_block(figures),
        absorbed_pct: figures.absorption.as_ref().map(|a| a.absorbed_pct),
        device_reads_in_flight: device_reads.map(|reads| reads.in_flight),
        device_read_latency_us: device_reads.map(|reads| reads.latency_us),
        storage_latency_us: None,
        cpu_pressure_pct: figures.cpu.host_cpu_pressure_pct,
        storage_iops: None,
        storage_share_pct: None,
        shortfall: None,
        updates: point_updates(sessions, figures),
        quarter_spread_pct: figures.quarter_spread_pct(),
        verdict: figures.verdict.clone(),
    };
    if let (Some(storage), Some(measured)) = (storage, device_read_requests_per_s) {
        let capacity = storage.iops_at(sessions);
        point.storage_iops = Some(capacity);
        point.storage_share_pct = Some(measured * 100.0 / capacity);
        point.storage_latency_us = point
            .device_reads_in_flight
            .map(|in_flight| storage.curve.latency_at(in_flight) * 1e6);
        point.shortfall = Some(shortfall(&point));
    }
    point
}

/// The data devices' (every one not only the WAL's) reads over the
/// window's edges: read requests per second (over the span between the
/// edges, which the counters cover), in flight by Little's law from
/// iostat's r/s and r_await, and their mean latency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct DeviceReads {
    pub(super) per_s: f64,
    pub(super) in_flight: f64,
    pub(super) latency_us: f64,
}

/// A window's [`DeviceReads`]; `None` when its data devices read nothing.
pub(super) fn device_reads(devices: &[IostatFigures]) -> Option<DeviceReads> {
    let data = || devices.iter().filter(|device| device.role != "wal");
    let per_s: f64 = data().map(|device| device.r_per_s).sum();
    let in_flight: f64 = data()
        .map(|device| device.r_per_s * device.r_await_ms / 1e3)
        .sum();
    (per_s > 0.0).then(|| DeviceReads {
        per_s,
        in_flight,
        latency_us: in_flight / per_s * 1e6,
    })
}

/// What a window's updates did: their rows and COMMITs per second, the
/// COMMITs' mean and the share of `sessions`' time in them, and the data
/// devices' write requests per second; none where it updated nothing.
fn point_updates(sessions: u32, figures: &RunFigures) -> Option<PointUpdates> {
    let window_s = figures.window_s;
    let commit = figures.workload.commits()?;
    if figures.workload.rows_updated == 0 || window_s <= 0.0 {
        return None;
    }
    let commits = commit.latency.count as f64;
    let data = figures.devices.iter().filter(|device| device.role != "wal");
    let committing_s = commits * commit.latency.lat_mean_us * 1e-6;
    Some(PointUpdates {
        rows_updated_per_s: figures.workload.rows_updated as f64 / window_s,
        commits_per_s: commits / window_s,
        commit_mean_ms: commit.latency.lat_mean_us / 1e3,
        commit_time_pct: committing_s * 100.0 / (f64::from(sessions.max(1)) * window_s),
        device_write_requests_per_s: data.map(|device| device.w_per_s).sum(),
    })
}

/// The sweep's conclusions from its points.
fn summarize(
    points: Vec<CurvePoint>,
    request: &SweepRequest,
    database_work: Option<DatabaseWork>,
    storage: Option<&Storage>,
    mut prediction: Vec<PredictedPoint>,
) -> SweepSummary {
    let target_ms = request.latency_target.as_secs_f64() * 1e3;
    let device = |point: &CurvePoint| point.device_read_requests_per_s.unwrap_or(0.0);
    let most = |candidates: Vec<&CurvePoint>, figure: &dyn Fn(&CurvePoint) -> f64| {
        candidates
            .into_iter()
            .max_by(|a, b| figure(a).total_cmp(&figure(b)))
            .map(|point| point.sessions)
    };
    let measured: Vec<&CurvePoint> = points.iter().filter(|p| device(p) > 0.0).collect();
    let under: Vec<&CurvePoint> = measured
        .iter()
        .copied()
        .filter(|p| p.statement_p99_ms <= target_ms)
        .collect();
    let power = |p: &CurvePoint| device(p) / p.statement_mean_ms.max(f64::MIN_POSITIVE);
    let best_under_target = most(under, &device);
    let knee = most(measured, &power);
    for predicted in &mut prediction {
        if let Some(point) = points.iter().find(|p| p.sessions == predicted.sessions) {
            score(predicted, point);
        }
    }
    let not_run = request
        .sessions
        .iter()
        .copied()
        .filter(|n| points.iter().all(|p| p.sessions != *n))
        .collect();
    SweepSummary {
        points,
        latency_target_ms: target_ms,
        best_under_target,
        knee,
        database_cpu: database_work.as_ref().map(|work| work.cpu.clone()),
        database_contention: database_work
            .as_ref()
            .and_then(|work| work.contention.clone()),
        database_contention_at_cpus: database_work.as_ref().and_then(|work| work.at_cpus.clone()),
        database_reads: database_work.map(|work| work.reads),
        storage: storage.map(|storage| storage.record.clone()),
        prediction,
        not_run,
    }
}
