//! The sweep's prediction: the storage's curve from a calibrate
//! Recording, the database's measured work per block, the points the
//! model predicts from them, and each prediction scored against the
//! point measured.
//!
//! Not for: the queueing arithmetic (strata-model's `predict`) or saying
//! it (`text`).

use super::*;

/// The storage's curve of a calibrate Recording, for the model and for
/// the Recording of the sweep.
#[derive(Clone, Debug)]
pub struct Storage {
    pub curve: predict::StorageCurve,
    pub record: StorageCurve,
}

impl Storage {
    /// The curve of `path`'s reads of `block_bytes`, the database's block.
    pub fn read(path: &Path, block_bytes: u64) -> anyhow::Result<Storage> {
        let curve = crate::measured::calibration::read(path, block_bytes)?;
        let levels = curve
            .points()
            .iter()
            .map(|point| StorageLevel {
                outstanding: point.outstanding,
                iops: point.iops,
                mean_latency_us: point.mean_latency_s * 1e6,
                p99_latency_us: point.p99_latency_s * 1e6,
            })
            .collect();
        Ok(Storage {
            curve,
            record: StorageCurve {
                calibration: path.display().to_string(),
                levels,
            },
        })
    }

    /// calibrate's read requests/s at `outstanding`, interpolated.
    pub fn iops_at(&self, outstanding: u32) -> f64 {
        self.curve.rate(outstanding)
    }

    /// calibrate's time per read with `in_flight` reads at the device (at
    /// least 1: the mean latency at 1 outstanding), in µs.
    pub fn time_per_read_us(&self, in_flight: f64) -> f64 {
        self.curve.rate_at(in_flight).recip() * 1e6
    }

    /// What makes the model's cycle for one session the reading window's
    /// own time per read, in this curve's terms: the overlap, the CPU per
    /// read that ran while the device read (its CPU per read + the
    /// storage's time per read at its reads in flight − its own time per
    /// read, at least 0 and at most the CPU per read), in µs; and how many
    /// times the storage's time per read the model's device takes, for
    /// what the overlap cannot take of that offset from calibrate: its
    /// time per read over calibrate's where even all its CPU hidden behind
    /// the device leaves it faster (a read stream's many reads in flight
    /// on a device faster than at calibrate's), its time less its CPU over
    /// calibrate's where even none hidden leaves it slower; else 1. With
    /// updates, the window's time in COMMIT is not a read's, and the
    /// storage's time per read holds the device's writes per read, as the
    /// model's device does.
    pub fn one_session_anchor(&self, reads: &DatabaseReads) -> (f64, f64) {
        let cpu_per_read_us = reads.cpu_per_device_read_us;
        let calibrate_us = self.time_per_read_us(reads.device_reads_in_flight)
            * (1.0 + reads.device_writes_per_read());
        let elapsed_per_read_us =
            reads.elapsed_per_device_read_us - reads.commit_per_device_read_us();
        let unhidden = cpu_per_read_us + calibrate_us - elapsed_per_read_us;
        let overlap_us = unhidden.clamp(0.0, cpu_per_read_us.max(0.0));
        let slowdown = 1.0 - (unhidden - overlap_us) / calibrate_us;
        match slowdown.is_finite() && slowdown > 0.0 {
            true => (overlap_us, slowdown),
            false => (overlap_us, 1.0),
        }
    }
}

/// The model's updates as a reading window measured them.
pub fn model_updates(measured: ReadingUpdates) -> Updates {
    Updates {
        share: measured.share,
        rows: measured.rows_per_update,
        commit_s: measured.commit_mean_us * 1e-6,
        device_writes_per_row: measured.device_writes_per_row(),
    }
}

/// The workload's statement as the model takes it: `--work-unit` blocks,
/// and the mean of `--think-time` over the statements it follows.
pub fn statement(workload: &WorkloadOptions) -> Statement {
    let blocks = f64::from(workload.work_unit);
    let think_per_loop_s = workload.think_time.map_or(0.0, |(min, max)| {
        (min + max).as_secs_f64() / 2.0 / f64::from(workload.think_every.max(1))
    });
    Statement {
        blocks,
        think_per_block_s: think_per_loop_s / blocks,
        updates: None,
    }
}

