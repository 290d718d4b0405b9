//! The process's one block tracer, for a command that reads it at the
//! edges of its windows (`run`, `calibrate`), and each window's figures:
//! the devices' traced requests by operation and by role, percentiles of
//! their queue and device times, their count beside /proc/diskstats',
//! each process's requests, and the outliers.
//!
//! Not for: the tracing itself (`super`), or printing the figures.

use super::served::ServedTrace;
use super::{BlockTracer, Buckets, IoOutlier, Kind, Op, SeriesKey, TraceSnapshot};
use crate::diskstats::DiskStat;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use strata_recording::device::IostatFigures;
use strata_recording::run::{
    BlockTraceFigures, LatencyPercentiles, RequestSizes, TracedDevice, TracedOperation,
    TracedOutlier, TracedOutliers, TracedProcess, TracedRoleOperation, UnfollowedRequests,
};

static TRACER: OnceLock<Result<BlockTracer, String>> = OnceLock::new();
/// The absolute outlier threshold, ns (`--io-outlier`).
static OUTLIER_THRESHOLD_NS: AtomicU64 = AtomicU64::new(super::DEFAULT_OUTLIER_FLOOR_NS);
/// The device times the relative floor is set from: those it was last set
/// from, and those read since (not yet used).
static FLOOR_POINTS: Mutex<(Option<FloorPoint>, Option<FloorPoint>)> = Mutex::new((None, None));

/// A snapshot's device times by device and operation (roles together),
/// and when it was read.
struct FloorPoint {
    taken_ns: u64,
    device_times: BTreeMap<((u32, u32), Op), Buckets>,
}
/// A device's outliers are requests over this many times its p99 device
/// time (when that is under the absolute threshold).
pub const RELATIVE_OUTLIER_FACTOR: f64 = 10.0;

/// The relative floor follows a device's p99 only over an interval with
/// this many requests (ten over its p99), not a few requests' tail.
const REQUESTS_FOR_A_RELATIVE_FLOOR: u64 = 1000;

/// Why `threshold` cannot be the outlier threshold (`--io-outlier`): at 0
/// every block request would be an outlier.
pub fn refuse_outlier_threshold(threshold: std::time::Duration) -> Result<(), String> {
    match threshold.is_zero() {
        true => Err("must be more than 0 s: every block request would be an outlier".to_string()),
        false => Ok(()),
    }
}

/// Sets the absolute outlier threshold (default 500 ms, Oracle's).
pub fn set_outlier_threshold_ms(threshold_ms: f64) {
    let threshold_ns = (threshold_ms * 1e6).round() as u64;
    OUTLIER_THRESHOLD_NS.store(threshold_ns, Ordering::Relaxed);
    if let Some(Ok(tracer)) = TRACER.get() {
        let _ = tracer.set_outlier_floor(threshold_ns);
    }
}

/// Gives these threads (by id) their roles, named: their requests are
/// counted under them from now on. Nothing without a tracer.
pub fn name_roles(threads: &BTreeMap<u32, String>) -> Result<(), String> {
    let Some(Ok(tracer)) = TRACER.get() else {
        return Ok(());
    };
    let threads: Vec<(u32, &str)> = threads
        .iter()
        .map(|(thread, role)| (*thread, role.as_str()))
        .collect();
    tracer
        .name_roles(&threads)
        .map_err(|error| format!("{error:#}"))
}

/// The calling thread's role, given while it lives: its block requests
/// are counted under `role` until it is dropped (strata's own threads:
/// SQLite's sessions, calibrate's workers).
pub struct ThreadRole {
    thread: u32,
}

impl ThreadRole {
    /// Gives the calling thread `role`; the error says why its requests
    /// will not be counted under it.
    pub fn give(role: &str) -> Result<ThreadRole, String> {
        // SAFETY: gettid has no preconditions.
        let thread = unsafe { libc::gettid() } as u32;
        name_roles(&BTreeMap::from([(thread, role.to_string())]))?;
        Ok(ThreadRole { thread })
    }
}

impl Drop for ThreadRole {
    fn drop(&mut self) {
        forget_roles(&[self.thread]);
    }
}

