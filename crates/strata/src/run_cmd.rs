//! `strata run` and `strata setup`: options (with pgio.conf as a source of
//! defaults), their resolution into a SLOB run, and the printing of its
//! result.

use crate::{interrupt, parse, progress::RunProgress};
use anyhow::bail;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;
use strata_core::units::{KIB, MIB};
use strata_db::account::ServerAccount;
use strata_db::workdir::{WorkDir, WorkDirRequest};
use strata_postgres::connect::ConnectionTarget;
use strata_postgres::engine::PostgresEngine;
use strata_postgres::read_path::ReadPathRequest;
use strata_postgres::run::{Database, SlobConfig};
use strata_run::engine::{DatabaseEngine, EngineKind};
use strata_run::outcome::{PageCacheChoice, SlobOutcome};
use strata_slob::schema::SchemaPlan;
use strata_slob::session::{
    AccessDistribution, DriverOptions, Hotspot, StopAfter, WorkloadOptions,
};

const BLOCK: u64 = 8 * KIB;

/// Where the data lives and how it is loaded: shared by `setup` and `run`.
#[derive(Args, Debug)]
pub struct DataArgs {
    /// The database engine: postgresql, sqlite or mariadb [default: postgresql;
    /// mariadb for a mysql:// or mariadb:// --db; sqlite when no PostgreSQL
    /// server binaries are on this machine and no --db is given]
    #[arg(long, value_name = "ENGINE", value_parser = parse_engine)]
    engine: Option<EngineKind>,

    /// PostgreSQL: a connection string (postgres://user:pass@host:port/db or
    /// "host=… dbname=…"); MariaDB: mysql://user:pass@host:port/db; the password
    /// never appears in any output. SQLite: the database file. Default: a
    /// throwaway cluster made with initdb (MariaDB: mariadb-install-db;
    /// SQLite: a file) in the current directory, removed at the end
    #[arg(long, value_name = "URL|FILE")]
    db: Option<String>,

    /// Schemas, each with its own table (SLOB's multi-schema model) [default: 4]
    #[arg(long, value_name = "N", value_parser = |s: &str| parse::bounded(s, 1, 1024).map(|v| v as u32))]
    schemas: Option<u32>,

    /// One shared schema for every session (SLOB's single-schema model; use --sessions)
    #[arg(long)]
    single_schema: bool,

    /// Size of each schema's table on disk: a size (8GiB; IEC for k/m/g), one
    /// row per block of the engine (8 KiB for PostgreSQL and SQLite, 16 KiB
    /// for InnoDB), or a count of blocks [default: 256MiB]
    #[arg(long, value_name = "SIZE|BLOCKS", value_parser = parse_table_size)]
    scale: Option<TableSize>,

    /// Size of each schema's scan table for multiblock reads (--scan-pct) [default: none]
    #[arg(long, value_name = "SIZE", value_parser = parse_table_size)]
    scan_table_size: Option<TableSize>,

    /// Fill rows with random bytes, so storage compression and deduplication can't fake results
    #[arg(long)]
    random_data: bool,

    /// Loaders working at once [default: 2]
    #[arg(long, value_name = "N", value_parser = |s: &str| parse::bounded(s, 1, 64).map(|v| v as usize))]
    load_parallel: Option<usize>,

    /// Drop and reload strata's schemas even when they are complete (never touches anything strata did not create)
    #[arg(long)]
    replace: bool,

    /// Where the throwaway server's files (MariaDB, PostgreSQL) or SQLite's
    /// temporary file go: a directory on the storage to test. [default: the
    /// current directory; when the server's OS account cannot reach it, a
    /// directory on the same filesystem that it can, said on the first lines]
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,

    /// Throwaway cluster: shared_buffers [default: 128MiB]
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    shared_buffers: Option<u64>,

    /// How much of the data set the OS page cache may hold: a size, `auto` (a
    /// twentieth of the data set (at least 16 MiB), by a memory cgroup on the throwaway cluster's
    /// processes; caches dropped before the run when no cgroup can be used) or
    /// `none` (test through the cache on purpose) [default: auto]
    #[arg(long, value_name = "SIZE|auto|none", value_parser = parse_page_cache)]
    page_cache_limit: Option<PageCacheChoice>,

    /// Throwaway cluster: the OS account the server runs as when strata runs as root [default: postgres]
    #[arg(long, value_name = "USER")]
    os_user: Option<String>,

    /// Throwaway cluster: leave it running at the end and print how to connect
    #[arg(long)]
    keep: bool,

    /// Throwaway cluster: the directory with the server binaries (initdb,
    /// postgres); the server's version is what it reports [default:
    /// $STRATA_PG_BIN, else pg_config --bindir, else the newest
    /// /usr/lib/postgresql/*/bin]
    #[arg(long, value_name = "DIR")]
    pg_bin: Option<PathBuf>,

