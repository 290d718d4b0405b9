//! The query a block request outlier's process was running, asked of
//! `pg_stat_activity` while the window runs. Every 100 ms the tracer's new
//! outliers of processes other than the sessions' backends are looked up
//! by PID on a connection of the watcher's own, and a query is taken as
//! the request's only where `pg_stat_activity` proves it ran across the
//! request: it started before the request did (`query_start`), and it was
//! still running (`active`) or ended after the request did
//! (`state_change`). A statement shorter than the wait for the next look
//! goes unnamed rather than named wrongly. String literals are shown as
//! `?` (`strata_run::outlier_queries`), so a password in a statement never
//! reaches the output.
//!
//! Not for: strata's own sessions (their statements name theirs,
//! `strata_run::block_trace::name_sessions`), or the file and relation
//! (`outlier_files`).

use crate::connect::{connect, ConnectionTarget};
use std::collections::{BTreeMap, BTreeSet};
use strata_probe::blocktrace::IoOutlier;
use strata_run::outlier_queries::{span_ns, without_literals, Dialect, Named};

/// The watcher while the window runs: `strata_run`'s, asking
/// `pg_stat_activity` on the run's runtime.
pub struct Watcher(strata_run::outlier_queries::Watcher);

impl Watcher {
    /// Starts watching when the tracer runs here; `sessions` are the
    /// sessions' backends, left out. Called on a multi-threaded runtime:
    /// the watcher's thread waits for its queries there.
    pub async fn start(target: &ConnectionTarget, sessions: BTreeSet<u32>) -> Option<Watcher> {
        strata_probe::blocktrace::shared::outliers_after(u64::MAX)?;
        let client = connect(target).await.ok()?;
        let runtime = tokio::runtime::Handle::current();
        let look = move |outliers: &[IoOutlier], named: &mut Named| {
            let others: Vec<&IoOutlier> = outliers
                .iter()
                .filter(|outlier| !sessions.contains(&outlier.tgid))
                .collect();
            if !others.is_empty() {
                runtime.block_on(name(&client, &others, named));
            }
        };
        strata_run::outlier_queries::Watcher::start(look).map(Watcher)
    }

    /// Stops watching: what was named.
    pub async fn finish(self) -> Named {
        tokio::task::spawn_blocking(move || self.0.finish())
            .await
            .unwrap_or_default()
    }
}

/// What one process was doing as `pg_stat_activity` showed it.
struct Activity {
    query: String,
    active: bool,
    /// CLOCK_MONOTONIC ns, from the timestamps' wall clock.
    query_start_ns: f64,
    state_change_ns: f64,
}

/// Looks the outliers' processes up, and names each outlier whose query
/// ran across it.
async fn name(client: &tokio_postgres::Client, outliers: &[&IoOutlier], named: &mut Named) {
    let pids: Vec<i32> = outliers
        .iter()
        .map(|outlier| outlier.tgid as i32)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let Ok(rows) = client
        .query(
            "SELECT pid, query, state = 'active', \
                    extract(epoch FROM query_start)::float8, \
                    extract(epoch FROM state_change)::float8 \
             FROM pg_stat_activity \
             WHERE pid = ANY($1) AND query <> '' AND query_start IS NOT NULL",
            &[&pids],
        )
        .await
    else {
        return;
    };
    let wall_to_monotonic_ns =
        strata_probe::blocktrace::monotonic_ns() as f64 - strata_core::time::unix_now_s() * 1e9;
    let activities: BTreeMap<u32, Activity> = rows
        .iter()
        .filter_map(|row| {
            let pid: i32 = row.try_get(0).ok()?;
            let at_ns = |column: usize| -> Option<f64> {
                let unix_s: f64 = row.try_get(column).ok()?;
                Some(unix_s * 1e9 + wall_to_monotonic_ns)
            };
            let activity = Activity {
                query: without_literals(row.try_get(1).ok()?, Dialect::PostgreSql),
                active: row.try_get::<_, Option<bool>>(2).ok()?.unwrap_or(false),
                query_start_ns: at_ns(3)?,
                state_change_ns: at_ns(4).unwrap_or(0.0),
            };
            Some((pid as u32, activity))
        })
        .collect();
    for outlier in outliers {
        let Some(activity) = activities.get(&outlier.tgid) else {
            continue;
        };
        let (started_ns, ended_ns) = span_ns(outlier);
        let began_before = activity.query_start_ns <= started_ns;
        let ran_past = activity.active || activity.state_change_ns >= ended_ns;
        if began_before && ran_past {
            named.insert(outlier.sequence, activity.query.clone());
        }
    }
}