impl DatabaseWork {
    /// The CPU per device read beyond its share of a cached block's (the
    /// read path's), in seconds.
    pub fn read_path_cpu_s(&self) -> f64 {
        predict::read_path_cpu_s(
            self.reads.cpu_per_device_read_us * 1e-6,
            self.cpu.cpu_per_block_us * 1e-6,
            self.reads.device_reads_per_block,
        )
    }

    /// What the model needs of the run: the CPU per block measured on the
    /// database (cached, and the rest of a device read's, the read path),
    /// the statement, the host's CPUs, and the contended window's figures
    /// with the wait for a CPU that makes the model reach its rate; the
    /// overlap and the wait taken against `storage` (the sweep's own
    /// calibration, or another of the same storage).
    pub fn block_work(
        &self,
        storage: &Storage,
        statement: Statement,
        cpus: u32,
    ) -> anyhow::Result<BlockWork> {
        let DatabaseWork {
            cpu,
            reads,
            contention,
            at_cpus,
        } = self;
        let (overlap_per_read_us, slowdown) = storage.one_session_anchor(reads);
        let cpus = cpus.max(1);
        let work = BlockWork {
            delay_per_block_s: cpu.delay_per_block_us() * 1e-6,
            overlap_per_block_s: overlap_per_read_us * reads.device_reads_per_block * 1e-6,
            device_reads_per_block: reads.device_reads_per_block,
            session_reads_in_flight: reads.session_reads_in_flight(),
            one_session_device_slowdown: slowdown,
            contended_reads: contention
                .as_ref()
                .and_then(|contention| contended_reads(contention, storage)),
            at_cpus_reads: at_cpus
                .as_ref()
                .and_then(|window| contended_reads(window, storage)),
            statement_p99_over_mean: reads.statement_p99_over_mean(),
            ..BlockWork::of_cpu(
                cpu.cpu_per_block_us * 1e-6,
                self.read_path_cpu_s(),
                statement,
                cpus,
            )
        };
        // Past the CPUs, the window at their count is on the way there.
        let past_cpus = contention.as_ref().is_some_and(|window| window.fitted);
        let windows = [at_cpus, contention].into_iter().flatten();
        windows
            .filter(|window| window.fitted || past_cpus)
            .try_fold(work, |work, window| with_wait(storage, work, window))
    }

    /// What a sweep's Recording kept of its windows before its points;
    /// none without both one-session windows.
    pub fn of_sweep(sweep: &SweepSummary) -> Option<DatabaseWork> {
        Some(DatabaseWork {
            cpu: sweep.database_cpu.clone()?,
            reads: sweep.database_reads.clone()?,
            contention: sweep.database_contention.clone(),
            at_cpus: sweep.database_contention_at_cpus.clone(),
        })
    }
}

/// The prediction from what the database measured of itself: its work
/// per block (the cached window's and the reading window's) on `cpus`,
/// the `contended` window's figures (its session count and figures) and
/// the wait for a CPU fitted to them when there was one, the model at
/// every session count, and the text said before the sweep.
pub(super) fn predict_from(
    (cpu, reads): (DatabaseCpu, DatabaseReads),
    contended: Vec<(u32, RunFigures)>,
    workload: &WorkloadOptions,
    cpus: u32,
    (storage, sessions): (&Storage, &[u32]),
) -> anyhow::Result<(DatabaseWork, Vec<PredictedPoint>, String)> {
    let mut measured = DatabaseWork {
        cpu,
        reads,
        contention: None,
        at_cpus: None,
    };
    let statement = Statement {
        updates: measured.reads.updates.map(model_updates),
        ..statement(workload)
    };
    let mut windows = contended.into_iter().rev();
    if let Some((count, figures)) = windows.next() {
        let every_cpu = measured.block_work(storage, statement, cpus)?;
        measured.contention = Some(database_contention(storage, &every_cpu, count, &figures)?);
    }
    if let Some((count, figures)) = windows.next() {
        let every_cpu = measured.block_work(storage, statement, cpus)?;
        measured.at_cpus = Some(database_contention(storage, &every_cpu, count, &figures)?);
    }
    let work = measured.block_work(storage, statement, cpus)?;
    let fitted = [
        (measured.at_cpus.as_mut(), work.at_cpus_reads),
        (measured.contention.as_mut(), work.contended_reads),
    ];
    for (window, reads) in fitted {
        if let Some(window) = window {
            window.wait_per_device_read_us =
                reads.and_then(|reads| reads.wait_per_device_read_s.map(|wait_s| wait_s * 1e6));
        }
    }
    let predicted = prediction(storage, &work, sessions)?;
    let text = prediction_text(&measured, &work, storage, &predicted);
    Ok((measured, predicted, text))
}