    /// MariaDB's throwaway server: start it with performance_schema on, for
    /// per-file I/O counts and timings (redo writes and fsyncs, data reads)
    #[arg(long)]
    performance_schema: bool,

    /// Read defaults from a pgio.conf (UPDATE_PCT, RUN_TIME, NUM_SCHEMAS, NUM_THREADS,
    /// WORK_UNIT, UPDATE_WORK_UNIT, SCALE, DBNAME, CONNECT_STRING); options given here win
    #[arg(long, value_name = "FILE")]
    pgio_conf: Option<PathBuf>,

    /// Print the result as a versioned JSON document instead of tables
    #[arg(long)]
    json: bool,
}

/// The workload: `run` only.
#[derive(Args, Debug)]
pub struct WorkloadArgs {
    /// Sessions per schema [default: 1]
    #[arg(long, value_name = "N", value_parser = |s: &str| parse::bounded(s, 1, 10_000).map(|v| v as u32))]
    threads_per_schema: Option<u32>,

    /// Sessions in the single-schema model (--single-schema) [default: 4]
    #[arg(long, value_name = "N", value_parser = |s: &str| parse::bounded(s, 1, 10_000).map(|v| v as u32))]
    sessions: Option<u32>,

    /// Blocks (keys) each select loop reads through the index [default: 256]
    #[arg(long, value_name = "BLOCKS", value_parser = |s: &str| parse::bounded(s, 1, 1 << 20).map(|v| v as u32))]
    work_unit: Option<u32>,

    /// Percentage of loops that UPDATE --update-work-unit rows and COMMIT (0-100) [default: 0]
    #[arg(long, value_name = "PCT", value_parser = parse::percent)]
    update_pct: Option<f64>,

    /// Rows each update loop changes [default: 8]
    #[arg(long, value_name = "ROWS", value_parser = |s: &str| parse::bounded(s, 1, 1 << 20).map(|v| v as u32))]
    update_work_unit: Option<u32>,

    /// Percentage of loops that scan the scan table (needs --scan-table-size at setup) (0-100) [default: 0]
    #[arg(long, value_name = "PCT", value_parser = parse::percent)]
    scan_pct: Option<f64>,

    /// Think time MIN-MAX between loops (e.g. 10ms-50ms) [default: none]
    #[arg(long, value_name = "MIN-MAX", value_parser = parse_think_time)]
    think_time: Option<(Duration, Duration)>,

    /// Think after every N loops [default: 1]
    #[arg(long, value_name = "N", value_parser = |s: &str| parse::bounded(s, 1, 1 << 30).map(|v| v as u32))]
    think_every: Option<u32>,

    /// Hot spot OFFSET:SIZE:EVERY (blocks or sizes; every Nth loop reads inside it)
    #[arg(long, value_name = "OFFSET:SIZE:EVERY", value_parser = parse_hotspot)]
    hotspot: Option<Hotspot>,

    /// Every Nth loop goes to schema 1 instead of the session's own
    #[arg(long, value_name = "N", value_parser = |s: &str| parse::bounded(s, 1, 1 << 30).map(|v| v as u32))]
    hot_schema_every: Option<u32>,

    /// Where loops land: uniform or zipf:THETA [default: uniform]
    #[arg(long, value_name = "DIST", value_parser = parse_distribution)]
    distribution: Option<AccessDistribution>,

    /// Measured time [default: 30s]
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    duration: Option<Duration>,

    /// Warm-up excluded from the figures [default: 5s]
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    warmup: Option<Duration>,

    /// Batch mode: every session runs exactly N loops; the elapsed time is the result
    #[arg(long, value_name = "N", value_parser = parse::count, conflicts_with_all = ["duration", "warmup"])]
    work_loops: Option<u64>,

    /// Keep every statement at least this slow, with its moment, session,
    /// schema and operation [default: ten times the window's p99, at least
    /// 100ms]
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    outlier_threshold: Option<Duration>,

    /// Failed sessions do not fail the run: the verdict and the exit status
    /// stay as the rest of the run makes them (the failures are still reported)
    #[arg(long)]
    tolerate_failures: bool,

    /// Exit with status 3 when the verdict is "not a storage result" (the
    /// data set fit in a cache, the page cache absorbed reads, the host was
    /// CPU-bound, too few device requests); without it such a run exits 0
    #[arg(long)]
    strict: bool,

    /// Write the Recording here [default: strata-run-<UTC time>.strata in the current directory]
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,

    /// Seed for the sessions' random keys [default: random]
    #[arg(long, value_name = "N")]
    seed: Option<u64>,

    /// PostgreSQL 18+: how the server issues data-file reads: sync (each
    /// backend), worker (io worker processes) or io_uring, as the build
    /// offers; with --db only the method the server already uses (it changes
    /// only with a restart) [default: the server's]
    #[arg(long, value_name = "METHOD", value_parser = ["sync", "worker", "io_uring"])]
    io_method: Option<String>,

