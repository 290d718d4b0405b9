//! What `strata run` and `strata setup` are asked for — their options, as
//! clap reads them (the doc comments are the `--help` text) — resolved into
//! a plan, the sessions' options and the options as the Recording keeps
//! them: defaults applied (an option given beats pgio.conf, which beats
//! strata's default), and every contradiction refused, naming the option,
//! before any work starts. Also what every engine's configuration is made
//! from, and the checks every engine shares.
//!
//! Not for: choosing the engine (the binary dispatches) or any one
//! engine's checks (its crate's `configure`).

use crate::engine::EngineKind;
use crate::outcome::{data_set_bytes_in_blocks_of, PageCacheChoice};
use crate::read_path::ReadPathRequest;
use anyhow::bail;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;
use strata_core::input;
use strata_core::units::{format_size, KIB, MIB};
use strata_db::account::ServerAccount;
use strata_db::workdir::{WorkDir, WorkDirRequest};
use strata_slob::pgio_conf::Defaults;
use strata_slob::schema::{SchemaPlan, BLOCK_BYTES};
use strata_slob::session::{
    AccessDistribution, DriverOptions, Hotspot, StopAfter, WorkloadOptions,
};

/// A table's size as given: bytes on disk, or a count of the engine's blocks.
#[derive(Clone, Copy, Debug)]
pub enum TableSize {
    Bytes(u64),
    Blocks(u64),
}

impl TableSize {
    /// Rows of one block each for an engine whose blocks are `block_bytes`.
    pub fn blocks(self, block_bytes: u32) -> u64 {
        match self {
            TableSize::Bytes(bytes) => (bytes / u64::from(block_bytes)).max(1),
            TableSize::Blocks(blocks) => blocks,
        }
    }
}

/// Where the data lives and how it is loaded: shared by `setup` and `run`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct DataRequest {
    /// The database engine: postgresql, sqlite or mariadb [default: postgresql;
    /// mariadb for a mysql:// or mariadb:// --db; sqlite when no PostgreSQL
    /// server binaries are on this machine and no --db is given]
    #[arg(long, value_name = "ENGINE", value_parser = parse_engine)]
    pub engine: Option<EngineKind>,

    /// PostgreSQL: a connection string (postgres://user:pass@host:port/db or
    /// "host=… dbname=…"); MariaDB: mysql://user:pass@host:port/db; the password
    /// never appears in any output. SQLite: the database file. Default: a
    /// throwaway cluster made with initdb (MariaDB: mariadb-install-db;
    /// SQLite: a file) in the current directory, removed at the end
    #[arg(long, value_name = "URL|FILE")]
    pub db: Option<String>,

    /// Schemas, each with its own table (SLOB's multi-schema model) [default: 4]
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 1024).map(|v| v as u32))]
    pub schemas: Option<u32>,

    /// One shared schema for every session (SLOB's single-schema model; use --sessions)
    #[arg(long)]
    pub single_schema: bool,

    /// Size of each schema's table on disk: a size (8GiB; IEC for k/m/g), one
    /// row per block of the engine (8 KiB for PostgreSQL and SQLite, 16 KiB
    /// for InnoDB), or a count of blocks [default: 256MiB]
    #[arg(long, value_name = "SIZE|BLOCKS", value_parser = parse_table_size)]
    pub scale: Option<TableSize>,

    /// Size of each schema's scan table for multiblock reads (--scan-pct) [default: none]
    #[arg(long, value_name = "SIZE", value_parser = parse_table_size)]
    pub scan_table_size: Option<TableSize>,

    /// Fill rows with random bytes, so storage compression and deduplication can't fake results
    #[arg(long)]
    pub random_data: bool,

    /// Loaders working at once [default: 2]
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 64).map(|v| v as usize))]
    pub load_parallel: Option<usize>,

    /// Drop and reload strata's schemas even when they are complete (never touches anything strata did not create)
    #[arg(long)]
    pub replace: bool,

    /// Where the throwaway server's files (MariaDB, PostgreSQL) or SQLite's
    /// temporary file go: a directory on the storage to test. [default: the
    /// current directory; when the server's OS account cannot reach it, a
    /// directory on the same filesystem that it can, said on the first lines]
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,

    /// Throwaway cluster: shared_buffers [default: 128MiB]
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    pub shared_buffers: Option<u64>,

    /// How much of the data set the OS page cache may hold: a size, `auto` (a
    /// twentieth of the data set (at least 16 MiB), by a memory cgroup on the throwaway cluster's
    /// processes; caches dropped before the run when no cgroup can be used) or
    /// `none` (test through the cache on purpose) [default: auto]
    #[arg(long, value_name = "SIZE|auto|none", value_parser = parse_page_cache)]
    pub page_cache_limit: Option<PageCacheChoice>,

    /// Throwaway cluster: the OS account the server runs as when strata runs as root [default: postgres]
    #[arg(long, value_name = "USER")]
    pub os_user: Option<String>,

    /// Throwaway cluster: leave it running at the end and print how to connect
    #[arg(long)]
    pub keep: bool,

    /// Throwaway cluster: the directory with the server binaries (initdb,
    /// postgres); the server's version is what it reports [default:
    /// $STRATA_PG_BIN, else pg_config --bindir, else the newest
    /// /usr/lib/postgresql/*/bin]
    #[arg(long, value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,

    /// MariaDB's throwaway server: start it with performance_schema on, for
    /// per-file I/O counts and timings (redo writes and fsyncs, data reads)
    #[arg(long)]
    pub performance_schema: bool,

    /// Read defaults from a pgio.conf (UPDATE_PCT, RUN_TIME, NUM_SCHEMAS, NUM_THREADS,
    /// WORK_UNIT, UPDATE_WORK_UNIT, SCALE, DBNAME, CONNECT_STRING); options given here win
    #[arg(long, value_name = "FILE")]
    pub pgio_conf: Option<PathBuf>,
}

