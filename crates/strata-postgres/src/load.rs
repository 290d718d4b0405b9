//! Creating and loading the SLOB schemas, safely: strata records every
//! schema it makes in `strata_slob_meta.loads` and only ever drops schemas
//! recorded there. Loading is parallel binary COPY; the index is built
//! after the data, and VACUUM (ANALYZE) runs before a load is marked
//! complete, so the first read-only run reads and does not write.
//!
//! Not for: running the workload (`sessions`) or judging the storage.

use std::collections::VecDeque;
use std::io::Cursor;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context as _};
use futures_util::SinkExt as _;
use strata_core::random::FastRng;
use strata_slob::schema::{schema_names, validate_plan, KeyShuffle, SchemaPlan, BLOCK_BYTES};
use tokio_postgres::{Client, Config};

use crate::pg;
use crate::schema::{create_table_sql, qualified, META_SCHEMA, PAD_BYTES};
pub use strata_slob::load::{LayoutCheck, LoadAction, LoadProgress, LoadReport, SchemaLoad};

pub struct LoadOptions {
    pub plan: SchemaPlan,
    /// Concurrent loader connections.
    pub parallel: usize,
    /// Drop and reload schemas strata made even when they are complete.
    pub replace: bool,
}

const SETUP_LOCK_SQL: &str = "SELECT pg_try_advisory_lock(hashtext('strata_slob setup'))";
const COPY_BATCH_BYTES: usize = 256 << 10;
const PROGRESS_EVERY_ROWS: u64 = 4096;
const MIN_ROWS_PER_CHUNK: u64 = 4096;
const PATTERN: &[u8] = b"strata slob pattern data, not random. ";

/// Makes the plan's schemas exist and be complete: keeps complete ones
/// (unless `replace`), drops and reloads interrupted ones, loads missing
/// ones. Refuses, before changing anything, a schema strata did not create
/// and a complete one of another size.
pub async fn setup(
    config: &Config,
    options: &LoadOptions,
    progress: &(dyn Fn(LoadProgress) + Send + Sync),
    stop: &AtomicBool,
) -> anyhow::Result<LoadReport> {
    validate_plan(&options.plan)?;
    let began = Instant::now();
    let admin = pg::connect(config)
        .await
        .map_err(|error| anyhow::anyhow!("setup: {error}"))?;
    lock_setup(&admin).await?;
    create_meta_table(&admin).await?;
    let names = schema_names(&options.plan);
    let mut decisions = Vec::with_capacity(names.len());
    for name in &names {
        decisions.push(decide_schema(&admin, name, options).await?);
    }
    let mut to_load = Vec::new();
    for (name, decision) in names.iter().zip(&decisions) {
        if let Decision::Load { drop_first, .. } = decision {
            if *drop_first {
                drop_strata_schema(&admin, name).await?;
            }
            to_load.push(name.clone());
        }
    }
    let split_slob = slob_chunks_per_schema(&options.plan, options.parallel, to_load.len()) > 1;
    for name in &to_load {
        mark_started(&admin, name, &options.plan, split_slob).await?;
    }
    let rows_loaded = load_schemas(config, &to_load, options, progress, stop).await?;
    report(&admin, &names, &decisions, rows_loaded, began).await
}

#[derive(Clone, Debug, PartialEq)]
enum Decision {
    Keep,
    Load {
        action: LoadAction,
        drop_first: bool,
    },
}

/// What `strata_slob_meta.loads` says about one schema.
#[derive(Clone, Debug, PartialEq)]
struct MetaRow {
    blocks: u64,
    scan_blocks: u64,
    random_data: bool,
    complete: bool,
}

