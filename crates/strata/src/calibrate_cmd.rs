//! `strata calibrate`: options, their resolution into a calibration, and the
//! printing of its result.

use crate::{interrupt, parse, progress::CalibrateProgress};
use anyhow::bail;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;
use strata_calibrate::calibration::{
    Calibration, CalibrationConfig, CalibrationOutcome, RangeSpec, TargetChoice,
};
use strata_calibrate::output;
use strata_calibrate::plan::{self, GroupOverrides, SweepOptions, Workload};
use strata_calibrate::point::OUTLIER_FLOOR_NS;
use strata_calibrate::spec::{Distribution, PointSpec, StopRule, SyncMode};
use strata_core::units::{format_duration, format_size, GIB, KIB};
use strata_core::verdict::Verdict;
use strata_db::workdir::{WorkDir, WorkDirRequest};
use strata_io::target::{kind_of, TargetKind};
use strata_io::EngineKind;

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct CalibrateArgs {
    /// Workload: small-random-read (8 KiB random reads: index lookups), large-read
    /// (1 MiB sequential: scans), random-write (8 KiB: the database writer),
    /// log-write (small sequential durable writes: the commit log), mixed
    /// (8 KiB random, --read-pct). Default: a short profile of reads at queue
    /// depth 1 and 32, large reads, and log writes where the target may be
    /// written; or, when free-form options (--bs, --rw, --qd, …) are given, one
    /// point shaped by them from small-random-read
    #[arg(long, value_name = "NAME", value_parser = |s: &str| parse::one_of(s, Workload::NAMES, Workload::parse))]
    workload: Option<Workload>,

    /// Run an ORION-style matrix: small random reads at 0, 1, 2, 4, … --max-qd
    /// outstanding × 0 … --max-streams large sequential streams
    #[arg(long, conflicts_with = "workload")]
    sweep: bool,

    /// File or block device to test. Default: a temporary file of --size in the
    /// current directory, removed afterwards
    #[arg(long, value_name = "PATH")]
    target: Option<PathBuf>,

    /// Directory of the temporary test file when no --target is given: a
    /// directory on the storage to test [default: the current directory]
    #[arg(long, value_name = "DIR", conflicts_with = "target")]
    work_dir: Option<PathBuf>,

    /// Size of the test file (IEC units: 1GiB = 1g; KB/MB/GB are decimal).
    /// [default: 1GiB, or the size of an existing file strata made]
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    size: Option<u64>,

    /// Part of the target to use, START-END in bytes/sizes or percentages:
    /// 0-50% (the outer half of a disk: short-stroking), 1GiB-2GiB
    #[arg(long, value_name = "START-END", value_parser = parse_range)]
    range: Option<RangeSpec>,

    /// I/O engine: io_uring (many requests in flight per thread) or psync
    /// (pread/pwrite, one thread per outstanding request). [default: io_uring
    /// when the kernel allows it, else psync]
    #[arg(long, value_name = "ENGINE", value_parser = |s: &str| parse::one_of(s, EngineKind::NAMES, EngineKind::parse))]
    engine: Option<EngineKind>,

    /// Go through the page cache instead of O_DIRECT (measures the cache, not the device)
    #[arg(long)]
    buffered: bool,

    /// Block size of each request (bytes or IEC size) [default: the workload's: 8KiB; 1MiB for large-read]
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    bs: Option<u64>,

    /// fio-style pattern: randread, randwrite, randrw, read, write, rw (overrides the workload's)
    #[arg(long, value_name = "PATTERN", value_parser = parse_rw)]
    rw: Option<(f64, bool)>,

    /// Requests in flight per job (1-4096) [default: 1]
    #[arg(long, value_name = "N", value_parser = parse::queue_depth)]
    qd: Option<usize>,

    /// Independent jobs (streams), each with --qd in flight (1-256) [default: 1]
    #[arg(long, value_name = "N", value_parser = parse::jobs)]
    jobs: Option<usize>,

    /// Percentage of requests that are reads, 0-100 [default: the workload's; 70 for mixed]
    #[arg(long, value_name = "PCT", value_parser = parse::percent)]
    read_pct: Option<f64>,

    /// Where random requests land: uniform, zipf:THETA (e.g. zipf:1.2), or
    /// hotspot:OFFSET:SIZE:PCT (PCT% of requests inside SIZE at OFFSET) [default: uniform]
    #[arg(long, value_name = "DIST", value_parser = parse_distribution)]
    distribution: Option<Distribution>,

    /// Open-loop arrival rate in requests/s for the whole workload; latency is
    /// measured from each request's scheduled time, so queueing is not hidden
    #[arg(long, value_name = "IOPS", value_parser = parse::rate)]
    rate_iops: Option<f64>,

    /// How writes are made durable: none, dsync (O_DSYNC) or fdatasync (after
    /// each write) [default: fdatasync for log-write, none otherwise]
    #[arg(long, value_name = "MODE", value_parser = |s: &str| parse::one_of(s, SyncMode::NAMES, SyncMode::parse))]
    sync: Option<SyncMode>,

    /// Measured time of each point [default: 10s]
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    duration: Option<Duration>,

    /// Unmeasured warm-up before each point's measured window [default: 2s]
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    ramp: Option<Duration>,

    /// Complete exactly N requests per point instead of running for a time (no ramp)
    #[arg(long, value_name = "N", value_parser = parse::count, conflicts_with_all = ["duration", "ramp"])]
    ios: Option<u64>,

    /// Sweep: highest small-I/O outstanding level [default: 32]
    #[arg(long, value_name = "N", value_parser = parse::queue_depth)]
    max_qd: Option<usize>,

    /// Sweep: most concurrent large-I/O streams [default: 2]
    #[arg(long, value_name = "N", value_parser = parse::streams)]
    max_streams: Option<usize>,

    /// Sweep: block size of the large streams [default: 1MiB]
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    large_bs: Option<u64>,

    /// Report the most IOPS whose p99 latency stays under this [default: 10ms]
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    latency_target: Option<Duration>,

    /// Record every request slower than this with its time, offset and size [default: 500ms]
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    outlier: Option<Duration>,

    /// Print the result as a versioned JSON document (docs/calibrate.md) instead of tables
    #[arg(long)]
    json: bool,

    /// Exit with status 3 when the verdict is "not a storage result"
    /// (buffered I/O, a device that moved less or more than strata
    /// completed, points without I/O); without it such a calibration exits 0
    #[arg(long)]
    strict: bool,

    /// Write points.csv and, for sweeps, ORION-style iops.csv, mbps.csv and lat.csv into DIR
    #[arg(long, value_name = "DIR")]
    csv: Option<PathBuf>,

    /// Write the whole result as a Recording (docs/recording.md)
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,

    /// Allow write workloads on a block device (its contents are destroyed); refused
    /// anyway while it or a partition is mounted, in use, or carries a filesystem,
    /// LVM or RAID signature
    #[arg(long)]
    allow_write_device: bool,

    /// Seed for the offset generators (same seed, same offsets) [default: random]
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
}

