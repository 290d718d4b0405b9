//! `strata model predict`'s measured inputs: the storage's curve from a
//! calibrate Recording, and the CPU per block from the options or from a
//! run's Recording (`--from`), into strata-model's request.
//!
//! Not for: the model or its output (strata-model's `predict`).

use anyhow::Context;
use strata_model::command::args::PredictArgs;
use strata_model::command::predict::PredictRequest;
use strata_model::predict::{BlockWork, ContendedReads};
use strata_recording::run::BLOCK_BYTES;
use strata_recording::sweep::{DatabaseReads, SweepSummary};
use strata_recording::Recording;
use strata_run::sweep::{contended_reads, DatabaseWork, Storage};

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
    let measured = match &run {
        Some(run) => Some(measured_work(run, &storage)?),
        None => None,
    };
    let cpus = args
        .cpus
        .or(measured.as_ref().map(|m| m.cpus))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let blocks = args
        .work_unit
        .or(measured.as_ref().and_then(|m| m.work_unit))
        .unwrap_or(WORK_UNIT);
    let (cpu_per_cached_block_s, cpu_per_io_s, delay_s, source) = match &measured {
        Some(m) => (
            m.cpu_per_block_s,
            m.cpu_per_io_s,
            m.delay_per_block_s,
            m.source.clone(),
        ),
        None => (
            args.cpu_per_block.map_or(0.0, |d| d.as_secs_f64()),
            storage.curve.cpu_per_io_s(),
            0.0,
            "--cpu-per-block, and calibrate's marginal CPU per read".to_string(),
        ),
    };
    let overlap_per_block_s = args
        .overlap_per_block
        .map(|overlap| overlap.as_secs_f64())
        .or(measured.as_ref().map(|m| m.overlap_per_block_s))
        .unwrap_or(0.0);
    Ok(PredictRequest {
        calibration: args.calibration.display().to_string(),
        curve: storage.curve,
        work: BlockWork {
            cpu_per_cached_block_s,
            cpu_per_io_s,
            delay_per_block_s: args.delay_per_block.map_or(delay_s, |d| d.as_secs_f64()),
            think_per_block_s: args.think_time.as_secs_f64() / f64::from(blocks),
            blocks_per_statement: f64::from(blocks),
            cpus,
            cpu_servers: args.cpu_servers.unwrap_or_else(|| {
                let measured = measured.as_ref().and_then(|m| m.cpu_servers);
                measured.map_or(f64::from(cpus), |n| n.min(f64::from(cpus)))
            }),
            overlap_per_block_s,
            device_reads_per_block: measured.as_ref().map_or(1.0, |m| m.device_reads_per_block),
            session_reads_in_flight: args
                .session_reads_in_flight
                .unwrap_or_else(|| measured.as_ref().map_or(1.0, |m| m.session_reads_in_flight)),
            contended_reads_in_flight: match args.session_reads_in_flight {
                Some(_) => None,
                None => measured.as_ref().and_then(|m| m.contended_reads_in_flight),
            },
            statement_p99_over_mean: args
                .statement_p99_over_mean
                .or(measured.as_ref().and_then(|m| m.statement_p99_over_mean)),
        },
        work_source: source,
        sessions: args.sessions.clone(),
        explain: args.explain,
    })
}

/// The work per block a run's Recording measured.
struct MeasuredWork {
    cpu_per_block_s: f64,
    /// The kernel's per device read on top: calibrate's, for a CPU per
    /// cached block; none for a run's window, whose CPU holds it.
    cpu_per_io_s: f64,
    delay_per_block_s: f64,
    work_unit: Option<u32>,
    cpus: u32,
    /// The CPUs a sweep's window of more sessions than CPUs was given.
    cpu_servers: Option<f64>,
    /// CPU per block while the device reads: a sweep's reading window's;
    /// none for a run's window (one point cannot tell it).
    overlap_per_block_s: f64,
    /// A sweep's reading window's device reads per block; 1 for a run's
    /// window.
    device_reads_per_block: f64,
    /// A sweep's reading window's device reads in flight (at least 1); 1
    /// for a run's window.
    session_reads_in_flight: f64,
    /// A sweep's window of more sessions than CPUs: its reads in flight per
    /// session.
    contended_reads_in_flight: Option<ContendedReads>,
    /// A sweep's reading window's statements' p99 over their mean.
    statement_p99_over_mean: Option<f64>,
    source: String,
}

