//! `strata setup` for SQLite: makes the plan's table sets exist and be
//! complete in one file — keeps complete ones (unless `replace`), reloads
//! interrupted ones, loads missing ones, and refuses, before changing
//! anything, a table strata did not create or a complete set of another
//! size. Rows are written in rowid order with shuffled keys, then indexed,
//! checked (one row per page) and marked complete.
//!
//! Not for: running sessions (`session`) or the OS side of a run.

use crate::connection::{checkpoint, file_page_bytes, open_for_load};
use crate::layout::{layout_of, PageLayout};
use crate::schema::{
    create_index_sql, create_meta_sql, create_table_sql, pad_bytes, quote, table_sets, TableSet,
    META_TABLE,
};
use anyhow::{bail, ensure, Context};
use rusqlite::{Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use strata_core::random::FastRng;
use strata_core::units::format_size;
use strata_slob::load::{LoadAction, LoadProgress, LoadReport, SchemaLoad};
use strata_slob::schema::{validate_plan, KeyShuffle, SchemaPlan};

const ROWS_PER_TRANSACTION: u64 = 1024;
const PATTERN: &[u8] = b"strata sqlite slob pattern data, not random. ";

#[derive(Clone, Debug)]
pub struct SetupOptions {
    /// The SQLite file; created when missing.
    pub path: PathBuf,
    pub plan: SchemaPlan,
    /// Drop and reload table sets strata made even when they are complete.
    pub replace: bool,
    /// Page size of a new file (default [`crate::schema::DEFAULT_PAGE_BYTES`]);
    /// an existing file must already have it.
    pub page_bytes: Option<u32>,
}

/// What setup found for one table set, decided before anything changes.
#[derive(Clone, Debug)]
struct Decision {
    set: TableSet,
    action: LoadAction,
}

/// Makes the plan's table sets exist and be complete; `progress` hears of
/// every batch of rows, `interrupt` stops the load between batches (the
/// set stays incomplete and is reloaded next time).
pub fn setup(
    options: &SetupOptions,
    progress: &mut dyn FnMut(&LoadProgress),
    interrupt: &AtomicBool,
) -> anyhow::Result<LoadReport> {
    validate_plan(&options.plan)?;
    let began = Instant::now();
    let page_bytes = options
        .page_bytes
        .or_else(|| (!options.path.exists()).then_some(crate::schema::DEFAULT_PAGE_BYTES));
    let connection = open_for_load(&options.path, page_bytes)?;
    connection.execute_batch(&create_meta_sql())?;
    let decisions = decide(&connection, options)?;
    check_free_space(&connection, &options.path, &options.plan, &decisions)?;
    let mut loader = Loader::new(&connection, options, &decisions)?;
    let mut schemas = Vec::with_capacity(decisions.len());
    for decision in &decisions {
        if decision.action != LoadAction::KeptComplete {
            loader.load(&decision.set, progress, interrupt)?;
        }
        let layout = layout_of(&connection, &decision.set)?;
        schemas.push(schema_load(decision, &layout));
    }
    checkpoint(&connection)?;
    Ok(report(schemas, loader.rows_loaded, began))
}

fn decide(connection: &Connection, options: &SetupOptions) -> anyhow::Result<Vec<Decision>> {
    let plan = &options.plan;
    let mut decisions = Vec::new();
    for set in table_sets(plan) {
        let action = match recorded(connection, &set.schema)? {
            None => {
                refuse_foreign_tables(connection, &set)?;
                LoadAction::Loaded
            }
            Some(record) if !record.complete => LoadAction::ReloadedIncomplete,
            Some(_) if options.replace => LoadAction::Replaced,
            Some(record) => {
                ensure!(
                    record.rows == plan.blocks_per_schema && record.scan_rows == plan.scan_table_blocks,
                    "{} holds {} pages ({} scan pages) but the plan says {} ({}); run setup with this plan and --replace",
                    set.schema, record.rows, record.scan_rows, plan.blocks_per_schema, plan.scan_table_blocks
                );
                LoadAction::KeptComplete
            }
        };
        decisions.push(Decision { set, action });
    }
    Ok(decisions)
}

struct Recorded {
    rows: u64,
    scan_rows: u64,
    complete: bool,
}

fn recorded(connection: &Connection, schema: &str) -> anyhow::Result<Option<Recorded>> {
    let sql = format!(
        "SELECT rows, scan_rows, completed_at IS NOT NULL FROM {META_TABLE} WHERE schema_name = ?1"
    );
    let row = connection
        .query_row(&sql, [schema], |row| {
            Ok(Recorded {
                rows: row.get::<_, i64>(0)? as u64,
                scan_rows: row.get::<_, i64>(1)? as u64,
                complete: row.get(2)?,
            })
        })
        .optional()?;
    Ok(row)
}

/// strata never drops what it did not create: a table or index of one of
/// its names that its record does not know is someone else's.
fn refuse_foreign_tables(connection: &Connection, set: &TableSet) -> anyhow::Result<()> {
    for name in [&set.slob, &set.key_index, &set.scan] {
        let exists: bool = connection.query_row(
            "SELECT count(*) > 0 FROM sqlite_schema WHERE name = ?1",
            [name],
            |row| row.get(0),
        )?;
        if exists {
            bail!(
                "{name} exists but strata did not create it ({META_TABLE} does not list {}); strata never drops what it did not create: use another file",
                set.schema
            );
        }
    }
    Ok(())
}

/// Refuses a load that would not fit (its pages plus a tenth for indexes
/// and the WAL).
fn check_free_space(
    connection: &Connection,
    path: &Path,
    plan: &SchemaPlan,
    decisions: &[Decision],
) -> anyhow::Result<()> {
    let sets = decisions
        .iter()
        .filter(|decision| decision.action != LoadAction::KeptComplete)
        .count() as u64;
    let pages = sets * (plan.blocks_per_schema + plan.scan_table_blocks);
    let needed = pages * u64::from(file_page_bytes(connection)?);
    let needed = needed + needed / 10;
    let dir = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let free = strata_io::target::free_bytes(dir)?;
    ensure!(
        needed <= free,
        "the data set needs about {} but {} has {} free; choose a smaller --scale or --schemas",
        format_size(needed),
        dir.display(),
        format_size(free)
    );
    Ok(())
}

fn schema_load(decision: &Decision, layout: &PageLayout) -> SchemaLoad {
    SchemaLoad {
        schema: decision.set.schema.clone(),
        action: decision.action.clone(),
        rows: layout.rows,
        blocks: layout.leaf_pages,
        bytes_on_disk: layout.bytes_on_disk,
    }
}

fn report(schemas: Vec<SchemaLoad>, rows_loaded: u64, began: Instant) -> LoadReport {
    LoadReport::new(schemas, rows_loaded, began.elapsed().as_secs_f64())
}

/// Writes table sets, one transaction per batch of rows.
struct Loader<'a> {
    connection: &'a Connection,
    plan: &'a SchemaPlan,
    pad: Vec<u8>,
    rng: FastRng,
    rows_done: u64,
    rows_total: u64,
    rows_loaded: u64,
}