    /// PostgreSQL 16+: read data files with direct I/O, bypassing the OS
    /// page cache (debug_io_direct=data); with --db only when the server
    /// already does
    #[arg(long)]
    direct_io: bool,
}

#[derive(Args, Debug)]
pub struct SetupArgs {
    #[command(flatten)]
    data: DataArgs,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    workload: WorkloadArgs,
}

/// A table's size as given: bytes on disk, or a count of the engine's blocks.
#[derive(Clone, Copy, Debug)]
enum TableSize {
    Bytes(u64),
    Blocks(u64),
}

impl TableSize {
    /// Rows of one block each for an engine whose blocks are `block_bytes`.
    fn blocks(self, block_bytes: u32) -> u64 {
        match self {
            TableSize::Bytes(bytes) => (bytes / u64::from(block_bytes)).max(1),
            TableSize::Blocks(blocks) => blocks,
        }
    }
}

fn parse_table_size(input: &str) -> Result<TableSize, String> {
    if input.trim().chars().all(|c| c.is_ascii_digit()) {
        return Ok(TableSize::Blocks(parse::bounded(
            input,
            1,
            u64::MAX / BLOCK,
        )?));
    }
    let bytes = parse::size(input)?;
    if bytes < BLOCK {
        return Err(format!("'{input}' is less than one 8 KiB block"));
    }
    Ok(TableSize::Bytes(bytes))
}

/// The size of one block (one row) of `kind`'s tables, bytes.
fn block_bytes(kind: EngineKind) -> u32 {
    match kind {
        EngineKind::Postgresql => BLOCK as u32,
        EngineKind::Sqlite => strata_sqlite::schema::DEFAULT_PAGE_BYTES,
        EngineKind::Mariadb => strata_mariadb::schema::DEFAULT_PAGE_BYTES,
    }
}

fn parse_scale(input: &str) -> Result<u64, String> {
    let blocks = if input.trim().chars().all(|c| c.is_ascii_digit()) {
        parse::bounded(input, 1, u64::MAX / BLOCK)?
    } else {
        let bytes = parse::size(input)?;
        if bytes < BLOCK {
            return Err(format!("'{input}' is less than one 8 KiB block"));
        }
        bytes / BLOCK
    };
    Ok(blocks)
}

fn parse_page_cache(input: &str) -> Result<PageCacheChoice, String> {
    match input {
        "auto" => Ok(PageCacheChoice::Auto),
        "none" | "unlimited" => Ok(PageCacheChoice::Unlimited),
        size => parse::size(size)
            .map(PageCacheChoice::Limit)
            .map_err(|error| format!("{error}; or use auto or none")),
    }
}

fn parse_think_time(input: &str) -> Result<(Duration, Duration), String> {
    let (min, max) = input.split_once('-').unwrap_or((input, input));
    let (min, max) = (parse::duration(min)?, parse::duration(max)?);
    if min > max {
        return Err(format!("'{input}': MIN must not exceed MAX"));
    }
    Ok((min, max))
}

fn parse_hotspot(input: &str) -> Result<Hotspot, String> {
    let parts: Vec<&str> = input.split(':').collect();
    let [offset, size, every] = parts.as_slice() else {
        return Err(format!("'{input}' is not OFFSET:SIZE:EVERY"));
    };
    Ok(Hotspot {
        offset_blocks: parse_scale(offset).or_else(|_| {
            if *offset == "0" {
                Ok(0)
            } else {
                Err(format!("bad OFFSET '{offset}'"))
            }
        })?,
        size_blocks: parse_scale(size)?,
        every: parse::bounded(every, 1, 1 << 30)? as u32,
    })
}

fn parse_distribution(input: &str) -> Result<AccessDistribution, String> {
    match input.split_once(':') {
        None if input == "uniform" => Ok(AccessDistribution::Uniform),
        Some(("zipf", theta)) => Ok(AccessDistribution::Zipf {
            theta: parse::zipf_theta(theta)?,
        }),
        _ => Err(format!("'{input}' is not one of: uniform, zipf:THETA")),
    }
}

/// Defaults read from a pgio.conf, applied where an option was not given.
#[derive(Default)]
struct ConfDefaults {
    db: Option<String>,
    schemas: Option<u32>,
    scale_blocks: Option<u64>,
    threads_per_schema: Option<u32>,
    work_unit: Option<u32>,
    update_pct: Option<f64>,
    update_work_unit: Option<u32>,
    duration: Option<Duration>,
}