/// Takes strata's setup lock, waiting up to 10 s: the lock is held by a
/// setup's session until its backend exits, which can trail the end of the
/// previous setup by a moment.
async fn lock_setup(admin: &Client) -> anyhow::Result<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let row = admin
            .query_one(SETUP_LOCK_SQL, &[])
            .await
            .map_err(pg::context("taking strata's setup lock"))?;
        if row.get::<_, bool>(0) {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            bail!("another strata setup is loading SLOB schemas in this database now; wait for it");
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn create_meta_table(admin: &Client) -> anyhow::Result<()> {
    let sql = format!(
        "CREATE SCHEMA IF NOT EXISTS {META_SCHEMA}; \
         CREATE TABLE IF NOT EXISTS {META_SCHEMA}.loads (schema_name text PRIMARY KEY, \
         blocks bigint, rows bigint, scan_blocks bigint, random_data bool, \
         started_at timestamptz, completed_at timestamptz)"
    );
    admin
        .batch_execute(&sql)
        .await
        .map_err(pg::context(format!("creating {META_SCHEMA}.loads")))
}

async fn decide_schema(
    admin: &Client,
    name: &str,
    options: &LoadOptions,
) -> anyhow::Result<Decision> {
    let exists = schema_exists(admin, name).await?;
    let meta = read_meta(admin, name).await?;
    decide(name, exists, meta.as_ref(), options)
}

fn decide(
    name: &str,
    exists: bool,
    meta: Option<&MetaRow>,
    options: &LoadOptions,
) -> anyhow::Result<Decision> {
    let load = |action| Decision::Load {
        action,
        drop_first: meta.is_some(),
    };
    let Some(meta) = meta else {
        if exists {
            bail!(
                "schema {name} exists but strata did not create it (it has no row in \
                 {META_SCHEMA}.loads); strata never drops it: drop or rename it yourself"
            );
        }
        return Ok(load(LoadAction::Loaded));
    };
    if !meta.complete {
        return Ok(load(LoadAction::ReloadedIncomplete));
    }
    if !exists {
        return Ok(load(LoadAction::Loaded));
    }
    if options.replace {
        return Ok(load(LoadAction::Replaced));
    }
    let plan = &options.plan;
    let wanted = (
        plan.blocks_per_schema,
        plan.scan_table_blocks,
        plan.random_data,
    );
    if (meta.blocks, meta.scan_blocks, meta.random_data) != wanted {
        bail!(
            "schema {name} holds a complete load of {} blocks (scan table {} blocks, random \
             data {}) but the plan asks for {} blocks (scan table {} blocks, random data {}); \
             use --replace to drop and reload it",
            meta.blocks,
            meta.scan_blocks,
            meta.random_data,
            plan.blocks_per_schema,
            plan.scan_table_blocks,
            plan.random_data
        );
    }
    Ok(Decision::Keep)
}

async fn schema_exists(client: &Client, name: &str) -> anyhow::Result<bool> {
    let row = client
        .query_one(
            "SELECT count(*) FROM pg_namespace WHERE nspname = $1",
            &[&name],
        )
        .await
        .map_err(pg::context(format!("looking for schema {name}")))?;
    Ok(row.get::<_, i64>(0) > 0)
}

async fn read_meta(client: &Client, name: &str) -> anyhow::Result<Option<MetaRow>> {
    let sql = format!(
        "SELECT blocks, scan_blocks, random_data, completed_at IS NOT NULL \
         FROM {META_SCHEMA}.loads WHERE schema_name = $1"
    );
    let row = client
        .query_opt(&sql, &[&name])
        .await
        .map_err(pg::context(format!(
            "reading {META_SCHEMA}.loads for {name}"
        )))?;
    Ok(row.map(|row| MetaRow {
        blocks: row.get::<_, Option<i64>>(0).unwrap_or(0) as u64,
        scan_blocks: row.get::<_, Option<i64>>(1).unwrap_or(0) as u64,
        random_data: row.get::<_, Option<bool>>(2).unwrap_or(false),
        complete: row.get(3),
    }))
}

/// The tables and index strata makes in each of its schemas: all it drops.
const STRATA_RELATIONS: [&str; 3] = ["slob", "scan", "slob_key"];

/// Drops `name` only if strata's record of it is there, in the transaction
/// that deletes the record, and only strata's own tables in it, by name,
/// without CASCADE: a schema that also holds anything else is an error
/// naming those objects, and nothing is dropped.
async fn drop_strata_schema(admin: &Client, name: &str) -> anyhow::Result<()> {
    let context = || format!("dropping strata's schema {name}");
    admin
        .batch_execute("BEGIN")
        .await
        .map_err(pg::context(context()))?;
    let deleted = admin
        .execute(
            &format!("DELETE FROM {META_SCHEMA}.loads WHERE schema_name = $1"),
            &[&name],
        )
        .await
        .map_err(pg::context(context()))?;
    if deleted == 1 {
        let foreign = foreign_objects(admin, name).await?;
        if !foreign.is_empty() {
            admin
                .batch_execute("ROLLBACK")
                .await
                .map_err(pg::context(context()))?;
            bail!(
                "schema {name} holds objects strata did not create: {}; strata drops only its \
                 own ({}), so nothing was dropped: move or drop them yourself",
                foreign.join(", "),
                STRATA_RELATIONS.join(", ")
            );
        }
        let schema = crate::schema::quote_ident(name);
        let drop_sql = format!(
            "DROP TABLE IF EXISTS {}, {}; DROP SCHEMA IF EXISTS {schema}",
            qualified(name, "slob"),
            qualified(name, "scan")
        );
        admin
            .batch_execute(&drop_sql)
            .await
            .map_err(pg::context(context()))?;
    }
    admin
        .batch_execute("COMMIT")
        .await
        .map_err(pg::context(context()))
}

/// Everything in schema `name` that strata does not make there: relations
/// other than its own, functions and procedures, and types that belong to
/// no relation (enums, domains, ranges).
async fn foreign_objects(admin: &Client, name: &str) -> anyhow::Result<Vec<String>> {
    let sql = "SELECT 'relation ' || c.relname FROM pg_class c \
               JOIN pg_namespace n ON n.oid = c.relnamespace \
               WHERE n.nspname = $1 AND NOT c.relname = ANY($2) \
               UNION ALL SELECT 'function ' || p.oid::regprocedure::text FROM pg_proc p \
               JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 \
               UNION ALL SELECT 'type ' || t.typname FROM pg_type t \
               JOIN pg_namespace n ON n.oid = t.typnamespace \
               WHERE n.nspname = $1 AND t.typrelid = 0 AND t.typelem = 0 \
               ORDER BY 1";
    let ours: Vec<&str> = STRATA_RELATIONS.to_vec();
    let rows = admin
        .query(sql, &[&name, &ours])
        .await
        .map_err(pg::context(format!("listing the objects in schema {name}")))?;
    Ok(rows.iter().map(|row| row.get::<_, String>(0)).collect())
}

/// Records the load as started and creates the schema in one transaction,
/// so an interrupted load is always recognisable as strata's. The `slob`
/// table is created here only when several loaders share it; a single
/// loader creates it in its COPY transaction so the COPY can FREEZE.
async fn mark_started(
    admin: &Client,
    name: &str,
    plan: &SchemaPlan,
    create_slob: bool,
) -> anyhow::Result<()> {
    let context = || format!("creating schema {name}");
    let insert = format!(
        "INSERT INTO {META_SCHEMA}.loads (schema_name, blocks, rows, scan_blocks, random_data, \
         started_at) VALUES ($1, $2, $2, $3, $4, clock_timestamp())"
    );
    let mut ddl = format!("CREATE SCHEMA {}", crate::schema::quote_ident(name));
    if create_slob {
        ddl = format!("{ddl}; {}", create_table_sql(name, "slob"));
    }
    let blocks = plan.blocks_per_schema as i64;
    let scan_blocks = plan.scan_table_blocks as i64;
    admin
        .batch_execute("BEGIN")
        .await
        .map_err(pg::context(context()))?;
    admin
        .execute(&insert, &[&name, &blocks, &scan_blocks, &plan.random_data])
        .await
        .map_err(pg::context(context()))?;
    admin
        .batch_execute(&ddl)
        .await
        .map_err(pg::context(context()))?;
    admin
        .batch_execute("COMMIT")
        .await
        .map_err(pg::context(context()))
}

/// How many loaders share one schema's `slob` table: spare loaders split
/// the tables when there are fewer schemas to load than loaders.
fn slob_chunks_per_schema(plan: &SchemaPlan, parallel: usize, schemas_to_load: usize) -> u64 {
    let loaders_per_schema = (parallel.max(1) / schemas_to_load.max(1)).max(1) as u64;
    let chunks_worth_it = plan.blocks_per_schema.div_ceil(MIN_ROWS_PER_CHUNK).max(1);
    loaders_per_schema.min(chunks_worth_it)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Table {
    Slob,
    Scan,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Slob => "slob",
            Table::Scan => "scan",
        }
    }
}