const AFTER_HELP: &str = "\
Units: sizes take bytes or k/m/g/t = KiB/MiB/GiB/TiB (like fio and dd); KB/MB/GB/TB are
powers of 1000. Durations take ns, us, ms, s, m, h (a bare number is seconds).
Output: IOPS are requests/s; MB/s is decimal (10^6 bytes/s); latencies carry their unit.

Examples:
  strata calibrate                                  # short profile on a 1 GiB temp file
  strata calibrate --workload small-random-read --qd 32 --duration 30s
  strata calibrate --sweep --max-qd 64 --max-streams 4 --csv orion/
  strata calibrate --workload log-write --bs 4k --sync dsync
  strata calibrate --target /dev/nvme0n1 --range 0-50% --workload small-random-read --qd 16";

fn parse_rw(input: &str) -> Result<(f64, bool), String> {
    const NAMES: &[&str] = &["randread", "randwrite", "randrw", "read", "write", "rw"];
    parse::one_of(input, NAMES, |name| match name {
        "randread" => Some((100.0, true)),
        "randwrite" => Some((0.0, true)),
        "randrw" => Some((50.0, true)),
        "read" => Some((100.0, false)),
        "write" => Some((0.0, false)),
        "rw" | "readwrite" => Some((50.0, false)),
        _ => None,
    })
}

