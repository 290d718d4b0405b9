//! The SLOB method's options as the engine tests vary them: a plan, a
//! read-only workload, a timed stop and the driver options around them.
//!
//! Each builder fixes only what every engine's tests share; a test that
//! needs other values says so with struct update syntax
//! (`WorkloadOptions { update_pct, ..read_only_workload(16) }`). Not for an
//! engine's own run configuration (server, database file, recording):
//! those types live in the engine crates, and so do their builders.

use std::time::Duration;
use strata_slob::schema::SchemaPlan;
use strata_slob::session::{AccessDistribution, DriverOptions, StopAfter, WorkloadOptions};

/// `schemas` schemas of `blocks_per_schema` blocks (pages, rows) each,
/// random data, no scan table.
pub fn plan(schemas: u32, blocks_per_schema: u64) -> SchemaPlan {
    SchemaPlan {
        schemas,
        single_schema: false,
        blocks_per_schema,
        scan_table_blocks: 0,
        random_data: true,
    }
}

/// Selects of `work_unit` keys and nothing else: no updates (an update
/// would change 8 keys), no scans, no think time, uniform access.
pub fn read_only_workload(work_unit: u32) -> WorkloadOptions {
    WorkloadOptions {
        work_unit,
        update_pct: 0.0,
        update_work_unit: 8,
        update_pad_bytes: 0,
        scan_pct: 0.0,
        think_time: None,
        think_every: 1,
        hotspot: None,
        hot_schema_every: None,
        distribution: AccessDistribution::Uniform,
    }
}

/// A warm-up of `warmup_ms`, then a window of `duration_ms`.
pub fn timed(warmup_ms: u64, duration_ms: u64) -> StopAfter {
    StopAfter::Duration {
        warmup: Duration::from_millis(warmup_ms),
        duration: Duration::from_millis(duration_ms),
    }
}

/// `threads_per_schema` sessions per schema running `workload` until
/// `stop_after`, seed 42, failures failing the run, the default outlier
/// threshold.
pub fn driver_options(
    plan: SchemaPlan,
    workload: WorkloadOptions,
    threads_per_schema: u32,
    stop_after: StopAfter,
) -> DriverOptions {
    DriverOptions {
        plan,
        workload,
        threads_per_schema,
        sessions: None,
        stop_after,
        seed: 42,
        tolerate_failures: false,
        outlier_threshold: None,
        shard: None,
    }
}
