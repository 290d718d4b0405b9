//! One measured window on PostgreSQL: the sessions connected, the page
//! cache limited, the other shards met, the window run between two edges
//! (the start at the warm-up's end), accounted for across the layers, its
//! outliers named, and judged.
//!
//! Not for: the run around its windows (`run`), the sessions themselves
//! (`sessions`) or the accounting every engine shares (strata-run).

use super::page_cache::{allowed_page_cache, CacheLimit};
use super::{Server, SlobConfig};
use crate::cluster::ThrowawayCluster;
use crate::connect::{connect, ConnectionTarget};
use crate::sessions::Driver;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use strata_db::pagecache::PageCacheMethod;
use strata_recording::environment::ShardRecord;
use strata_run::accounting::{account, PageCacheHeld, RunDevices, RunFigures};
use strata_run::edge::Edge;
use strata_run::engine::{EngineWindows, MeasuredWindow, WindowPurpose};
use strata_run::outcome::{data_set_bytes, RunObserver};
use strata_run::sweep::WindowBlocks;
use strata_run::verdict::{judge, CacheFit, VerdictFacts};
use strata_slob::schema::BLOCK_BYTES;
use strata_slob::session::{DriverOptions, Progress, RunOutcome, StopAfter};
use tokio::time::Instant;

/// The verdict on a PostgreSQL window: what the figures say, plus
/// shared_buffers beside the data set and a throwaway server that died or
/// restarted (also the first warning).
fn judge_postgres(
    figures: &mut RunFigures,
    config: &SlobConfig,
    server: &Server<'_>,
    shared_buffers: Option<u64>,
    edges: [&Edge; 2],
) {
    let server_death = server.cluster.and_then(|cluster| {
        cluster.death().or_else(|| {
            cluster
                .restart_in_log()
                .map(|lines| format!("PostgreSQL restarted its processes in the run: {lines}"))
        })
    });
    if let Some(death) = &server_death {
        figures.warnings.insert(0, death.clone());
    }
    let server_restart = strata_run::edge::restart_between(edges[0], edges[1]);
    let crash_recovery = figures
        .sessions
        .first_connection_lost
        .as_ref()
        .is_some_and(|(_, why)| why.contains("crash of another server process"));
    let first_in_window_s = figures
        .page_cache_held
        .as_ref()
        .and_then(|held| held.first_oom_kill_s);
    let cgroup = server
        .cluster
        .and_then(ThrowawayCluster::memory_cgroup)
        .map(|cgroup| strata_run::edge::CgroupOomKills {
            path: cgroup.path(),
            limit_bytes: cgroup.limit_bytes(),
            kills: cgroup.oom_kills().unwrap_or(0),
            first_in_window_s,
        });
    let oom_kill = strata_run::edge::oom_cause(cgroup);
    if server_death.is_some() || server_restart.is_some() || crash_recovery {
        leave_out_counters_across_a_restart(figures);
    }
    let facts = VerdictFacts {
        cache: shared_buffers.map(|cache_bytes| CacheFit {
            setting: "shared_buffers",
            cache_bytes,
            data_set_bytes: data_set_bytes(&config.driver.plan),
        }),
        server_death,
        server_restart,
        oom_kill,
        tolerate_failures: config.driver.tolerate_failures,
        missing_counters: edges.iter().find_map(|edge| edge.database_error.clone()),
    };
    figures.verdict = judge(figures, &facts);
}

/// A restart resets or rebuilds the server's counters: the two edges'
/// counters are not one run's, so they are never subtracted.
fn leave_out_counters_across_a_restart(figures: &mut RunFigures) {
    if figures.database.take().is_some() {
        figures.absorption = None;
        figures.warnings.push(
            "the database's counters are left out: the server restarted inside the window, and \
             counters from both sides of a restart are not one run"
                .to_string(),
        );
    }
}

/// What every window of a run shares: the run, its server, the
/// connection the edges are taken on, and the devices accounted.
pub(super) struct WindowContext<'a> {
    pub(super) config: &'a SlobConfig,
    pub(super) server: &'a Server<'a>,
    pub(super) client: &'a tokio_postgres::Client,
    pub(super) version_num: u32,
    pub(super) devices: &'a RunDevices,
    pub(super) shared_buffers: Option<u64>,
}

/// One measured window, accounted for and judged.
pub(super) struct Window {
    pub(super) figures: RunFigures,
    pub(super) outcome: RunOutcome,
    /// How the page cache was kept out, when the window limited it.
    pub(super) page_cache: Option<PageCacheMethod>,
    /// `--shard`: this shard's part of the rendezvous.
    pub(super) shard: Option<ShardRecord>,
    /// When the measured window began, Unix seconds.
    pub(super) start_unix_s: f64,
}

