//! What a point measured, from its workers' tallies, in the shapes of
//! strata-recording's calibrate types (the table, the JSON document, the
//! CSV files and the Recording print those).
//!
//! Not for: measuring; the numbers come from `point`.

use crate::spec::{AccessPattern, Distribution, GroupSpec};
use crate::worker::{Tally, WorkerOutcome};
use strata_core::histogram::LatencyHistogram;
use strata_core::units::mb_per_s;
pub use strata_probe::diskstats::IostatFigures as DeviceFigures;
pub use strata_recording::calibrate::{
    per_second, BatchFigures, Best, CpuFigures, GroupHistograms, GroupResult, LatencyTargetResult,
    OpFigures, OutlierRecord, PointResult, SecondSample, Summary, Verification,
};

/// Requests, throughput and latency of one operation over `seconds`.
pub fn op_figures(tally: &Tally, seconds: f64) -> OpFigures {
    OpFigures {
        requests: tally.requests,
        bytes: tally.bytes,
        iops: per_second(tally.requests, seconds),
        mb_per_s: mb_per_s(tally.bytes, seconds),
        latency: tally.latency.summary(),
    }
}

/// One group's figures from its workers' outcomes over `seconds`.
pub fn group_result(spec: &GroupSpec, outcomes: &[&WorkerOutcome], seconds: f64) -> GroupResult {
    let mut reads = Tally::default();
    let mut writes = Tally::default();
    let mut batches = LatencyHistogram::new();
    for outcome in outcomes {
        reads.merge(&outcome.reads);
        writes.merge(&outcome.writes);
        batches.merge(&outcome.batches);
    }
    let mut all = reads.clone();
    all.merge(&writes);
    GroupResult {
        label: spec.label.clone(),
        rw: spec.rw_name().to_string(),
        block_size_bytes: spec.block_size_bytes,
        queue_depth: spec.queue_depth,
        jobs: spec.jobs,
        sync: spec.sync,
        all: op_figures(&all, seconds),
        reads: op_figures(&reads, seconds),
        writes: op_figures(&writes, seconds),
        batches: batch_figures(spec, &batches),
        histograms: GroupHistograms {
            read: reads.latency,
            write: writes.latency,
            batch: batches,
        },
    }
}

/// The whole-batch figures of a group that reads in batches.
fn batch_figures(spec: &GroupSpec, batches: &LatencyHistogram) -> Option<BatchFigures> {
    let AccessPattern::Random {
        distribution: Distribution::Sorted { batch } | Distribution::Batches { batch },
    } = spec.pattern
    else {
        return None;
    };
    Some(BatchFigures {
        blocks_per_batch: batch,
        latency: batches.summary(),
    })
}