/// Takes these threads' roles away: a thread that ended, whose id the
/// kernel may give another. Nothing without a tracer.
pub fn forget_roles(threads: &[u32]) {
    if let Some(Ok(tracer)) = TRACER.get() {
        tracer.forget_roles(threads);
    }
}

/// Starts the tracer (once; later calls do nothing) and says why it could
/// not start.
pub fn start() -> Result<(), String> {
    let tracer = TRACER.get_or_init(|| {
        let tracer = BlockTracer::start().map_err(|error| format!("{error:#}"))?;
        let threshold_ns = OUTLIER_THRESHOLD_NS.load(Ordering::Relaxed);
        tracer
            .set_outlier_floor(threshold_ns)
            .map_err(|error| format!("{error:#}"))?;
        Ok(tracer)
    });
    tracer.as_ref().map(|_| ()).map_err(Clone::clone)
}

/// Keeps the tracer from starting in this process, for `why`.
pub fn decline(why: &str) {
    let _ = TRACER.set(Err(why.to_string()));
}

/// What the tracer counted so far; `None` when it is not running.
pub fn snapshot() -> Option<TraceSnapshot> {
    counts().map(Counts::with_distributions)
}

/// What the tracer counted so far (`None` when it is not running) and
/// /proc/diskstats (empty when unreadable), for an edge to read right
/// after its database's counters: only the tracer's counts (requests,
/// sums, processes' totals, merges: a few hundred entries) lie between
/// those and /proc/diskstats; the bulk (buckets, outliers) is read after.
///
/// Reading the counts takes milliseconds, and an edge is often taken
/// under full load while its twin is taken under none (a window's end
/// comes after its sessions stop): /proc/diskstats is read before the
/// counts too, and the requests it saw complete meanwhile are named in
/// the snapshot (`completed_while_read`), not hidden.
pub fn with_diskstats() -> (Option<TraceSnapshot>, Vec<DiskStat>) {
    let (counts, disks, completed) = between_diskstats(counts);
    let snapshot = counts.map(|Counts(mut counts)| {
        counts.completed_while_read = completed;
        Counts(counts).with_distributions()
    });
    (snapshot, disks)
}

/// Requests completed, by device (major, minor) and operation.
pub type CompletedRequests = BTreeMap<((u32, u32), Op), u64>;

/// `read` between two reads of /proc/diskstats (empty when unreadable):
/// what it gave, the second read, and the requests completed in between.
fn between_diskstats<T>(read: impl FnOnce() -> T) -> (T, Vec<DiskStat>, CompletedRequests) {
    let before = crate::diskstats::read_diskstats().unwrap_or_default();
    let read = read();
    let after = crate::diskstats::read_diskstats().unwrap_or_default();
    let completed = completed_between(&before, &after);
    (read, after, completed)
}

/// The requests each device completed between two reads of
/// /proc/diskstats, by operation; none where it completed none.
pub fn completed_between(before: &[DiskStat], after: &[DiskStat]) -> CompletedRequests {
    let mut completed = BTreeMap::new();
    for disk in after {
        let Some(earlier) = before
            .iter()
            .find(|earlier| (earlier.major, earlier.minor) == (disk.major, disk.minor))
        else {
            continue;
        };
        let counts = [
            (Op::Read, disk.read_requests, earlier.read_requests),
            (Op::Write, disk.write_requests, earlier.write_requests),
            (Op::Discard, disk.discard_requests, earlier.discard_requests),
            (Op::Flush, disk.flush_requests, earlier.flush_requests),
        ];
        for (op, now, then) in counts {
            let requests = now.saturating_sub(then);
            if requests > 0 {
                completed.insert(((disk.major, disk.minor), op), requests);
            }
        }
    }
    completed
}

/// A snapshot whose counts are read and whose distributions are not yet.
struct Counts(TraceSnapshot);

impl Counts {
    /// The snapshot, its distributions read now. Its device times are kept
    /// for the next snapshot's outlier floor.
    fn with_distributions(mut self) -> TraceSnapshot {
        let Some(Ok(tracer)) = TRACER.get() else {
            return self.0;
        };
        tracer.add_distributions(&mut self.0);
        let point = FloorPoint {
            taken_ns: self.0.taken_ns,
            device_times: self.0.by_device(Kind::Device),
        };
        let mut kept = FLOOR_POINTS.lock().unwrap_or_else(PoisonError::into_inner);
        if kept
            .1
            .as_ref()
            .is_none_or(|kept| kept.taken_ns < point.taken_ns)
        {
            kept.1 = Some(point);
        }
        self.0
    }
}

