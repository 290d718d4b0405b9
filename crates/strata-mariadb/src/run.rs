//! `strata run --engine mariadb` from start to end: check the options,
//! start a throwaway server (or reach the user's), load what is missing,
//! run the sessions between the two edges, account, record, and stop and
//! remove the throwaway server — also on an error or an interrupt.
//!
//! Not for: parsing options or drawing progress (the binary passes resolved
//! settings and an observer).

use crate::collector::MariaDbCollector;
use anyhow::{ensure, Context, Result};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use strata_agent::endpoint::Endpoint;
use strata_core::metrics::Collector;
use strata_observe::background::SampleClock;
use strata_run::outcome::data_set_bytes_in_blocks_of;
use strata_run::outcome::RunObserver;
use strata_run::server_host::{OtherHosts, ServerHostAgent};
use strata_run::verdict::CacheFit;
use strata_slob::load::LoadReport;
use strata_slob::session::{validate_options, DriverOptions, RunOutcome};

use crate::environment::{environment, MariaDbEnvironment};
use crate::figures::{EdgeTaker, MariaDbFigures};
use crate::record::Histograms;
use crate::schema::DEFAULT_DATABASE;
use crate::server::{ServerOptions, ThrowawayServer};
use crate::session::MariaDbOpener;
use crate::setup::{setup, SetupOptions, SetupReport};
use crate::target::MariaDbTarget;
use crate::window::{MariaDbWindow, Windows};
use strata_recording::sweep::SweepSummary;
use strata_run::engine::{EngineRun, Measured, Skeleton};
use strata_run::recorder::RunRecorder;
use strata_run::sweep::SweepRequest;

/// Which server the run uses.
#[derive(Clone, Debug)]
pub enum MariaDbServer {
    /// A throwaway `mariadbd` in a new directory under
    /// `options.work_dir`, stopped and removed at the end.
    Throwaway(ServerOptions),
    /// The user's server (`--db mysql://…`); strata creates the URL's
    /// database (default `strata_slob`) only when absent.
    External(MariaDbTarget),
}

#[derive(Clone, Debug)]
pub struct MariaDbRunConfig {
    pub server: MariaDbServer,
    pub replace: bool,
    pub driver: DriverOptions,
    pub setup_only: bool,
    /// The run's Recording, open since before any work.
    pub record: Option<RunRecorder>,
    pub command: Vec<String>,
    /// `--agent`: the server's host seen through its agent.
    pub agent: Option<Endpoint>,
    /// `--agent` after the first: other hosts followed beside it.
    pub other_agents: Vec<Endpoint>,
    /// `--sweep-sessions`: one window per session count.
    pub sweep: Option<SweepRequest>,
}

/// What a run (or a setup alone) gives: serializable as the JSON document.
#[derive(Debug, Serialize)]
pub struct MariaDbOutcome {
    pub environment: MariaDbEnvironment,
    pub setup: Option<SetupReport>,
    pub figures: Option<MariaDbFigures>,
    pub histograms: Option<Histograms>,
    /// The sessions' own outcome (histograms, per-second counts, window).
    #[serde(skip)]
    pub sessions: Option<RunOutcome>,
    /// `--sweep-sessions`: the curve, its answers and the prediction.
    #[serde(skip)]
    pub sweep: Option<SweepSummary>,
}

/// Refuses what cannot work, before any server is started.
pub fn check_config(config: &MariaDbRunConfig) -> Result<()> {
    validate_options(&config.driver)?;
    if let MariaDbServer::Throwaway(options) = &config.server {
        ensure!(!config.setup_only, "setup without --db would load a throwaway server and remove it at once: give --db mysql://…");
        ensure!(
            options.work_dir.path.is_dir(),
            "{} is not a directory",
            options.work_dir.path.display()
        );
        ensure!(
            options.buffer_pool_bytes >= 5 << 20,
            "the buffer pool must be at least 5 MiB"
        );
    }
    Ok(())
}