fn read_pgio_conf(path: &Option<PathBuf>) -> anyhow::Result<ConfDefaults> {
    let Some(path) = path else {
        return Ok(ConfDefaults::default());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|error| anyhow::anyhow!("--pgio-conf {}: {error}", path.display()))?;
    let conf = strata_slob::pgio_conf::parse(&text)?;
    if !conf.unknown.is_empty() {
        crate::note!("strata: --pgio-conf: ignoring {}", conf.unknown.join(", "));
    }
    let db = conf
        .connect_string
        .clone()
        .or(conf.dbname.clone())
        .map(|value| {
            if value.contains('=') || value.contains("://") {
                value
            } else {
                format!("dbname={value}")
            }
        });
    Ok(ConfDefaults {
        db,
        schemas: conf.num_schemas,
        scale_blocks: conf.scale_blocks,
        threads_per_schema: conf.num_threads,
        // pgio reads `BETWEEN k AND k + WORK_UNIT`: WORK_UNIT + 1 blocks.
        work_unit: conf.work_unit.map(|work_unit| work_unit + 1),
        update_pct: conf.update_pct,
        update_work_unit: conf.update_work_unit,
        duration: conf.run_time_seconds.map(Duration::from_secs),
    })
}

/// On a server strata makes, a data set that fits in the database's own
/// cache measures the cache: refused before any work, naming both sizes and
/// the ways out (`--page-cache-limit none` says the cache is the point).
fn refuse_a_data_set_in_the_cache(
    kind: EngineKind,
    data: &DataArgs,
    conf: &ConfDefaults,
    plan: &SchemaPlan,
) -> anyhow::Result<()> {
    let deliberate = data.page_cache_limit == Some(PageCacheChoice::Unlimited);
    if data.db.is_some() || conf.db.is_some() || deliberate {
        return Ok(());
    }
    let (cache, cache_bytes, ways_out) = match kind {
        EngineKind::Postgresql => (
            "the throwaway cluster's shared_buffers",
            data.shared_buffers.unwrap_or(128 * MIB),
            "a smaller --shared-buffers, or --page-cache-limit none to measure the cache on \
             purpose",
        ),
        EngineKind::Mariadb => (
            "the throwaway mariadbd's innodb_buffer_pool_size",
            strata_mariadb::DEFAULT_BUFFER_POOL_BYTES,
            "or a server of your own with --db",
        ),
        EngineKind::Sqlite => (
            "each SQLite session's cache_size",
            strata_sqlite::DEFAULT_SESSION_CACHE_BYTES,
            "or --page-cache-limit none to measure the cache on purpose",
        ),
    };
    let data_set_bytes =
        strata_run::outcome::data_set_bytes_in_blocks_of(plan, u64::from(block_bytes(kind)));
    if data_set_bytes > cache_bytes {
        return Ok(());
    }
    let format_size = strata_core::units::format_size;
    bail!(
        "the data set ({}) fits in {cache} ({}): every read would be a cache hit, not a storage \
         result. Give a larger --scale or --schemas, {ways_out}",
        format_size(data_set_bytes),
        format_size(cache_bytes)
    )
}

/// The smallest shared_buffers PostgreSQL starts with (16 buffers).
const MIN_SHARED_BUFFERS: u64 = 128 * KIB;

/// Data options that contradict each other or that the server would
/// refuse only after initdb: named before any work.
fn check_data_args(data: &DataArgs) -> anyhow::Result<()> {
    if let (true, Some(schemas)) = (data.single_schema, data.schemas) {
        if schemas != 1 {
            bail!(
                "--single-schema loads one schema shared by every session: --schemas {schemas} \
                 does not apply (give the sessions with --sessions)"
            );
        }
    }
    if let Some(bytes) = data
        .shared_buffers
        .filter(|&bytes| bytes < MIN_SHARED_BUFFERS)
    {
        bail!(
            "--shared-buffers {}: PostgreSQL needs at least 128 KiB (16 buffers of 8 KiB)",
            strata_core::units::format_size(bytes)
        );
    }
    Ok(())
}

/// The schemas as `kind` will lay them out: a size becomes the engine's
/// own blocks, so that `--scale` is the table's size on disk.
fn plan(data: &DataArgs, conf: &ConfDefaults, kind: EngineKind) -> SchemaPlan {
    let block = block_bytes(kind);
    let scale = data
        .scale
        .or(conf.scale_blocks.map(TableSize::Blocks))
        .unwrap_or(TableSize::Bytes(256 * MIB));
    SchemaPlan {
        schemas: data.schemas.or(conf.schemas).unwrap_or(4),
        single_schema: data.single_schema,
        blocks_per_schema: scale.blocks(block),
        scan_table_blocks: data.scan_table_size.map_or(0, |size| size.blocks(block)),
        random_data: data.random_data,
    }
}

fn database(data: &DataArgs, conf: &ConfDefaults) -> anyhow::Result<Database> {
    match data.db.clone().or(conf.db.clone()) {
        Some(text) => {
            for (flag, given) in [
                ("--keep", data.keep),
                ("--shared-buffers", data.shared_buffers.is_some()),
                ("--os-user", data.os_user.is_some()),
                ("--pg-bin", data.pg_bin.is_some()),
                ("--work-dir", data.work_dir.is_some()),
            ] {
                if given {
                    bail!("{flag} applies to the throwaway cluster, not to --db");
                }
            }
            Ok(Database::External {
                target: Box::new(ConnectionTarget::parse(&text)?),
            })
        }
        None => Ok(Database::Embedded {
            work_dir: work_dir(
                data,
                strata_postgres::cluster::server_account(data.os_user.as_deref())?,
            )?,
            os_user: data.os_user.clone(),
            shared_buffers_bytes: data.shared_buffers.unwrap_or(128 * MIB),
            keep: data.keep,
            bin_dir: data.pg_bin.clone(),
        }),
    }
}

