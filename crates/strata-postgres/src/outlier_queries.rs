//! The query a block request outlier's process was running, asked of
//! `pg_stat_activity` while the window runs. Every 100 ms the tracer's new
//! outliers of processes other than the sessions' backends are looked up
//! by PID on a connection of the watcher's own, and a query is taken as
//! the request's only where `pg_stat_activity` proves it ran across the
//! request: it started before the request did (`query_start`), and it was
//! still running (`active`) or ended after the request did
//! (`state_change`). A statement shorter than the wait for the next look
//! goes unnamed rather than named wrongly. String literals are shown as
//! `?`, so a password in a statement never reaches the output.
//!
//! Not for: strata's own sessions (their statements name theirs,
//! `strata_run::block_trace::name_sessions`), or the file and relation
//! (`outlier_files`).

use crate::connect::{connect, ConnectionTarget};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use strata_probe::blocktrace::{IoOutlier, OUTLIER_SLOTS};
use strata_recording::run::BlockTraceFigures;

/// How often the tracer's ring is looked at.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// Queries shown longer than this are cut, with "…".
const QUERY_CHARS: usize = 300;

/// The watcher while the window runs.
pub struct Watcher {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<BTreeMap<u64, String>>,
}

impl Watcher {
    /// Starts watching when the tracer runs here; `sessions` are the
    /// sessions' backends, left out.
    pub async fn start(target: &ConnectionTarget, sessions: BTreeSet<u32>) -> Option<Watcher> {
        let (seen, _) = strata_probe::blocktrace::shared::outliers_after(u64::MAX)?;
        let client = connect(target).await.ok()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let task = tokio::spawn(async move {
            let mut named = BTreeMap::new();
            let mut after = seen;
            while !stopped.load(Ordering::Relaxed) {
                tokio::time::sleep(LOOK_EVERY).await;
                let Some((seen, outliers)) =
                    strata_probe::blocktrace::shared::outliers_after(after)
                else {
                    break;
                };
                after = seen;
                let others: Vec<&IoOutlier> = outliers
                    .iter()
                    .filter(|outlier| !sessions.contains(&outlier.tgid))
                    .collect();
                if !others.is_empty() {
                    name(&client, &others, &mut named).await;
                }
                // Only the ring's outliers can be listed: the rest go.
                named = named.split_off(&seen.saturating_sub(u64::from(OUTLIER_SLOTS)));
            }
            named
        });
        Some(Watcher { stop, task })
    }

    /// Stops watching: each outlier named, by its place among the
    /// tracer's outliers.
    pub async fn finish(self) -> BTreeMap<u64, String> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap_or_default()
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
async fn name(
    client: &tokio_postgres::Client,
    outliers: &[&IoOutlier],
    named: &mut BTreeMap<u64, String>,
) {
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
                query: without_literals(row.try_get(1).ok()?),
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
        let ended_ns = outlier.ended_ns as f64;
        let started_ns = ended_ns - (outlier.queue_ns + outlier.device_ns) as f64;
        let began_before = activity.query_start_ns <= started_ns;
        let ran_past = activity.active || activity.state_change_ns >= ended_ns;
        if began_before && ran_past {
            named.insert(outlier.sequence, activity.query.clone());
        }
    }
}

/// Gives each listed outlier the query named for it.
pub fn name_queries(traced: &mut BlockTraceFigures, named: &BTreeMap<u64, String>) {
    let Some(outliers) = traced.outliers.as_mut() else {
        return;
    };
    for outlier in &mut outliers.listed {
        outlier.query = named.get(&outlier.sequence).cloned();
    }
}

/// `query` with every string literal (`'…'`, `E'…'`, `$tag$…$tag$`) as
/// `?`, cut to [`QUERY_CHARS`] characters.
fn without_literals(query: String) -> String {
    let chars: Vec<char> = query.chars().collect();
    let mut out = String::with_capacity(query.len());
    let mut at = 0;
    while at < chars.len() {
        let escaped = at >= 1
            && matches!(chars[at - 1], 'E' | 'e')
            && (at < 2 || !(chars[at - 2].is_alphanumeric() || chars[at - 2] == '_'));
        let next = match chars[at] {
            '\'' => Some(quoted_end(&chars, at, escaped)),
            '$' => dollar_quoted_end(&chars, at),
            _ => None,
        };
        match next {
            Some(end) => {
                if escaped && chars[at] == '\'' {
                    out.pop();
                }
                out.push('?');
                at = end;
            }
            None => {
                out.push(chars[at]);
                at += 1;
            }
        }
    }
    match out.chars().count() > QUERY_CHARS {
        true => out.chars().take(QUERY_CHARS).chain(['…']).collect(),
        false => out,
    }
}

/// Past the `'…'` literal opening at `open` (`''` inside it, and `\'` in an
/// `E'…'` one), or the end of the text.
fn quoted_end(chars: &[char], open: usize, escaped: bool) -> usize {
    let mut at = open + 1;
    while at < chars.len() {
        match (chars[at], chars.get(at + 1)) {
            ('\\', Some(_)) if escaped => at += 2,
            ('\'', Some('\'')) => at += 2,
            ('\'', _) => return at + 1,
            _ => at += 1,
        }
    }
    chars.len()
}

/// Past the `$tag$…$tag$` literal opening at `open`; `None` where `$` opens
/// none (a parameter, `$1`).
fn dollar_quoted_end(chars: &[char], open: usize) -> Option<usize> {
    let tag_end = (open + 1..chars.len()).find(|at| chars[*at] == '$')?;
    let tag = &chars[open..=tag_end];
    let valid = tag[1..tag.len() - 1]
        .iter()
        .enumerate()
        .all(|(index, c)| c.is_alphabetic() || *c == '_' || (index > 0 && c.is_ascii_digit()));
    if !valid {
        return None;
    }
    let body = tag_end + 1;
    let close = (body..=chars.len().saturating_sub(tag.len()))
        .find(|at| chars[*at..*at + tag.len()] == *tag)
        .map_or(chars.len(), |at| at + tag.len());
    Some(close)
}

#[cfg(test)]
mod tests {
    use super::without_literals;

    #[test]
    fn string_literals_are_shown_as_a_question_mark() {
        let shown = |query: &str| without_literals(query.to_string());
        assert_eq!(
            shown("ALTER ROLE app PASSWORD 'it''s secret'"),
            "ALTER ROLE app PASSWORD ?"
        );
        assert_eq!(shown("SELECT E'a\\'b', 2"), "SELECT ?, 2");
        assert_eq!(
            shown("SELECT $$x$$ || $tag$y $$ z$tag$ FROM t WHERE a = $1"),
            "SELECT ? || ? FROM t WHERE a = $1"
        );
        assert_eq!(shown("SELECT 'unclosed"), "SELECT ?");
        assert_eq!(
            shown("SELECT 'C:\\', 'secret', name'x'"),
            "SELECT ?, ?, name?"
        );
        assert_eq!(
            shown("SELECT count(*) FROM s.slob"),
            "SELECT count(*) FROM s.slob"
        );
        assert_eq!(shown(&"x".repeat(400)).chars().count(), 301);
    }
}
