//! MariaDB's own options of `strata run` and `strata setup` (strata-run's
//! `EngineOptions`): those of the throwaway `mariadbd` strata starts.
//!
//! Not for: the options every engine takes (strata-run's `options`).

use serde::Serialize;

/// MariaDB's own options; none is written into the Recording's options
/// (the environment says whether performance_schema was on).
#[derive(clap::Args, Clone, Debug, Default, Serialize)]
#[command(next_help_heading = "MariaDB")]
pub struct MariaDbOptions {
    /// MariaDB's throwaway server: start it with performance_schema on, for
    /// per-file I/O counts and timings (redo writes and fsyncs, data reads)
    #[arg(long)]
    #[serde(skip)]
    pub performance_schema: bool,
}