impl WindowContext<'_> {
    /// Connects `options`' sessions, limits the page cache (`limit_cache`),
    /// meets the other shards, runs the window and accounts for it.
    async fn window(
        &self,
        options: DriverOptions,
        limit_cache: bool,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<Window> {
        let (config, server, client) = (self.config, self.server, self.client);
        observer.phase("connecting the sessions");
        let stop_after = options.stop_after.clone();
        let driver = Driver::connect(&server.target.config(), options).await?;
        let allowed = allowed_page_cache(config.page_cache, &config.driver.plan);
        let cache_limit = match (server.cluster, allowed.filter(|_| limit_cache)) {
            (Some(cluster), Some(allowed_bytes)) => Some(CacheLimit::new(
                cluster,
                allowed_bytes,
                driver.session_count() as u64,
            )),
            _ => None,
        };
        if let Some(limit) = &cache_limit {
            limit.apply(client).await?;
        }
        let joined = match &config.shard {
            Some(shard) => {
                observer.phase("waiting for the other shards at the rendezvous");
                let warmup = stop_after.warmup();
                Some(
                    crate::rendezvous::join(client, &server.target, shard, warmup, interrupt)
                        .await?,
                )
            }
            None => None,
        };
        let sessions_start = joined.as_ref().map_or_else(
            || Instant::now() + Duration::from_millis(200),
            |joined| joined.start,
        );
        let limit = cache_limit.as_ref();
        let (outcome, start, end, queries) = measure(
            driver,
            (client, self.version_num),
            server,
            limit,
            (sessions_start, &stop_after),
            interrupt,
            observer,
        )
        .await;
        let shard = match joined {
            Some(joined) => Some(joined.record().await),
            None => None,
        };
        let start_unix_s = strata_core::time::unix_s_at(start.at);
        let held = limit.and_then(CacheLimit::held);
        let figures = self
            .accounted([&start, &end], &outcome, queries, held)
            .await;
        Ok(Window {
            figures,
            outcome,
            page_cache: limit.map(CacheLimit::method),
            shard,
            start_unix_s,
        })
    }

    /// The window between `edges` accounted for across the layers, its
    /// traced outliers named (sessions, statements, files), and judged.
    async fn accounted(
        &self,
        [start, end]: [&Edge; 2],
        outcome: &RunOutcome,
        queries: strata_run::outlier_queries::Named,
        page_cache_held: Option<PageCacheHeld>,
    ) -> RunFigures {
        let server = self.server;
        let database = crate::figures::database_figures(start, end);
        let mut figures = account(start, end, database, outcome, self.devices);
        if let Some(traced) = figures.block_trace.as_mut() {
            strata_run::block_trace::name_sessions(traced, start, outcome);
            queries.onto(traced);
            if let Some(dir) = &server.data_directory {
                crate::outlier_files::name(self.client, dir, traced).await;
            }
        }
        figures.page_cache_held = page_cache_held;
        if let Some(agent) = server.agent.get() {
            agent.mark_gaps(&mut figures);
        }
        let shared_buffers = self.shared_buffers;
        judge_postgres(
            &mut figures,
            self.config,
            server,
            shared_buffers,
            [start, end],
        );
        figures
    }
}

impl MeasuredWindow for Window {
    fn figures(&self) -> &RunFigures {
        &self.figures
    }

    fn blocks(&self) -> WindowBlocks {
        WindowBlocks::of_postgresql(&self.figures)
    }

    fn outcome(&self) -> &RunOutcome {
        &self.outcome
    }

    fn start_unix_s(&self) -> f64 {
        self.start_unix_s
    }

    fn database_counters(&self) -> Option<BTreeMap<String, f64>> {
        let database = self.figures.database.as_ref()?;
        Some(database.counters.clone())
    }
}

/// The windows for strata-run's loop, each run to its end on the run's
/// runtime (the loop is synchronous, the sessions are not). The cached
/// window is not limited: its data set is in shared_buffers on purpose.
impl EngineWindows for WindowContext<'_> {
    type Window = Window;

    fn window(
        &mut self,
        driver: DriverOptions,
        purpose: WindowPurpose,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<Window> {
        let limit_cache = purpose == WindowPurpose::Measured;
        let window = WindowContext::window(self, driver, limit_cache, interrupt, observer);
        tokio::runtime::Handle::current().block_on(window)
    }

    fn cache_and_block_bytes(&self) -> (u64, u64) {
        (self.shared_buffers.unwrap_or(32 << 20), BLOCK_BYTES)
    }

    fn prefetches(&mut self) -> bool {
        tokio::runtime::Handle::current().block_on(prefetches(self.client))
    }
}