/// The counts of a snapshot (requests, sums, processes' totals, merges),
/// the rest to be read by `Counts::with_distributions`; `None` when the
/// tracer is not running. First the kernel's outlier floor is set, to 10 × the highest p99 device
/// time between the two snapshots before (of a device and operation with
/// 1,000 requests in it) when that is under the threshold. The maps are
/// read unlocked: a reader beside (the per-second sampler beside a
/// window's edge) does not wait for another's read.
fn counts() -> Option<Counts> {
    let tracer = TRACER.get()?.as_ref().ok()?;
    {
        let mut kept = FLOOR_POINTS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(newest) = kept.1.take() {
            lower_the_floor(tracer, kept.0.as_ref(), &newest);
            kept.0 = Some(newest);
        }
    }
    Some(Counts(tracer.counts()))
}

/// Everything traced so far as an agent serves it, with /proc/diskstats
/// read right after the counts, for a request that came at `received_ns`
/// (CLOCK_MONOTONIC); `None` when the tracer is not running.
/// The roles of this host's PostgreSQL processes are named from their
/// titles first, unless they were named under a second ago (an agent
/// names them each interval). Like [`peek`], it leaves the outlier floor
/// as it is.
pub fn served(received_ns: u64) -> Option<ServedTrace> {
    let tracer = TRACER.get()?.as_ref().ok()?;
    let roles_unnamed = name_roles_from_titles(tracer, TITLES_FRESH_FOR).err();
    let (mut trace, disks, completed) = between_diskstats(|| tracer.counts());
    trace.completed_while_read = completed;
    tracer.add_distributions(&mut trace);
    Some(ServedTrace {
        trace,
        disks,
        received_ns,
        answered_ns: 0,
        roles_unnamed,
        unavailable: None,
    })
}

/// The PostgreSQL processes given a role from their titles, by process id,
/// when they were last read, and what came of it.
static TITLED: Mutex<Titled> = Mutex::new(Titled {
    roles: BTreeMap::new(),
    read_at: None,
    outcome: Ok(()),
});

struct Titled {
    roles: BTreeMap<u32, &'static str>,
    read_at: Option<std::time::Instant>,
    outcome: Result<(), String>,
}

/// Titles read this recently are not read again for `/blocktrace`.
const TITLES_FRESH_FOR: std::time::Duration = std::time::Duration::from_secs(1);

/// Gives this host's PostgreSQL processes their roles from their titles,
/// and takes them from those gone; why not where this /proc's process ids
/// are not the tracer's. Nothing without a tracer.
pub fn name_postgres_roles_from_titles() -> Result<(), String> {
    match TRACER.get() {
        Some(Ok(tracer)) => name_roles_from_titles(tracer, std::time::Duration::ZERO),
        _ => Ok(()),
    }
}

/// Names the roles from the titles, unless they were read within
/// `fresh_for`: then what came of that reading.
fn name_roles_from_titles(
    tracer: &BlockTracer,
    fresh_for: std::time::Duration,
) -> Result<(), String> {
    let mut titled = TITLED.lock().unwrap_or_else(PoisonError::into_inner);
    if titled.read_at.is_some_and(|at| at.elapsed() < fresh_for) {
        return titled.outcome.clone();
    }
    titled.read_at = Some(std::time::Instant::now());
    titled.outcome = match crate::titles::pid_namespace_apart() {
        Some(why) => Err(why),
        None => name_roles_anew(tracer, &mut titled.roles),
    };
    titled.outcome.clone()
}