fn workload(args: &WorkloadArgs, conf: &ConfDefaults) -> anyhow::Result<WorkloadOptions> {
    let update_pct = args.update_pct.or(conf.update_pct).unwrap_or(0.0);
    let scan_pct = args.scan_pct.unwrap_or(0.0);
    if update_pct + scan_pct > 100.0 {
        bail!("--update-pct {update_pct} plus --scan-pct {scan_pct} is over 100");
    }
    Ok(WorkloadOptions {
        work_unit: args.work_unit.or(conf.work_unit).unwrap_or(256),
        update_pct,
        update_work_unit: args.update_work_unit.or(conf.update_work_unit).unwrap_or(8),
        scan_pct,
        think_time: args.think_time,
        think_every: args.think_every.unwrap_or(1),
        hotspot: args.hotspot.clone(),
        hot_schema_every: args.hot_schema_every,
        distribution: args
            .distribution
            .clone()
            .unwrap_or(AccessDistribution::Uniform),
    })
}

fn driver_options(
    args: &WorkloadArgs,
    plan: SchemaPlan,
    conf: &ConfDefaults,
) -> anyhow::Result<DriverOptions> {
    let workload = workload(args, conf)?;
    if workload.scan_pct > 0.0 && plan.scan_table_blocks == 0 {
        bail!(
            "--scan-pct needs a scan table: give --scan-table-size (and load it with strata setup)"
        );
    }
    if u64::from(workload.work_unit) > plan.blocks_per_schema {
        bail!(
            "--work-unit {} is larger than the table ({} blocks, --scale)",
            workload.work_unit,
            plan.blocks_per_schema
        );
    }
    if args.sessions.is_some() && !plan.single_schema {
        bail!("--sessions applies to --single-schema; use --threads-per-schema with --schemas");
    }
    let stop_after = match args.work_loops {
        Some(loops) => StopAfter::WorkLoops(loops),
        None => StopAfter::Duration {
            warmup: args.warmup.unwrap_or(Duration::from_secs(5)),
            duration: args
                .duration
                .or(conf.duration)
                .unwrap_or(Duration::from_secs(30)),
        },
    };
    let single_schema = plan.single_schema;
    if let StopAfter::Duration { duration, .. } = stop_after {
        if duration.is_zero() {
            bail!("--duration must be more than 0 s: the measured window would hold nothing");
        }
    }
    if args
        .outlier_threshold
        .is_some_and(|threshold| threshold.is_zero())
    {
        bail!("--outlier-threshold must be more than 0 s: every statement would be an outlier");
    }
    Ok(DriverOptions {
        plan,
        workload,
        threads_per_schema: args
            .threads_per_schema
            .or(conf.threads_per_schema)
            .unwrap_or(1),
        sessions: args.sessions.or(single_schema.then_some(4)),
        stop_after,
        seed: args
            .seed
            .unwrap_or_else(|| strata_core::random::FastRng::from_entropy().next_u64()),
        tolerate_failures: args.tolerate_failures,
        outlier_threshold: args.outlier_threshold,
    })
}

/// The options as resolved, for the Recording and --json (no password).
#[derive(Serialize)]
struct ResolvedOptions<'a> {
    command: &'static str,
    engine: EngineKind,
    db: Option<String>,
    plan: &'a SchemaPlan,
    page_cache_limit: PageCacheChoice,
    shared_buffers_bytes: Option<u64>,
    load_parallel: usize,
    replace: bool,
    workload: Option<&'a WorkloadOptions>,
    threads_per_schema: u32,
    sessions: Option<u32>,
    stop_after: Option<&'a StopAfter>,
    tolerate_failures: bool,
    outlier_threshold_ms: Option<f64>,
    strict: bool,
    pg_bin: Option<&'a PathBuf>,
    read_path: &'a ReadPathRequest,
}

pub fn setup(args: SetupArgs) -> anyhow::Result<i32> {
    check_data_args(&args.data)?;
    let conf = read_pgio_conf(&args.data.pgio_conf)?;
    let kind = engine_kind(&args.data);
    let plan = plan(&args.data, &conf, kind);
    let driver = DriverOptions {
        plan: plan.clone(),
        workload: WorkloadOptions {
            work_unit: 1,
            update_pct: 0.0,
            update_work_unit: 1,
            scan_pct: 0.0,
            think_time: None,
            think_every: 1,
            hotspot: None,
            hot_schema_every: None,
            distribution: AccessDistribution::Uniform,
        },
        threads_per_schema: 1,
        sessions: None,
        stop_after: StopAfter::WorkLoops(0),
        seed: 0,
        tolerate_failures: false,
        outlier_threshold: None,
    };
    execute(
        kind,
        &args.data,
        &conf,
        driver,
        ReadPathRequest::default(),
        true,
        None,
        false,
    )
}