fn parse_range(input: &str) -> Result<RangeSpec, String> {
    let (start, end) = input
        .split_once('-')
        .ok_or_else(|| format!("'{input}' is not START-END (e.g. 0-50% or 1GiB-2GiB)"))?;
    let range = if start.ends_with('%') || end.ends_with('%') {
        RangeSpec::Percent {
            start: parse::percent(start)?,
            end: parse::percent(end)?,
        }
    } else {
        let end = if end.is_empty() {
            None
        } else {
            Some(parse::size(end)?)
        };
        RangeSpec::Bytes {
            start: parse::size(start)?,
            end,
        }
    };
    let ordered = match range {
        RangeSpec::Percent { start, end } => start < end,
        RangeSpec::Bytes { start, end } => end.is_none_or(|end| start < end),
    };
    if !ordered {
        return Err(format!("'{input}': START must be below END"));
    }
    Ok(range)
}

fn parse_distribution(input: &str) -> Result<Distribution, String> {
    let parts: Vec<&str> = input.split(':').collect();
    match parts.as_slice() {
        ["uniform"] => Ok(Distribution::Uniform),
        ["zipf", theta] => Ok(Distribution::Zipf {
            theta: parse::zipf_theta(theta)?,
        }),
        ["hotspot", offset, size, pct] => Ok(Distribution::Hotspot {
            offset_bytes: parse::size(offset)?,
            size_bytes: parse::size(size)?,
            pct: parse::percent(pct)?,
        }),
        _ => Err(format!(
            "'{input}' is not one of: uniform, zipf:THETA, hotspot:OFFSET:SIZE:PCT"
        )),
    }
}

/// Every option resolved to its final value, as the Recording keeps it.
#[derive(Serialize)]
struct ResolvedOptions {
    mode: String,
    target: Option<PathBuf>,
    size_bytes: Option<u64>,
    range: RangeSpec,
    engine: &'static str,
    direct: bool,
    stop_rule: StopRule,
    lat_target_us: f64,
    outlier_us: f64,
    /// I/Os from here on are in the Recording, whatever `--outlier` is.
    outlier_floor_us: f64,
    seed: u64,
    points: Vec<PointSpec>,
}