/// Gives the PostgreSQL processes in /proc now their roles, and takes the
/// roles of those in `titled` that are gone.
fn name_roles_anew(
    tracer: &BlockTracer,
    titled: &mut BTreeMap<u32, &'static str>,
) -> Result<(), String> {
    let roles = crate::titles::postgres_roles();
    let gone: Vec<u32> = titled
        .keys()
        .filter(|pid| !roles.contains_key(pid))
        .copied()
        .collect();
    tracer.forget_roles(&gone);
    let new: Vec<(u32, &str)> = roles
        .iter()
        .filter(|(pid, role)| titled.get(pid) != Some(role))
        .map(|(pid, role)| (*pid, *role))
        .collect();
    let named = tracer
        .name_roles(&new)
        .map_err(|error| format!("{error:#}"));
    *titled = roles;
    named
}

/// The outliers the tracer has seen, and those after the `after`th still
/// in its ring; `None` when it is not running.
pub fn outliers_after(after: u64) -> Option<(u64, Vec<IoOutlier>)> {
    Some(TRACER.get()?.as_ref().ok()?.outliers_after(after))
}

/// What the tracer counted so far, leaving the outlier floor as it is (for
/// a reader beside the one that sets it: `observe --top`, a Prometheus
/// scrape); `None` when it is not running.
pub fn peek() -> Option<TraceSnapshot> {
    Some(TRACER.get()?.as_ref().ok()?.snapshot())
}

fn lower_the_floor(tracer: &BlockTracer, before: Option<&FloorPoint>, newest: &FloorPoint) {
    if before.is_some_and(|before| before.taken_ns > newest.taken_ns) {
        return;
    }
    let earlier = |key| before.and_then(|before| before.device_times.get(key));
    let threshold_ns = OUTLIER_THRESHOLD_NS.load(Ordering::Relaxed) as f64;
    let highest_p99_ns = newest
        .device_times
        .iter()
        .map(|(key, buckets)| buckets.since(earlier(key)))
        .filter(|buckets| buckets.count() >= REQUESTS_FOR_A_RELATIVE_FLOOR)
        .filter_map(|buckets| buckets.quantile(0.99))
        .fold(None, |highest: Option<f64>, p99| {
            Some(highest.map_or(p99, |h| h.max(p99)))
        });
    if let Some(p99) = highest_p99_ns {
        let floor = threshold_ns.min(RELATIVE_OUTLIER_FACTOR * p99);
        let _ = tracer.set_outlier_floor(floor as u64);
    }
}

/// Why the tracer gives no figures: not started, could not start, or the
/// devices are on another host.
pub fn why_not_tracing() -> String {
    match TRACER.get() {
        Some(Err(why)) => why.clone(),
        Some(Ok(_)) => "the devices are not on this host".to_string(),
        None => "block tracing was not started".to_string(),
    }
}

const OPERATIONS: [Op; 5] = [Op::Read, Op::Write, Op::Flush, Op::Discard, Op::Other];

/// The traced requests of `devices` (named as in `disks`) between two
/// snapshots; why there are none when either is missing.
pub fn figures(
    (before, after): (Option<&TraceSnapshot>, Option<&TraceSnapshot>),
    disks: &[DiskStat],
    devices: &[IostatFigures],
) -> BlockTraceFigures {
    let (Some(before), Some(after)) = (before, after) else {
        return BlockTraceFigures {
            unavailable: Some(why_not_tracing()),
            ..BlockTraceFigures::default()
        };
    };
    let window = after.since(before);
    let on_devices: Vec<(&IostatFigures, &DiskStat)> = devices
        .iter()
        .filter_map(|device| Some((device, crate::diskstats::find(disks, &device.device)?)))
        .collect();
    let traced = on_devices
        .iter()
        .map(|(device, disk)| {
            let operations = OPERATIONS
                .iter()
                .filter_map(|op| operation(&window, (disk.major, disk.minor), *op, device))
                .collect();
            TracedDevice {
                device: device.device.clone(),
                role: device.role.clone(),
                operations,
                by_role: by_role(&window, (disk.major, disk.minor)),
            }
        })
        .collect();
    let skipped = window.unfollowed.skipped_by_kernel;
    BlockTraceFigures {
        unavailable: None,
        traced_by: None,
        devices: traced,
        unfollowed: UnfollowedRequests {
            issued_unstarted: window.unfollowed.issued_unstarted,
            ended_unseen: window.unfollowed.ended_unseen,
            starts_dropped: window.unfollowed.starts_dropped,
            ends_skipped_by_kernel: skipped[2],
            issues_skipped_by_kernel: skipped[1],
            processes_dropped: window.unfollowed.processes_dropped,
            ends_not_seen: window.unfollowed.ends_not_seen,
            ends_missed: window.ends_missed_in_all(),
        },
        processes: processes(&window, &on_devices),
        outliers: Some(outliers(&window, before.taken_ns, &on_devices)),
    }
}

