//! One worker thread: keeps its engine's slots full with requests from its
//! offset generator, timestamps every request, and tallies what completes
//! inside the measured window. Requests are timed from the moment they were
//! queued, or in open-loop mode from the moment they were *scheduled*, so a
//! stalled device shows up as latency instead of silently lowering the
//! arrival rate (coordinated omission).
//!
//! Not for: starting threads, deciding windows or merging results; that is
//! `point`.

use crate::offsets::OffsetGenerator;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};
use strata_core::histogram::LatencyHistogram;
use strata_io::{
    EngineTarget, IoCompletion, IoEngine, IoEngineKind, IoRequest, Operation, WireCounters,
};
use strata_probe::blocktrace::shared::ThreadRole;

/// Kept per worker so a long run with a sick device cannot eat memory.
const MAX_OUTLIERS_PER_WORKER: usize = 10_000;

/// Everything one worker needs, resolved before it starts.
pub struct WorkerPlan {
    pub group: usize,
    pub engine: IoEngineKind,
    pub target: EngineTarget,
    pub depth: usize,
    pub block_size: u32,
    pub read_pct: f64,
    pub datasync: bool,
    pub offsets: OffsetGenerator,
    /// This worker's share of the group's open-loop rate.
    pub rate_iops: Option<f64>,
    /// This worker's share of a fixed-count job.
    pub ios_budget: Option<u64>,
    pub outlier_ns: u64,
    /// The role its block requests are traced under: `calibrate` and its
    /// group's label.
    pub role: String,
}

/// The point's clock, the same for every worker.
#[derive(Clone, Copy, Debug)]
pub struct Timeline {
    pub start: Instant,
    pub measure_from: Instant,
    pub stop_at: Option<Instant>,
}

/// What the point's threads share while it runs.
pub struct Shared {
    pub stop: AtomicBool,
    /// Measured completions so far, one counter per worker.
    pub completed: Vec<AtomicU64>,
    pub ready: Barrier,
    pub timeline: OnceLock<Timeline>,
}

/// Requests, bytes and latencies of one operation.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub requests: u64,
    pub bytes: u64,
    pub latency: LatencyHistogram,
}

impl Tally {
    pub fn merge(&mut self, other: &Tally) {
        self.requests += other.requests;
        self.bytes += other.bytes;
        self.latency.merge(&other.latency);
    }
}

/// One second of the measured window.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SecondBucket {
    pub read_requests: u64,
    pub write_requests: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub lat_sum_ns: u64,
    pub lat_max_ns: u64,
}

impl SecondBucket {
    pub fn merge(&mut self, other: &SecondBucket) {
        self.read_requests += other.read_requests;
        self.write_requests += other.write_requests;
        self.read_bytes += other.read_bytes;
        self.write_bytes += other.write_bytes;
        self.lat_sum_ns += other.lat_sum_ns;
        self.lat_max_ns = self.lat_max_ns.max(other.lat_max_ns);
    }
}

#[derive(Debug, Default)]
pub struct WorkerOutcome {
    pub group: usize,
    pub reads: Tally,
    pub writes: Tally,
    pub per_second: Vec<SecondBucket>,
    /// Requests slower than the threshold: (seconds into the window,
    /// operation, offset, size, latency in ns).
    pub outliers: Vec<(f64, Operation, u64, u32, u64)>,
    pub outliers_dropped: u64,
    /// Sorted batches begun and ended inside the window, each timed whole.
    pub batches: LatencyHistogram,
    pub error: Option<String>,
    /// What the engine put on the wire from the window's start (an NFS
    /// engine's calls).
    pub wire: Option<WireCounters>,
}

struct InFlight {
    operation: Operation,
    offset: u64,
    issued: Instant,
    /// The sorted batch the request belongs to, by number.
    batch: Option<u64>,
}

/// A sorted batch with requests still to queue or to complete.
struct OpenBatch {
    number: u64,
    started: Instant,
    /// Requests queued and not yet completed.
    in_flight: u32,
}

struct Worker<'a> {
    plan: WorkerPlan,
    engine: Box<dyn IoEngine>,
    shared: &'a Shared,
    index: usize,
    timeline: Timeline,
    window_end: Option<Instant>,
    next_due: Instant,
    issued: u64,
    in_flight: Vec<Option<InFlight>>,
    free_slots: Vec<u32>,
    /// Sorted batches not yet complete: one or two, more only when the
    /// queue depth exceeds a batch.
    open_batches: Vec<OpenBatch>,
    outcome: WorkerOutcome,
    /// The engine's wire counters when the window began (the inner
    /// `None` for an engine that counts none); `None` before.
    wire_from: Option<Option<WireCounters>>,
}

