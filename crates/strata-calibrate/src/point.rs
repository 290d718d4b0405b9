//! Runs one point: opens the target once per group, starts every worker
//! together behind a barrier, watches the clock (ramp, measured window,
//! Ctrl-C), snapshots the device counters and strata's CPU time at the window
//! edges, and merges what the workers tallied into a [`PointResult`].
//!
//! Not for: planning points or printing them.

use crate::filer::{FilerAgent, FilerEdge};
use crate::kernel_nfs::{KernelMount, MountCounters};
use crate::nfs::{NfsEdge, NfsTarget};
use crate::offsets::{ByteRange, OffsetGenerator};
use crate::result::{
    CpuFigures, DeviceFigures, GroupResult, OutlierRecord, PointResult, SecondSample, Verification,
};
use crate::spec::{GroupSpec, PointSpec, StopRule, SyncMode};
use crate::worker::{run_worker, SecondBucket, Shared, Timeline, WorkerOutcome, WorkerPlan};
use anyhow::Context;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};
use strata_io::target::open_target;
use strata_io::{EngineTarget, IoEngineKind, Operation};
use strata_probe::blocktrace::TraceSnapshot;
use strata_probe::diskstats::{find, DeviceDelta, DiskStat};
use strata_recording::calibrate::{FilerDeviceFigures, FilerFigures};

/// The devices whose counters a point reads: the one the target lives on,
/// then the physical devices under it.
#[derive(Clone, Debug, Default)]
pub struct WatchedDevices {
    pub target_device: Option<String>,
    pub physical: Vec<String>,
}

/// Every I/O at least this slow is kept for the Recording, whatever
/// `--outlier` is (the floor run outliers share), so that `strata report
/// --outlier-threshold` can list slow I/Os down to it.
pub const OUTLIER_FLOOR_NS: u64 = 100_000_000;

/// How every point of a calibration runs.
pub struct PointContext<'a> {
    pub target: &'a Path,
    pub range: ByteRange,
    pub engine: IoEngineKind,
    pub direct: bool,
    pub stop_rule: StopRule,
    pub outlier_threshold_ns: u64,
    pub devices: &'a WatchedDevices,
    /// Set by Ctrl-C.
    pub interrupt: &'a AtomicBool,
    pub seed: u64,
    /// The file on an NFS server, for an `nfs://` target.
    pub nfs: Option<&'a NfsTarget>,
    /// The kernel NFS client's mount a local target lies on.
    pub kernel_nfs: Option<&'a KernelMount>,
}

/// What a progress display learns while a point runs.
pub struct PointProgress {
    pub elapsed: Duration,
    /// Expected length of the point, when it is timed.
    pub expected: Option<Duration>,
    pub measured_requests: u64,
    pub ios_target: Option<u64>,
}

/// Snapshot of the counters at one edge of the window.
struct Edge {
    at: Instant,
    /// Every block request traced so far, its counts read just before
    /// `disks`, its distributions after.
    trace: Option<TraceSnapshot>,
    disks: Vec<DiskStat>,
    cpu: (f64, f64),
    /// For an NFS target: every engine's calls so far and the interfaces'
    /// bytes, read at one moment.
    nfs: Option<NfsEdge>,
    /// The filer's agent's counters, with `--agent`.
    filer: Option<FilerEdge>,
    /// The kernel NFS client's counters of the target's mount.
    kernel_nfs: Option<MountCounters>,
}

impl Edge {
    fn now(context: &PointContext) -> Self {
        let at = Instant::now();
        let (trace, disks) = strata_probe::blocktrace::shared::with_diskstats();
        Edge {
            at,
            trace,
            disks,
            cpu: strata_probe::cpu::own_cpu_seconds(),
            nfs: context.nfs.map(NfsTarget::edge),
            filer: context
                .nfs
                .and_then(|nfs| nfs.filer.as_ref())
                .map(FilerAgent::now),
            kernel_nfs: context.kernel_nfs.map(KernelMount::counters_now),
        }
    }
}

