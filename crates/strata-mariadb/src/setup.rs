//! Loading the SLOB tables into a MariaDB database: the database (created
//! only when absent, and then recorded as strata's), the meta table, each
//! schema's table loaded with its fillers and the fillers deleted (see
//! `schema`), purge awaited, and the layout checked from InnoDB's own leaf
//! page counts; and removing what strata created, never anything else.
//!
//! Not for: starting a server (`server`) or running sessions.

use anyhow::{bail, ensure, Context, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, Value};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use strata_core::random::FastRng;
use strata_slob::load::{LoadAction, LoadProgress, LoadReport, SchemaLoad};
use strata_slob::schema::{schema_names, validate_plan, KeyShuffle, SchemaPlan};

use crate::schema::{
    create_meta_sql, create_table_sql, pad_bytes, quote_ident, scan_table, slob_table, META_TABLE,
};
use crate::target::MariaDbTarget;

/// Real rows per INSERT (each followed by its filler).
const INSERT_BATCH_ROWS: u64 = 32;
/// Where the leaf page count of a small tree comes from: InnoDB reports
/// `n_leaf_pages` 1 while a tree's pages are its segment's first fragment
/// pages, but counts them in `size` with the root.
const SMALL_TREE_PAGES: &str = "mysql.innodb_index_stats size - 1 (the root)";

/// Ids per DELETE of fillers.
const DELETE_BATCH_IDS: u64 = 20_000;

pub struct SetupOptions {
    pub plan: SchemaPlan,
    /// Drop and reload schemas strata made even when they are complete.
    pub replace: bool,
    pub seed: u64,
}

