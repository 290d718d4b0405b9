//! What loading a SLOB data set reports, whatever the engine: what was done
//! to each schema, how many rows and bytes, how fast, and the load's
//! progress while it runs.
//!
//! Not for: loading (each engine's crate loads its own).

use serde::Serialize;
pub use strata_recording::run::{LoadAction, LoadReport, SchemaLoad};

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