/// The workload: `run` only.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct WorkloadRequest {
    /// Sessions per schema [default: 1]
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 10_000).map(|v| v as u32))]
    pub threads_per_schema: Option<u32>,

    /// Sessions in the single-schema model (--single-schema) [default: 4]
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 10_000).map(|v| v as u32))]
    pub sessions: Option<u32>,

    /// Blocks (keys) each select loop reads through the index [default: 256]
    #[arg(long, value_name = "BLOCKS", value_parser = |s: &str| input::bounded(s, 1, 1 << 20).map(|v| v as u32))]
    pub work_unit: Option<u32>,

    /// Percentage of loops that UPDATE --update-work-unit rows and COMMIT (0-100) [default: 0]
    #[arg(long, value_name = "PCT", value_parser = input::percent)]
    pub update_pct: Option<f64>,

    /// Rows each update loop changes [default: 8]
    #[arg(long, value_name = "ROWS", value_parser = |s: &str| input::bounded(s, 1, 1 << 20).map(|v| v as u32))]
    pub update_work_unit: Option<u32>,

    /// Percentage of loops that scan the scan table (needs --scan-table-size at setup) (0-100) [default: 0]
    #[arg(long, value_name = "PCT", value_parser = input::percent)]
    pub scan_pct: Option<f64>,

    /// Think time MIN-MAX between loops (e.g. 10ms-50ms) [default: none]
    #[arg(long, value_name = "MIN-MAX", value_parser = parse_think_time)]
    pub think_time: Option<(Duration, Duration)>,

    /// Think after every N loops [default: 1]
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 1 << 30).map(|v| v as u32))]
    pub think_every: Option<u32>,

    /// Hot spot OFFSET:SIZE:EVERY (blocks or sizes; every Nth loop reads inside it)
    #[arg(long, value_name = "OFFSET:SIZE:EVERY", value_parser = parse_hotspot)]
    pub hotspot: Option<Hotspot>,

    /// Every Nth loop goes to schema 1 instead of the session's own
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 1 << 30).map(|v| v as u32))]
    pub hot_schema_every: Option<u32>,

    /// Where loops land: uniform or zipf:THETA [default: uniform]
    #[arg(long, value_name = "DIST", value_parser = parse_distribution)]
    pub distribution: Option<AccessDistribution>,

    /// Measured time [default: 30s]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub duration: Option<Duration>,

    /// Warm-up excluded from the figures [default: 5s]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub warmup: Option<Duration>,

    /// Batch mode: every session runs exactly N loops; the elapsed time is the result
    #[arg(long, value_name = "N", value_parser = input::count, conflicts_with_all = ["duration", "warmup"])]
    pub work_loops: Option<u64>,

    /// Keep every statement at least this slow, with its moment, session,
    /// schema and operation [default: ten times the window's p99, at least
    /// 100ms]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub outlier_threshold: Option<Duration>,

    /// Failed sessions do not fail the run: the verdict and the exit status
    /// stay as the rest of the run makes them (the failures are still reported)
    #[arg(long)]
    pub tolerate_failures: bool,

    /// Exit with status 3 when the verdict is "not a storage result" (the
    /// data set fit in a cache, the page cache absorbed reads, the host was
    /// CPU-bound, too few device requests); without it such a run exits 0
    #[arg(long)]
    pub strict: bool,

    /// Write the Recording here [default: strata-run-<UTC time>.strata in the current directory]
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// Seed for the sessions' random keys [default: random]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// PostgreSQL 18+: how the server issues data-file reads: sync (each
    /// backend), worker (io worker processes) or io_uring, as the build
    /// offers; with --db only the method the server already uses (it changes
    /// only with a restart) [default: the server's]
    #[arg(long, value_name = "METHOD", value_parser = ["sync", "worker", "io_uring"])]
    pub io_method: Option<String>,

    /// PostgreSQL 16+: read data files with direct I/O, bypassing the OS
    /// page cache (debug_io_direct=data); with --db only when the server
    /// already does
    #[arg(long)]
    pub direct_io: bool,
}

