//! PostgreSQL's SLOB sessions: many tokio tasks, one connection each, that
//! start together and run the method's loops (`strata_slob::session`) over
//! tokio-postgres, and what they did inside the measurement window.
//!
//! Not for: the loops' rules and the tally, which every engine shares
//! (`strata_slob::session`), or loading the schemas (`load`).

mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, ensure};
use futures_util::StreamExt as _;
use strata_core::random::FastRng;
use strata_slob::schema::schema_names;
use strata_slob::session::access::AccessPlan;
use strata_slob::session::tally::SharedTally;
use strata_slob::session::{
    outcome, session_specs, validate_options, window_of, DriverOptions, Progress, RunOutcome,
    SessionEnd, SessionSpec,
};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_postgres::Config;

use crate::pg;
use crate::schema::META_SCHEMA;
use worker::{open_session, Interrupt, Session, SessionConnection};

/// Connected sessions, ready to start together.
pub struct Driver {
    config: Arc<Config>,
    options: DriverOptions,
    sessions: Vec<(SessionSpec, SessionConnection)>,
}

/// Connections opened at once while connecting sessions.
const CONNECT_CONCURRENCY: usize = 16;
const STOP_POLL: Duration = Duration::from_millis(50);

impl Driver {
    /// Checks that the plan's schemas are loaded, then opens every session's
    /// connection and prepares its statements. Any session that cannot
    /// connect is an error naming it.
    pub async fn connect(config: &Config, options: DriverOptions) -> anyhow::Result<Driver> {
        validate_options(&options)?;
        let names = schema_names(&options.plan);
        verify_loaded(config, &options, &names).await?;
        let specs = session_specs(&options, &names);
        let session_total = specs.len();
        let config = Arc::new(config.clone());
        let opened: Vec<_> = futures_util::stream::iter(&specs)
            .map(|spec| open_session(&config, spec))
            .buffered(CONNECT_CONCURRENCY)
            .collect()
            .await;
        let mut sessions = Vec::with_capacity(session_total);
        for (spec, connection) in specs.iter().zip(opened) {
            match connection {
                Ok(connection) => sessions.push((spec.clone(), connection)),
                Err(error) => bail!(
                    "opening session {} of {session_total} (schema {}): {error}",
                    spec.index + 1,
                    spec.schema
                ),
            }
        }
        Ok(Driver {
            config,
            options,
            sessions,
        })
    }

    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// The server processes serving the sessions (`pg_backend_pid()`).
    pub fn backend_pids(&self) -> std::collections::BTreeSet<u32> {
        self.sessions
            .iter()
            .map(|(_, connection)| connection.backend_pid())
            .collect()
    }

    /// Starts every session at `start` and returns when all have ended:
    /// their loops done, the window over, failed, or `stop` set.
    pub async fn run(
        self,
        start: Instant,
        stop: Arc<AtomicBool>,
        progress: Arc<Progress>,
    ) -> RunOutcome {
        let (window, loops_target) = window_of(&self.options.stop_after, start);
        let tally = Arc::new(SharedTally::new(window, self.options.outlier_threshold));
        let access = Arc::new(AccessPlan::new(
            self.options.plan.blocks_per_schema,
            &self.options.workload,
        ));
        let (stop_sender, stop_receiver) = watch::channel(false);
        let sessions_started = self.sessions.len() as u32;
        let mut handles = Vec::with_capacity(self.sessions.len());
        for (spec, connection) in self.sessions {
            let session = Session {
                rng: FastRng::seeded(
                    self.options.seed ^ u64::from(spec.index).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                ),
                spec,
                connection,
                config: Arc::clone(&self.config),
                access: Arc::clone(&access),
                tally: Arc::clone(&tally),
                progress: Arc::clone(&progress),
                start,
                loops_target,
                think_time: self.options.workload.think_time,
                think_every: self.options.workload.think_every,
            };
            let interrupt = Interrupt {
                stop: stop_receiver.clone(),
                deadline: window.end,
            };
            handles.push(tokio::spawn(session.run(interrupt)));
        }
        let (ends, interrupted) = wait_for_sessions(handles, &stop, &stop_sender).await;
        outcome(window, start, sessions_started, &ends, &tally, interrupted)
    }
}

/// Waits for every session, passing `stop` on to them; returns how each
/// ended and whether the run was stopped.
async fn wait_for_sessions(
    handles: Vec<tokio::task::JoinHandle<SessionEnd>>,
    stop: &AtomicBool,
    stop_sender: &watch::Sender<bool>,
) -> (Vec<SessionEnd>, bool) {
    let indexes: Vec<u32> = (0..handles.len() as u32).collect();
    let all_ended = futures_util::future::join_all(handles);
    futures_util::pin_mut!(all_ended);
    let mut interrupted = false;
    let results = loop {
        tokio::select! {
            results = &mut all_ended => break results,
            _ = tokio::time::sleep(STOP_POLL) => {
                if !interrupted && stop.load(Ordering::Relaxed) {
                    interrupted = true;
                    stop_sender.send_replace(true);
                }
            }
        }
    };
    let ends = results
        .into_iter()
        .zip(indexes)
        .map(|(result, index)| {
            result.unwrap_or_else(|panic| SessionEnd {
                failure: Some((
                    Instant::now(),
                    format!("session task ended abnormally: {panic}"),
                )),
                ..SessionEnd::new(index, String::new(), Instant::now())
            })
        })
        .collect();
    (ends, interrupted)
}

/// The plan's schemas must be strata's, complete, and of the plan's size.
async fn verify_loaded(
    config: &Config,
    options: &DriverOptions,
    names: &[String],
) -> anyhow::Result<()> {
    let (client, meta_exists) = crate::load::connect_for_checks(config).await?;
    let meta_table = format!("{META_SCHEMA}.loads");
    ensure!(
        meta_exists,
        "no SLOB schemas are loaded in this database ({meta_table} is missing); run setup first"
    );
    let sql = format!("SELECT blocks, scan_blocks, completed_at IS NOT NULL FROM {meta_table} WHERE schema_name = $1");
    for name in names {
        let row = client
            .query_opt(&sql, &[name])
            .await
            .map_err(pg::context(format!("checking schema {name}")))?;
        let Some(row) = row else {
            bail!("schema {name} is not loaded; run setup with the same plan first");
        };
        let (blocks, scan_blocks, complete): (Option<i64>, Option<i64>, bool) =
            (row.get(0), row.get(1), row.get(2));
        ensure!(
            complete,
            "schema {name}'s load did not complete; run setup again to reload it"
        );
        let plan = &options.plan;
        ensure!(
            blocks == Some(plan.blocks_per_schema as i64),
            "schema {name} holds {} blocks but the plan says {}; run setup with this plan (--replace)",
            blocks.unwrap_or(0),
            plan.blocks_per_schema
        );
        ensure!(
            options.workload.scan_pct == 0.0 || scan_blocks.unwrap_or(0) > 0,
            "schema {name} has no scan table but scan_pct is {}",
            options.workload.scan_pct
        );
    }
    Ok(())
}