#[derive(Clone, Debug)]
struct Chunk {
    schema_index: usize,
    table: Table,
    table_rows: u64,
    first_row: u64,
    rows: u64,
    creates_table: bool,
}

#[derive(Clone, Debug)]
enum Work {
    Copy(Chunk),
    Finish(usize),
}

/// The shared state of one setup's loaders.
struct LoadJob<'a> {
    schemas: &'a [String],
    plan: &'a SchemaPlan,
    queue: Mutex<VecDeque<Work>>,
    chunks_left: Vec<AtomicUsize>,
    rows_done: AtomicU64,
    rows_total: u64,
    progress: &'a (dyn Fn(LoadProgress) + Send + Sync),
    stop: &'a AtomicBool,
}

impl LoadJob<'_> {
    fn check_stop(&self) -> anyhow::Result<()> {
        if self.stop.load(Ordering::Relaxed) {
            bail!(
                "setup interrupted; the schemas it was loading stay marked incomplete in \
                 {META_SCHEMA}.loads and the next setup reloads them"
            );
        }
        Ok(())
    }

    fn next_work(&self) -> Option<Work> {
        self.queue.lock().expect("load queue lock").pop_front()
    }

    fn chunk_done(&self, schema_index: usize) {
        if self.chunks_left[schema_index].fetch_sub(1, Ordering::AcqRel) == 1 {
            self.queue
                .lock()
                .expect("load queue lock")
                .push_front(Work::Finish(schema_index));
        }
    }

    fn count_rows(&self, rows: u64) {
        let before = self.rows_done.fetch_add(rows, Ordering::Relaxed);
        let after = before + rows;
        if before / PROGRESS_EVERY_ROWS != after / PROGRESS_EVERY_ROWS || after == self.rows_total {
            (self.progress)(LoadProgress {
                rows_done: after,
                rows_total: self.rows_total,
            });
        }
    }
}