pub fn run(args: RunArgs) -> anyhow::Result<i32> {
    check_data_args(&args.data)?;
    let conf = read_pgio_conf(&args.data.pgio_conf)?;
    let kind = engine_kind(&args.data);
    let plan = plan(&args.data, &conf, kind);
    let driver = driver_options(&args.workload, plan, &conf)?;
    let record = args.workload.record.clone().unwrap_or_else(|| {
        let stamp = strata_core::time::utc_now_rfc3339().replace([':', '-'], "");
        PathBuf::from(format!("strata-run-{stamp}.strata"))
    });
    let read_path = ReadPathRequest {
        io_method: args.workload.io_method.clone(),
        direct_io: args.workload.direct_io,
    };
    execute(
        kind,
        &args.data,
        &conf,
        driver,
        read_path,
        false,
        Some(record),
        args.workload.strict,
    )
}

#[allow(clippy::too_many_arguments)]
fn execute(
    kind: EngineKind,
    data: &DataArgs,
    conf: &ConfDefaults,
    driver: DriverOptions,
    read_path: ReadPathRequest,
    setup_only: bool,
    record: Option<PathBuf>,
    strict: bool,
) -> anyhow::Result<i32> {
    let interrupt = interrupt::install();
    if !setup_only {
        refuse_a_data_set_in_the_cache(kind, data, conf, &driver.plan)?;
    }
    let database = match kind {
        EngineKind::Postgresql => Some(database(data, conf)?),
        _ => None,
    };
    let shown_db = match &database {
        Some(Database::External { target }) => Some(target.redacted()),
        Some(Database::Embedded { .. }) => None,
        None => data.db.as_deref().map(redact_unless_file),
    };
    let page_cache = data.page_cache_limit.unwrap_or(PageCacheChoice::Auto);
    let options = serde_json::to_value(ResolvedOptions {
        command: if setup_only { "setup" } else { "run" },
        engine: kind,
        db: shown_db,
        plan: &driver.plan,
        page_cache_limit: page_cache,
        shared_buffers_bytes: data.shared_buffers,
        load_parallel: data.load_parallel.unwrap_or(2),
        replace: data.replace,
        workload: (!setup_only).then_some(&driver.workload),
        threads_per_schema: driver.threads_per_schema,
        sessions: driver.sessions,
        stop_after: (!setup_only).then_some(&driver.stop_after),
        tolerate_failures: driver.tolerate_failures,
        outlier_threshold_ms: driver
            .outlier_threshold
            .map(|threshold| threshold.as_secs_f64() * 1e3),
        strict,
        pg_bin: data.pg_bin.as_ref(),
        read_path: &read_path,
    })?;
    let request = EngineRequest {
        page_cache,
        driver,
        read_path,
        setup_only,
        record: record.clone(),
        options: options.clone(),
    };
    let engine = build_engine(kind, data, database, request)?;
    let mut progress = RunProgress::new();
    let outcome = engine.run(interrupt, &mut progress);
    progress.finish();
    let outcome = match outcome {
        Err(error) if interrupt.load(std::sync::atomic::Ordering::Relaxed) => {
            crate::note!(
                "strata: interrupted ({error:#}); the throwaway cluster or temporary file, if \
                 any, was removed"
            );
            record_the_stop(record.as_deref(), &options, progress.phase());
            return Ok(interrupt::exit_code());
        }
        outcome => outcome?,
    };
    print_outcome(data.json, &outcome, &options, record.as_ref())?;
    Ok(exit_code(
        &outcome,
        strict,
        interrupt.load(std::sync::atomic::Ordering::Relaxed),
    ))
}

/// A run stopped before its sessions ran still leaves a Recording that
/// says where it stopped (when it was to write one and has not).
fn record_the_stop(record: Option<&std::path::Path>, options: &serde_json::Value, phase: &str) {
    let Some(path) = record.filter(|path| !path.exists()) else {
        return;
    };
    let reason = format!("stopped by {}", interrupt::signal_name());
    let written = strata_run::output::write_stopped_recording(
        path,
        &redacted_command_line(),
        options,
        phase,
        &reason,
    );
    match written {
        Ok(()) => crate::note!("strata: recording written to {}", path.display()),
        Err(error) => crate::note!("strata: the Recording could not be written: {error:#}"),
    }
}

/// What every engine's configuration is made from.
struct EngineRequest {
    page_cache: PageCacheChoice,
    driver: DriverOptions,
    read_path: ReadPathRequest,
    setup_only: bool,
    record: Option<PathBuf>,
    options: serde_json::Value,
}

