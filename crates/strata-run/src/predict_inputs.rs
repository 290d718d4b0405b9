//! `strata model predict`'s request: the storage's curve, and the CPU per
//! block from the options or from what a run's Recording measured
//! (`--from`), as strata-model takes them. Here because the sweep computes
//! the same work per block the same way (`sweep`).
//!
//! Not for: reading the Recordings (`measured`), or the model or its
//! output (strata-model's `predict`).

use crate::measured;
use crate::sweep::{DatabaseWork, Storage};
use strata_model::command::args::PredictArgs;
use strata_model::command::predict::PredictRequest;
use strata_model::predict::{BlockWork, ContendedReads, Statement, Updates};
use strata_recording::record::RunResult;
use strata_recording::run::BLOCK_BYTES;
use strata_recording::Recording;
use strata_slob::session::{DEFAULT_UPDATE_WORK_UNIT, DEFAULT_WORK_UNIT};

pub fn request(args: &PredictArgs) -> anyhow::Result<PredictRequest> {
    let run = args.from.as_deref().map(measured::run::read).transpose()?;
    let run_block_bytes = run.as_ref().and_then(measured::run::block_bytes);
    let block_bytes = args.block_size.or(run_block_bytes).unwrap_or(BLOCK_BYTES);
    let storage = Storage::read(&args.calibration, block_bytes)?;
    let run = match &run {
        Some(recording) => Some((recording, measured::run::result(recording)?)),
        None => None,
    };
    let run_work_unit =
        run.and_then(|(recording, _)| measured::run::workload(recording)?.work_unit);
    let blocks = f64::from(
        args.work_unit
            .or(run_work_unit)
            .unwrap_or(DEFAULT_WORK_UNIT),
    );
    let statement = Statement {
        blocks,
        think_per_block_s: args.think_time.as_secs_f64() / blocks,
        updates: updates(args, run)?,
    };
    let run_cpus = run.map(|(_, result)| result.figures.cpu.cpus as u32);
    let cpus = args
        .cpus
        .or(run_cpus)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let (work, work_source) = match run {
        Some(run) => measured_work(run, &storage, statement, cpus)?,
        None => (
            BlockWork::of_cpu(
                args.cpu_per_block.map_or(0.0, |d| d.as_secs_f64()),
                storage.curve.cpu_per_io_s(),
                statement,
                cpus,
            ),
            "--cpu-per-block, and calibrate's marginal CPU per read".to_string(),
        ),
    };
    Ok(PredictRequest {
        calibration: args.calibration.display().to_string(),
        curve: storage.curve,
        work: with_options(work, args),
        work_source,
        sessions: args.sessions.clone(),
        explain: args.explain,
    })
}

/// The statements that update, from the options or the `--from` run's
/// workload and what it measured: its mean COMMIT and its data devices'
/// write requests per row updated. None where none update.
fn updates(
    args: &PredictArgs,
    run: Option<(&Recording, &RunResult)>,
) -> anyhow::Result<Option<Updates>> {
    let workload = run.and_then(|(recording, _)| measured::run::workload(recording));
    let run_pct = workload.and_then(|workload| workload.update_pct);
    let pct = args.update_pct.or(run_pct).unwrap_or(0.0);
    if pct == 0.0 {
        return Ok(None);
    }
    let run_rows = workload.and_then(|workload| workload.update_work_unit);
    let rows = args
        .update_work_unit
        .map(u64::from)
        .or(run_rows)
        .unwrap_or(u64::from(DEFAULT_UPDATE_WORK_UNIT));
    let (run_commit_s, run_writes_per_row) = run.map_or((None, None), measured_updates);
    let Some(commit_s) = args.commit_time.map(|d| d.as_secs_f64()).or(run_commit_s) else {
        anyhow::bail!(
            "--update-pct {pct}: give --commit-time (one COMMIT's time: `strata calibrate \
             --workload log-write`'s mean latency) or --from a run that committed"
        );
    };
    Ok(Some(Updates {
        share: pct / 100.0,
        rows: rows as f64,
        commit_s,
        device_writes_per_row: args
            .device_writes_per_updated_row
            .or(run_writes_per_row)
            .unwrap_or(1.0),
    }))
}