pub fn run(args: CalibrateArgs) -> anyhow::Result<i32> {
    let interrupt = interrupt::install();
    let engine = choose_engine(args.engine)?;
    let target = target_choice(&args)?;
    let writable = match &target {
        TargetChoice::Device { .. } => args.allow_write_device,
        TargetChoice::File { path, .. } => {
            !path.exists() || strata_io::target::created_by_strata(path)
        }
        TargetChoice::Temporary { .. } => true,
    };
    let points = plan_points(&args, writable)?;
    validate_groups(&points, engine)?;
    let stop_rule = match args.ios {
        Some(ios) => StopRule::Count { ios },
        None => StopRule::Timed {
            ramp: args.ramp.unwrap_or(Duration::from_secs(2)),
            duration: args.duration.unwrap_or(Duration::from_secs(10)),
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
    let range = args.range.unwrap_or(RangeSpec::Bytes {
        start: 0,
        end: None,
    });
    let seed = args
        .seed
        .unwrap_or_else(|| strata_core::random::FastRng::from_entropy().next_u64());
    let lat_target = args.latency_target.unwrap_or(Duration::from_millis(10));
    let outlier = args.outlier.unwrap_or(Duration::from_millis(500));
    let options = ResolvedOptions {
        mode: mode_name(&args),
        target: args.target.clone(),
        size_bytes: args.size,
        range,
        engine: engine.name(),
        direct: !args.buffered,
        stop_rule,
        lat_target_us: lat_target.as_secs_f64() * 1e6,
        outlier_us: outlier.as_secs_f64() * 1e6,
        outlier_floor_us: (outlier.as_nanos() as u64).min(OUTLIER_FLOOR_NS) as f64 / 1e3,
        seed,
        points: points.clone(),
    };
    let options_json = serde_json::to_value(&options)?;
    let config = CalibrationConfig {
        target,
        range,
        engine,
        direct: !args.buffered,
        points,
        stop_rule,
        outlier_threshold_ns: outlier.as_nanos() as u64,
        lat_target_us: options.lat_target_us,
        allow_write_device: args.allow_write_device,
        seed,
        record: args.record.clone(),
        command: std::env::args().collect(),
        options: options_json.clone(),
    };
    let mut calibration = Calibration::check(config)?;
    let mut progress = CalibrateProgress::new(stop_rule);
    let outcome = calibration.run(interrupt, &mut progress);
    progress.finish();
    drop(calibration);
    let outcome = match outcome {
        Err(error) if interrupt.load(std::sync::atomic::Ordering::Relaxed) => {
            crate::note!(
                "strata: interrupted before any point ran ({error:#}); nothing was measured"
            );
            return Ok(interrupt::exit_code());
        }
        outcome => outcome?,
    };
    print_outcome(&args, &outcome, &options_json, options.outlier_us)?;
    Ok(exit_code(&outcome, args.strict))
}

fn exit_code(outcome: &CalibrationOutcome, strict: bool) -> i32 {
    match &outcome.summary.verdict {
        Verdict::Failed { .. } => 1,
        _ if outcome.interrupted => interrupt::exit_code(),
        Verdict::NotAStorageResult { .. } if strict => 3,
        _ => 0,
    }
}

fn mode_name(args: &CalibrateArgs) -> String {
    match (args.sweep, args.workload) {
        (true, _) => "sweep".into(),
        (_, Some(workload)) => workload.name().into(),
        (_, None) if shapes_a_point(args) => "custom".into(),
        _ => "profile".into(),
    }
}

fn choose_engine(asked: Option<EngineKind>) -> anyhow::Result<EngineKind> {
    match (asked, strata_io::uring::probe()) {
        (Some(EngineKind::IoUring), Err(error)) => {
            bail!("--engine io_uring: this kernel refuses io_uring ({error}); use --engine psync")
        }
        (Some(engine), _) => Ok(engine),
        (None, Ok(())) => Ok(EngineKind::IoUring),
        (None, Err(error)) => {
            crate::note!("strata: io_uring is not available ({error}); using the psync engine");
            Ok(EngineKind::Psync)
        }
    }
}

fn target_choice(args: &CalibrateArgs) -> anyhow::Result<TargetChoice> {
    if args.size == Some(0) {
        bail!("--size must be more than 0 bytes");
    }
    let Some(path) = &args.target else {
        let dir = match &args.work_dir {
            Some(dir) => {
                let request = WorkDirRequest::Explicit(dir.clone());
                WorkDir::resolve(&request, None)?.path
            }
            None => PathBuf::from("."),
        };
        return Ok(TargetChoice::Temporary {
            dir,
            size_bytes: args.size.unwrap_or(GIB),
        });
    };
    match kind_of(path)? {
        Some(TargetKind::BlockDevice) => {
            if args.size.is_some() {
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
                size_bytes: args.size.unwrap_or(existing),
            })
        }
        None => Ok(TargetChoice::File {
            path: path.clone(),
            size_bytes: args.size.unwrap_or(GIB),
        }),
    }
}

fn overrides(args: &CalibrateArgs) -> anyhow::Result<GroupOverrides> {
    let block_size_bytes = args
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
        rw: args.rw,
        read_pct: args.read_pct,
        queue_depth: args.qd,
        jobs: args.jobs,
        distribution: args.distribution.clone(),
        rate_iops: args.rate_iops,
        sync: args.sync,
    })
}