/// Runs `strata run --engine mariadb` (or its setup alone).
pub fn run(
    config: &MariaDbRunConfig,
    observer: &mut dyn RunObserver,
    interrupt: &AtomicBool,
) -> Result<MariaDbOutcome> {
    check_config(config)?;
    match &config.server {
        MariaDbServer::External(target) => run_on(config, target, None, observer, interrupt),
        MariaDbServer::Throwaway(options) => {
            observer.phase("starting a throwaway MariaDB server (mariadb-install-db, mariadbd)");
            for removed in crate::server::remove_abandoned(&options.work_dir.path) {
                strata_core::note::note(&removed);
            }
            let server = ThrowawayServer::start(options, interrupt)?;
            let target = server.target(DEFAULT_DATABASE);
            let result = run_on(config, &target, Some(&server), observer, interrupt);
            observer.phase("stopping the throwaway MariaDB server and removing its directory");
            drop(server);
            result
        }
    }
}

fn run_on(
    config: &MariaDbRunConfig,
    target: &MariaDbTarget,
    server: Option<&ThrowawayServer>,
    observer: &mut dyn RunObserver,
    interrupt: &AtomicBool,
) -> Result<MariaDbOutcome> {
    let skeleton = Skeleton {
        record: config.record.as_ref(),
        driver: &config.driver,
        sweep: config.sweep.as_ref(),
        setup_only: config.setup_only,
    };
    let run = MariaDbRun {
        config,
        target,
        server,
        reached: None,
        environment: None,
        setup: None,
    };
    skeleton.run(run, interrupt, observer)
}

/// The run on one server, as strata-run's skeleton calls it.
struct MariaDbRun<'a> {
    config: &'a MariaDbRunConfig,
    target: &'a MariaDbTarget,
    /// The throwaway server, when strata started it.
    server: Option<&'a ThrowawayServer>,
    reached: Option<Reached>,
    /// Found when the server was reached, until the skeleton takes it.
    environment: Option<MariaDbEnvironment>,
    /// What the load made, besides its report.
    setup: Option<SetupReport>,
}

/// The server as the run reaches it before loading: its buffer pool
/// beside the data set, and the hosts' agents.
struct Reached {
    buffer_pool: CacheFit,
    agent: Option<Arc<ServerHostAgent>>,
    others: OtherHosts,
}

impl MariaDbRun<'_> {
    fn reached(&self) -> Result<&Reached> {
        self.reached.as_ref().context("the server was not reached")
    }
}