/// The configured engine, after every check that needs no work.
fn build_engine(
    kind: EngineKind,
    data: &DataArgs,
    database: Option<Database>,
    request: EngineRequest,
) -> anyhow::Result<Box<dyn DatabaseEngine>> {
    if data.performance_schema && kind != EngineKind::Mariadb {
        bail!(
            "--performance-schema does not apply to --engine {} (it starts MariaDB's throwaway \
             server with performance_schema on)",
            kind.name()
        );
    }
    let command = redacted_command_line();
    Ok(match (kind, database) {
        (EngineKind::Sqlite, _) => Box::new(sqlite_engine(
            data,
            &request.read_path,
            strata_sqlite::SqliteRunConfig {
                database: sqlite_database(data)?,
                page_cache: request.page_cache,
                session_cache_bytes: strata_sqlite::DEFAULT_SESSION_CACHE_BYTES,
                page_bytes: None,
                replace: data.replace,
                driver: request.driver,
                setup_only: request.setup_only,
                record: request.record,
                command,
                options: request.options,
            },
        )?),
        (EngineKind::Mariadb, _) => Box::new(mariadb_engine(data, request)?),
        (EngineKind::Postgresql, database) => Box::new(PostgresEngine(SlobConfig {
            database: database.expect("a PostgreSQL run has its database"),
            page_cache: request.page_cache,
            load_parallel: data.load_parallel.unwrap_or(2),
            replace: data.replace,
            driver: request.driver,
            read_path: request.read_path,
            setup_only: request.setup_only,
            record: request.record,
            command,
            options: request.options,
        })),
    })
}

fn parse_engine(input: &str) -> Result<EngineKind, String> {
    EngineKind::parse(input).ok_or_else(|| {
        format!(
            "'{input}' is not an engine; accepted values: {}",
            EngineKind::NAMES.join(", ")
        )
    })
}

/// The engine asked for, or PostgreSQL, or SQLite when no PostgreSQL server
/// binaries are here and no --db names a server: the embedded default
/// still runs, and says which engine it is.
fn engine_kind(data: &DataArgs) -> EngineKind {
    if let Some(kind) = data.engine {
        return kind;
    }
    match &data.db {
        Some(url) if is_mariadb_url(url) => return EngineKind::Mariadb,
        Some(_) => return EngineKind::Postgresql,
        None => {}
    }
    match strata_postgres::cluster::binaries_version_num(data.pg_bin.as_deref()) {
        Ok(_) => EngineKind::Postgresql,
        Err(_) if data.pg_bin.is_some() => EngineKind::Postgresql,
        Err(error) => {
            crate::note!(
                "strata: no PostgreSQL server binaries ({error:#}): running the embedded \
                 default on SQLite instead (--engine sqlite)"
            );
            EngineKind::Sqlite
        }
    }
}

