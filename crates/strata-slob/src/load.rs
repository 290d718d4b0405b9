//! What loading a SLOB data set reports, whatever the engine: what was done
//! to each schema, how many rows and bytes, how fast, and the load's
//! progress while it runs.
//!
//! Not for: loading (each engine's crate loads its own).

use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadAction {
    KeptComplete,
    Loaded,
    ReloadedIncomplete,
    Replaced,
}

#[derive(Clone, Debug, Serialize)]
pub struct SchemaLoad {
    pub schema: String,
    pub action: LoadAction,
    /// Rows of the `slob` table.
    pub rows: u64,
    /// 8 KiB heap blocks of the `slob` table.
    pub blocks: u64,
    /// All the schema's tables with their indexes and TOAST, in bytes.
    pub bytes_on_disk: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LoadReport {
    pub schemas: Vec<SchemaLoad>,
    /// Rows written by this setup (`slob` and `scan` tables).
    pub rows_loaded: u64,
    /// 8 KiB blocks of all the plan's `slob` tables.
    pub blocks: u64,
    /// Bytes on disk of all the plan's schemas.
    pub bytes_on_disk: u64,
    /// Bytes on disk of the schemas this setup loaded (not those it kept).
    pub bytes_loaded: u64,
    pub seconds: f64,
    /// `bytes_loaded` per hour of `seconds`, in 10^9 bytes.
    pub gb_per_hour: f64,
    /// `bytes_loaded` per hour of `seconds`, in 2^30 bytes.
    pub gib_per_hour: f64,
}

impl LoadReport {
    /// The report of a setup over `schemas` that took `seconds`: the bytes
    /// it loaded are those of the schemas it did not keep, and the rates are
    /// theirs over the whole setup.
    pub fn new(schemas: Vec<SchemaLoad>, rows_loaded: u64, seconds: f64) -> LoadReport {
        let bytes_loaded: u64 = schemas
            .iter()
            .filter(|schema| schema.action != LoadAction::KeptComplete)
            .map(|schema| schema.bytes_on_disk)
            .sum();
        let per_hour = |unit: f64| match seconds > 0.0 {
            true => bytes_loaded as f64 / unit * 3600.0 / seconds,
            false => 0.0,
        };
        LoadReport {
            rows_loaded,
            blocks: schemas.iter().map(|schema| schema.blocks).sum(),
            bytes_on_disk: schemas.iter().map(|schema| schema.bytes_on_disk).sum(),
            bytes_loaded,
            seconds,
            gb_per_hour: per_hour(1e9),
            gib_per_hour: per_hour(f64::from(1u32 << 30)),
            schemas,
        }
    }
}

#[derive(Clone, Debug)]
pub struct LoadProgress {
    pub rows_done: u64,
    pub rows_total: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LayoutCheck {
    pub schema: String,
    pub rows: u64,
    pub heap_blocks: u64,
    /// Distinct block numbers among the rows' ctids.
    pub distinct_row_blocks: u64,
    pub one_row_per_block: bool,
    pub complete: bool,
}