/// What a run measured of its updates: its mean COMMIT, seconds, and its
/// data devices' write requests per row updated; a sweep's reading window
/// (the model's), else the run's window.
fn measured_updates((recording, result): (&Recording, &RunResult)) -> (Option<f64>, Option<f64>) {
    let reading = recording
        .sweep()
        .and_then(|sweep| sweep.database_reads.as_ref()?.updates);
    if let Some(updates) = reading {
        let model = crate::sweep::model_updates(updates);
        return (Some(model.commit_s), Some(model.device_writes_per_row));
    }
    let figures = &result.figures;
    let commit_s = figures
        .workload
        .commits()
        .map(|commit| commit.latency.lat_mean_us * 1e-6);
    let rows = figures.workload.rows_updated as f64;
    let writes = crate::sweep::data_write_requests(&figures.devices);
    (commit_s, (rows > 0.0).then(|| writes as f64 / rows))
}

/// The work with what the options give in place of what was measured.
fn with_options(work: BlockWork, args: &PredictArgs) -> BlockWork {
    let seconds = |duration: Option<std::time::Duration>| duration.map(|d| d.as_secs_f64());
    BlockWork {
        delay_per_block_s: seconds(args.delay_per_block).unwrap_or(work.delay_per_block_s),
        cpu_servers: args.cpu_servers.unwrap_or(work.cpu_servers),
        overlap_per_block_s: seconds(args.overlap_per_block).unwrap_or(work.overlap_per_block_s),
        session_reads_in_flight: args
            .session_reads_in_flight
            .unwrap_or(work.session_reads_in_flight),
        contended_reads: work.contended_reads.map(|window| window_with(window, args)),
        at_cpus_reads: work.at_cpus_reads.map(|window| window_with(window, args)),
        statement_p99_over_mean: args
            .statement_p99_over_mean
            .or(work.statement_p99_over_mean),
        ..work
    }
}

/// A window of several sessions with what the options give in place of
/// what it measured: the reads in flight per session, and no spread of its
/// own where one is given for every count.
fn window_with(window: ContendedReads, args: &PredictArgs) -> ContendedReads {
    ContendedReads {
        per_session: args.session_reads_in_flight.unwrap_or(window.per_session),
        statement_p99_over_mean: match args.statement_p99_over_mean {
            Some(_) => None,
            None => window.statement_p99_over_mean,
        },
        ..window
    }
}

/// The work per block a run's Recording measured, and where it came
/// from: a sweep's windows before its points (the overlap against
/// `storage`), else the run's own window, whose CPU per block holds the
/// kernel's reads.
fn measured_work(
    (recording, result): (&Recording, &RunResult),
    storage: &Storage,
    statement: Statement,
    cpus: u32,
) -> anyhow::Result<(BlockWork, String)> {
    let name = recording.path.display().to_string();
    if let Some(measured) = recording.sweep().and_then(DatabaseWork::of_sweep) {
        return Ok((
            measured.block_work(storage, statement, cpus)?,
            format!("measured by {name} on a cached data set and reading from the device"),
        ));
    }
    let figures = &result.figures;
    let blocks = figures.database.as_ref().map_or(0.0, |d| d.blocks_read);
    let cpu_s = figures.cpu.server_and_driver_cpu_s();
    if blocks <= 0.0 || figures.cpu.server_cpu_s <= 0.0 {
        anyhow::bail!(
            "--from {name}: the run measured no database block reads or no CPU time of its \
             server's processes; give --cpu-per-block"
        );
    }
    Ok((
        BlockWork::of_cpu(cpu_s / blocks, 0.0, statement, cpus),
        format!("{name}'s window, the kernel's reads included"),
    ))
}