/// How many rows share a page, from InnoDB's own count.
#[derive(Clone, Debug, Serialize)]
pub struct TableLayout {
    pub table: String,
    pub rows: u64,
    /// Leaf pages of the clustered index.
    pub leaf_pages: u64,
    /// `mysql.innodb_index_stats` (exact, after ANALYZE TABLE) or
    /// `information_schema.TABLES.DATA_LENGTH` (all pages, an estimate).
    pub leaf_pages_from: &'static str,
    pub one_row_per_page: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct SetupReport {
    pub load: LoadReport,
    pub layout: Vec<TableLayout>,
    /// strata created the database in this setup.
    pub database_created: bool,
    pub page_bytes: u32,
    pub pad_bytes: u32,
    /// Time spent waiting for InnoDB's purge to remove the fillers.
    pub purge_wait_s: f64,
}

/// Loads what the plan needs and is missing (or everything strata made,
/// with `replace`); `progress` hears of every batch.
pub fn setup(
    target: &MariaDbTarget,
    options: &SetupOptions,
    progress: &mut dyn FnMut(&LoadProgress),
    interrupt: &AtomicBool,
) -> Result<SetupReport> {
    validate_plan(&options.plan)?;
    let started = Instant::now();
    let database_created = ensure_database(target)?;
    let mut conn = target.connect()?;
    let sql = |conn: &mut Conn, text: String| {
        conn.query_drop(&text)
            .map_err(|error| target.error(&format!("running {text} on"), error))
    };
    sql(&mut conn, create_meta_sql())?;
    if database_created {
        sql(&mut conn, format!("INSERT IGNORE INTO {META_TABLE} (kind, name, created_at) VALUES ('database', {}, NOW())", quote_literal(target.database())))?;
    }
    let page_bytes: u32 = query_one(&mut conn, "SELECT @@innodb_page_size")?;
    let pad = pad_bytes(page_bytes)?;
    let names = schema_names(&options.plan);
    let mut actions = Vec::new();
    for name in &names {
        actions.push(decide(
            &mut conn,
            target.database(),
            name,
            options,
            page_bytes,
        )?);
    }
    let to_load = actions
        .iter()
        .filter(|action| **action != LoadAction::KeptComplete);
    let rows_total =
        to_load.count() as u64 * (options.plan.blocks_per_schema + options.plan.scan_table_blocks);
    let mut loader = Loader {
        conn,
        pad,
        page_bytes,
        plan: &options.plan,
        rng: FastRng::seeded(options.seed),
        progress,
        interrupt,
        done: LoadProgress {
            rows_done: 0,
            rows_total,
        },
    };
    for (name, action) in names.iter().zip(&actions) {
        if *action != LoadAction::KeptComplete {
            loader.load_schema(name, options.seed)?;
        }
    }
    let mut conn = loader.conn;
    let purge_started = Instant::now();
    wait_for_purge(&mut conn);
    let purge_wait_s = purge_started.elapsed().as_secs_f64();
    let layout = check_layouts(&mut conn, target.database(), &names, &options.plan)?;
    let rows_per_schema = options.plan.blocks_per_schema + options.plan.scan_table_blocks;
    let load = load_report(
        &mut conn,
        target.database(),
        &names,
        &actions,
        &layout,
        rows_per_schema,
        started,
    )?;
    Ok(SetupReport {
        load,
        layout,
        database_created,
        page_bytes,
        pad_bytes: pad,
        purge_wait_s,
    })
}

/// Creates the database when absent; true when strata created it.
fn ensure_database(target: &MariaDbTarget) -> Result<bool> {
    let mut conn = target.connect_server()?;
    let database = target.database();
    let exists: Option<String> = conn
        .exec_first(
            "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
            (database,),
        )
        .map_err(|error| target.error("looking for the database on", error))?;
    if exists.is_some() {
        return Ok(false);
    }
    conn.query_drop(format!(
        "CREATE DATABASE IF NOT EXISTS {}",
        quote_ident(database)
    ))
    .map_err(|error| target.error(&format!("creating database {database} on"), error))?;
    Ok(true)
}

pub(crate) fn query_one<T: mysql::prelude::FromValue>(conn: &mut Conn, sql: &str) -> Result<T> {
    let row: Option<T> = conn
        .query_first(sql)
        .with_context(|| format!("running {sql}"))?;
    row.with_context(|| format!("{sql} returned no row"))
}

pub(crate) fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

fn table_exists(conn: &mut Conn, database: &str, table: &str) -> Result<bool> {
    let found: Option<String> = conn.exec_first(
        "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
        (database, table),
    )?;
    Ok(found.is_some())
}

/// A schema's row in the meta table: blocks, scan blocks, page bytes, complete.
type MetaRow = (Option<u64>, Option<u64>, Option<u32>, bool);

fn meta_row(conn: &mut Conn, schema: &str) -> Result<Option<MetaRow>> {
    let sql = format!("SELECT blocks, scan_blocks, page_bytes, completed_at IS NOT NULL FROM {META_TABLE} WHERE kind = 'schema' AND name = ?");
    Ok(conn.exec_first(sql, (schema,))?)
}

/// What setup does with one schema; refuses tables strata did not make and
/// complete schemas of another size without `replace`.
fn decide(
    conn: &mut Conn,
    database: &str,
    schema: &str,
    options: &SetupOptions,
    page_bytes: u32,
) -> Result<LoadAction> {
    let table = slob_table(schema);
    let Some((blocks, scan_blocks, pages, complete)) = meta_row(conn, schema)? else {
        ensure!(
            !table_exists(conn, database, &table)? && !table_exists(conn, database, &scan_table(schema))?,
            "table {database}.{table} exists but strata did not create it ({META_TABLE} has no record of it): \
             strata leaves it alone; name another database in the URL"
        );
        return Ok(LoadAction::Loaded);
    };
    if !complete {
        return Ok(LoadAction::ReloadedIncomplete);
    }
    let plan = &options.plan;
    let same = blocks == Some(plan.blocks_per_schema)
        && scan_blocks == Some(plan.scan_table_blocks)
        && pages == Some(page_bytes);
    match (same, options.replace) {
        (_, true) => Ok(LoadAction::Replaced),
        (true, false) => Ok(LoadAction::KeptComplete),
        (false, false) => bail!(
            "{database}.{table} holds {} pages and a scan table of {} but the plan says {} and {}: set it up again with --replace",
            blocks.unwrap_or(0), scan_blocks.unwrap_or(0), plan.blocks_per_schema, plan.scan_table_blocks
        ),
    }
}

struct Loader<'a> {
    conn: Conn,
    pad: u32,
    page_bytes: u32,
    plan: &'a SchemaPlan,
    rng: FastRng,
    progress: &'a mut dyn FnMut(&LoadProgress),
    interrupt: &'a AtomicBool,
    done: LoadProgress,
}