/// What an engine brings to the resolution: the size of its block (one
/// row) and the cache a data set must not fit in.
#[derive(Clone, Copy, Debug)]
pub struct EngineDefaults {
    pub block_bytes: u32,
    /// The cache's setting as its users name it.
    pub cache: &'static str,
    pub cache_bytes: u64,
    /// What to change when the data set fits in it.
    pub ways_out: &'static str,
}

/// What every engine's configuration is made from.
pub struct EngineRequest {
    pub page_cache: PageCacheChoice,
    pub driver: DriverOptions,
    pub read_path: ReadPathRequest,
    pub setup_only: bool,
    pub record: Option<PathBuf>,
    pub options: serde_json::Value,
    /// The command line, without passwords, for the Recording.
    pub command: Vec<String>,
}

/// Refuses, before any work, an option `engine` cannot honour.
pub fn refuse_postgres_options(
    data: &DataRequest,
    read_path: &ReadPathRequest,
    engine: EngineKind,
) -> anyhow::Result<()> {
    let mut options = vec![
        ("--shared-buffers", data.shared_buffers.is_some()),
        ("--os-user", data.os_user.is_some()),
        ("--keep", data.keep),
        ("--pg-bin", data.pg_bin.is_some()),
        ("--pgio-conf", data.pgio_conf.is_some()),
        ("--io-method", read_path.io_method.is_some()),
        ("--direct-io", read_path.direct_io),
        ("--load-parallel", data.load_parallel.is_some()),
    ];
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
pub fn work_dir(data: &DataRequest, account: Option<ServerAccount>) -> anyhow::Result<WorkDir> {
    let request = WorkDirRequest::from_option(data.work_dir.as_deref())?;
    let work_dir = WorkDir::resolve(&request, account.as_ref())?;
    strata_core::note::note(&format!(
        "strata: work directory {} ({})",
        work_dir.path.display(),
        work_dir.reason
    ));
    Ok(work_dir)
}

/// The smallest shared_buffers PostgreSQL starts with (16 buffers).
const MIN_SHARED_BUFFERS: u64 = 128 * KIB;

/// The throwaway cluster's shared_buffers unless `--shared-buffers`.
pub const DEFAULT_SHARED_BUFFERS: u64 = 128 * MIB;

/// Data options that contradict each other or that the server would
/// refuse only after initdb: named before any work.
pub fn check_data(data: &DataRequest) -> anyhow::Result<()> {
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
            format_size(bytes)
        );
    }
    Ok(())
}