pub fn run_point(
    spec: &PointSpec,
    context: &PointContext,
    progress: &mut dyn FnMut(&PointProgress),
) -> anyhow::Result<PointResult> {
    let files = open_group_files(spec, context)?;
    let plans = worker_plans(spec, context, &files);
    let shared = Shared {
        stop: AtomicBool::new(false),
        completed: plans.iter().map(|_| AtomicU64::new(0)).collect(),
        ready: Barrier::new(plans.len() + 1),
        timeline: OnceLock::new(),
    };
    let (outcomes, window) = std::thread::scope(|scope| {
        let handles: Vec<_> = plans
            .into_iter()
            .enumerate()
            .map(|(index, plan)| {
                let shared = &shared;
                std::thread::Builder::new()
                    .name(format!("strata-io-{index}"))
                    .spawn_scoped(scope, move || run_worker(plan, shared, index))
                    .expect("spawning a worker thread")
            })
            .collect();
        let window = watch_point(context, &shared, &handles, progress);
        let outcomes: Vec<WorkerOutcome> = handles
            .into_iter()
            .map(|handle| handle.join().expect("worker thread panicked"))
            .collect();
        (outcomes, window)
    });
    Ok(merge(spec, context, outcomes, window))
}

/// Each group's open target; none for an NFS target, whose workers each
/// open a connection of their own.
fn open_group_files(spec: &PointSpec, context: &PointContext) -> anyhow::Result<Vec<File>> {
    if context.nfs.is_some() {
        return Ok(Vec::new());
    }
    spec.groups
        .iter()
        .map(|group| {
            open_target(
                context.target,
                context.direct,
                group.writes(),
                group.sync == SyncMode::Dsync,
            )
        })
        .collect()
}

fn worker_plans(spec: &PointSpec, context: &PointContext, files: &[File]) -> Vec<WorkerPlan> {
    let mut plans = Vec::new();
    for (group_index, group) in spec.groups.iter().enumerate() {
        let depths = instance_depths(group, context);
        let instances = depths.len();
        for (instance, (depth, path)) in depths.into_iter().enumerate() {
            let seed = context.seed
                ^ ((group_index as u64) << 32 | instance as u64).wrapping_mul(0x9E37_79B9);
            let target = match (context.nfs, files.get(group_index)) {
                (Some(nfs), _) => nfs.engine_target(path),
                (None, Some(file)) => EngineTarget::Fd(file.as_raw_fd()),
                (None, None) => unreachable!("a file is open for every group"),
            };
            plans.push(WorkerPlan {
                role: format!("calibrate {}", group.label),
                group: group_index,
                engine: context.engine,
                target,
                depth,
                block_size: group.block_size_bytes,
                read_pct: group.read_pct,
                datasync: durable_writes(group, context),
                offsets: OffsetGenerator::new(
                    &group.pattern,
                    context.range,
                    u64::from(group.block_size_bytes),
                    instance,
                    instances,
                    seed,
                ),
                rate_iops: group.rate_iops.map(|rate| rate / instances as f64),
                ios_budget: budget_share(context.stop_rule, instance, instances),
                outlier_ns: context.outlier_threshold_ns.min(OUTLIER_FLOOR_NS),
            });
        }
    }
    plans
}

/// Whether each write is made durable by the engine: fdatasync after it
/// (psync, io_uring: O_DSYNC is the open's), or on an NFS server either
/// way (its client has no open flags).
fn durable_writes(group: &GroupSpec, context: &PointContext) -> bool {
    match context.nfs {
        Some(_) => group.sync != SyncMode::None,
        None => group.sync == SyncMode::Fdatasync,
    }
}

/// The requests each of a group's workers keeps in flight, and the path
/// it takes: for an NFS target, each job's spread over the connections (a
/// worker each, on the server's addresses in turn); else the engine's
/// depth per thread, as many threads as that takes.
fn instance_depths(group: &GroupSpec, context: &PointContext) -> Vec<(usize, usize)> {
    match context.nfs {
        Some(nfs) => (0..group.jobs)
            .flat_map(|_| nfs.depths(group.queue_depth))
            .collect(),
        None => {
            let depth = context.engine.depth_per_instance(group.queue_depth);
            vec![(depth, 0); group.outstanding() / depth]
        }
    }
}

fn budget_share(stop_rule: StopRule, instance: usize, instances: usize) -> Option<u64> {
    match stop_rule {
        StopRule::Count { ios } => {
            let instances = instances as u64;
            let instance = instance as u64;
            Some(ios / instances + u64::from(instance < ios % instances))
        }
        StopRule::Timed { .. } => None,
    }
}

/// The measured window: its two edges and whether Ctrl-C or an error cut it.
struct Window {
    start: Edge,
    end: Edge,
    interrupted: bool,
}

