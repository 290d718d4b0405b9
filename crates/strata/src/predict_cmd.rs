//! `strata model predict`'s measured inputs: the storage's curve from a
//! calibrate Recording, and the CPU per block from the options or from a
//! run's Recording (`--from`), into strata-model's request.
//!
//! Not for: the model or its output (strata-model's `predict`).

use anyhow::Context;
use strata_model::command::args::PredictArgs;
use strata_model::command::predict::PredictRequest;
use strata_model::predict::{BlockWork, ContendedReads, Statement};
use strata_recording::record::RunResult;
use strata_recording::run::BLOCK_BYTES;
use strata_recording::Recording;
use strata_run::sweep::{DatabaseWork, Storage};

/// The default blocks per statement: `strata run`'s `--work-unit`.
const WORK_UNIT: u32 = 256;

pub fn request(args: &PredictArgs) -> anyhow::Result<PredictRequest> {
    let run = match &args.from {
        Some(path) => Some(
            Recording::read_without_layers(path)
                .with_context(|| format!("--from {}", path.display()))?,
        ),
        None => None,
    };
    // PostgreSQL's environment names its block, MariaDB's its page.
    let run_block_bytes = run.as_ref().and_then(|run| {
        let environment = &run.header.environment;
        environment["block_bytes"]
            .as_u64()
            .or(environment["page_bytes"].as_u64())
    });
    let block_bytes = args.block_size.or(run_block_bytes).unwrap_or(BLOCK_BYTES);
    let storage = Storage::read(&args.calibration, block_bytes)?;
    let run = match &run {
        Some(recording) => Some((recording, run_result(recording)?)),
        None => None,
    };
    let run_work_unit = run.and_then(|(recording, _)| {
        let work_unit = recording.header.options["workload"]["work_unit"].as_u64();
        work_unit.map(|n| n as u32)
    });
    let blocks = f64::from(args.work_unit.or(run_work_unit).unwrap_or(WORK_UNIT));
    let statement = Statement {
        blocks,
        think_per_block_s: args.think_time.as_secs_f64() / blocks,
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
        contended_reads: work.contended_reads.map(|contended| ContendedReads {
            per_session: args
                .session_reads_in_flight
                .unwrap_or(contended.per_session),
            statement_p99_over_mean: match args.statement_p99_over_mean {
                Some(_) => None,
                None => contended.statement_p99_over_mean,
            },
            ..contended
        }),
        statement_p99_over_mean: args
            .statement_p99_over_mean
            .or(work.statement_p99_over_mean),
        ..work
    }
}

/// The `--from` Recording's run result.
fn run_result(recording: &Recording) -> anyhow::Result<&RunResult> {
    let name = recording.path.display();
    recording
        .run_result()
        .with_context(|| format!("--from {name}: not a run's Recording (no run_result)"))
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
