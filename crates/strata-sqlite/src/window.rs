//! One measured window of a SQLite run: the sessions between two OS edges,
//! accounted from the OS (SQLite has no I/O counters of its own) and judged
//! against each session's page cache.
//!
//! Not for: making or loading the file, or the Recording (`run`).

use crate::figures::{sqlite_figures, EdgeTaker};
use crate::session::SqliteOpener;
use std::sync::atomic::AtomicBool;
use strata_run::accounting::{RunDevices, RunFigures};
use strata_run::engine::{EngineWindows, MeasuredWindow, WindowPurpose};
use strata_run::outcome::RunObserver;
use strata_run::sweep::WindowBlocks;
use strata_run::verdict::{judge, CacheFit, VerdictFacts};
use strata_slob::session::{DriverOptions, RunOutcome};
use strata_slob::threads::measure;

/// One measured window, accounted for and judged.
pub(crate) struct SqliteWindow {
    pub figures: RunFigures,
    pub outcome: RunOutcome,
    start_unix_s: f64,
}

impl MeasuredWindow for SqliteWindow {
    fn figures(&self) -> &RunFigures {
        &self.figures
    }

    /// None: SQLite counts no reads of its own.
    fn blocks(&self) -> WindowBlocks {
        WindowBlocks::default()
    }

    fn outcome(&self) -> &RunOutcome {
        &self.outcome
    }

    fn start_unix_s(&self) -> f64 {
        self.start_unix_s
    }
}

/// What every window of one run shares: the file's sessions, the edges,
/// the devices accounted and each session's cache beside the data set.
pub(crate) struct Windows<'a> {
    pub opener: SqliteOpener<'a>,
    pub edges: EdgeTaker,
    pub devices: &'a RunDevices,
    pub page_bytes: u32,
    pub cache: CacheFit,
    pub tolerate_failures: bool,
}

/// SQLite reads each page when a statement needs it: no prefetch.
impl EngineWindows for Windows<'_> {
    type Window = SqliteWindow;

    fn window(
        &mut self,
        driver: DriverOptions,
        _purpose: WindowPurpose,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<SqliteWindow> {
        let measured = measure(&self.opener, &driver, interrupt, observer, &mut self.edges)?;
        let start_unix_s = strata_core::time::unix_s_at(measured.start.os.at);
        let mut figures = sqlite_figures(
            &measured.start,
            &measured.end,
            &measured.outcome,
            self.devices,
            self.page_bytes,
            driver.plan.scan_table_blocks,
        );
        figures.verdict = judge(
            &figures,
            &VerdictFacts {
                cache: Some(self.cache.clone()),
                tolerate_failures: self.tolerate_failures,
                ..VerdictFacts::default()
            },
        );
        Ok(SqliteWindow {
            figures,
            outcome: measured.outcome,
            start_unix_s,
        })
    }

    fn cache_and_block_bytes(&self) -> (u64, u64) {
        (self.cache.cache_bytes, u64::from(self.page_bytes))
    }

    fn prefetches(&mut self) -> bool {
        false
    }
}