fn watch_point(
    context: &PointContext,
    shared: &Shared,
    handles: &[std::thread::ScopedJoinHandle<'_, WorkerOutcome>],
    progress: &mut dyn FnMut(&PointProgress),
) -> Window {
    let (timeline, expected, mut start_edge) = start_together(context, shared);
    let Timeline {
        start,
        measure_from,
        stop_at,
    } = timeline;
    let ios_target = match context.stop_rule {
        StopRule::Count { ios } => Some(ios),
        StopRule::Timed { .. } => None,
    };
    let mut measuring = measure_from <= start;
    let mut interrupted = false;
    loop {
        let now = Instant::now();
        if !measuring && now >= measure_from {
            start_edge = Edge::now(context);
            measuring = true;
        }
        if context.interrupt.load(Ordering::Relaxed) && !shared.stop.load(Ordering::Relaxed) {
            shared.stop.store(true, Ordering::Relaxed);
            interrupted = true;
        }
        let finished = handles.iter().all(|handle| handle.is_finished());
        let out_of_time = stop_at.is_some_and(|stop_at| now >= stop_at);
        if finished || out_of_time || shared.stop.load(Ordering::Relaxed) {
            interrupted |= shared.stop.load(Ordering::Relaxed);
            break;
        }
        let measured_requests = shared
            .completed
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum();
        progress(&PointProgress {
            elapsed: now - start,
            expected,
            measured_requests,
            ios_target,
        });
        nap(now, [Some(measure_from), stop_at]);
    }
    if !measuring {
        start_edge = Edge::now(context);
    }
    let end = end_edge(context, ios_target.is_some());
    Window {
        start: start_edge,
        end,
        interrupted,
    }
}

/// Starts the point's workers together: the timeline set from the moment
/// they are all ready, the start edge taken before they begin. The
/// timeline, the point's expected length, and the start edge.
fn start_together(context: &PointContext, shared: &Shared) -> (Timeline, Option<Duration>, Edge) {
    shared.ready.wait();
    let start = Instant::now();
    let (measure_from, stop_at, expected) = match context.stop_rule {
        StopRule::Timed { ramp, duration } => (
            start + ramp,
            Some(start + ramp + duration),
            Some(ramp + duration),
        ),
        StopRule::Count { .. } => (start, None, None),
    };
    let start_edge = Edge::now(context);
    let timeline = Timeline {
        start,
        measure_from,
        stop_at,
    };
    shared
        .timeline
        .set(timeline)
        .expect("the timeline is set once");
    shared.ready.wait();
    (timeline, expected, start_edge)
}

/// Sleeps until the next progress tick or the next edge, whichever comes
/// first.
fn nap(now: Instant, edges: [Option<Instant>; 2]) {
    let next_tick = Duration::from_millis(100);
    let until_edge = edges
        .into_iter()
        .flatten()
        .filter(|edge| *edge > now)
        .map(|edge| edge - now)
        .min()
        .unwrap_or(next_tick);
    std::thread::sleep(next_tick.min(until_edge));
}

/// The end edge; a point of a count of I/Os first lets the block layer
/// update /proc/diskstats for its last completions.
fn end_edge(context: &PointContext, counted: bool) -> Edge {
    let end_at = Instant::now();
    if counted {
        // The block layer posts a request's completion before it updates
        // /proc/diskstats; let the last completions reach the counters.
        std::thread::sleep(Duration::from_millis(20));
    }
    Edge {
        at: end_at,
        ..Edge::now(context)
    }
}

fn merge(
    spec: &PointSpec,
    context: &PointContext,
    outcomes: Vec<WorkerOutcome>,
    window: Window,
) -> PointResult {
    let seconds = (window.end.at - window.start.at).as_secs_f64();
    let groups: Vec<GroupResult> = spec
        .groups
        .iter()
        .enumerate()
        .map(|(index, group)| {
            let mine: Vec<&WorkerOutcome> = outcomes.iter().filter(|o| o.group == index).collect();
            crate::result::group_result(group, &mine, seconds)
        })
        .collect();
    let total_requests: u64 = groups.iter().map(|group| group.all.requests).sum();
    let devices = device_figures(context.devices, &window, seconds);
    let block_trace = strata_probe::blocktrace::shared::figures(
        (window.start.trace.as_ref(), window.end.trace.as_ref()),
        &window.end.disks,
        &devices,
    );
    let nfs = context.nfs.and_then(|nfs| {
        let edges = window.start.nfs.as_ref().zip(window.end.nfs.as_ref())?;
        let mut figures = nfs.figures((&outcomes, &groups), seconds, edges);
        let filer_edges = (window.start.filer.as_ref(), window.end.filer.as_ref());
        figures.filer = nfs.filer_figures(filer_edges, edges);
        Some(figures)
    });
    let filer_devices = (nfs.as_ref())
        .and_then(|nfs| DeviceMoved::filer(nfs.filer.as_ref()?))
        .map(|moved| verify(&groups, moved, true));
    let verification = context
        .devices
        .target_device
        .as_ref()
        .and_then(|name| devices.iter().find(|device| &device.device == name))
        .map(|device| verify(&groups, DeviceMoved::local(device), context.direct))
        .or(filer_devices);
    let errors: Vec<String> = outcomes.iter().filter_map(|o| o.error.clone()).collect();
    let slow_ios = outlier_records(spec, &outcomes);
    PointResult {
        name: spec.name.clone(),
        cell: spec.cell,
        interrupted: window.interrupted,
        window_s: seconds,
        cpu: cpu_figures(&window, total_requests),
        devices,
        verification,
        per_second: per_second_samples(&outcomes),
        outliers: slow_ios
            .iter()
            .filter(|io| io.lat_us * 1e3 >= context.outlier_threshold_ns as f64)
            .cloned()
            .collect(),
        slow_ios,
        outliers_dropped: outcomes.iter().map(|o| o.outliers_dropped).sum(),
        errors,
        kernel_nfs: context.kernel_nfs.and_then(|mount| {
            let (start, end) = (
                window.start.kernel_nfs.as_ref()?,
                window.end.kernel_nfs.as_ref()?,
            );
            Some(mount.figures(start, end, seconds))
        }),
        nfs,
        groups,
        block_trace: Some(block_trace),
    }
}

fn cpu_figures(window: &Window, requests: u64) -> CpuFigures {
    let user_s = window.end.cpu.0 - window.start.cpu.0;
    let system_s = window.end.cpu.1 - window.start.cpu.1;
    let per_io = |seconds: f64| {
        if requests > 0 {
            seconds * 1e6 / requests as f64
        } else {
            0.0
        }
    };
    CpuFigures {
        user_s,
        system_s,
        user_us_per_io: per_io(user_s),
        system_us_per_io: per_io(system_s),
    }
}

fn device_figures(devices: &WatchedDevices, window: &Window, seconds: f64) -> Vec<DeviceFigures> {
    let target = devices.target_device.iter().map(|name| (name, "target"));
    let physical = devices
        .physical
        .iter()
        .filter(|name| Some(*name) != devices.target_device.as_ref())
        .map(|name| (name, "physical"));
    target
        .chain(physical)
        .filter_map(|(name, role)| {
            let before = find(&window.start.disks, name)?;
            let after = find(&window.end.disks, name)?;
            let delta = DeviceDelta::between(before, after, seconds).ok()?;
            Some(delta.figures(role))
        })
        .collect()
}

/// Compares strata's own counts with the device's. With O_DIRECT every
/// request must reach the device: the device may show more (other activity,
/// requests split at `max_sectors_kb`, filesystem metadata) but never much
/// less. Bytes decide; requests are shown beside them.
/// What a device check compares strata's I/O with: what a device moved
/// over the window, or the filer's devices under the export together.
struct DeviceMoved {
    device: String,
    /// How the check's note names it.
    named: &'static str,
    read_requests: u64,
    read_bytes: u64,
    write_requests: u64,
    write_bytes: u64,
}

impl DeviceMoved {
    fn local(device: &DeviceFigures) -> DeviceMoved {
        DeviceMoved {
            device: device.device.clone(),
            named: "the device",
            read_requests: device.read_requests,
            read_bytes: device.read_bytes,
            write_requests: device.write_requests,
            write_bytes: device.write_bytes,
        }
    }

    /// The filer's devices under the export, as its agent counted them;
    /// `None` when an edge is missing or it named none.
    fn filer(filer: &FilerFigures) -> Option<DeviceMoved> {
        if filer.missing.is_some() || filer.devices.is_empty() {
            return None;
        }
        let names: Vec<&str> = filer.devices.iter().map(|d| d.device.as_str()).collect();
        let sum = |count: fn(&FilerDeviceFigures) -> u64| filer.devices.iter().map(count).sum();
        Some(DeviceMoved {
            device: format!("{}:{}", filer.host, names.join("+")),
            named: "the filer's devices under the export",
            read_requests: sum(|d| d.read_requests),
            read_bytes: sum(|d| d.read_bytes),
            write_requests: sum(|d| d.write_requests),
            write_bytes: sum(|d| d.write_bytes),
        })
    }
}

fn verify(groups: &[GroupResult], device: DeviceMoved, direct: bool) -> Verification {
    let engine_read_bytes: u64 = groups.iter().map(|g| g.reads.bytes).sum();
    let engine_write_bytes: u64 = groups.iter().map(|g| g.writes.bytes).sum();
    let (verdict, note) = if !direct {
        (
            "not_checked",
            "buffered I/O: the page cache sits between strata and the device".to_string(),
        )
    } else {
        judge(
            engine_read_bytes + engine_write_bytes,
            device.read_bytes + device.write_bytes,
            device.named,
        )
    };
    Verification {
        device: device.device,
        engine_read_requests: groups.iter().map(|g| g.reads.requests).sum(),
        device_read_requests: device.read_requests,
        engine_write_requests: groups.iter().map(|g| g.writes.requests).sum(),
        device_write_requests: device.write_requests,
        engine_read_bytes,
        device_read_bytes: device.read_bytes,
        engine_write_bytes,
        device_write_bytes: device.write_bytes,
        verdict: verdict.to_string(),
        note,
    }
}

fn judge(engine_bytes: u64, device_bytes: u64, device: &str) -> (&'static str, String) {
    if engine_bytes == 0 {
        return (
            "nothing_to_check",
            format!(
                "strata completed no I/O in the window ({device} moved {device_bytes} bytes): \
                 there is nothing to compare"
            ),
        );
    }
    let ratio = device_bytes as f64 / engine_bytes as f64;
    if ratio < 0.98 {
        (
            "device_saw_less",
            format!(
                "{device} moved {:.1}% of the bytes strata completed: something above it \
                 (a cache, a layered filesystem) absorbed I/O, so this is not a device result",
                ratio * 100.0
            ),
        )
    } else if ratio > 1.10 {
        (
            "device_saw_more",
            format!(
                "{device} moved {:.1}% of strata's bytes: other activity on the device, \
                 or filesystem overhead",
                ratio * 100.0
            ),
        )
    } else {
        (
            "consistent",
            format!("{device} moved {:.1}% of strata's bytes", ratio * 100.0),
        )
    }
}

fn per_second_samples(outcomes: &[WorkerOutcome]) -> Vec<SecondSample> {
    let seconds = outcomes
        .iter()
        .map(|o| o.per_second.len())
        .max()
        .unwrap_or(0);
    let mut merged = vec![SecondBucket::default(); seconds];
    for outcome in outcomes {
        for (total, bucket) in merged.iter_mut().zip(&outcome.per_second) {
            total.merge(bucket);
        }
    }
    merged
        .iter()
        .enumerate()
        .map(|(second, bucket)| {
            let requests = bucket.read_requests + bucket.write_requests;
            SecondSample {
                t_s: second as u64,
                read_iops: bucket.read_requests,
                write_iops: bucket.write_requests,
                read_mb_per_s: bucket.read_bytes as f64 / 1e6,
                write_mb_per_s: bucket.write_bytes as f64 / 1e6,
                lat_mean_us: if requests > 0 {
                    bucket.lat_sum_ns as f64 / requests as f64 / 1e3
                } else {
                    0.0
                },
                lat_max_us: bucket.lat_max_ns as f64 / 1e3,
            }
        })
        .collect()
}

fn outlier_records(spec: &PointSpec, outcomes: &[WorkerOutcome]) -> Vec<OutlierRecord> {
    let mut records: Vec<OutlierRecord> = outcomes
        .iter()
        .flat_map(|outcome| {
            let group: &GroupSpec = &spec.groups[outcome.group];
            outcome.outliers.iter().map(
                move |&(t_s, operation, offset_bytes, size_bytes, latency_ns)| OutlierRecord {
                    t_s,
                    group: group.label.clone(),
                    operation: if operation == Operation::Read {
                        "read".to_string()
                    } else {
                        "write".to_string()
                    },
                    offset_bytes,
                    size_bytes,
                    lat_us: latency_ns as f64 / 1e3,
                },
            )
        })
        .collect();
    records.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    records
}

/// Opens the target the way every group of `spec` needs and closes it again,
/// so that refusals surface before any point runs.
pub fn check_openable(spec: &PointSpec, context: &PointContext) -> anyhow::Result<()> {
    open_group_files(spec, context)
        .map(drop)
        .with_context(|| format!("preparing point {}", spec.name))
}

#[cfg(test)]
mod tests {
    use super::judge;

    /// A point that completed nothing was once "consistent: 100.0%".
    #[test]
    fn a_point_without_io_is_not_consistent() {
        let (verdict, note) = judge(0, 0, "the device");
        assert_eq!(verdict, "nothing_to_check");
        assert!(!note.contains('%'), "{note}");
        assert_eq!(judge(1000, 1000, "the device").0, "consistent");
        assert_eq!(judge(1000, 500, "the device").0, "device_saw_less");
    }
}