fn plan_points(args: &CalibrateArgs, writable: bool) -> anyhow::Result<Vec<PointSpec>> {
    let overrides = overrides(args)?;
    if args.sweep {
        let large_bs = args.large_bs.unwrap_or(1 << 20);
        if !(4 * KIB..=64 * 1024 * KIB).contains(&large_bs) {
            bail!(
                "--large-bs {} is outside 4 KiB..64 MiB",
                format_size(large_bs)
            );
        }
        let options = SweepOptions {
            max_qd: args.max_qd.unwrap_or(32),
            max_streams: args.max_streams.unwrap_or(2),
            small: overrides,
            large_block_size_bytes: large_bs as u32,
        };
        return Ok(plan::sweep_points(&options));
    }
    for (flag, given) in [
        ("--max-qd", args.max_qd.is_some()),
        ("--max-streams", args.max_streams.is_some()),
        ("--large-bs", args.large_bs.is_some()),
    ] {
        if given {
            bail!("{flag} only applies with --sweep");
        }
    }
    match args.workload {
        Some(workload) => Ok(vec![plan::workload_point(workload, &overrides)]),
        None if shapes_a_point(args) => Ok(vec![plan::workload_point(
            Workload::SmallRandomRead,
            &overrides,
        )]),
        None => Ok(plan::profile_points(writable)),
    }
}

/// Whether free-form options were given, which shape one point instead of
/// the default profile.
fn shapes_a_point(args: &CalibrateArgs) -> bool {
    args.bs.is_some()
        || args.rw.is_some()
        || args.qd.is_some()
        || args.jobs.is_some()
        || args.read_pct.is_some()
        || args.distribution.is_some()
        || args.rate_iops.is_some()
        || args.sync.is_some()
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

fn print_outcome(
    args: &CalibrateArgs,
    outcome: &CalibrationOutcome,
    options: &serde_json::Value,
    outlier_us: f64,
) -> anyhow::Result<()> {
    if let Some(dir) = &args.csv {
        for path in output::write_csv(dir, &outcome.points)? {
            crate::note!("strata: wrote {}", path.display());
        }
    }
    if let Some(path) = &args.record {
        crate::note!("strata: recording written to {}", path.display());
    }
    if args.json {
        crate::outln!("{}", output::json_document(outcome, options))?;
        return Ok(());
    }
    for line in outcome.summary.verdict.lines() {
        crate::outln!("{line}")?;
    }
    crate::outln!()?;
    crate::out!("{}", output::describe_target(&outcome.target))?;
    if outcome.interrupted {
        crate::outln!(
            "INTERRUPTED: partial result ({} points)",
            outcome.points.len()
        )?;
    }
    crate::outln!(
        "\nWorkload — strata's own count of its requests (IOPS = requests/s, MB/s = 10^6 bytes/s)"
    )?;
    crate::out!("{}", output::workload_table(&outcome.points))?;
    crate::outln!(
        "\nDevice — /proc/diskstats over the same measured windows (iostat -x definitions)"
    )?;
    crate::out!("{}", output::device_table(&outcome.points))?;
    for point in &outcome.points {
        if let Some(verification) = &point.verification {
            crate::outln!("  [{}] check: {}", point.name, verification.note)?;
        }
        for error in &point.errors {
            crate::outln!("  [{}] ERROR: {error}", point.name)?;
        }
    }
    crate::outln!()?;
    crate::out!("{}", output::summary_text(&outcome.summary))?;
    crate::outln!()?;
    crate::out!("{}", output::outliers_text(&outcome.points, outlier_us, 20))?;
    Ok(())
}
