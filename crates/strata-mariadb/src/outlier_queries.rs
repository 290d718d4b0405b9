//! The query a block request outlier's thread was running, asked of
//! `information_schema.PROCESSLIST` while the window runs: mariadbd is one
//! process, and a connection is a thread of it (`TID`), which the tracer
//! keeps with each request. Every 100 ms the tracer's new outliers are
//! looked up by thread on a connection of the watcher's own, and a query
//! is taken as the request's only where PROCESSLIST proves it ran across
//! the request: it is still running when asked (so past the request's
//! end), and it had been running (`TIME_MS`) since before the request
//! started. A statement that ended before the look goes unnamed rather
//! than named wrongly. String literals are shown as `?`, so a password in
//! a statement never reaches the output.
//!
//! Not for: strata's own sessions (their statements name theirs,
//! `strata_run::block_trace::name_sessions`).

use crate::target::MariaDbTarget;
use mysql::prelude::Queryable;
use mysql::Conn;
use std::collections::{BTreeMap, BTreeSet};
use strata_probe::blocktrace::IoOutlier;
use strata_run::outlier_queries::{span_ns, without_literals, Dialect, Named, Watcher};

/// Starts watching when the tracer runs here and the server answers.
pub(crate) fn watch(target: &MariaDbTarget) -> Option<Watcher> {
    strata_probe::blocktrace::shared::outliers_after(u64::MAX)?;
    let mut conn = target.connect().ok()?;
    Watcher::start(move |outliers, named| name(&mut conn, outliers, named))
}

/// What one thread was running as PROCESSLIST showed it: the query, and
/// since when (CLOCK_MONOTONIC ns, at the latest).
struct Activity {
    query: String,
    started_ns: f64,
}

/// Looks the outliers' threads up, and names each outlier whose query ran
/// across it.
fn name(conn: &mut Conn, outliers: &[IoOutlier], named: &mut Named) {
    let threads: BTreeSet<u32> = outliers.iter().map(|outlier| outlier.thread).collect();
    let list: Vec<String> = threads.iter().map(u32::to_string).collect();
    let Ok(rows) = conn.query::<(u64, String, f64), _>(format!(
        "SELECT TID, INFO, TIME_MS FROM information_schema.PROCESSLIST \
         WHERE TID IN ({}) AND INFO IS NOT NULL AND COMMAND IN ('Query', 'Execute')",
        list.join(", ")
    )) else {
        return;
    };
    // Taken once the answer is here, so a statement's start is placed no
    // earlier than it was.
    let answered_ns = strata_probe::blocktrace::monotonic_ns() as f64;
    let activities: BTreeMap<u32, Activity> = rows
        .into_iter()
        .filter_map(|(thread, query, running_ms)| {
            let activity = Activity {
                query: without_literals(&query, Dialect::MariaDb),
                started_ns: answered_ns - running_ms * 1e6,
            };
            Some((u32::try_from(thread).ok()?, activity))
        })
        .collect();
    for outlier in outliers {
        let Some(activity) = activities.get(&outlier.thread) else {
            continue;
        };
        if activity.started_ns <= span_ns(outlier).0 {
            named.insert(outlier.sequence, activity.query.clone());
        }
    }
}