fn measured_work(recording: &Recording, storage: &Storage) -> anyhow::Result<MeasuredWork> {
    let name = recording.path.display().to_string();
    let result = recording
        .run_result()
        .with_context(|| format!("--from {name}: not a run's Recording (no run_result)"))?;
    let work_unit = recording.header.options["workload"]["work_unit"]
        .as_u64()
        .map(|n| n as u32);
    let cpus = result.figures.cpu.cpus as u32;
    let of_sweep = |sweep| sweep_work(sweep, &name, storage, (work_unit, cpus));
    if let Some(work) = recording.sweep().and_then(of_sweep) {
        return Ok(work);
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
    Ok(MeasuredWork {
        cpu_per_block_s: cpu_s / blocks,
        cpu_per_io_s: 0.0,
        delay_per_block_s: 0.0,
        work_unit,
        cpus,
        cpu_servers: None,
        overlap_per_block_s: 0.0,
        device_reads_per_block: 1.0,
        session_reads_in_flight: 1.0,
        contended_reads_in_flight: None,
        statement_p99_over_mean: None,
        source: format!("{name}'s window, the kernel's reads included"),
    })
}

/// The work per block a sweep measured before its points: its cached
/// window, and its reading window when it has one (the read path's CPU and
/// its overlap with the device, against `storage`'s latency at 1
/// outstanding); none without a cached window.
fn sweep_work(
    sweep: &SweepSummary,
    name: &str,
    storage: &Storage,
    (work_unit, cpus): (Option<u32>, u32),
) -> Option<MeasuredWork> {
    let cpu = sweep.database_cpu.as_ref()?;
    let device_reads_per_block = sweep
        .database_reads
        .as_ref()
        .map_or(1.0, |reads| reads.device_reads_per_block);
    let session_reads_in_flight = sweep
        .database_reads
        .as_ref()
        .map_or(1.0, DatabaseReads::session_reads_in_flight);
    let (cpu_per_io_s, overlap_per_block_s, source) = match &sweep.database_reads {
        Some(reads) => (
            DatabaseWork {
                cpu: cpu.clone(),
                reads: reads.clone(),
                contention: None,
            }
            .read_path_cpu_s(),
            storage.overlap_us(
                reads.cpu_per_device_read_us,
                reads.elapsed_per_device_read_us,
                reads.device_reads_in_flight,
            ) * device_reads_per_block
                * 1e-6,
            format!("measured by {name} on a cached data set and reading from the device"),
        ),
        None => (
            storage.curve.cpu_per_io_s(),
            0.0,
            format!(
                "measured on a cached data set by {name}, and calibrate's marginal CPU per read"
            ),
        ),
    };
    Some(MeasuredWork {
        cpu_per_block_s: cpu.cpu_per_block_us * 1e-6,
        cpu_per_io_s,
        delay_per_block_s: cpu.delay_per_block_us() * 1e-6,
        work_unit,
        cpus,
        cpu_servers: sweep
            .database_contention
            .as_ref()
            .map(|contention| contention.cpu_servers),
        overlap_per_block_s,
        device_reads_per_block,
        session_reads_in_flight,
        contended_reads_in_flight: sweep.database_contention.as_ref().and_then(contended_reads),
        statement_p99_over_mean: sweep
            .database_reads
            .as_ref()
            .and_then(DatabaseReads::statement_p99_over_mean),
        source,
    })
}