/// Runs one worker to the end of the point; never panics on I/O errors,
/// which end up in `WorkerOutcome::error` and stop the whole point.
pub fn run_worker(plan: WorkerPlan, shared: &Shared, index: usize) -> WorkerOutcome {
    let engine = plan
        .engine
        .open(plan.target.clone(), plan.depth, plan.block_size as usize);
    // Where the roles' table has no room, its requests are counted by
    // process only, as strata's.
    let _role = ThreadRole::give(&plan.role).ok();
    shared.ready.wait();
    shared.ready.wait();
    let timeline = *shared
        .timeline
        .get()
        .expect("the point sets its timeline before starting workers");
    let group = plan.group;
    let engine = match engine {
        Ok(engine) => engine,
        Err(error) => {
            shared.stop.store(true, Ordering::Relaxed);
            return WorkerOutcome {
                group,
                error: Some(format!("{} engine could not start: {error}", plan.engine)),
                ..WorkerOutcome::default()
            };
        }
    };
    let depth = plan.depth;
    let mut worker = Worker {
        plan,
        engine,
        shared,
        index,
        timeline,
        window_end: timeline.stop_at,
        next_due: timeline.start,
        issued: 0,
        in_flight: (0..depth).map(|_| None).collect(),
        free_slots: (0..depth as u32).rev().collect(),
        open_batches: Vec::new(),
        outcome: WorkerOutcome {
            group,
            ..WorkerOutcome::default()
        },
        wire_from: None,
    };
    worker.run();
    let wire = worker.engine.wire();
    let from = worker.wire_from.flatten();
    worker.outcome.wire = wire.map(|end| end.since(from.unwrap_or(end)));
    worker.outcome
}

