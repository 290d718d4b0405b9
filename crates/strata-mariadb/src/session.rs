//! One SLOB session's connection on MariaDB, as strata-slob's session
//! threads drive it (the `mysql` crate is synchronous): selects (the work
//! unit's keys through the secondary index, one clustered leaf page per
//! key), updates (START TRANSACTION, the keys' rows in key order, COMMIT)
//! and scans, each a prepared statement.
//!
//! Not for: the session loop, timing or counting (strata-slob's
//! `threads`), or choosing keys (`AccessPlan`).

use mysql::prelude::Queryable;
use mysql::{Conn, Statement};
use strata_slob::session::access::LoopChoice;
use strata_slob::session::SessionSpec;
use strata_slob::threads::{BlockingSession, Opener};

use crate::schema::{quote_ident, scan_table, slob_table, KEY_INDEX};
use crate::target::MariaDbTarget;

/// Opens each session's connection to `target`; a session's id is what
/// KILL QUERY stops it by.
pub(crate) struct MariaDbOpener<'a> {
    pub target: &'a MariaDbTarget,
}

impl Opener for MariaDbOpener<'_> {
    type Session = MariaDbSession;
    type Stopper = u32;
    const FAILED_TO: &'static str = "connect";

    fn open(&self, spec: &SessionSpec) -> anyhow::Result<(MariaDbSession, u32)> {
        let session = open(self.target, spec)?;
        let id = session.conn.connection_id();
        Ok((session, id))
    }

    fn failure_text(&self, error: &mysql::Error) -> String {
        self.target.scrub(error.to_string())
    }
}

/// A schema's prepared statements.
struct SchemaStatements {
    select: Statement,
    update: Statement,
    scan: Option<Statement>,
}

fn prepare(conn: &mut Conn, schema: &str, with_scan: bool) -> mysql::Result<SchemaStatements> {
    let slob = quote_ident(&slob_table(schema));
    let index = quote_ident(KEY_INDEX);
    let select = conn.prep(format!(
        "SELECT COUNT(*), CAST(COALESCE(SUM(n), 0) AS SIGNED) FROM {slob} FORCE INDEX ({index}) \
         WHERE `key` BETWEEN ? AND ?"
    ))?;
    let update = conn.prep(format!(
        "UPDATE {slob} FORCE INDEX ({index}) SET n = n + 1 WHERE `key` BETWEEN ? AND ? ORDER BY `key`"
    ))?;
    let scan = match with_scan {
        true => Some(conn.prep(format!(
            "SELECT COUNT(*), CAST(COALESCE(SUM(n), 0) AS SIGNED) FROM {}",
            quote_ident(&scan_table(schema))
        ))?),
        false => None,
    };
    Ok(SchemaStatements {
        select,
        update,
        scan,
    })
}

/// The session's connection with its statements prepared.
fn open(target: &MariaDbTarget, spec: &SessionSpec) -> anyhow::Result<MariaDbSession> {
    let mut conn = target.connect_session()?;
    let own = prepare(&mut conn, &spec.schema, spec.with_scan)
        .map_err(|error| target.error("preparing the statements on", error))?;
    let hot = match &spec.hot_schema {
        Some(schema) => Some(
            prepare(&mut conn, schema, spec.with_scan)
                .map_err(|error| target.error("preparing the statements on", error))?,
        ),
        None => None,
    };
    let server_thread = server_thread(&mut conn);
    Ok(MariaDbSession {
        conn,
        own,
        hot,
        server_thread,
    })
}

/// The server's thread serving `conn` (PROCESSLIST's `TID`, Linux only),
/// for the block tracer's requests to name their session by.
fn server_thread(conn: &mut Conn) -> Option<u32> {
    let tid: Option<Option<u64>> = conn
        .query_first("SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()")
        .ok()?;
    u32::try_from(tid??).ok()
}

/// A session's connection and the statements of its schemas.
pub(crate) struct MariaDbSession {
    conn: Conn,
    own: SchemaStatements,
    hot: Option<SchemaStatements>,
    server_thread: Option<u32>,
}

impl BlockingSession for MariaDbSession {
    type Error = mysql::Error;

    fn select(&mut self, choice: &LoopChoice) -> mysql::Result<u64> {
        let statements = choice.schema_of(&self.own, self.hot.as_ref(), &[]);
        let keys = (choice.first_key, choice.last_key);
        let row: Option<(i64, i64)> = self.conn.exec_first(&statements.select, keys)?;
        Ok(row.map_or(0, |(count, _)| count.max(0) as u64))
    }

    fn scan(&mut self, choice: &LoopChoice) -> mysql::Result<()> {
        let statements = choice.schema_of(&self.own, self.hot.as_ref(), &[]);
        let scan = statements.scan.as_ref().expect("prepared when scanning");
        let _: Option<(i64, i64)> = self.conn.exec_first(scan, ())?;
        Ok(())
    }

    fn begin(&mut self) -> mysql::Result<()> {
        self.conn.query_drop("START TRANSACTION")
    }

    fn update(&mut self, choice: &LoopChoice) -> mysql::Result<u64> {
        let statements = choice.schema_of(&self.own, self.hot.as_ref(), &[]);
        let keys = (choice.first_key, choice.last_key);
        if let Err(error) = self.conn.exec_drop(&statements.update, keys) {
            let _ = self.conn.query_drop("ROLLBACK");
            return Err(error);
        }
        Ok(self.conn.affected_rows())
    }

    fn commit(&mut self) -> mysql::Result<()> {
        self.conn.query_drop("COMMIT")
    }

    fn server_thread(&self) -> Option<u32> {
        self.server_thread
    }
}
