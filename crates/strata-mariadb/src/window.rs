//! One measured window of a MariaDB run: the sessions between two edges,
//! accounted (strata-run's figures with InnoDB's beside them) and judged.
//! A run has one; a sweep one per point and more for `--predict`, in the
//! order strata-run's `sweep::windows` runs them.
//!
//! Not for: starting the server, loading, or the Recording (`run`).

use crate::figures::{mariadb_figures, EdgeTaker, MariaDbFigures};
use crate::server::ThrowawayServer;
use crate::session::MariaDbOpener;
use anyhow::Result;
use std::sync::atomic::AtomicBool;
use strata_recording::environment::RunDevices;
use strata_run::outcome::RunObserver;
use strata_run::sweep::windows::{EngineWindows, MeasuredWindow, WindowPurpose};
use strata_run::sweep::WindowBlocks;
use strata_run::verdict::{judge, CacheFit, VerdictFacts};
use strata_slob::session::{DriverOptions, RunOutcome};
use strata_slob::threads::measure;

/// One measured window: InnoDB's figures beside strata-run's, its verdict,
/// and the sessions' outcome.
pub(crate) struct MariaDbWindow {
    pub figures: MariaDbFigures,
    pub outcome: RunOutcome,
    /// When the window began, Unix seconds.
    pub start_unix_s: f64,
}

/// What every window of one run shares: the server, its buffer pool beside
/// the data set, the devices accounted, the sessions' opener and the edges.
pub(crate) struct Windows<'a> {
    pub server: Option<&'a ThrowawayServer>,
    pub buffer_pool: CacheFit,
    pub devices: &'a RunDevices,
    pub page_bytes: u32,
    pub opener: MariaDbOpener<'a>,
    pub edges: EdgeTaker,
    pub tolerate_failures: bool,
}

/// performance_schema's event for InnoDB's data files.
const DATA_FILE_EVENT: &str = "wait/io/file/innodb/innodb_data_file";

impl MeasuredWindow for MariaDbWindow {
    fn figures(&self) -> &strata_recording::run::RunFigures {
        &self.figures.run
    }

    /// InnoDB's count of the pages its buffer pool missed, over the edges'
    /// interval as the devices' requests are (not the sessions' window:
    /// under load the end edge comes late), and performance_schema's wait
    /// per read of its data files when it is on.
    fn blocks(&self) -> WindowBlocks {
        let Some(innodb) = &self.figures.innodb else {
            return WindowBlocks::default();
        };
        let block_read_latency_us = innodb
            .files
            .iter()
            .find(|file| file.event == DATA_FILE_EVENT && file.reads > 0.0)
            .map(|file| file.read_us_per_read);
        WindowBlocks {
            blocks_read: innodb.buffer_pool_reads,
            blocks_read_per_s: innodb.buffer_pool_reads_per_s,
            block_read_latency_us,
            buffer_hit_pct: innodb.buffer_pool_hit_pct,
        }
    }

    fn outcome(&self) -> &RunOutcome {
        &self.outcome
    }

    fn start_unix_s(&self) -> f64 {
        self.start_unix_s
    }

    fn database_counters(&self) -> Option<std::collections::BTreeMap<String, f64>> {
        let innodb = self.figures.innodb.as_ref()?;
        Some(innodb.counters.clone())
    }

    fn engine_figures(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "innodb": self.figures.innodb,
            "reads": self.figures.reads,
        }))
    }
}

/// InnoDB reads each page when a statement needs it: no prefetch. Every
/// window keeps the server's own cache; the cached one fits in it.
impl EngineWindows for Windows<'_> {
    type Window = MariaDbWindow;

    fn window(
        &mut self,
        driver: DriverOptions,
        _purpose: WindowPurpose,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> Result<MariaDbWindow> {
        let watcher = crate::outlier_queries::watch(self.opener.target);
        let measured = measure(&self.opener, &driver, interrupt, observer, &mut self.edges);
        let queries = watcher.map(|watcher| watcher.finish()).unwrap_or_default();
        let measured = measured?;
        let start_unix_s = strata_core::time::unix_s_at(measured.start.os.at);
        let mut figures = mariadb_figures(
            &measured.start,
            &measured.end,
            &measured.outcome,
            self.devices,
            self.page_bytes,
        );
        if let Some(traced) = figures.run.block_trace.as_mut() {
            strata_run::block_trace::name_sessions(traced, &measured.start.os, &measured.outcome);
            queries.onto(traced);
        }
        if let Some(agent) = &self.edges.agent {
            agent.mark_gaps(&mut figures.run);
        }
        let server_death = self.server.and_then(ThrowawayServer::death);
        if let Some(death) = &server_death {
            figures.run.warnings.insert(0, death.clone());
        }
        let server_restart =
            strata_run::edge::restart_between(&measured.start.os, &measured.end.os);
        if server_death.is_some() || server_restart.is_some() {
            figures.leave_out_innodb_counters();
        }
        figures.run.verdict = judge(
            &figures.run,
            &VerdictFacts {
                cache: Some(self.buffer_pool.clone()),
                server_death,
                server_restart,
                oom_kill: None,
                tolerate_failures: self.tolerate_failures,
                missing_counters: [&measured.start.innodb, &measured.end.innodb]
                    .into_iter()
                    .find_map(|edge| edge.as_ref().err().cloned()),
            },
        );
        Ok(MariaDbWindow {
            figures,
            outcome: measured.outcome,
            start_unix_s,
        })
    }

    fn cache_and_block_bytes(&self) -> (u64, u64) {
        (self.buffer_pool.cache_bytes, u64::from(self.page_bytes))
    }

    fn prefetches(&mut self) -> bool {
        false
    }
}
