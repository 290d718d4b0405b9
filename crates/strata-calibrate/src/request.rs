//! What `strata calibrate` was asked for, resolved into a calibration: the
//! target (a temporary file, a file, or a block device), the points (the
//! default profile, one workload, a point shaped by free-form options, or
//! the ORION sweep), the stop rule and the options as the Recording keeps
//! them. Every contradiction is refused, naming the option, before any
//! work starts.
//!
//! The options are clap's `Args`: their doc comments are the `--help`
//! text.
//!
//! Not for: running the points (`calibration`) or printing (`output`).

use crate::calibration::{CalibrationConfig, RangeSpec, TargetChoice};
use crate::plan::{self, GroupOverrides, SweepOptions, Workload};
use crate::point::OUTLIER_FLOOR_NS;
use crate::spec::{Distribution, PointSpec, StopRule, SyncMode};
use anyhow::bail;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;
use strata_core::input;
use strata_core::units::{format_duration, format_size, GIB, KIB};
use strata_db::workdir::{WorkDir, WorkDirRequest};
use strata_io::target::{kind_of, TargetKind};
use strata_io::EngineKind;

/// The options of one `strata calibrate`, as given.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct CalibrateRequest {
    /// Workload: small-random-read (8 KiB random reads: index lookups), large-read
    /// (1 MiB sequential: scans), random-write (8 KiB: the database writer),
    /// log-write (small sequential durable writes: the commit log), mixed
    /// (8 KiB random, --read-pct). Default: a short profile of reads at queue
    /// depth 1 and 32, large reads, and log writes where the target may be
    /// written; or, when free-form options (--bs, --rw, --qd, …) are given, one
    /// point shaped by them from small-random-read
    #[arg(long, value_name = "NAME", value_parser = |s: &str| input::one_of(s, Workload::NAMES, Workload::parse))]
    pub workload: Option<Workload>,

    /// Run an ORION-style matrix: small random reads at 0, 1, 2, 4, … --max-qd
    /// outstanding × 0 … --max-streams large sequential streams
    #[arg(long, conflicts_with = "workload")]
    pub sweep: bool,

    /// File or block device to test. Default: a temporary file of --size in the
    /// current directory, removed afterwards
    #[arg(long, value_name = "PATH")]
    pub target: Option<PathBuf>,

    /// Directory of the temporary test file when no --target is given: a
    /// directory on the storage to test [default: the current directory]
    #[arg(long, value_name = "DIR", conflicts_with = "target")]
    pub work_dir: Option<PathBuf>,

    /// Size of the test file (IEC units: 1GiB = 1g; KB/MB/GB are decimal).
    /// [default: 1GiB, or the size of an existing file strata made]
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    pub size: Option<u64>,

    /// Part of the target to use, START-END in bytes/sizes or percentages:
    /// 0-50% (the outer half of a disk: short-stroking), 1GiB-2GiB
    #[arg(long, value_name = "START-END", value_parser = parse_range)]
    pub range: Option<RangeSpec>,

    /// I/O engine: io_uring (many requests in flight per thread) or psync
    /// (pread/pwrite, one thread per outstanding request). [default: io_uring
    /// when the kernel allows it, else psync]
    #[arg(long, value_name = "ENGINE", value_parser = |s: &str| input::one_of(s, EngineKind::NAMES, EngineKind::parse))]
    pub engine: Option<EngineKind>,

    /// Go through the page cache instead of O_DIRECT (measures the cache, not the device)
    #[arg(long)]
    pub buffered: bool,

    /// Block size of each request (bytes or IEC size) [default: the workload's: 8KiB; 1MiB for large-read]
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    pub bs: Option<u64>,

    /// fio-style pattern: randread, randwrite, randrw, read, write, rw (overrides the workload's)
    #[arg(long, value_name = "PATTERN", value_parser = parse_rw)]
    pub rw: Option<(f64, bool)>,

    /// Requests in flight per job (1-4096) [default: 1]
    #[arg(long, value_name = "N", value_parser = input::queue_depth)]
    pub qd: Option<usize>,

    /// Independent jobs (streams), each with --qd in flight (1-256) [default: 1]
    #[arg(long, value_name = "N", value_parser = input::jobs)]
    pub jobs: Option<usize>,

    /// Percentage of requests that are reads, 0-100 [default: the workload's; 70 for mixed]
    #[arg(long, value_name = "PCT", value_parser = input::percent)]
    pub read_pct: Option<f64>,

    /// Where random requests land: uniform, zipf:THETA (e.g. zipf:1.2), or
    /// hotspot:OFFSET:SIZE:PCT (PCT% of requests inside SIZE at OFFSET) [default: uniform]
    #[arg(long, value_name = "DIST", value_parser = parse_distribution)]
    pub distribution: Option<Distribution>,

    /// Open-loop arrival rate in requests/s for the whole workload; latency is
    /// measured from each request's scheduled time, so queueing is not hidden
    #[arg(long, value_name = "IOPS", value_parser = input::rate)]
    pub rate_iops: Option<f64>,

    /// How writes are made durable: none, dsync (O_DSYNC) or fdatasync (after
    /// each write) [default: fdatasync for log-write, none otherwise]
    #[arg(long, value_name = "MODE", value_parser = |s: &str| input::one_of(s, SyncMode::NAMES, SyncMode::parse))]
    pub sync: Option<SyncMode>,

    /// Measured time of each point [default: 10s]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub duration: Option<Duration>,

    /// Unmeasured warm-up before each point's measured window [default: 2s]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub ramp: Option<Duration>,

    /// Complete exactly N requests per point instead of running for a time (no ramp)
    #[arg(long, value_name = "N", value_parser = input::count, conflicts_with_all = ["duration", "ramp"])]
    pub ios: Option<u64>,

    /// Sweep: highest small-I/O outstanding level [default: 32]
    #[arg(long, value_name = "N", value_parser = input::queue_depth)]
    pub max_qd: Option<usize>,

    /// Sweep: most concurrent large-I/O streams [default: 2]
    #[arg(long, value_name = "N", value_parser = input::streams)]
    pub max_streams: Option<usize>,

    /// Sweep: block size of the large streams [default: 1MiB]
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    pub large_bs: Option<u64>,

    /// Report the most IOPS whose p99 latency stays under this [default: 10ms]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub latency_target: Option<Duration>,

    /// Record every request slower than this with its time, offset and size [default: 500ms]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub outlier: Option<Duration>,

    /// Exit with status 3 when the verdict is "not a storage result"
    /// (buffered I/O, a device that moved less or more than strata
    /// completed, points without I/O); without it such a calibration exits 0
    #[arg(long)]
    pub strict: bool,

    /// Write points.csv and, for sweeps, ORION-style iops.csv, mbps.csv and lat.csv into DIR
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,

    /// Write the whole result as a Recording (docs/recording.md)
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// Allow write workloads on a block device (its contents are destroyed); refused
    /// anyway while it or a partition is mounted, in use, or carries a filesystem,
    /// LVM or RAID signature
    #[arg(long)]
    pub allow_write_device: bool,

    /// Seed for the offset generators (same seed, same offsets) [default: random]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
}