impl EngineRun for MariaDbRun<'_> {
    type Environment = MariaDbEnvironment;
    type Window = MariaDbWindow;
    type Outcome = MariaDbOutcome;
    type Windows<'a>
        = Windows<'a>
    where
        Self: 'a;

    /// The server's settings and host (through `--agent` when given) and
    /// the other hosts' agents, on a connection to no database: the URL's
    /// may not exist before the load.
    fn reach(&mut self, _: &mut dyn RunObserver) -> Result<()> {
        let (config, target) = (self.config, self.target);
        let mut admin = target.connect_server()?;
        let throwaway = self.server.map(ThrowawayServer::info);
        let plan = &config.driver.plan;
        let mut environment = environment(&mut admin, target, throwaway, plan)?;
        let agent = match &config.agent {
            Some(url) => Some(Arc::new(reach_agent(url, &mut admin, &mut environment)?)),
            None => None,
        };
        let mut others = strata_run::server_host::follow_others(&config.other_agents)?;
        environment.other_hosts = std::mem::take(&mut others.hosts);
        let page_bytes = u64::from(environment.page_bytes);
        let buffer_pool = CacheFit {
            setting: "innodb_buffer_pool_size",
            cache_bytes: environment.buffer_pool_bytes,
            data_set_bytes: data_set_bytes_in_blocks_of(plan, page_bytes),
        };
        if self.server.is_none() && !config.setup_only {
            buffer_pool.warn_before_the_run();
        }
        self.environment = Some(environment);
        self.reached = Some(Reached {
            buffer_pool,
            agent,
            others,
        });
        Ok(())
    }

    fn load(
        &mut self,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> Result<Option<LoadReport>> {
        observer.phase("loading the SLOB tables");
        let options = SetupOptions {
            plan: self.config.driver.plan.clone(),
            replace: self.config.replace,
            seed: self.config.driver.seed,
        };
        let loading = &mut |progress: &_| observer.loading(progress);
        let setup = setup(self.target, &options, loading, interrupt)?;
        let load = setup.load.clone();
        self.setup = Some(setup);
        Ok(Some(load))
    }

    fn environment(&mut self) -> Result<MariaDbEnvironment> {
        let environment = self.environment.take();
        environment.context("the server was not reached")
    }

    /// Nothing: InnoDB reads its data files with O_DIRECT or it does not.
    fn before_windows(
        &mut self,
        _: &mut MariaDbEnvironment,
        _: &mut dyn RunObserver,
    ) -> Result<()> {
        Ok(())
    }

    /// The devices under the data and redo directories (the agent's, with
    /// `--agent`), host CPU and memory, the server's InnoDB counters and
    /// the other hosts followed.
    fn collectors(&mut self, environment: &MariaDbEnvironment) -> Vec<Box<dyn Collector>> {
        let Some(reached) = &mut self.reached else {
            return Vec::new();
        };
        let mut collectors: Vec<Box<dyn Collector>> = match &reached.agent {
            Some(agent) => agent.collectors(),
            None => strata_run::accounting::local_collectors(
                &environment.devices,
                environment.server_pid.into_iter().collect(),
            ),
        };
        if let Ok(collector) = MariaDbCollector::connect(self.target.url()) {
            collectors.push(Box::new(collector));
        }
        collectors.append(&mut reached.others.collectors);
        collectors
    }

    fn windows<'a>(
        &'a mut self,
        environment: &'a MariaDbEnvironment,
        sample_clock: Option<SampleClock>,
    ) -> Result<Windows<'a>> {
        let (target, server) = (self.target, self.server);
        let reached = self.reached()?;
        let collector = MariaDbCollector::connect(target.url())
            .map_err(|error| anyhow::anyhow!(target.scrub(format!("{error:#}"))))?;
        let edges = EdgeTaker {
            collector,
            url: target.url().to_string(),
            throwaway_pid: server.map(|server| server.info().pid),
            admin: target.connect()?,
            server_pids: environment.server_pid.into_iter().collect(),
            agent: reached.agent.clone(),
            others: reached.others.edges.clone(),
            sample_clock,
        };
        Ok(Windows {
            server,
            buffer_pool: reached.buffer_pool.clone(),
            devices: &environment.devices,
            page_bytes: environment.page_bytes,
            opener: MariaDbOpener { target },
            edges,
            tolerate_failures: self.config.driver.tolerate_failures,
        })
    }

    fn after_windows(&mut self, _: &mut MariaDbEnvironment, _: Option<&mut MariaDbWindow>) {}

    fn outcome(
        self,
        environment: MariaDbEnvironment,
        _: Option<LoadReport>,
        measured: Option<Measured<MariaDbWindow>>,
    ) -> MariaDbOutcome {
        let Some(Measured { window, sweep }) = measured else {
            return MariaDbOutcome {
                environment,
                setup: self.setup,
                figures: None,
                histograms: None,
                sessions: None,
                sweep: None,
            };
        };
        MariaDbOutcome {
            environment,
            setup: self.setup,
            figures: Some(window.figures),
            histograms: Some(Histograms::of(&window.outcome)),
            sessions: Some(window.outcome),
            sweep: sweep.map(|(_, summary)| summary),
        }
    }
}

/// The server's host through `--agent`: its devices replace those of this
/// machine in the environment.
fn reach_agent(
    endpoint: &Endpoint,
    admin: &mut mysql::Conn,
    environment: &mut MariaDbEnvironment,
) -> Result<ServerHostAgent> {
    let shown: Option<String> = mysql::prelude::Queryable::query_first(admin, "SELECT @@datadir")
        .ok()
        .flatten();
    let data = environment
        .data_directory
        .clone()
        .or(shown.map(PathBuf::from));
    let redo = environment.redo_directory.clone().or(data.clone());
    let agent = ServerHostAgent::reach_blocking(endpoint, data.as_deref(), redo.as_deref())?;
    agent.replace_this_machine(environment);
    Ok(agent)
}