impl<'a> Loader<'a> {
    fn new(
        connection: &'a Connection,
        options: &'a SetupOptions,
        decisions: &[Decision],
    ) -> anyhow::Result<Self> {
        let plan = &options.plan;
        let page_bytes = file_page_bytes(connection)?;
        let sets = decisions
            .iter()
            .filter(|decision| decision.action != LoadAction::KeptComplete)
            .count() as u64;
        let mut pad = vec![0u8; pad_bytes(page_bytes)];
        for (byte, pattern) in pad.iter_mut().zip(PATTERN.iter().cycle()) {
            *byte = *pattern;
        }
        Ok(Loader {
            connection,
            plan,
            pad,
            rng: FastRng::from_entropy(),
            rows_done: 0,
            rows_total: sets * (plan.blocks_per_schema + plan.scan_table_blocks),
            rows_loaded: 0,
        })
    }

    fn load(
        &mut self,
        set: &TableSet,
        progress: &mut dyn FnMut(&LoadProgress),
        interrupt: &AtomicBool,
    ) -> anyhow::Result<()> {
        self.start_set(set)?;
        self.fill(&set.slob, self.plan.blocks_per_schema, progress, interrupt)?;
        if self.plan.scan_table_blocks > 0 {
            self.fill(&set.scan, self.plan.scan_table_blocks, progress, interrupt)?;
        }
        self.connection.execute_batch(&create_index_sql(set))?;
        let layout = layout_of(self.connection, set)?;
        ensure!(
            layout.one_row_per_page && layout.rows == self.plan.blocks_per_schema,
            "{} did not come out one row per page: {} rows on {} leaf pages, {} overflow pages",
            set.schema,
            layout.rows,
            layout.leaf_pages,
            layout.overflow_pages
        );
        self.connection.execute(
            &format!(
                "UPDATE {META_TABLE} SET completed_at = datetime('now') WHERE schema_name = ?1"
            ),
            [&set.schema],
        )?;
        Ok(())
    }