/// Every option resolved to its final value, as the Recording keeps it.
#[derive(Serialize)]
pub struct ResolvedOptions {
    pub mode: String,
    pub target: Option<PathBuf>,
    pub size_bytes: Option<u64>,
    pub range: RangeSpec,
    pub engine: &'static str,
    pub direct: bool,
    pub stop_rule: StopRule,
    pub lat_target_us: f64,
    pub outlier_us: f64,
    /// I/Os from here on are in the Recording, whatever `--outlier` is.
    pub outlier_floor_us: f64,
    pub seed: u64,
    pub points: Vec<PointSpec>,
}

/// A calibration ready to check and run, with what the binary says first.
pub struct Resolved {
    pub config: CalibrationConfig,
    pub options: ResolvedOptions,
    /// Lines for stderr (an engine chosen instead of the one preferred).
    pub notes: Vec<String>,
}

/// Resolves `request`; the Recording goes to `record` (the one asked for,
/// or a temporary one the binary made for the HTML page).
pub fn resolve(
    request: &CalibrateRequest,
    record: Option<PathBuf>,
    command: Vec<String>,
) -> anyhow::Result<Resolved> {
    let mut notes = Vec::new();
    let engine = choose_engine(request.engine, &mut notes)?;
    let target = target_choice(request)?;
    let writable = match &target {
        TargetChoice::Device { .. } => request.allow_write_device,
        TargetChoice::File { path, .. } => {
            !path.exists() || strata_io::target::created_by_strata(path)
        }
        TargetChoice::Temporary { .. } => true,
    };
    let points = plan_points(request, writable)?;
    validate_groups(&points, engine)?;
    let stop_rule = stop_rule(request)?;
    let options = resolved_options(request, engine, stop_rule, points.clone());
    let config = CalibrationConfig {
        target,
        range: options.range,
        engine,
        direct: !request.buffered,
        points,
        stop_rule,
        outlier_threshold_ns: outlier(request).as_nanos() as u64,
        lat_target_us: options.lat_target_us,
        allow_write_device: request.allow_write_device,
        seed: options.seed,
        record,
        command,
        options: serde_json::to_value(&options)?,
    };
    Ok(Resolved {
        config,
        options,
        notes,
    })
}