impl Worker<'_> {
    fn run(&mut self) {
        let mut completions = Vec::with_capacity(self.plan.depth);
        loop {
            let now = Instant::now();
            if self.wire_from.is_none() && now >= self.timeline.measure_from {
                self.wire_from = Some(self.engine.wire());
            }
            let issuing = self.still_issuing(now);
            if issuing {
                if let Err(error) = self.fill_slots(now) {
                    self.fail(format!("queueing a request: {error}"));
                }
            }
            if self.free_slots.len() == self.plan.depth {
                if !self.still_issuing(Instant::now()) {
                    return;
                }
                self.wait_for_schedule();
                continue;
            }
            completions.clear();
            if let Err(error) = self.engine.submit_and_reap(1, &mut completions) {
                self.fail(format!("waiting for completions: {error}"));
                return;
            }
            let done = Instant::now();
            for completion in &completions {
                self.complete(completion, done);
            }
            let counted = self.outcome.reads.requests + self.outcome.writes.requests;
            self.shared.completed[self.index].store(counted, Ordering::Relaxed);
        }
    }

    fn still_issuing(&mut self, now: Instant) -> bool {
        if self.outcome.error.is_some() {
            return false;
        }
        if self.shared.stop.load(Ordering::Relaxed) {
            if self.window_end.is_none_or(|end| end > now) {
                self.window_end = Some(now);
            }
            return false;
        }
        if self.timeline.stop_at.is_some_and(|stop_at| now >= stop_at) {
            return false;
        }
        self.plan
            .ios_budget
            .is_none_or(|budget| self.issued < budget)
    }

    fn fill_slots(&mut self, now: Instant) -> std::io::Result<()> {
        while let Some(&slot) = self.free_slots.last() {
            if self
                .plan
                .ios_budget
                .is_some_and(|budget| self.issued >= budget)
            {
                break;
            }
            let issued = match self.plan.rate_iops {
                Some(rate) => {
                    if self.next_due > now {
                        break;
                    }
                    let due = self.next_due;
                    self.next_due += Duration::from_secs_f64(1.0 / rate);
                    due
                }
                None => now,
            };
            self.free_slots.pop();
            self.queue(slot, issued)?;
        }
        Ok(())
    }

    fn queue(&mut self, slot: u32, issued: Instant) -> std::io::Result<()> {
        let offset = self.plan.offsets.next_offset();
        let operation = if self.plan.read_pct >= 100.0
            || (self.plan.read_pct > 0.0 && self.plan.offsets.percent_draw() < self.plan.read_pct)
        {
            Operation::Read
        } else {
            Operation::Write
        };
        self.engine.queue(IoRequest {
            slot,
            operation,
            offset,
            len: self.plan.block_size,
            datasync: self.plan.datasync && operation == Operation::Write,
        })?;
        let batch = self.batch_of_next_request(issued);
        self.in_flight[slot as usize] = Some(InFlight {
            operation,
            offset,
            issued,
            batch,
        });
        self.issued += 1;
        Ok(())
    }

    /// The number of the sorted batch the request about to be counted as
    /// issued belongs to, opening it when it is the batch's first.
    fn batch_of_next_request(&mut self, issued: Instant) -> Option<u64> {
        let blocks = self.plan.offsets.batch_blocks()?;
        let number = self.issued / u64::from(blocks);
        if self.issued.is_multiple_of(u64::from(blocks)) {
            self.open_batches.push(OpenBatch {
                number,
                started: issued,
                in_flight: 0,
            });
        }
        let open = self.open_batches.iter_mut().find(|b| b.number == number)?;
        open.in_flight += 1;
        Some(number)
    }

    /// Counts a batch's completed request; times the batch when it was its
    /// last and the whole batch lies inside the window.
    fn batch_request_done(&mut self, number: u64, done: Instant) {
        let (Some(blocks), Some(index)) = (
            self.plan.offsets.batch_blocks(),
            self.open_batches.iter().position(|b| b.number == number),
        ) else {
            return;
        };
        let open = &mut self.open_batches[index];
        open.in_flight -= 1;
        let all_queued = (number + 1) * u64::from(blocks) <= self.issued;
        if open.in_flight > 0 || !all_queued {
            return;
        }
        let started = self.open_batches.swap_remove(index).started;
        let inside =
            started >= self.timeline.measure_from && self.window_end.is_none_or(|end| done <= end);
        if inside {
            let batch_ns = done.saturating_duration_since(started).as_nanos() as u64;
            self.outcome.batches.record_ns(batch_ns);
        }
    }

    /// Open-loop mode with nothing in flight: sleep until the next request
    /// is due, in slices short enough to notice a stop.
    fn wait_for_schedule(&self) {
        let now = Instant::now();
        if self.next_due > now {
            std::thread::sleep((self.next_due - now).min(Duration::from_millis(50)));
        }
    }

    fn complete(&mut self, completion: &IoCompletion, done: Instant) {
        let slot = completion.slot;
        let request = self.in_flight[slot as usize]
            .take()
            .expect("the engine completes only requests it was given");
        self.free_slots.push(slot);
        if let Some(number) = request.batch {
            self.batch_request_done(number, done);
        }
        if completion.result != i64::from(self.plan.block_size) {
            self.fail(describe_failure(
                &request,
                completion.result,
                self.plan.block_size,
            ));
            return;
        }
        let counts =
            done >= self.timeline.measure_from && self.window_end.is_none_or(|end| done <= end);
        if counts {
            self.tally(&request, done);
        }
    }

    fn tally(&mut self, request: &InFlight, done: Instant) {
        let latency_ns = done.saturating_duration_since(request.issued).as_nanos() as u64;
        let bytes = u64::from(self.plan.block_size);
        let since_window = done - self.timeline.measure_from;
        let tally = match request.operation {
            Operation::Read => &mut self.outcome.reads,
            Operation::Write => &mut self.outcome.writes,
        };
        tally.requests += 1;
        tally.bytes += bytes;
        tally.latency.record_ns(latency_ns);
        let second = since_window.as_secs() as usize;
        if self.outcome.per_second.len() <= second {
            self.outcome
                .per_second
                .resize(second + 1, SecondBucket::default());
        }
        let bucket = &mut self.outcome.per_second[second];
        match request.operation {
            Operation::Read => {
                bucket.read_requests += 1;
                bucket.read_bytes += bytes;
            }
            Operation::Write => {
                bucket.write_requests += 1;
                bucket.write_bytes += bytes;
            }
        }
        bucket.lat_sum_ns += latency_ns;
        bucket.lat_max_ns = bucket.lat_max_ns.max(latency_ns);
        if latency_ns >= self.plan.outlier_ns {
            self.note_outlier(request, since_window.as_secs_f64(), latency_ns);
        }
    }

    fn note_outlier(&mut self, request: &InFlight, t_s: f64, latency_ns: u64) {
        if self.outcome.outliers.len() >= MAX_OUTLIERS_PER_WORKER {
            self.outcome.outliers_dropped += 1;
            return;
        }
        self.outcome.outliers.push((
            t_s,
            request.operation,
            request.offset,
            self.plan.block_size,
            latency_ns,
        ));
    }

    fn fail(&mut self, message: String) {
        if self.outcome.error.is_none() {
            self.outcome.error = Some(message);
        }
        self.shared.stop.store(true, Ordering::Relaxed);
    }
}

fn describe_failure(request: &InFlight, result: i64, block_size: u32) -> String {
    let operation = match request.operation {
        Operation::Read => "read",
        Operation::Write => "write",
    };
    if result < 0 {
        let error = std::io::Error::from_raw_os_error(-result as i32);
        format!(
            "{operation} of {block_size} bytes at offset {} failed: {error}",
            request.offset
        )
    } else {
        format!(
            "{operation} of {block_size} bytes at offset {} moved only {result} bytes",
            request.offset
        )
    }
}