fn plan_chunks(schemas: &[String], plan: &SchemaPlan, slob_chunks: u64) -> Vec<Vec<Chunk>> {
    let blocks = plan.blocks_per_schema;
    (0..schemas.len())
        .map(|schema_index| {
            let mut chunks: Vec<Chunk> = (0..slob_chunks)
                .map(|part| {
                    let first_row = blocks * part / slob_chunks;
                    Chunk {
                        schema_index,
                        table: Table::Slob,
                        table_rows: blocks,
                        first_row,
                        rows: blocks * (part + 1) / slob_chunks - first_row,
                        creates_table: slob_chunks == 1,
                    }
                })
                .collect();
            if plan.scan_table_blocks > 0 {
                chunks.push(Chunk {
                    schema_index,
                    table: Table::Scan,
                    table_rows: plan.scan_table_blocks,
                    first_row: 0,
                    rows: plan.scan_table_blocks,
                    creates_table: true,
                });
            }
            chunks
        })
        .collect()
}

/// Loads `schemas` (already marked started) with `options.parallel`
/// loaders; returns the rows written.
async fn load_schemas(
    config: &Config,
    schemas: &[String],
    options: &LoadOptions,
    progress: &(dyn Fn(LoadProgress) + Send + Sync),
    stop: &AtomicBool,
) -> anyhow::Result<u64> {
    if schemas.is_empty() {
        return Ok(0);
    }
    let plan = &options.plan;
    let slob_chunks = slob_chunks_per_schema(plan, options.parallel, schemas.len());
    let chunks = plan_chunks(schemas, plan, slob_chunks);
    let job = LoadJob {
        schemas,
        plan,
        chunks_left: chunks
            .iter()
            .map(|list| AtomicUsize::new(list.len()))
            .collect(),
        queue: Mutex::new(chunks.into_iter().flatten().map(Work::Copy).collect()),
        rows_done: AtomicU64::new(0),
        rows_total: schemas.len() as u64 * (plan.blocks_per_schema + plan.scan_table_blocks),
        progress,
        stop,
    };
    let loaders = options
        .parallel
        .max(1)
        .min(job.queue.lock().expect("load queue lock").len());
    let runs = (0..loaders).map(|loader| run_loader(config, &job, loader));
    futures_util::future::try_join_all(runs).await?;
    Ok(job.rows_done.load(Ordering::Relaxed))
}

