//! Opening the SQLite file the way each user of it needs: the loader (sets
//! the page size of a new file and WAL mode), the sessions (a small page
//! cache of their own, commits that sync, waiting rather than failing on
//! the write lock), and read-only checks.
//!
//! Not for: deciding what to load or run.

use anyhow::{ensure, Context};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::time::Duration;

/// How long a session waits for the write lock (one writer at a time in
/// SQLite) before its update fails.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// Page sizes SQLite accepts.
pub fn check_page_bytes(page_bytes: u32) -> anyhow::Result<()> {
    ensure!(
        page_bytes.is_power_of_two() && (512..=65536).contains(&page_bytes),
        "page size {page_bytes} is not a power of two from 512 to 65536 bytes"
    );
    Ok(())
}

fn open(path: &Path, flags: OpenFlags) -> anyhow::Result<Connection> {
    let connection = Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .with_context(|| format!("opening the SQLite file {}", path.display()))?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    connection.execute_batch("PRAGMA mmap_size = 0")?;
    Ok(connection)
}

/// The loader's connection: a new file gets `page_bytes` (the file's own
/// page size stays otherwise: asking another is refused), WAL mode, and
/// commits that sync only at checkpoints (a load interrupted by a crash is
/// reloaded anyway).
pub fn open_for_load(path: &Path, page_bytes: Option<u32>) -> anyhow::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    let connection = open(path, flags)?;
    let page_count: i64 = connection.query_row("PRAGMA page_count", [], |row| row.get(0))?;
    if let Some(page_bytes) = page_bytes {
        check_page_bytes(page_bytes)?;
        if page_count == 0 {
            connection.execute_batch(&format!("PRAGMA page_size = {page_bytes}"))?;
        }
        let actual = file_page_bytes(&connection)?;
        ensure!(
            actual == page_bytes,
            "{} has pages of {actual} bytes, not the {page_bytes} asked for: SQLite fixes a file's page size when it is created",
            path.display()
        );
    }
    set_wal(&connection, path)?;
    connection.execute_batch("PRAGMA synchronous = NORMAL")?;
    Ok(connection)
}

/// A session's connection: `cache_kib` of SQLite page cache, commits that
/// write and sync the WAL (`synchronous = FULL`).
pub fn open_for_session(path: &Path, cache_kib: u64) -> anyhow::Result<Connection> {
    let connection = open(path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    connection.execute_batch(&format!(
        "PRAGMA cache_size = -{cache_kib}; PRAGMA synchronous = FULL"
    ))?;
    let mode: String = connection.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
    ensure!(
        mode.eq_ignore_ascii_case("wal"),
        "{} is in journal mode {mode}, not WAL; run setup on it first",
        path.display()
    );
    Ok(connection)
}

/// A connection for checks that change nothing.
pub fn open_read_only(path: &Path) -> anyhow::Result<Connection> {
    ensure!(path.exists(), "{} does not exist", path.display());
    open(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
}

pub fn file_page_bytes(connection: &Connection) -> anyhow::Result<u32> {
    Ok(connection.query_row("PRAGMA page_size", [], |row| row.get(0))?)
}

fn set_wal(connection: &Connection, path: &Path) -> anyhow::Result<()> {
    let mode: String = connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    ensure!(
        mode.eq_ignore_ascii_case("wal"),
        "{} refused WAL mode (journal mode {mode}); is it on a filesystem without shared memory?",
        path.display()
    );
    Ok(())
}

/// Writes every WAL page into the file and empties the WAL, so a run starts
/// with all pages in the file and an empty log.
pub fn checkpoint(connection: &Connection) -> anyhow::Result<()> {
    let busy: i64 =
        connection.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get(0))?;
    ensure!(
        busy == 0,
        "the WAL checkpoint could not finish: another connection is using the file"
    );
    Ok(())
}
