//! What the SQLite tests share beyond strata-testkit: a run's configuration.

use strata_run::outcome::PageCacheChoice;
use strata_slob::schema::SchemaPlan;
use strata_slob::session::{DriverOptions, StopAfter, WorkloadOptions};
use strata_sqlite::{SqliteDatabase, SqliteRunConfig, DEFAULT_SESSION_CACHE_BYTES};
use strata_testkit::slob::{driver_options, read_only_workload};

/// A run of one session per schema: selects of 64 keys, `update_pct`
/// percent updates of 8 keys, seed 11.
pub fn config(
    database: SqliteDatabase,
    plan: SchemaPlan,
    update_pct: f64,
    stop_after: StopAfter,
) -> SqliteRunConfig {
    let workload = WorkloadOptions {
        update_pct,
        ..read_only_workload(64)
    };
    SqliteRunConfig {
        database,
        page_cache: PageCacheChoice::Auto,
        session_cache_bytes: DEFAULT_SESSION_CACHE_BYTES,
        page_bytes: None,
        replace: false,
        driver: DriverOptions {
            seed: 11,
            ..driver_options(plan, workload, 1, stop_after)
        },
        setup_only: false,
        record: None,
        command: vec![
            "strata".into(),
            "run".into(),
            "--engine".into(),
            "sqlite".into(),
        ],
    }
}