impl Loader<'_> {
    /// Drops the schema's tables, records the load as begun, loads both
    /// tables and marks the load complete.
    fn load_schema(&mut self, schema: &str, seed: u64) -> Result<()> {
        let (slob, scan) = (slob_table(schema), scan_table(schema));
        for table in [&slob, &scan] {
            self.conn
                .query_drop(format!("DROP TABLE IF EXISTS {}", quote_ident(table)))?;
        }
        let plan = self.plan;
        self.conn.exec_drop(
            format!("REPLACE INTO {META_TABLE} (kind, name, blocks, scan_blocks, page_bytes, pad_bytes, random_data, created_at, completed_at) VALUES ('schema', ?, ?, ?, ?, ?, ?, NOW(), NULL)"),
            (schema, plan.blocks_per_schema, plan.scan_table_blocks, self.page_bytes, self.pad, plan.random_data),
        )?;
        let shuffle = KeyShuffle::new(plan.blocks_per_schema, seed ^ fnv(schema));
        self.load_table(&slob, plan.blocks_per_schema, true, |row| {
            shuffle.key_of_row(row)
        })?;
        if plan.scan_table_blocks > 0 {
            self.load_table(&scan, plan.scan_table_blocks, false, |row| row + 1)?;
        }
        self.conn.exec_drop(
            format!(
                "UPDATE {META_TABLE} SET completed_at = NOW() WHERE kind = 'schema' AND name = ?"
            ),
            (schema,),
        )?;
        Ok(())
    }

    /// `rows` real rows, each followed by a filler, then the fillers deleted.
    fn load_table(
        &mut self,
        table: &str,
        rows: u64,
        key_index: bool,
        key_of_row: impl Fn(u64) -> u64,
    ) -> Result<()> {
        self.conn
            .query_drop(create_table_sql(table, self.pad, key_index))
            .with_context(|| format!("creating table {table}"))?;
        let mut first = 0;
        while first < rows {
            ensure!(
                !self.interrupt.load(Ordering::Relaxed),
                "interrupted while loading {table}"
            );
            let last = (first + INSERT_BATCH_ROWS).min(rows);
            self.insert_batch(table, first..last, &key_of_row)
                .with_context(|| format!("loading rows {first}..{last} of {table}"))?;
            self.done.rows_done += last - first;
            (self.progress)(&self.done);
            first = last;
        }
        let delete = format!(
            "DELETE FROM {} WHERE id BETWEEN ? AND ? AND `key` < 0",
            quote_ident(table)
        );
        for low in (1..=2 * rows).step_by(DELETE_BATCH_IDS as usize) {
            self.conn
                .exec_drop(&delete, (low, low + DELETE_BATCH_IDS - 1))
                .with_context(|| format!("deleting the fillers of {table}"))?;
        }
        Ok(())
    }

    /// Row `r` has id `2r + 1`; its filler id `2r + 2` and key `-(r + 1)`.
    fn insert_batch(
        &mut self,
        table: &str,
        rows: std::ops::Range<u64>,
        key_of_row: &impl Fn(u64) -> u64,
    ) -> Result<()> {
        let count = (rows.end - rows.start) as usize;
        let placeholders = vec!["(?, ?, 0, ?)"; 2 * count].join(", ");
        let sql = format!(
            "INSERT INTO {} (id, `key`, n, pad) VALUES {placeholders}",
            quote_ident(table)
        );
        let mut params = Vec::with_capacity(6 * count);
        for row in rows {
            let pad = self.pad_value();
            params.extend([
                Value::from(2 * row + 1),
                Value::from(key_of_row(row)),
                pad.clone(),
            ]);
            params.extend([
                Value::from(2 * row + 2),
                Value::from(-(row as i64) - 1),
                pad,
            ]);
        }
        self.conn.exec_drop(sql, params)?;
        Ok(())
    }

    fn pad_value(&mut self) -> Value {
        let mut pad = vec![0x5a_u8; self.pad as usize];
        if self.plan.random_data {
            self.rng.fill(&mut pad);
        }
        Value::Bytes(pad)
    }
}

/// A stable number from a schema name, so each schema gets its own shuffle.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Waits until InnoDB's purge has removed the deleted fillers (MariaDB
/// 10.5.7+; needs SUPER or equivalent): otherwise purge would read their
/// pages during the measured window. Elsewhere purge catches up by itself.
fn wait_for_purge(conn: &mut Conn) {
    let _ = conn.query_drop("SET GLOBAL innodb_max_purge_lag_wait = 0");
}

fn check_layouts(
    conn: &mut Conn,
    database: &str,
    names: &[String],
    plan: &SchemaPlan,
) -> Result<Vec<TableLayout>> {
    let mut layouts = Vec::new();
    for name in names {
        layouts.push(layout(
            conn,
            database,
            &slob_table(name),
            plan.blocks_per_schema,
        )?);
        if plan.scan_table_blocks > 0 {
            layouts.push(layout(
                conn,
                database,
                &scan_table(name),
                plan.scan_table_blocks,
            )?);
        }
    }
    for layout in &layouts {
        ensure!(
            layout.one_row_per_page,
            "{database}.{} holds {} rows in {} leaf pages ({}): not one row per page; set it up again with --replace",
            layout.table, layout.rows, layout.leaf_pages, layout.leaf_pages_from
        );
    }
    Ok(layouts)
}