/// The contended window's figures and device read requests/s against the
/// model's without a wait for the CPUs, and whether tasks waited for CPUs
/// enough that the wait is fitted ([`DatabaseWork::block_work`] fits it;
/// when they hardly did, the CPUs were not what held the window back).
pub(super) fn database_contention(
    storage: &Storage,
    every_cpu: &BlockWork,
    sessions: u32,
    figures: &RunFigures,
) -> anyhow::Result<DatabaseContention> {
    let Some(DeviceReads {
        per_s: measured_per_s,
        in_flight,
        ..
    }) = device_reads(&figures.devices)
    else {
        let measured = "their window read nothing from the device".to_string();
        bail!(
            "measuring the wait for a CPU of {sessions} sessions: {}",
            lacking(&figures.verdict, measured)
        );
    };
    let cpu_pressure_pct = figures.cpu.host_cpu_pressure_pct;
    let (statement_mean_ms, statement_p99_ms) = statement_ms(figures);
    let mut contention = DatabaseContention {
        sessions,
        window_s: figures.window_s,
        device_read_requests_per_s: measured_per_s,
        predicted_with_every_cpu_per_s: 0.0,
        cpus: every_cpu.cpus,
        wait_per_device_read_us: None,
        fitted: cpu_pressure_pct.is_none_or(|pct| pct >= CPU_WAIT_FIT_PCT),
        device_reads_in_flight: Some(in_flight),
        device_reads_per_block: device_reads_per_block(figures),
        cpu_per_device_read_us: cpu_per_device_read_us(figures),
        device_writes_per_read: device_writes_per_read(figures),
        host_cpu_busy_pct: figures.cpu.host_idle_pct.map(|idle| 100.0 - idle),
        cpu_pressure_pct,
        statement_mean_ms,
        statement_p99_ms,
        quarter_spread_pct: figures.quarter_spread_pct(),
    };
    let curve = &storage.curve;
    let every_cpu = BlockWork {
        contended_reads: contended_reads(&contention, storage),
        ..every_cpu.clone()
    }
    .with_wait(sessions, 0.0);
    let predicted = predict::predict(curve, &every_cpu, &[sessions])?;
    contention.predicted_with_every_cpu_per_s = predicted[0].device_read_requests_per_s;
    Ok(contention)
}

/// `work` with the wait per device read that makes the model reach the
/// window's rate at its count; as it is where the window kept no reads in
/// flight.
pub(super) fn with_wait(
    storage: &Storage,
    work: BlockWork,
    window: &DatabaseContention,
) -> anyhow::Result<BlockWork> {
    if window.device_reads_in_flight.is_none() {
        return Ok(work);
    }
    let wait_s = predict::fit_wait_per_device_read(
        &storage.curve,
        &work,
        window.sessions,
        window.device_read_requests_per_s,
    )?;
    Ok(work.with_wait(window.sessions, wait_s))
}

/// The contended window's device reads: in flight per session (at least
/// 1), per block, its statements' p99 over their mean, and how much
/// slower than `storage`'s curve the device served them.
pub(super) fn contended_reads(
    contention: &DatabaseContention,
    storage: &Storage,
) -> Option<ContendedReads> {
    let in_flight = contention.device_reads_in_flight?;
    Some(ContendedReads {
        sessions: contention.sessions,
        per_session: (in_flight / f64::from(contention.sessions.max(1))).max(1.0),
        device_reads_per_block: contention.device_reads_per_block,
        statement_p99_over_mean: contention.statement_p99_over_mean(),
        device_slowdown: device_slowdown(storage, contention),
        cpu_per_device_read_s: contention.cpu_per_device_read_us.map(|us| us * 1e-6),
        wait_per_device_read_s: None,
    })
}

