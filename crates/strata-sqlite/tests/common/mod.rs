//! What the SQLite tests share: plans, driver options, a silent observer.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;
use strata_run::outcome::{PageCacheChoice, RunObserver};
use strata_slob::load::LoadProgress;
use strata_slob::schema::SchemaPlan;
use strata_slob::session::{AccessDistribution, DriverOptions, StopAfter, WorkloadOptions};
use strata_sqlite::{SqliteDatabase, SqliteRunConfig, DEFAULT_SESSION_CACHE_BYTES};

pub fn plan(schemas: u32, pages: u64) -> SchemaPlan {
    SchemaPlan {
        schemas,
        single_schema: false,
        blocks_per_schema: pages,
        scan_table_blocks: 0,
        random_data: true,
    }
}

pub fn workload(update_pct: f64) -> WorkloadOptions {
    WorkloadOptions {
        work_unit: 64,
        update_pct,
        update_work_unit: 8,
        scan_pct: 0.0,
        think_time: None,
        think_every: 1,
        hotspot: None,
        hot_schema_every: None,
        distribution: AccessDistribution::Uniform,
    }
}

pub fn timed(warmup_ms: u64, duration_ms: u64) -> StopAfter {
    StopAfter::Duration {
        warmup: Duration::from_millis(warmup_ms),
        duration: Duration::from_millis(duration_ms),
    }
}

pub fn config(
    database: SqliteDatabase,
    plan: SchemaPlan,
    update_pct: f64,
    stop_after: StopAfter,
) -> SqliteRunConfig {
    SqliteRunConfig {
        database,
        page_cache: PageCacheChoice::Auto,
        session_cache_bytes: DEFAULT_SESSION_CACHE_BYTES,
        page_bytes: None,
        replace: false,
        driver: DriverOptions {
            plan,
            workload: workload(update_pct),
            threads_per_schema: 1,
            sessions: None,
            stop_after,
            seed: 11,
            tolerate_failures: false,
            outlier_threshold: None,
        },
        setup_only: false,
        record: None,
        command: vec![
            "strata".into(),
            "run".into(),
            "--engine".into(),
            "sqlite".into(),
        ],
        options: serde_json::json!({}),
    }
}

/// Every entry of `dir`, recursively.
pub fn entries(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(entries(&path));
        }
        found.push(path);
    }
    found
}

#[derive(Default)]
pub struct Quiet {
    pub phases: Vec<String>,
    pub loads: u64,
    pub ticks: u64,
}

impl RunObserver for Quiet {
    fn phase(&mut self, message: &str) {
        self.phases.push(message.to_string());
    }
    fn loading(&mut self, _progress: &LoadProgress) {
        self.loads += 1;
    }
    fn running(&mut self, _: Duration, _: Option<Duration>, _: u64, _: u64) {
        self.ticks += 1;
    }
}
