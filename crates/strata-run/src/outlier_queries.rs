//! What the database says a block request outlier's process or thread was
//! running, shared by the engines: the query text as shown (string
//! literals as `?`, so a password in a statement never reaches the
//! output; cut to 300 characters), the outliers named, and a watcher on
//! its own thread for engines whose client is synchronous (MariaDB): every
//! 100 ms it reads the tracer's new outliers and hands them to the
//! engine's lookup, which names those whose query provably ran across
//! the request.
//!
//! Not for: asking the database (each engine's `outlier_queries`), or
//! strata's own sessions (their statements name theirs,
//! [`crate::block_trace::name_sessions`]).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use strata_probe::blocktrace::{IoOutlier, OUTLIER_SLOTS};
use strata_recording::run::BlockTraceFigures;

/// How often the tracer's ring is looked at.
pub const LOOK_EVERY: Duration = Duration::from_millis(100);

/// Queries shown longer than this are cut, with "…".
const QUERY_CHARS: usize = 300;

/// Whose string literals a query holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dialect {
    /// `'…'` (`''` inside), `E'…'` (`\'` too), `$tag$…$tag$`.
    PostgreSql,
    /// `'…'` and `"…"` (the quote doubled or after `\` inside).
    MariaDb,
}

/// The queries named so far, by the outlier's place among the tracer's;
/// only those the ring still holds are kept, since only those can be
/// listed.
#[derive(Debug, Default)]
pub struct Named(BTreeMap<u64, String>);

impl Named {
    pub fn insert(&mut self, sequence: u64, query: String) {
        self.0.insert(sequence, query);
    }

    /// Forgets what the ring no longer holds, `seen` outliers in.
    pub fn keep_the_rings(&mut self, seen: u64) {
        self.0 = self
            .0
            .split_off(&seen.saturating_sub(u64::from(OUTLIER_SLOTS)));
    }

    /// Gives each listed outlier that is not a session's the query named
    /// for it.
    pub fn onto(&self, traced: &mut BlockTraceFigures) {
        let Some(outliers) = traced.outliers.as_mut() else {
            return;
        };
        for outlier in outliers.listed.iter_mut().filter(|o| o.session.is_none()) {
            outlier.query = self.0.get(&outlier.sequence).cloned();
        }
    }
}

/// Watches the tracer's outliers on a thread of its own while a window
/// runs; the engine's `name` looks a batch up and names what it can.
pub struct Watcher {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Named>,
}

impl Watcher {
    /// Starts watching when the tracer runs here.
    pub fn start<Look>(mut name: Look) -> Option<Watcher>
    where
        Look: FnMut(&[IoOutlier], &mut Named) + Send + 'static,
    {
        let (seen, _) = strata_probe::blocktrace::shared::outliers_after(u64::MAX)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut named = Named::default();
            let mut after = seen;
            while !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(LOOK_EVERY);
                let Some((seen, outliers)) =
                    strata_probe::blocktrace::shared::outliers_after(after)
                else {
                    break;
                };
                after = seen;
                if !outliers.is_empty() {
                    name(&outliers, &mut named);
                }
                named.keep_the_rings(seen);
            }
            named
        });
        Some(Watcher { stop, thread })
    }

    /// Stops watching: what was named.
    pub fn finish(self) -> Named {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

/// When the outlier's request started and ended, CLOCK_MONOTONIC ns.
pub fn span_ns(outlier: &IoOutlier) -> (f64, f64) {
    let ended_ns = outlier.ended_ns as f64;
    (
        ended_ns - (outlier.queue_ns + outlier.device_ns) as f64,
        ended_ns,
    )
}

/// `query` with every string literal of `dialect` as `?`, cut to 300
/// characters.
pub fn without_literals(query: &str, dialect: Dialect) -> String {
    let chars: Vec<char> = query.chars().collect();
    let mut out = String::with_capacity(query.len());
    let mut at = 0;
    while at < chars.len() {
        let prefixed = dialect == Dialect::PostgreSql
            && at >= 1
            && matches!(chars[at - 1], 'E' | 'e')
            && (at < 2 || !(chars[at - 2].is_alphanumeric() || chars[at - 2] == '_'));
        let backslash = prefixed || dialect == Dialect::MariaDb;
        let next = match (chars[at], dialect) {
            ('\'', _) | ('"', Dialect::MariaDb) => Some(quoted_end(&chars, at, backslash)),
            ('$', Dialect::PostgreSql) => dollar_quoted_end(&chars, at),
            _ => None,
        };
        match next {
            Some(end) => {
                if prefixed {
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

/// Past the literal opening at `open` (its quote doubled inside, and after
/// `\` where `backslash`), or the end of the text.
fn quoted_end(chars: &[char], open: usize, backslash: bool) -> usize {
    let quote = chars[open];
    let mut at = open + 1;
    while at < chars.len() {
        match (chars[at], chars.get(at + 1)) {
            ('\\', Some(_)) if backslash => at += 2,
            (c, Some(next)) if c == quote && *next == quote => at += 2,
            (c, _) if c == quote => return at + 1,
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
    use super::{without_literals, Dialect};

    #[test]
    fn postgresqls_string_literals_are_shown_as_a_question_mark() {
        let shown = |query: &str| without_literals(query, Dialect::PostgreSql);
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
            shown("SELECT \"Quoted\" FROM s.slob"),
            "SELECT \"Quoted\" FROM s.slob"
        );
        assert_eq!(shown(&"x".repeat(400)).chars().count(), 301);
    }

    #[test]
    fn mariadbs_string_literals_are_shown_as_a_question_mark() {
        let shown = |query: &str| without_literals(query, Dialect::MariaDb);
        assert_eq!(
            shown("SET PASSWORD FOR app = PASSWORD('it''s \\'secret')"),
            "SET PASSWORD FOR app = PASSWORD(?)"
        );
        assert_eq!(
            shown("SELECT \"a\\\"b\", 'C:\\\\', `col$1` FROM t"),
            "SELECT ?, ?, `col$1` FROM t"
        );
        assert_eq!(shown("SELECT $$x$$"), "SELECT $$x$$");
        assert_eq!(shown("SELECT \"unclosed"), "SELECT ?");
    }
}
