//! One SLOB session's connection on SQLite, as strata-slob's session
//! threads drive it: selects (the work unit's keys through the index, one
//! random page per key), updates (BEGIN IMMEDIATE, the keys through the
//! index in key order, COMMIT with a WAL sync) and scans. SQLite takes one
//! writer at a time: an update waits for the write lock inside its BEGIN
//! IMMEDIATE, and that wait is part of the update's latency.
//!
//! Not for: the session loop, timing or counting (strata-slob's
//! `threads`), or choosing keys (`AccessPlan`).

use crate::connection::open_for_session;
use crate::schema::SessionSql;
use rusqlite::{Connection, InterruptHandle};
use std::path::Path;
use strata_run::block_trace::ThreadRole;
use strata_slob::session::access::LoopChoice;
use strata_slob::session::SessionSpec;
use strata_slob::threads::{BlockingSession, Opener};

/// Opens each session's connection to the file at `path` with a page
/// cache of `cache_kib`.
pub(crate) struct SqliteOpener<'a> {
    pub path: &'a Path,
    pub cache_kib: u64,
}

impl Opener for SqliteOpener<'_> {
    type Session = SqliteSession;
    type Stopper = InterruptHandle;
    const FAILED_TO: &'static str = "open the file";

    /// Opened on the session's own thread, which is given its role.
    fn open(&self, spec: &SessionSpec) -> anyhow::Result<(SqliteSession, InterruptHandle)> {
        let connection = open_for_session(self.path, self.cache_kib)?;
        let handle = connection.get_interrupt_handle();
        let role = ThreadRole::give(SESSION_ROLE)
            .map_err(|why| {
                strata_core::note::note(&format!(
                    "strata: warning: session {}'s block requests not counted by role: {why}",
                    spec.index + 1
                ))
            })
            .ok();
        let session = SqliteSession {
            connection,
            own: SessionSql::of(&spec.schema),
            hot: spec.hot_schema.as_deref().map(SessionSql::of),
            _role: role,
        };
        Ok((session, handle))
    }
}

/// The role SQLite's sessions' block requests are counted under: strata's
/// own threads, SQLite running inside them.
pub const SESSION_ROLE: &str = "session";

/// A session's connection and the statements of its table sets.
pub(crate) struct SqliteSession {
    connection: Connection,
    own: SessionSql,
    hot: Option<SessionSql>,
    /// The session thread's role, taken away when the session ends.
    _role: Option<ThreadRole>,
}

impl SqliteSession {
    fn sql(&self, choice: &LoopChoice) -> &SessionSql {
        choice.schema_of(&self.own, self.hot.as_ref(), &[])
    }
}

impl BlockingSession for SqliteSession {
    type Error = rusqlite::Error;

    fn select(&mut self, choice: &LoopChoice) -> rusqlite::Result<u64> {
        let rows: i64 = self
            .connection
            .prepare_cached(&self.sql(choice).select)?
            .query_row([choice.first_key, choice.last_key], |row| row.get(1))?;
        Ok(rows as u64)
    }

    fn scan(&mut self, choice: &LoopChoice) -> rusqlite::Result<()> {
        self.connection
            .prepare_cached(&self.sql(choice).scan)?
            .query_row([], |row| row.get::<_, i64>(0))?;
        Ok(())
    }

    fn begin(&mut self) -> rusqlite::Result<()> {
        self.connection.execute_batch("BEGIN IMMEDIATE")
    }

    fn update(&mut self, choice: &LoopChoice) -> rusqlite::Result<u64> {
        let changed = self
            .connection
            .prepare_cached(&self.sql(choice).update)?
            .execute([choice.first_key, choice.last_key]);
        match changed {
            Ok(rows) => Ok(rows as u64),
            Err(error) => {
                let _ = self.connection.execute_batch("ROLLBACK");
                Err(error)
            }
        }
    }

    fn commit(&mut self) -> rusqlite::Result<()> {
        self.connection.execute_batch("COMMIT")
    }
}