async fn run_loader(config: &Config, job: &LoadJob<'_>, loader: usize) -> anyhow::Result<()> {
    let mut client = pg::connect(config)
        .await
        .map_err(|error| anyhow::anyhow!("loader {loader}: {error}"))?;
    client
        .batch_execute(
            "SET synchronous_commit = off; SET statement_timeout = 0; \
             SET maintenance_work_mem = '128MB'",
        )
        .await
        .map_err(pg::context(format!(
            "loader {loader}: setting up its session"
        )))?;
    while let Some(work) = job.next_work() {
        job.check_stop()?;
        match work {
            Work::Copy(chunk) => {
                copy_chunk(&mut client, job, &chunk).await?;
                job.chunk_done(chunk.schema_index);
            }
            Work::Finish(schema_index) => finish_schema(&client, job, schema_index).await?,
        }
    }
    Ok(())
}

/// A table's key shuffle depends only on its schema and name, so loaders
/// sharing a table agree on it.
fn table_seed(schema: &str, table: &str) -> u64 {
    let mut hash = 0xCBF2_9CE4_8422_2325u64;
    for byte in schema.bytes().chain([b'.']).chain(table.bytes()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01B3);
    }
    hash
}

/// Binary COPY rows: `key`, `n` = 0 and `PAD_BYTES` of pad.
struct RowEncoder {
    random: Option<FastRng>,
    pattern: Vec<u8>,
}

impl RowEncoder {
    fn new(random_data: bool) -> Self {
        let pattern = PATTERN.iter().copied().cycle().take(PAD_BYTES).collect();
        RowEncoder {
            random: random_data.then(FastRng::from_entropy),
            pattern,
        }
    }

    fn header(buffer: &mut Vec<u8>) {
        buffer.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
        buffer.extend_from_slice(&0i32.to_be_bytes());
        buffer.extend_from_slice(&0i32.to_be_bytes());
    }

    fn trailer(buffer: &mut Vec<u8>) {
        buffer.extend_from_slice(&(-1i16).to_be_bytes());
    }

    fn row(&mut self, buffer: &mut Vec<u8>, key: u64) {
        buffer.extend_from_slice(&3i16.to_be_bytes());
        for value in [key as i64, 0] {
            buffer.extend_from_slice(&8i32.to_be_bytes());
            buffer.extend_from_slice(&value.to_be_bytes());
        }
        buffer.extend_from_slice(&(PAD_BYTES as i32).to_be_bytes());
        match &mut self.random {
            Some(rng) => {
                let start = buffer.len();
                buffer.resize(start + PAD_BYTES, 0);
                rng.fill(&mut buffer[start..]);
            }
            None => buffer.extend_from_slice(&self.pattern),
        }
    }
}

async fn copy_chunk(client: &mut Client, job: &LoadJob<'_>, chunk: &Chunk) -> anyhow::Result<()> {
    let schema = &job.schemas[chunk.schema_index];
    let table = chunk.table.name();
    let context = || format!("loading {}", qualified(schema, table));
    let transaction = client.transaction().await.map_err(pg::context(context()))?;
    if chunk.creates_table {
        let ddl = create_table_sql(schema, table);
        transaction
            .batch_execute(&ddl)
            .await
            .map_err(pg::context(context()))?;
    }
    let freeze = if chunk.creates_table { ", FREEZE" } else { "" };
    let copy_sql = format!(
        "COPY {} (key, n, pad) FROM STDIN WITH (FORMAT binary{freeze})",
        qualified(schema, table)
    );
    let sink = transaction
        .copy_in::<_, Cursor<Vec<u8>>>(&copy_sql)
        .await
        .map_err(pg::context(context()))?;
    futures_util::pin_mut!(sink);
    stream_rows(&mut sink, job, chunk).await?;
    sink.as_mut()
        .finish()
        .await
        .map_err(pg::context(context()))?;
    transaction.commit().await.map_err(pg::context(context()))?;
    Ok(())
}