/// The device's name among the run's devices.
fn device_named<'a>(
    on: &'a [(&IostatFigures, &DiskStat)],
    major: u32,
    minor: u32,
) -> Option<&'a str> {
    on.iter()
        .find(|(_, disk)| (disk.major, disk.minor) == (major, minor))
        .map(|(device, _)| device.device.as_str())
}

/// The device's requests by the submitters' role and operation.
fn by_role(window: &TraceSnapshot, device: (u32, u32)) -> Vec<TracedRoleOperation> {
    let of_kind = |key: &SeriesKey, kind: Kind| SeriesKey { kind, ..*key };
    window
        .series
        .iter()
        .filter(|(key, _)| (key.major, key.minor) == device && key.kind == Kind::Device)
        .filter_map(|(key, device_time)| {
            Some(TracedRoleOperation {
                role: window.role_name(key.role).to_string(),
                operation: key.op.name().to_string(),
                requests: device_time.count(),
                merges: window
                    .merges
                    .get(&(device, key.op, key.role))
                    .copied()
                    .unwrap_or(0),
                device_time: percentiles(device_time)?,
                queue_time: window
                    .series
                    .get(&of_kind(key, Kind::Queue))
                    .and_then(percentiles),
                device_time_buckets: listed(device_time),
                sizes: window
                    .series
                    .get(&of_kind(key, Kind::Size))
                    .and_then(|sizes| request_sizes(sizes, None)),
            })
        })
        .collect()
}

fn processes(window: &TraceSnapshot, on: &[(&IostatFigures, &DiskStat)]) -> Vec<TracedProcess> {
    let mean_ms = |sum_ns: u64, count: u64| sum_ns as f64 / count.max(1) as f64 / 1e6;
    let mut listed: Vec<TracedProcess> = window
        .processes
        .iter()
        .filter_map(|(key, totals)| {
            Some(TracedProcess {
                pid: key.tgid,
                command: totals.command.clone(),
                role: window.role_name(key.role).to_string(),
                device: device_named(on, key.major, key.minor)?.to_string(),
                operation: key.op.name().to_string(),
                requests: totals.requests,
                bytes: totals.bytes,
                device_time_mean_ms: mean_ms(totals.device_ns, totals.requests),
                queue_time_mean_ms: mean_ms(totals.queue_ns, totals.requests),
            })
        })
        .collect();
    listed.sort_by(|a, b| b.requests.cmp(&a.requests).then(a.pid.cmp(&b.pid)));
    listed
}

/// The window's requests on the devices over each one's threshold: the
/// lesser of the absolute one and 10 × its p99 device time.
fn outliers(
    window: &TraceSnapshot,
    window_start_ns: u64,
    on: &[(&IostatFigures, &DiskStat)],
) -> TracedOutliers {
    let absolute_ns = OUTLIER_THRESHOLD_NS.load(Ordering::Relaxed) as f64;
    let threshold_ns = |outlier: &IoOutlier| {
        let device = (outlier.major, outlier.minor);
        let p99 = window
            .get(device, outlier.op, Kind::Device)
            .and_then(|buckets| buckets.quantile(0.99));
        p99.map_or(absolute_ns, |p99| {
            absolute_ns.min(RELATIVE_OUTLIER_FACTOR * p99)
        })
    };
    let listed = window
        .outliers
        .iter()
        .filter_map(|outlier| {
            let device = device_named(on, outlier.major, outlier.minor)?;
            let threshold = threshold_ns(outlier);
            let total = (outlier.queue_ns + outlier.device_ns) as f64;
            (total >= threshold).then(|| TracedOutlier {
                ended_s: outlier.ended_ns.saturating_sub(window_start_ns) as f64 / 1e9,
                pid: outlier.tgid,
                thread: (outlier.thread != outlier.tgid && outlier.thread != 0)
                    .then_some(outlier.thread),
                command: outlier.command.clone(),
                role: window.role_name(outlier.role).to_string(),
                device: device.to_string(),
                operation: outlier.op.name().to_string(),
                sector: outlier.sector,
                bytes: outlier.bytes,
                queue_ms: outlier.queue_ns as f64 / 1e6,
                device_ms: outlier.device_ns as f64 / 1e6,
                threshold_ms: threshold / 1e6,
                sequence: outlier.sequence,
                ..TracedOutlier::default()
            })
        })
        .collect();
    TracedOutliers {
        absolute_ms: absolute_ns / 1e6,
        rule: format!(
            "start to end at or over the lesser of {} ms and {RELATIVE_OUTLIER_FACTOR} × the device's p99 device time in the window",
            absolute_ns / 1e6
        ),
        kept_from_ms: window.outlier_floor_ns as f64 / 1e6,
        listed,
        overwritten: window.unfollowed.outliers_overwritten,
    }
}