fn stop_rule(request: &CalibrateRequest) -> anyhow::Result<StopRule> {
    let stop_rule = match request.ios {
        Some(ios) => StopRule::Count { ios },
        None => StopRule::Timed {
            ramp: request.ramp.unwrap_or(Duration::from_secs(2)),
            duration: request.duration.unwrap_or(Duration::from_secs(10)),
        },
    };
    if let StopRule::Timed { duration, .. } = stop_rule {
        if duration < Duration::from_millis(100) {
            bail!(
                "--duration {} is too short to measure; use at least 100ms",
                format_duration(duration)
            );
        }
    }
    Ok(stop_rule)
}

fn resolved_options(
    request: &CalibrateRequest,
    engine: EngineKind,
    stop_rule: StopRule,
    points: Vec<PointSpec>,
) -> ResolvedOptions {
    let lat_target = request.latency_target.unwrap_or(Duration::from_millis(10));
    let outlier = outlier(request);
    ResolvedOptions {
        mode: mode_name(request),
        target: request.target.clone(),
        size_bytes: request.size,
        range: request.range.unwrap_or(RangeSpec::Bytes {
            start: 0,
            end: None,
        }),
        engine: engine.name(),
        direct: !request.buffered,
        stop_rule,
        lat_target_us: lat_target.as_secs_f64() * 1e6,
        outlier_us: outlier.as_secs_f64() * 1e6,
        outlier_floor_us: (outlier.as_nanos() as u64).min(OUTLIER_FLOOR_NS) as f64 / 1e3,
        seed: request
            .seed
            .unwrap_or_else(|| strata_core::random::FastRng::from_entropy().next_u64()),
        points,
    }
}

/// `--outlier`, else 500 ms.
fn outlier(request: &CalibrateRequest) -> Duration {
    request.outlier.unwrap_or(Duration::from_millis(500))
}

fn mode_name(request: &CalibrateRequest) -> String {
    match (request.sweep, request.workload) {
        (true, _) => "sweep".into(),
        (_, Some(workload)) => workload.name().into(),
        (_, None) if shapes_a_point(request) => "custom".into(),
        _ => "profile".into(),
    }
}

fn choose_engine(asked: Option<EngineKind>, notes: &mut Vec<String>) -> anyhow::Result<EngineKind> {
    match (asked, strata_io::uring::probe()) {
        (Some(EngineKind::IoUring), Err(error)) => {
            bail!("--engine io_uring: this kernel refuses io_uring ({error}); use --engine psync")
        }
        (Some(engine), _) => Ok(engine),
        (None, Ok(())) => Ok(EngineKind::IoUring),
        (None, Err(error)) => {
            notes.push(format!(
                "io_uring is not available ({error}); using the psync engine"
            ));
            Ok(EngineKind::Psync)
        }
    }
}

fn target_choice(request: &CalibrateRequest) -> anyhow::Result<TargetChoice> {
    if request.size == Some(0) {
        bail!("--size must be more than 0 bytes");
    }
    let Some(path) = &request.target else {
        let dir = match &request.work_dir {
            Some(dir) => {
                let request = WorkDirRequest::Explicit(dir.clone());
                WorkDir::resolve(&request, None)?.path
            }
            None => PathBuf::from("."),
        };
        return Ok(TargetChoice::Temporary {
            dir,
            size_bytes: request.size.unwrap_or(GIB),
        });
    };
    match kind_of(path)? {
        Some(TargetKind::BlockDevice) => {
            if request.size.is_some() {
                bail!(
                    "--size does not apply to a block device ({}); use --range to limit the area",
                    path.display()
                );
            }
            Ok(TargetChoice::Device { path: path.clone() })
        }
        Some(TargetKind::File) => {
            let existing = std::fs::metadata(path)?.len();
            Ok(TargetChoice::File {
                path: path.clone(),
                size_bytes: request.size.unwrap_or(existing),
            })
        }
        None => Ok(TargetChoice::File {
            path: path.clone(),
            size_bytes: request.size.unwrap_or(GIB),
        }),
    }
}

fn overrides(request: &CalibrateRequest) -> anyhow::Result<GroupOverrides> {
    let block_size_bytes = request
        .bs
        .map(|bs| {
            if !(512..=64 * 1024 * KIB).contains(&bs) {
                bail!("--bs {} is outside 512 B..64 MiB", format_size(bs));
            }
            Ok(bs as u32)
        })
        .transpose()?;
    Ok(GroupOverrides {
        block_size_bytes,
        rw: request.rw,
        read_pct: request.read_pct,
        queue_depth: request.qd,
        jobs: request.jobs,
        distribution: request.distribution.clone(),
        rate_iops: request.rate_iops,
        sync: request.sync,
    })
}

