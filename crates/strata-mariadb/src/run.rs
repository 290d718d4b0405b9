//! `strata run --engine mariadb` from start to end: check the options,
//! start a throwaway server (or reach the user's), load what is missing,
//! run the sessions between the two edges, account, record, and stop and
//! remove the throwaway server — also on an error or an interrupt.
//!
//! Not for: parsing options or drawing progress (the binary passes resolved
//! settings and an observer).

use crate::collector::MariaDbCollector;
use anyhow::{ensure, Result};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use strata_agent::endpoint::Endpoint;
use strata_core::metrics::Collector;
use strata_run::outcome::data_set_bytes_in_blocks_of;
use strata_run::outcome::RunObserver;
use strata_run::server_host::{OtherHosts, ServerHostAgent};
use strata_run::verdict::CacheFit;
use strata_slob::session::{validate_options, DriverOptions, RunOutcome};

use crate::environment::{environment, MariaDbEnvironment};
use crate::figures::{EdgeTaker, MariaDbFigures};
use crate::record::Histograms;
use crate::schema::DEFAULT_DATABASE;
use crate::server::{ServerOptions, ThrowawayServer};
use crate::session::MariaDbOpener;
use crate::setup::{setup, SetupOptions, SetupReport};
use crate::target::MariaDbTarget;
use crate::window::Windows;
use strata_recording::sweep::SweepSummary;
use strata_run::engine::{Measured, MeasuredPart};
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
    observer.phase("loading the SLOB tables");
    let options = SetupOptions {
        plan: config.driver.plan.clone(),
        replace: config.replace,
        seed: config.driver.seed,
    };
    let setup = setup(
        target,
        &options,
        &mut |progress| observer.loading(progress),
        interrupt,
    )?;
    let mut admin = target.connect()?;
    let mut environment = environment(
        &mut admin,
        target,
        server.map(ThrowawayServer::info),
        &config.driver.plan,
    )?;
    let agent = match &config.agent {
        Some(url) => Some(Arc::new(reach_agent(url, &mut admin, &mut environment)?)),
        None => None,
    };
    let mut others = strata_run::server_host::follow_others(&config.other_agents)?;
    environment.other_hosts = std::mem::take(&mut others.hosts);
    let buffer_pool = CacheFit {
        setting: "innodb_buffer_pool_size",
        cache_bytes: environment.buffer_pool_bytes,
        data_set_bytes: data_set_bytes_in_blocks_of(
            &config.driver.plan,
            u64::from(environment.page_bytes),
        ),
    };
    if server.is_none() && !config.setup_only {
        buffer_pool.warn_before_the_run();
    }
    if config.setup_only {
        return Ok(MariaDbOutcome {
            environment,
            setup: Some(setup),
            figures: None,
            histograms: None,
            sessions: None,
            sweep: None,
        });
    }
    let reached = Reached {
        target,
        server,
        admin,
        agent,
        others,
    };
    measure(
        config,
        reached,
        environment,
        (setup, buffer_pool),
        observer,
        interrupt,
    )
}

/// The server as the run reaches it: its target, the throwaway server when
/// strata started it, an admin connection, and the hosts' agents.
struct Reached<'a> {
    target: &'a MariaDbTarget,
    server: Option<&'a ThrowawayServer>,
    admin: mysql::Conn,
    agent: Option<Arc<ServerHostAgent>>,
    others: OtherHosts,
}

/// The measured part of the run on the loaded data set: its windows with
/// InnoDB's edges, and the Recording.
fn measure(
    config: &MariaDbRunConfig,
    reached: Reached<'_>,
    environment: MariaDbEnvironment,
    (setup, buffer_pool): (SetupReport, CacheFit),
    observer: &mut dyn RunObserver,
    interrupt: &AtomicBool,
) -> Result<MariaDbOutcome> {
    let Reached {
        target,
        server,
        admin,
        agent,
        others,
    } = reached;
    let part = MeasuredPart {
        record: config.record.as_ref(),
        driver: &config.driver,
        sweep: config.sweep.as_ref(),
    };
    let windows = |sample_clock| {
        let collector = MariaDbCollector::connect(target.url())
            .map_err(|error| anyhow::anyhow!(target.scrub(format!("{error:#}"))))?;
        let edges = EdgeTaker {
            collector,
            url: target.url().to_string(),
            throwaway_pid: server.map(|server| server.info().pid),
            admin,
            server_pids: environment.server_pid.into_iter().collect(),
            agent: agent.clone(),
            others: others.edges,
            sample_clock,
        };
        Ok(Windows {
            server,
            buffer_pool,
            devices: &environment.devices,
            page_bytes: environment.page_bytes,
            opener: MariaDbOpener { target },
            edges,
            tolerate_failures: config.driver.tolerate_failures,
        })
    };
    let collectors =
        || layer_collectors(&environment, (target, agent.as_deref(), others.collectors));
    let measured = part.measure(
        (&environment, Some(&setup.load)),
        collectors,
        windows,
        interrupt,
        observer,
    )?;
    measured.record(config.record.as_ref(), &environment)?;
    let Measured { window, sweep } = measured;
    let histograms = Histograms::of(&window.outcome);
    Ok(MariaDbOutcome {
        environment,
        setup: Some(setup),
        figures: Some(window.figures),
        histograms: Some(histograms),
        sessions: Some(window.outcome),
        sweep: sweep.map(|(_, summary)| summary),
    })
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

/// The devices under the data and redo directories (the agent's, with
/// `--agent`), host CPU and memory, the server's InnoDB counters and the
/// other hosts followed, sampled each second for the Recording.
fn layer_collectors(
    environment: &MariaDbEnvironment,
    (target, agent, other_hosts): (
        &MariaDbTarget,
        Option<&ServerHostAgent>,
        Vec<Box<dyn Collector>>,
    ),
) -> Vec<Box<dyn Collector>> {
    let mut collectors: Vec<Box<dyn Collector>> = match agent {
        Some(agent) => agent.collectors(),
        None => strata_run::accounting::local_collectors(
            &environment.devices,
            environment.server_pid.into_iter().collect(),
        ),
    };
    if let Ok(collector) = MariaDbCollector::connect(target.url()) {
        collectors.push(Box::new(collector));
    }
    collectors.extend(other_hosts);
    collectors
}