/// The table's leaf pages after ANALYZE TABLE. One row per page allows a
/// page or two more than rows (the first and last page of the load).
pub fn layout(conn: &mut Conn, database: &str, table: &str, rows: u64) -> Result<TableLayout> {
    conn.query_drop(format!("ANALYZE TABLE {}", quote_ident(table)))?;
    let stats: Vec<(String, u64)> = conn
        .exec(
            "SELECT stat_name, stat_value FROM mysql.innodb_index_stats WHERE database_name = ? \
             AND table_name = ? AND index_name = 'PRIMARY' AND stat_name IN ('n_leaf_pages', 'size')",
            (database, table),
        )
        .unwrap_or_default();
    let stat = |name: &str| {
        stats
            .iter()
            .find(|(stat, _)| stat == name)
            .map(|(_, value)| *value)
    };
    let (leaf_pages, leaf_pages_from, slack) = match (stat("n_leaf_pages"), stat("size")) {
        (Some(leaves), Some(size)) if leaves <= 1 && size > 2 => (size - 1, SMALL_TREE_PAGES, 2),
        (Some(leaves), _) => (leaves, "mysql.innodb_index_stats n_leaf_pages", 2),
        _ => {
            let bytes: Option<u64> = conn.exec_first(
                "SELECT DATA_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                (database, table),
            )?;
            let page_bytes: u64 = query_one(conn, "SELECT @@innodb_page_size")?;
            (
                bytes.unwrap_or(0) / page_bytes,
                "information_schema.TABLES DATA_LENGTH",
                2 + rows / 20,
            )
        }
    };
    Ok(TableLayout {
        table: table.to_string(),
        rows,
        leaf_pages,
        leaf_pages_from,
        one_row_per_page: (rows..=rows + slack).contains(&leaf_pages),
    })
}

fn table_bytes(conn: &mut Conn, database: &str, tables: &[String]) -> Result<u64> {
    let mut total = 0;
    for table in tables {
        let bytes: Option<Option<u64>> = conn.exec_first(
            "SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
            (database, table),
        )?;
        total += bytes.flatten().unwrap_or(0);
    }
    Ok(total)
}

fn load_report(
    conn: &mut Conn,
    database: &str,
    names: &[String],
    actions: &[LoadAction],
    layout: &[TableLayout],
    rows_per_schema: u64,
    started: Instant,
) -> Result<LoadReport> {
    let mut schemas = Vec::new();
    for (name, action) in names.iter().zip(actions) {
        let own = layout.iter().find(|table| table.table == slob_table(name));
        schemas.push(SchemaLoad {
            schema: name.clone(),
            action: action.clone(),
            rows: own.map_or(0, |table| table.rows),
            blocks: own.map_or(0, |table| table.leaf_pages),
            bytes_on_disk: table_bytes(conn, database, &[slob_table(name), scan_table(name)])?,
        });
    }
    let loaded = |schema: &&SchemaLoad| schema.action != LoadAction::KeptComplete;
    let rows_loaded = schemas.iter().filter(loaded).count() as u64 * rows_per_schema;
    Ok(LoadReport::new(
        schemas,
        rows_loaded,
        started.elapsed().as_secs_f64(),
    ))
}

/// What `remove` dropped.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Removed {
    pub tables: Vec<String>,
    pub database_dropped: bool,
    /// Why a database strata created was kept (it holds other tables).
    pub database_kept_because: Option<String>,
}

/// Drops the tables strata's meta table lists, the meta table, and the
/// database when strata created it and nothing else is in it.
pub fn remove(target: &MariaDbTarget) -> Result<Removed> {
    let mut removed = Removed::default();
    let database = target.database().to_string();
    let mut conn = target.connect_server()?;
    conn.query_drop(format!("USE {}", quote_ident(&database)))
        .map_err(|error| target.error(&format!("using database {database} on"), error))?;
    if !table_exists(&mut conn, &database, META_TABLE)? {
        return Ok(removed);
    }
    let rows: Vec<(String, String)> = conn.query(format!("SELECT kind, name FROM {META_TABLE}"))?;
    for (_, schema) in rows.iter().filter(|(kind, _)| kind == "schema") {
        for table in [slob_table(schema), scan_table(schema)] {
            if table_exists(&mut conn, &database, &table)? {
                conn.query_drop(format!("DROP TABLE {}", quote_ident(&table)))?;
                removed.tables.push(table);
            }
        }
    }
    conn.query_drop(format!("DROP TABLE {META_TABLE}"))?;
    if rows
        .iter()
        .any(|(kind, name)| kind == "database" && *name == database)
    {
        let others: Vec<String> = conn.exec(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?",
            (&database,),
        )?;
        match others.is_empty() {
            true => {
                conn.query_drop(format!("DROP DATABASE {}", quote_ident(&database)))?;
                removed.database_dropped = true;
            }
            false => {
                removed.database_kept_because = Some(format!("it also holds {}", others.join(", ")))
            }
        }
    }
    Ok(removed)
}