fn plan_points(request: &CalibrateRequest, writable: bool) -> anyhow::Result<Vec<PointSpec>> {
    let overrides = overrides(request)?;
    if request.sweep {
        let large_bs = request.large_bs.unwrap_or(1 << 20);
        if !(4 * KIB..=64 * 1024 * KIB).contains(&large_bs) {
            bail!(
                "--large-bs {} is outside 4 KiB..64 MiB",
                format_size(large_bs)
            );
        }
        let options = SweepOptions {
            max_qd: request.max_qd.unwrap_or(32),
            max_streams: request.max_streams.unwrap_or(2),
            small: overrides,
            large_block_size_bytes: large_bs as u32,
        };
        return Ok(plan::sweep_points(&options));
    }
    for (flag, given) in [
        ("--max-qd", request.max_qd.is_some()),
        ("--max-streams", request.max_streams.is_some()),
        ("--large-bs", request.large_bs.is_some()),
    ] {
        if given {
            bail!("{flag} only applies with --sweep");
        }
    }
    match request.workload {
        Some(workload) => Ok(vec![plan::workload_point(workload, &overrides)]),
        None if shapes_a_point(request) => Ok(vec![plan::workload_point(
            Workload::SmallRandomRead,
            &overrides,
        )]),
        None => Ok(plan::profile_points(writable)),
    }
}

/// Whether free-form options were given, which shape one point instead of
/// the default profile.
fn shapes_a_point(request: &CalibrateRequest) -> bool {
    request.bs.is_some()
        || request.rw.is_some()
        || request.qd.is_some()
        || request.jobs.is_some()
        || request.read_pct.is_some()
        || request.distribution.is_some()
        || request.rate_iops.is_some()
        || request.sync.is_some()
}

fn validate_groups(points: &[PointSpec], engine: EngineKind) -> anyhow::Result<()> {
    for group in points.iter().flat_map(|point| &point.groups) {
        if group.label == "log" && !(512..=64 * KIB).contains(&u64::from(group.block_size_bytes)) {
            bail!(
                "--bs {} is outside 512 B..64 KiB, the range of log writes",
                format_size(u64::from(group.block_size_bytes))
            );
        }
        let threads = group.outstanding() / engine.depth_per_instance(group.queue_depth);
        if threads > 1024 {
            bail!("--qd × --jobs = {} would need {threads} {engine} threads; use --engine io_uring or fewer", group.outstanding());
        }
    }
    Ok(())
}

/// `--rw`: fio's pattern names, as the read percentage and whether random.
pub fn parse_rw(text: &str) -> Result<(f64, bool), String> {
    const NAMES: &[&str] = &["randread", "randwrite", "randrw", "read", "write", "rw"];
    input::one_of(text, NAMES, |name| match name {
        "randread" => Some((100.0, true)),
        "randwrite" => Some((0.0, true)),
        "randrw" => Some((50.0, true)),
        "read" => Some((100.0, false)),
        "write" => Some((0.0, false)),
        "rw" | "readwrite" => Some((50.0, false)),
        _ => None,
    })
}

/// `--range START-END`: percentages of the target or sizes.
pub fn parse_range(text: &str) -> Result<RangeSpec, String> {
    let (start, end) = text
        .split_once('-')
        .ok_or_else(|| format!("'{text}' is not START-END (e.g. 0-50% or 1GiB-2GiB)"))?;
    let range = if start.ends_with('%') || end.ends_with('%') {
        RangeSpec::Percent {
            start: input::percent(start)?,
            end: input::percent(end)?,
        }
    } else {
        let end = if end.is_empty() {
            None
        } else {
            Some(input::size(end)?)
        };
        RangeSpec::Bytes {
            start: input::size(start)?,
            end,
        }
    };
    let ordered = match range {
        RangeSpec::Percent { start, end } => start < end,
        RangeSpec::Bytes { start, end } => end.is_none_or(|end| start < end),
    };
    if !ordered {
        return Err(format!("'{text}': START must be below END"));
    }
    Ok(range)
}

/// `--distribution`.
pub fn parse_distribution(text: &str) -> Result<Distribution, String> {
    let parts: Vec<&str> = text.split(':').collect();
    match parts.as_slice() {
        ["uniform"] => Ok(Distribution::Uniform),
        ["zipf", theta] => Ok(Distribution::Zipf {
            theta: input::zipf_theta(theta)?,
        }),
        ["hotspot", offset, size, pct] => Ok(Distribution::Hotspot {
            offset_bytes: input::size(offset)?,
            size_bytes: input::size(size)?,
            pct: input::percent(pct)?,
        }),
        _ => Err(format!(
            "'{text}' is not one of: uniform, zipf:THETA, hotspot:OFFSET:SIZE:PCT"
        )),
    }
}