/// Whether the server reads ahead of its bitmap heap scans: an
/// effective_io_concurrency above 0 (PostgreSQL's default on Linux is 1;
/// unreadable counts as none).
async fn prefetches(client: &tokio_postgres::Client) -> bool {
    let shown = client
        .query_one("SHOW effective_io_concurrency", &[])
        .await
        .ok()
        .and_then(|row| row.try_get::<_, String>(0).ok());
    shown
        .and_then(|value| value.trim().parse::<u32>().ok())
        .is_some_and(|pages| pages > 0)
}

/// The warm-up before the measured window (none in batch mode).
pub(super) async fn measure(
    driver: Driver,
    (client, version_num): (&tokio_postgres::Client, u32),
    server: &Server<'_>,
    cache_limit: Option<&CacheLimit<'_>>,
    (start, stop_after): (Instant, &StopAfter),
    interrupt: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> (RunOutcome, Edge, Edge, strata_run::outlier_queries::Named) {
    let (window_start, expected) = match stop_after {
        StopAfter::Duration { warmup, duration } => (start + *warmup, Some(*warmup + *duration)),
        StopAfter::WorkLoops(_) => (start, None),
    };
    let clock = server.sample_clock.get();
    if let (Some(clock), Some(expected)) = (clock, expected) {
        clock.sample_at(window_start.into_std());
        clock.sample_at((start + expected).into_std());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let progress = Arc::new(Progress::default());
    let holder =
        cache_limit.and_then(|limit| limit.hold_through_the_window(window_start.into_std()));
    let mut start_edge = match stop_after {
        StopAfter::WorkLoops(_) => {
            clock.inspect(|clock| clock.sample_now());
            Some(server.take_edge(client, version_num).await)
        }
        StopAfter::Duration { .. } => None,
    };
    let watcher =
        crate::outlier_queries::Watcher::start(&server.target, driver.backend_pids()).await;
    observer.phase("running");
    let run = driver.run(start, stop.clone(), progress.clone());
    tokio::pin!(run);
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let outcome = loop {
        tokio::select! {
            outcome = &mut run => break outcome,
            _ = tokio::time::sleep_until(window_start), if start_edge.is_none() => {
                start_edge = Some(server.take_edge(client, version_num).await);
            }
            _ = tick.tick() => {
                if interrupt.load(Ordering::Relaxed) {
                    stop.store(true, Ordering::Relaxed);
                }
                let loops = progress.loops.load(Ordering::Relaxed);
                let alive = progress.sessions_alive.load(Ordering::Relaxed);
                observer.running(start.elapsed(), expected, loops, alive);
            }
        }
    };
    if let (Some(clock), None) = (clock, expected) {
        clock.sample_now();
    }
    if let (Some(holder), Some(limit)) = (holder, cache_limit) {
        limit.keep_what_was_held(holder);
    }
    let start_edge = match start_edge {
        Some(edge) => edge,
        None => server.take_edge(client, version_num).await,
    };
    let throwaway_died = server
        .cluster
        .is_some_and(|cluster| cluster.death().is_some());
    let reconnected = match client.is_closed() && !throwaway_died {
        true => reconnect(&server.target).await,
        false => None,
    };
    let edge_client = reconnected.as_ref().unwrap_or(client);
    wait_for_sessions_to_exit(edge_client).await;
    let end_edge = server.take_edge(edge_client, version_num).await;
    let queries = match watcher {
        Some(watcher) => watcher.finish().await,
        None => Default::default(),
    };
    (outcome, start_edge, end_edge, queries)
}

/// A new connection for the end edge when the server dropped the first one:
/// waits up to 15 s for a restarting server (crash recovery), so that a
/// restart is named as one rather than as missing counters.
async fn reconnect(target: &ConnectionTarget) -> Option<tokio_postgres::Client> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        match connect(target).await {
            Ok(client) => return Some(client),
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await
            }
            Err(_) => return None,
        }
    }
}

/// PostgreSQL backends publish their statistics at most once a second while
/// busy and at exit; the end edge waits until the sessions' backends have
/// exited (up to 5 s), so their last work is in the counters.
async fn wait_for_sessions_to_exit(client: &tokio_postgres::Client) {
    const OTHERS: &str =
        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' \
                          AND pid <> pg_backend_pid() AND application_name = 'strata slob'";
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        match client.query_one(OTHERS, &[]).await {
            Ok(row) if row.get::<_, i64>(0) == 0 => return,
            Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(_) => return,
        }
    }
}