/// Options that only a PostgreSQL run can honour, with whether each was given.
fn postgres_only_options(
    data: &DataArgs,
    read_path: &ReadPathRequest,
) -> [(&'static str, bool); 8] {
    [
        ("--shared-buffers", data.shared_buffers.is_some()),
        ("--os-user", data.os_user.is_some()),
        ("--keep", data.keep),
        ("--pg-bin", data.pg_bin.is_some()),
        ("--pgio-conf", data.pgio_conf.is_some()),
        ("--io-method", read_path.io_method.is_some()),
        ("--direct-io", read_path.direct_io),
        ("--load-parallel", data.load_parallel.is_some()),
    ]
}

/// Refuses, before any work, an option `engine` cannot honour.
fn refuse_postgres_options(
    data: &DataArgs,
    read_path: &ReadPathRequest,
    engine: EngineKind,
) -> anyhow::Result<()> {
    let mut options = postgres_only_options(data, read_path).to_vec();
    if engine == EngineKind::Mariadb {
        options.push(("--page-cache-limit", data.page_cache_limit.is_some()));
    }
    if let Some((option, _)) = options.into_iter().find(|(_, given)| *given) {
        bail!("{option} does not apply to --engine {}", engine.name());
    }
    Ok(())
}

/// The throwaway server's (or temporary file's) directory, checked before
/// any work, and said on stderr at once.
fn work_dir(data: &DataArgs, account: Option<ServerAccount>) -> anyhow::Result<WorkDir> {
    let request = WorkDirRequest::from_option(data.work_dir.as_deref())?;
    let work_dir = WorkDir::resolve(&request, account.as_ref())?;
    crate::note!(
        "strata: work directory {} ({})",
        work_dir.path.display(),
        work_dir.reason
    );
    Ok(work_dir)
}

/// `--db FILE`, or a temporary file in the work directory.
fn sqlite_database(data: &DataArgs) -> anyhow::Result<strata_sqlite::SqliteDatabase> {
    Ok(match &data.db {
        Some(_) if data.work_dir.is_some() => {
            bail!("--work-dir applies to SQLite's temporary file, not to --db FILE")
        }
        Some(file) => strata_sqlite::SqliteDatabase::File(PathBuf::from(file)),
        None => strata_sqlite::SqliteDatabase::Temporary {
            work_dir: work_dir(data, None)?,
        },
    })
}

/// SQLite's engine, once no PostgreSQL-only option was given and its own
/// checks pass: all before any work starts.
fn sqlite_engine(
    data: &DataArgs,
    read_path: &ReadPathRequest,
    config: strata_sqlite::SqliteRunConfig,
) -> anyhow::Result<strata_sqlite::SqliteEngine> {
    refuse_postgres_options(data, read_path, EngineKind::Sqlite)?;
    strata_sqlite::check_config(&config)?;
    Ok(strata_sqlite::SqliteEngine(config))
}

/// MariaDB's engine: `--db mysql://…` or a throwaway `mariadbd`, once no
/// PostgreSQL-only option was given and its own checks pass.
fn mariadb_engine(
    data: &DataArgs,
    request: EngineRequest,
) -> anyhow::Result<strata_mariadb::MariaDbEngine> {
    refuse_postgres_options(data, &request.read_path, EngineKind::Mariadb)?;
    if data.performance_schema && data.db.is_some() {
        bail!(
            "--performance-schema starts strata's throwaway mariadbd with it; a server given with \
             --db must be started with performance_schema=ON itself (strata reads it when it is on)"
        );
    }
    let server = match &data.db {
        Some(_) if data.work_dir.is_some() => {
            bail!("--work-dir applies to the throwaway mariadbd, not to --db")
        }
        Some(url) => {
            strata_mariadb::MariaDbServer::External(strata_mariadb::MariaDbTarget::from_url(url)?)
        }
        None => strata_mariadb::MariaDbServer::Throwaway(strata_mariadb::ServerOptions {
            work_dir: work_dir(data, strata_mariadb::server_os_account())?,
            buffer_pool_bytes: strata_mariadb::DEFAULT_BUFFER_POOL_BYTES,
            performance_schema: data.performance_schema,
        }),
    };
    let config = strata_mariadb::MariaDbRunConfig {
        server,
        replace: data.replace,
        driver: request.driver,
        setup_only: request.setup_only,
        record: request.record,
        command: redacted_command_line(),
        options: request.options,
    };
    strata_mariadb::check_config(&config)?;
    Ok(strata_mariadb::MariaDbEngine(config))
}

/// Options whose values are connection strings that may hold a password.
const SECRET_OPTIONS: [&str; 2] = ["--db", "--mariadb"];

/// A connection string with its password replaced, or `***` when it does
/// not parse.
fn redact(value: &str) -> String {
    if is_mariadb_url(value) {
        return strata_mariadb::collector::redact(value);
    }
    ConnectionTarget::parse(value).map_or("***".into(), |target| target.redacted())
}

/// A MariaDB URL without its password; a SQLite file name as it is.
fn redact_unless_file(value: &str) -> String {
    match is_mariadb_url(value) {
        true => strata_mariadb::collector::redact(value),
        false => value.to_string(),
    }
}

fn is_mariadb_url(value: &str) -> bool {
    value.starts_with("mysql://") || value.starts_with("mariadb://")
}

/// The command line with the values of `--db` and `--mariadb` redacted.
pub fn redacted_command_line() -> Vec<String> {
    let mut redact_next = false;
    std::env::args()
        .map(|argument| {
            if std::mem::take(&mut redact_next) {
                return redact(&argument);
            }
            if SECRET_OPTIONS.contains(&argument.as_str()) {
                redact_next = true;
                return argument;
            }
            match argument.split_once('=') {
                Some((option, value)) if SECRET_OPTIONS.contains(&option) => {
                    format!("{option}={}", redact(value))
                }
                _ => argument,
            }
        })
        .collect()
}

/// 130/143 when stopped by a signal; else by the verdict: failed 1, not a
/// storage result 3 with `--strict` (else 0), valid 0.
fn exit_code(outcome: &SlobOutcome, strict: bool, interrupted: bool) -> i32 {
    use strata_run::verdict::Verdict;
    match outcome.figures.as_ref().map(|figures| &figures.verdict) {
        _ if interrupted => interrupt::exit_code(),
        Some(Verdict::Failed { .. }) => 1,
        Some(Verdict::NotAStorageResult { .. }) if strict => 3,
        _ => 0,
    }
}

fn print_outcome(
    json: bool,
    outcome: &SlobOutcome,
    options: &serde_json::Value,
    record: Option<&PathBuf>,
) -> anyhow::Result<()> {
    if let (Some(path), Some(_)) = (record, &outcome.figures) {
        crate::note!("strata: recording written to {}", path.display());
    }
    if json {
        crate::outln!("{}", strata_run::output::json_document(outcome, options))?;
    } else {
        crate::out!("{}", strata_run::output::report_text(outcome))?;
    }
    Ok(())
}