    /// Drops what strata made of this set before (its record says so),
    /// records the set as incomplete and creates its tables.
    fn start_set(&self, set: &TableSet) -> anyhow::Result<()> {
        let plan = self.plan;
        let connection = self.connection;
        connection.execute_batch("BEGIN")?;
        for table in [&set.slob, &set.scan] {
            connection
                .execute_batch(&format!("DROP TABLE IF EXISTS {}", quote(table)))
                .with_context(|| format!("dropping strata's earlier {table}"))?;
        }
        connection.execute(
            &format!("DELETE FROM {META_TABLE} WHERE schema_name = ?1"),
            [&set.schema],
        )?;
        connection.execute(
            &format!(
                "INSERT INTO {META_TABLE} (schema_name, rows, scan_rows, page_bytes, random_data, created_at) \
                 VALUES (?1, ?2, ?3, (SELECT page_size FROM pragma_page_size), ?4, datetime('now'))"
            ),
            rusqlite::params![
                set.schema,
                plan.blocks_per_schema as i64,
                plan.scan_table_blocks as i64,
                plan.random_data
            ],
        )?;
        connection.execute_batch(&create_table_sql(&set.slob))?;
        if plan.scan_table_blocks > 0 {
            connection.execute_batch(&create_table_sql(&set.scan))?;
        }
        connection.execute_batch("COMMIT")?;
        Ok(())
    }

    /// Rows `1..=rows` in rowid order, keys shuffled.
    fn fill(
        &mut self,
        table: &str,
        rows: u64,
        progress: &mut dyn FnMut(&LoadProgress),
        interrupt: &AtomicBool,
    ) -> anyhow::Result<()> {
        let shuffle = KeyShuffle::new(rows, table_seed(table));
        let sql = format!(
            "INSERT INTO {} (id, key, n, pad) VALUES (?1, ?2, 0, ?3)",
            quote(table)
        );
        let mut row = 0u64;
        while row < rows {
            ensure!(
                !interrupt.load(Ordering::Relaxed),
                "setup interrupted; {table} stays incomplete and is reloaded by the next setup"
            );
            let batch_end = (row + ROWS_PER_TRANSACTION).min(rows);
            self.connection.execute_batch("BEGIN")?;
            let mut insert = self.connection.prepare_cached(&sql)?;
            for number in row..batch_end {
                if self.plan.random_data {
                    self.rng.fill(&mut self.pad);
                }
                let key = shuffle.key_of_row(number) as i64;
                insert.execute(rusqlite::params![number as i64 + 1, key, self.pad])?;
            }
            drop(insert);
            self.connection.execute_batch("COMMIT")?;
            self.rows_done += batch_end - row;
            self.rows_loaded += batch_end - row;
            row = batch_end;
            progress(&LoadProgress {
                rows_done: self.rows_done,
                rows_total: self.rows_total,
            });
        }
        Ok(())
    }
}

fn table_seed(table: &str) -> u64 {
    table.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