fn operation(
    window: &TraceSnapshot,
    device: (u32, u32),
    op: Op,
    counted: &IostatFigures,
) -> Option<TracedOperation> {
    let device_time = window.get(device, op, Kind::Device)?;
    let (diskstats_bytes, diskstats_merges) = match op {
        Op::Read => (Some(counted.read_bytes), Some(counted.read_merges)),
        Op::Write => (Some(counted.write_bytes), Some(counted.write_merges)),
        Op::Flush => (Some(0), None),
        Op::Discard => (Some(counted.discard_bytes), Some(counted.discard_merges)),
        Op::Other => (None, None),
    };
    let total = window.get(device, op, Kind::Total);
    Some(TracedOperation {
        operation: op.name().to_string(),
        requests: total.as_ref().map_or(0, Buckets::count),
        diskstats_requests: counted.completed_requests(op.name()),
        issued_requests: Some(device_time.count()),
        ends_missed: Some(window.ends_missed_of(device, op)),
        completed_while_read: counted
            .completed_requests(op.name())
            .map(|_| window.completed_while_read_of(device, op)),
        device_time: percentiles(&device_time)?,
        queue_time: window
            .get(device, op, Kind::Queue)
            .as_ref()
            .and_then(percentiles),
        total_mean_ms: total.and_then(|total| total.mean()).map(|ns| ns / 1e6),
        sizes: window
            .get(device, op, Kind::Size)
            .and_then(|sizes| request_sizes(&sizes, diskstats_bytes)),
        // A discard bio merged into a request passes no tracepoint
        // (`bio_attempt_discard_merge`): only diskstats counts those.
        merges: diskstats_merges
            .filter(|_| op != Op::Discard)
            .map(|_| window.merges_of(device, op)),
        diskstats_merges,
    })
}

/// (bucket, count) in bucket order.
fn listed(buckets: &Buckets) -> Vec<(u16, u64)> {
    buckets
        .counts
        .iter()
        .map(|(bucket, count)| (*bucket, *count))
        .collect()
}

/// The sizes' figures; a percentile is the lowest size of its bucket
/// (exact to 64 KiB: sizes are whole sectors, the buckets 1/128 of a power
/// of two wide).
fn request_sizes(sizes: &Buckets, diskstats_bytes: Option<u64>) -> Option<RequestSizes> {
    let lowest = |bucket: u16| super::bucket_range(bucket).0;
    Some(RequestSizes {
        bytes: sizes.sum,
        diskstats_bytes,
        mean_bytes: sizes.mean()?,
        p50_bytes: lowest(sizes.quantile_bucket(0.5)?),
        p99_bytes: lowest(sizes.quantile_bucket(0.99)?),
        max_bytes: lowest(*sizes.counts.keys().next_back()?),
        buckets: listed(sizes),
    })
}

fn percentiles(buckets: &Buckets) -> Option<LatencyPercentiles> {
    let ms = |ns: f64| ns / 1e6;
    Some(LatencyPercentiles {
        mean_ms: ms(buckets.mean()?),
        p50_ms: ms(buckets.quantile(0.5)?),
        p99_ms: ms(buckets.quantile(0.99)?),
        p999_ms: ms(buckets.quantile(0.999)?),
        max_ms: ms(buckets.max()? as f64),
    })
}