/// The schemas as the engine will lay them out: a size becomes the
/// engine's own blocks, so that `--scale` is the table's size on disk.
pub fn plan(data: &DataRequest, conf: &Defaults, engine: &EngineDefaults) -> SchemaPlan {
    let block = engine.block_bytes;
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

/// On a server strata makes, a data set that fits in the database's own
/// cache measures the cache: refused before any work, naming both sizes and
/// the ways out (`--page-cache-limit none` says the cache is the point).
pub fn refuse_a_data_set_in_the_cache(
    data: &DataRequest,
    conf: &Defaults,
    plan: &SchemaPlan,
    engine: &EngineDefaults,
) -> anyhow::Result<()> {
    let deliberate = data.page_cache_limit == Some(PageCacheChoice::Unlimited);
    if data.db.is_some() || conf.db.is_some() || deliberate {
        return Ok(());
    }
    let data_set_bytes = data_set_bytes_in_blocks_of(plan, u64::from(engine.block_bytes));
    if data_set_bytes > engine.cache_bytes {
        return Ok(());
    }
    bail!(
        "the data set ({}) fits in {} ({}): every read would be a cache hit, not a storage \
         result. Give a larger --scale or --schemas, {}",
        format_size(data_set_bytes),
        engine.cache,
        format_size(engine.cache_bytes),
        engine.ways_out
    )
}

fn workload(args: &WorkloadRequest, conf: &Defaults) -> anyhow::Result<WorkloadOptions> {
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

/// The workload against the plan: refused where they disagree.
fn check_workload(
    args: &WorkloadRequest,
    plan: &SchemaPlan,
    workload: &WorkloadOptions,
) -> anyhow::Result<()> {
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
    if args
        .outlier_threshold
        .is_some_and(|threshold| threshold.is_zero())
    {
        bail!("--outlier-threshold must be more than 0 s: every statement would be an outlier");
    }
    Ok(())
}

fn stop_after(args: &WorkloadRequest, conf: &Defaults) -> anyhow::Result<StopAfter> {
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
    if let StopAfter::Duration { duration, .. } = stop_after {
        if duration.is_zero() {
            bail!("--duration must be more than 0 s: the measured window would hold nothing");
        }
    }
    Ok(stop_after)
}

/// The sessions' options of a run.
pub fn driver_options(
    args: &WorkloadRequest,
    plan: SchemaPlan,
    conf: &Defaults,
) -> anyhow::Result<DriverOptions> {
    let workload = workload(args, conf)?;
    check_workload(args, &plan, &workload)?;
    let stop_after = stop_after(args, conf)?;
    let single_schema = plan.single_schema;
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

/// The sessions' options of a setup: it loads and runs nothing.
pub fn setup_driver_options(plan: SchemaPlan) -> DriverOptions {
    DriverOptions {
        plan,
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
    }
}

/// The options as resolved, for the Recording and the JSON document (the
/// connection string already without its password).
#[derive(Serialize)]
pub struct ResolvedOptions<'a> {
    pub command: &'static str,
    pub engine: EngineKind,
    pub db: Option<String>,
    pub plan: &'a SchemaPlan,
    pub page_cache_limit: PageCacheChoice,
    pub shared_buffers_bytes: Option<u64>,
    pub load_parallel: usize,
    pub replace: bool,
    pub workload: Option<&'a WorkloadOptions>,
    pub threads_per_schema: u32,
    pub sessions: Option<u32>,
    pub stop_after: Option<&'a StopAfter>,
    pub tolerate_failures: bool,
    pub outlier_threshold_ms: Option<f64>,
    pub strict: bool,
    pub pg_bin: Option<&'a PathBuf>,
    pub read_path: &'a ReadPathRequest,
}

impl<'a> ResolvedOptions<'a> {
    /// The options of a run (`setup_only`: of a setup) of `driver` on `kind`.
    pub fn of(
        kind: EngineKind,
        data: &'a DataRequest,
        driver: &'a DriverOptions,
        read_path: &'a ReadPathRequest,
        setup_only: bool,
        strict: bool,
    ) -> ResolvedOptions<'a> {
        ResolvedOptions {
            command: if setup_only { "setup" } else { "run" },
            engine: kind,
            db: None,
            plan: &driver.plan,
            page_cache_limit: data.page_cache_limit.unwrap_or(PageCacheChoice::Auto),
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
            read_path,
        }
    }
}

/// `--scale`, `--scan-table-size`: a size on disk, or a count of blocks.
pub fn parse_table_size(text: &str) -> Result<TableSize, String> {
    if text.trim().chars().all(|c| c.is_ascii_digit()) {
        return Ok(TableSize::Blocks(input::bounded(
            text,
            1,
            u64::MAX / BLOCK_BYTES,
        )?));
    }
    let bytes = input::size(text)?;
    if bytes < BLOCK_BYTES {
        return Err(format!("'{text}' is less than one 8 KiB block"));
    }
    Ok(TableSize::Bytes(bytes))
}

/// A count of 8 KiB blocks, or a size in them.
pub fn parse_scale(text: &str) -> Result<u64, String> {
    let blocks = if text.trim().chars().all(|c| c.is_ascii_digit()) {
        input::bounded(text, 1, u64::MAX / BLOCK_BYTES)?
    } else {
        let bytes = input::size(text)?;
        if bytes < BLOCK_BYTES {
            return Err(format!("'{text}' is less than one 8 KiB block"));
        }
        bytes / BLOCK_BYTES
    };
    Ok(blocks)
}

/// `--page-cache-limit`: a size, `auto`, or `none`.
pub fn parse_page_cache(text: &str) -> Result<PageCacheChoice, String> {
    match text {
        "auto" => Ok(PageCacheChoice::Auto),
        "none" | "unlimited" => Ok(PageCacheChoice::Unlimited),
        size => input::size(size)
            .map(PageCacheChoice::Limit)
            .map_err(|error| format!("{error}; or use auto or none")),
    }
}

/// `--think-time MIN-MAX`, or one duration for both.
pub fn parse_think_time(text: &str) -> Result<(Duration, Duration), String> {
    let (min, max) = text.split_once('-').unwrap_or((text, text));
    let (min, max) = (input::duration(min)?, input::duration(max)?);
    if min > max {
        return Err(format!("'{text}': MIN must not exceed MAX"));
    }
    Ok((min, max))
}

/// `--hotspot OFFSET:SIZE:EVERY`.
pub fn parse_hotspot(text: &str) -> Result<Hotspot, String> {
    let parts: Vec<&str> = text.split(':').collect();
    let [offset, size, every] = parts.as_slice() else {
        return Err(format!("'{text}' is not OFFSET:SIZE:EVERY"));
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
        every: input::bounded(every, 1, 1 << 30)? as u32,
    })
}

/// `--distribution uniform` or `zipf:THETA`.
pub fn parse_distribution(text: &str) -> Result<AccessDistribution, String> {
    match text.split_once(':') {
        None if text == "uniform" => Ok(AccessDistribution::Uniform),
        Some(("zipf", theta)) => Ok(AccessDistribution::Zipf {
            theta: input::zipf_theta(theta)?,
        }),
        _ => Err(format!("'{text}' is not one of: uniform, zipf:THETA")),
    }
}

/// `--engine`.
pub fn parse_engine(text: &str) -> Result<EngineKind, String> {
    EngineKind::parse(text).ok_or_else(|| {
        format!(
            "'{text}' is not an engine; accepted values: {}",
            EngineKind::NAMES.join(", ")
        )
    })
}
