//! What `strata calibrate` was asked for (`options`), resolved into a
//! calibration: the target (a temporary file, a file, or a block device),
//! the points (the default profile, one workload, a point shaped by
//! free-form options, or the ORION sweep), the stop rule and the options as
//! the Recording keeps them. Every contradiction is refused, naming the option, before any
//! work starts.
//!
//! Not for: running the points (`calibration`) or printing (`output`).

use crate::calibration::{CalibrationConfig, RangeSpec, ResolvedOptions, TargetChoice};
use crate::nfs::NfsRequest;
use crate::options::CalibrateRequest;
use crate::plan::{self, GroupOverrides, SweepOptions, Workload};
use crate::point::OUTLIER_FLOOR_NS;
use crate::spec::{PointSpec, StopRule, SyncMode};
use anyhow::bail;
use std::path::PathBuf;
use std::time::Duration;
use strata_core::units::{format_duration, format_size, GIB, KIB};
use strata_db::workdir::{WorkDir, WorkDirRequest};
use strata_io::target::{kind_of, TargetKind};
use strata_io::IoEngineKind;
use strata_nfs::NfsUrl;
use strata_recording::Existing;

/// A calibration ready to check and run, with what the binary says first.
pub struct Resolved {
    pub config: CalibrationConfig,
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
    let target = target_choice(request)?;
    let writable = match &target {
        TargetChoice::Device { .. } => request.allow_write_device,
        TargetChoice::File { path, .. } => {
            !path.exists() || strata_io::target::created_by_strata(path)
        }
        TargetChoice::Temporary { .. } => true,
        TargetChoice::Nfs(nfs) => nfs.found.as_ref().is_none_or(|file| file.strata_made),
    };
    let points = plan_points(request, writable)?;
    let engine = match &target {
        TargetChoice::Nfs(_) => nfs_engine(request.engine)?,
        _ => choose_engine(request.engine, only_durable_writes(&points), &mut notes)?,
    };
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
        record_existing: match request.overwrite || request.record.is_none() {
            true => Existing::Replace,
            false => Existing::Refuse,
        },
        record,
        prometheus: request.prometheus.clone(),
        command,
        options,
    };
    Ok(Resolved { config, notes })
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
    engine: IoEngineKind,
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

/// Whether every group of every point writes with a sync after each write
/// (`log-write`): a database's log writer's I/O.
fn only_durable_writes(points: &[PointSpec]) -> bool {
    let mut groups = points.iter().flat_map(|point| &point.groups).peekable();
    groups.peek().is_some() && groups.all(|group| group.sync != SyncMode::None)
}

/// The engine asked for; else psync for durable log writes (pwrite then
/// fdatasync, as PostgreSQL's WAL writer and InnoDB's log writer do: io_uring
/// with each write linked to its fdatasync does fewer of them per second);
/// else io_uring where the kernel allows it.
fn choose_engine(
    asked: Option<IoEngineKind>,
    durable_writes: bool,
    notes: &mut Vec<String>,
) -> anyhow::Result<IoEngineKind> {
    match (asked, strata_io::uring::probe()) {
        (Some(IoEngineKind::IoUring), Err(error)) => {
            bail!("--engine io_uring: this kernel refuses io_uring ({error}); use --engine psync")
        }
        (Some(engine), _) => Ok(engine),
        (None, _) if durable_writes => Ok(IoEngineKind::Psync),
        (None, Ok(())) => Ok(IoEngineKind::IoUring),
        (None, Err(error)) => {
            notes.push(format!(
                "io_uring is not available ({error}); using the psync engine"
            ));
            Ok(IoEngineKind::Psync)
        }
    }
}

/// An `nfs://` target's engine: strata's NFS client, the only one.
fn nfs_engine(asked: Option<IoEngineKind>) -> anyhow::Result<IoEngineKind> {
    match asked {
        None | Some(IoEngineKind::Nfs) => Ok(IoEngineKind::Nfs),
        Some(other) => bail!(
            "--engine {other} does not reach an nfs:// --target: strata's NFS client (--engine \
             nfs) does"
        ),
    }
}

/// `--target nfs://…` and the options that go with it, or an error naming
/// an option that needs one or does not apply to one.
fn nfs_choice(request: &CalibrateRequest) -> anyhow::Result<Option<TargetChoice>> {
    let url = request.target.as_ref().and_then(|path| path.to_str());
    let Some(url) = url.filter(|url| NfsUrl::is_nfs(url)) else {
        for (option, given) in [
            ("--nfs-connections", request.nfs_connections.is_some()),
            ("--nfs-transfer", request.nfs_transfer.is_some()),
            ("--nfs-durable", request.nfs_durable.is_some()),
            ("--nfs-address", !request.nfs_address.is_empty()),
            ("--agent", request.agent.is_some()),
            ("--engine nfs", request.engine == Some(IoEngineKind::Nfs)),
        ] {
            if given {
                bail!("{option} needs an nfs://HOST/EXPORT/PATH --target");
            }
        }
        return Ok(None);
    };
    let url = NfsUrl::parse(url).map_err(|error| error.context("--target"))?;
    if request.buffered {
        bail!("--buffered does not apply to an nfs:// --target: strata's NFS client has no cache");
    }
    let addresses = &request.nfs_address;
    let connections = request.nfs_connections.unwrap_or(addresses.len().max(1));
    for (at, address) in addresses.iter().enumerate() {
        if addresses[..at].contains(address) {
            bail!(
                "--nfs-address {address} is given twice: name each of the server's addresses once"
            );
        }
    }
    if connections < addresses.len() {
        bail!(
            "--nfs-connections {connections} with {} --nfs-address: give at least one \
             connection per address",
            addresses.len()
        );
    }
    let found = strata_nfs::NfsFile::find(&url)?.map(std::sync::Arc::new);
    Ok(Some(TargetChoice::Nfs(Box::new(NfsRequest {
        size_bytes: request.size,
        addresses: addresses.clone(),
        agent: request.agent.clone(),
        connections,
        transfer_bytes: request.nfs_transfer,
        durable: request
            .nfs_durable
            .unwrap_or(strata_nfs::DurableWrites::FileSync),
        found,
        url,
    }))))
}

fn target_choice(request: &CalibrateRequest) -> anyhow::Result<TargetChoice> {
    if request.size == Some(0) {
        bail!("--size must be more than 0 bytes");
    }
    if let Some(nfs) = nfs_choice(request)? {
        return Ok(nfs);
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

fn validate_groups(points: &[PointSpec], engine: IoEngineKind) -> anyhow::Result<()> {
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