/// The contended window's device latency (in flight over r/s) over
/// calibrate's at its depth: how much slower the device served reads
/// while other sessions' CPU work ran (a VM's virtual disk answers later
/// when its vCPUs are busy: fio at 1 and 2 outstanding beside two busy
/// CPUs here, 1.4–1.5 × its time alone); with updates, over calibrate's ×
/// (1 + the window's writes per read), as the model's device takes them.
/// None where the window measured no device latency.
pub(super) fn device_slowdown(storage: &Storage, contention: &DatabaseContention) -> Option<f64> {
    let in_flight = contention.device_reads_in_flight?;
    let latency_s = in_flight / contention.device_read_requests_per_s;
    let writes_per_read = contention.device_writes_per_read.unwrap_or(0.0);
    let slowdown = latency_s / (storage.curve.latency_at(in_flight) * (1.0 + writes_per_read));
    (slowdown.is_finite() && slowdown > 0.0).then_some(slowdown)
}

/// The prediction at each of `sessions`, in the Recording's shape.
pub fn prediction(
    storage: &Storage,
    work: &BlockWork,
    sessions: &[u32],
) -> anyhow::Result<Vec<PredictedPoint>> {
    let predicted = predict::predict(&storage.curve, work, sessions)?;
    Ok(predicted.iter().map(predicted_point).collect())
}

pub(super) fn predicted_point(predicted: &Predicted) -> PredictedPoint {
    PredictedPoint {
        sessions: predicted.sessions,
        device_read_requests_per_s: predicted.device_read_requests_per_s,
        device_outstanding: predicted.device_outstanding,
        block_read_latency_us: predicted.block_read_latency_s * 1e6,
        device_read_latency_us: Some(predicted.device_read_latency_s * 1e6),
        cpu_per_device_read_us: Some(predicted.cpu_per_device_read_s * 1e6),
        device_reads_per_block: Some(predicted.device_reads_per_block),
        cpu_busy_pct: predicted.cpu_utilization * 100.0,
        statement_mean_ms: predicted.statement_latency_mean_s * 1e3,
        statement_p99_ms: predicted.statement_latency_p99_s * 1e3,
        device_error_pct: None,
        statement_p99_error_pct: None,
        error_sources: None,
    }
}

/// `predicted` scored against its measured `point`: the errors and what
/// they are made of.
pub(super) fn score(predicted: &mut PredictedPoint, point: &CurvePoint) {
    predicted.device_error_pct = point
        .device_read_requests_per_s
        .map(|measured| error_pct(measured, predicted.device_read_requests_per_s));
    predicted.statement_p99_error_pct = Some(error_pct(
        point.statement_p99_ms,
        predicted.statement_p99_ms,
    ));
    predicted.error_sources = error_sources(predicted, point);
}

/// [`ErrorSources`] of a point whose devices were measured, against a
/// model that kept its time per device read, CPU per device read and
/// device reads per block; none otherwise, or where a factor is not
/// finite (a mean of zero).
pub(super) fn error_sources(
    predicted: &PredictedPoint,
    point: &CurvePoint,
) -> Option<ErrorSources> {
    let finite =
        |measured: f64, model: f64| Some(error_pct(measured, model)).filter(|e| e.is_finite());
    let spread = |p99_ms: f64, mean_ms: f64| p99_ms / mean_ms;
    Some(ErrorSources {
        device_reads_in_flight_pct: finite(
            point.device_reads_in_flight?,
            predicted.device_outstanding,
        )?,
        device_read_latency_pct: finite(
            point.device_read_latency_us?,
            predicted.device_read_latency_us?,
        )?,
        cpu_per_device_read_pct: finite(
            point.cpu_per_device_read_us?,
            predicted.cpu_per_device_read_us?,
        )?,
        device_reads_per_block_pct: finite(
            point.device_reads_per_block?,
            predicted.device_reads_per_block?,
        )?,
        statement_mean_pct: finite(point.statement_mean_ms, predicted.statement_mean_ms)?,
        statement_p99_over_mean_pct: finite(
            spread(point.statement_p99_ms, point.statement_mean_ms),
            spread(predicted.statement_p99_ms, predicted.statement_mean_ms),
        )?,
    })
}