/// Sends the chunk's rows as one binary COPY stream, in batches, counting
/// them as they go and checking between batches whether to stop.
async fn stream_rows<S>(sink: &mut S, job: &LoadJob<'_>, chunk: &Chunk) -> anyhow::Result<()>
where
    S: futures_util::Sink<Cursor<Vec<u8>>, Error = tokio_postgres::Error> + Unpin,
{
    let schema = &job.schemas[chunk.schema_index];
    let table = chunk.table.name();
    let context = || format!("loading {}", qualified(schema, table));
    let shuffle = KeyShuffle::new(chunk.table_rows, table_seed(schema, table));
    let mut encoder = RowEncoder::new(job.plan.random_data);
    let batch_capacity = COPY_BATCH_BYTES + 2 * BLOCK_BYTES as usize;
    let mut batch = Vec::with_capacity(batch_capacity);
    RowEncoder::header(&mut batch);
    let mut rows_in_batch = 0;
    for row in chunk.first_row..chunk.first_row + chunk.rows {
        encoder.row(&mut batch, shuffle.key_of_row(row));
        rows_in_batch += 1;
        if batch.len() >= COPY_BATCH_BYTES {
            job.check_stop()?;
            let full = std::mem::replace(&mut batch, Vec::with_capacity(batch_capacity));
            sink.send(Cursor::new(full))
                .await
                .map_err(pg::context(context()))?;
            job.count_rows(rows_in_batch);
            rows_in_batch = 0;
        }
    }
    RowEncoder::trailer(&mut batch);
    sink.send(Cursor::new(batch))
        .await
        .map_err(pg::context(context()))?;
    job.count_rows(rows_in_batch);
    Ok(())
}

/// Index, VACUUM (ANALYZE), then the completion mark, last. The index is
/// built with a synchronous commit, which flushes the WAL of every chunk's
/// asynchronous commit before it: VACUUM sets no hint bit (and marks no
/// page all-visible) for a row whose commit is not yet flushed, and every
/// such page would be dirtied by the run's first read of it, and written
/// by the backends without WAL (32,574 buffers in a 10 s read-only window
/// of 500 sessions on a 512 MiB schema).
async fn finish_schema(
    client: &Client,
    job: &LoadJob<'_>,
    schema_index: usize,
) -> anyhow::Result<()> {
    let schema = &job.schemas[schema_index];
    let slob = qualified(schema, "slob");
    let mut steps = vec![
        "SET synchronous_commit = on".to_string(),
        format!("CREATE INDEX slob_key ON {slob} (key)"),
        format!("VACUUM (ANALYZE) {slob}"),
    ];
    if job.plan.scan_table_blocks > 0 {
        steps.push(format!("VACUUM (ANALYZE) {}", qualified(schema, "scan")));
    }
    for step in &steps {
        job.check_stop()?;
        run_cancellable(client, step, job.stop)
            .await
            .with_context(|| format!("finishing schema {schema}"))?;
    }
    let mark = format!(
        "UPDATE {META_SCHEMA}.loads SET completed_at = clock_timestamp() WHERE schema_name = $1"
    );
    client
        .execute(&mark, &[schema])
        .await
        .map_err(pg::context(format!("marking schema {schema} complete")))?;
    client
        .batch_execute("SET synchronous_commit = off")
        .await
        .map_err(pg::context(format!("finishing schema {schema}")))?;
    Ok(())
}

/// Runs `sql`, asking the server to cancel it if `stop` is set meanwhile.
async fn run_cancellable(client: &Client, sql: &str, stop: &AtomicBool) -> anyhow::Result<()> {
    let statement = client.batch_execute(sql);
    futures_util::pin_mut!(statement);
    loop {
        let tick = tokio::time::sleep(std::time::Duration::from_millis(100));
        tokio::select! {
            result = &mut statement => {
                return result.map_err(pg::context(sql.to_string()));
            }
            _ = tick => {
                if stop.load(Ordering::Relaxed) {
                    let _ = client.cancel_token().cancel_query(tokio_postgres::NoTls).await;
                    bail!("setup interrupted during: {sql}");
                }
            }
        }
    }
}

struct SchemaSize {
    bytes_on_disk: u64,
    slob_blocks: u64,
    slob_rows: u64,
}

async fn measure_schema(client: &Client, name: &str) -> anyhow::Result<SchemaSize> {
    let sql = format!(
        "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint, \
         coalesce(sum(pg_relation_size(c.oid)) FILTER (WHERE c.relname = 'slob'), 0)::bigint, \
         (SELECT rows FROM {META_SCHEMA}.loads WHERE schema_name = $1) \
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = $1 AND c.relkind = 'r'"
    );
    let row = client
        .query_one(&sql, &[&name])
        .await
        .map_err(pg::context(format!("measuring schema {name}")))?;
    Ok(SchemaSize {
        bytes_on_disk: row.get::<_, i64>(0) as u64,
        slob_blocks: row.get::<_, i64>(1) as u64 / BLOCK_BYTES,
        slob_rows: row.get::<_, Option<i64>>(2).unwrap_or(0) as u64,
    })
}

async fn report(
    admin: &Client,
    names: &[String],
    decisions: &[Decision],
    rows_loaded: u64,
    began: Instant,
) -> anyhow::Result<LoadReport> {
    let mut schemas = Vec::with_capacity(names.len());
    for (name, decision) in names.iter().zip(decisions) {
        let size = measure_schema(admin, name).await?;
        let action = match decision {
            Decision::Keep => LoadAction::KeptComplete,
            Decision::Load { action, .. } => action.clone(),
        };
        schemas.push(SchemaLoad {
            schema: name.clone(),
            action,
            rows: size.slob_rows,
            blocks: size.slob_blocks,
            bytes_on_disk: size.bytes_on_disk,
        });
    }
    Ok(LoadReport::new(
        schemas,
        rows_loaded,
        began.elapsed().as_secs_f64(),
    ))
}

/// A connection for checking the SLOB schemas, and whether strata's meta
/// table (`strata_slob_meta.loads`) exists in that database.
pub(crate) async fn connect_for_checks(config: &Config) -> anyhow::Result<(Client, bool)> {
    let client = pg::connect(config)
        .await
        .map_err(|error| anyhow::anyhow!("checking the SLOB schemas: {error}"))?;
    let found = client
        .query_one(
            "SELECT to_regclass($1) IS NOT NULL",
            &[&format!("{META_SCHEMA}.loads")],
        )
        .await
        .map_err(pg::context("checking the SLOB schemas"))?;
    Ok((client, found.get(0)))
}

/// Whether every schema of the plan has a completed load on record, read from
/// strata's meta table alone. Cheap enough to run before a measured run:
/// [`check_layout`] reads every table, which would warm the page cache and
/// add its own reads to the device counters.
pub async fn loads_complete(config: &Config, plan: &SchemaPlan) -> anyhow::Result<bool> {
    let (client, meta_exists) = connect_for_checks(config).await?;
    if !meta_exists {
        return Ok(false);
    }
    for name in schema_names(plan) {
        if !read_meta(&client, &name)
            .await?
            .is_some_and(|meta| meta.complete)
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// For each of the plan's schemas: whether its `slob` table really holds one
/// row per heap block, and whether its load completed. A missing schema
/// shows as empty and incomplete.
pub async fn check_layout(config: &Config, plan: &SchemaPlan) -> anyhow::Result<Vec<LayoutCheck>> {
    let client = pg::connect(config)
        .await
        .map_err(|error| anyhow::anyhow!("checking the SLOB layout: {error}"))?;
    let mut checks = Vec::new();
    for name in schema_names(plan) {
        checks.push(check_schema_layout(&client, &name).await?);
    }
    Ok(checks)
}

async fn check_schema_layout(client: &Client, name: &str) -> anyhow::Result<LayoutCheck> {
    let slob = qualified(name, "slob");
    let context = || format!("checking the layout of {slob}");
    let found = client
        .query_one(
            "SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL",
            &[&slob, &format!("{META_SCHEMA}.loads")],
        )
        .await
        .map_err(pg::context(context()))?;
    let (table_exists, meta_exists): (bool, bool) = (found.get(0), found.get(1));
    let mut check = LayoutCheck {
        schema: name.to_string(),
        rows: 0,
        heap_blocks: 0,
        distinct_row_blocks: 0,
        one_row_per_block: false,
        complete: false,
    };
    if meta_exists {
        let meta = read_meta(client, name).await?;
        check.complete = meta.is_some_and(|meta| meta.complete);
    }
    if !table_exists {
        return Ok(check);
    }
    let sql = format!(
        "SELECT count(*), count(DISTINCT (ctid::text::point)[0]), \
         (pg_relation_size('{slob}') / {BLOCK_BYTES})::bigint FROM {slob}"
    );
    let row = client
        .query_one(&sql, &[])
        .await
        .map_err(pg::context(context()))?;
    check.rows = row.get::<_, i64>(0) as u64;
    check.distinct_row_blocks = row.get::<_, i64>(1) as u64;
    check.heap_blocks = row.get::<_, i64>(2) as u64;
    check.one_row_per_block =
        check.rows == check.heap_blocks && check.heap_blocks == check.distinct_row_blocks;
    Ok(check)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(replace: bool) -> LoadOptions {
        LoadOptions {
            plan: SchemaPlan {
                schemas: 2,
                single_schema: false,
                blocks_per_schema: 256,
                scan_table_blocks: 0,
                random_data: true,
            },
            parallel: 2,
            replace,
        }
    }

    fn meta(blocks: u64, complete: bool) -> MetaRow {
        MetaRow {
            blocks,
            scan_blocks: 0,
            random_data: true,
            complete,
        }
    }

    #[test]
    fn decisions_follow_strata_records_only() {
        let load = |action| Decision::Load {
            action,
            drop_first: true,
        };
        let keep = decide("s", true, Some(&meta(256, true)), &options(false)).unwrap();
        assert_eq!(keep, Decision::Keep);
        let replaced = decide("s", true, Some(&meta(256, true)), &options(true)).unwrap();
        assert_eq!(replaced, load(LoadAction::Replaced));
        let incomplete = decide("s", true, Some(&meta(256, false)), &options(false)).unwrap();
        assert_eq!(incomplete, load(LoadAction::ReloadedIncomplete));
        let fresh = decide("s", false, None, &options(false)).unwrap();
        assert_eq!(
            fresh,
            Decision::Load {
                action: LoadAction::Loaded,
                drop_first: false
            }
        );
        let foreign = decide("strata_slob_1", true, None, &options(true)).unwrap_err();
        assert!(foreign.to_string().contains("strata_slob_1"), "{foreign}");
        let resized = decide("s", true, Some(&meta(512, true)), &options(false)).unwrap_err();
        assert!(resized.to_string().contains("--replace"), "{resized}");
    }

    #[test]
    fn chunks_cover_every_row_once() {
        let mut plan = options(false).plan;
        plan.blocks_per_schema = 10_001;
        plan.scan_table_blocks = 7;
        let schemas = vec!["a".to_string()];
        let chunks = plan_chunks(&schemas, &plan, 3);
        let slob_rows: u64 = chunks[0]
            .iter()
            .filter(|c| c.table == Table::Slob)
            .map(|c| c.rows)
            .sum();
        assert_eq!(slob_rows, 10_001);
        assert!(chunks[0]
            .iter()
            .all(|c| c.table == Table::Scan || !c.creates_table));
        assert_eq!(slob_chunks_per_schema(&plan, 8, 1), 3);
        assert_eq!(slob_chunks_per_schema(&plan, 8, 8), 1);
    }

    #[test]
    fn encoded_row_is_binary_copy_shaped() {
        let mut buffer = Vec::new();
        RowEncoder::new(true).row(&mut buffer, 42);
        assert_eq!(buffer.len(), 2 + 12 + 12 + 4 + PAD_BYTES);
        assert_eq!(&buffer[6..14], &42i64.to_be_bytes());
    }
}
