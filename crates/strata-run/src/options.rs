//! The options of `strata run` and `strata setup` as clap reads them (the
//! doc comments are the `--help` text and the manual page), and the value
//! parsers of those that take strata's units.
//!
//! Not for: what the options resolve to (`request`).

use crate::engine_options::EngineOptionMatches;
use crate::outcome::PageCacheChoice;
use std::path::PathBuf;
use std::time::Duration;
use strata_agent::endpoint::{AgentAccess, Endpoint};
use strata_core::input;
pub use strata_slob::schema::TableSize;
use strata_slob::schema::BLOCK_BYTES;
use strata_slob::session::{AccessDistribution, Hotspot, Shard};

/// The most of PostgreSQL's pad (`pad`, 3,900 bytes) an update rewrites.
pub const MAX_UPDATE_PAD_BYTES: u64 = 3900;

/// `--sweep-sessions`, as one value clap does not repeat.
pub type SessionCounts = Vec<u32>;

/// Where the data lives and how it is loaded: shared by `setup` and `run`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct DataRequest {
    /// The database engine: postgresql, sqlite or mariadb [default: postgresql;
    /// mariadb for a mysql:// or mariadb:// --db; sqlite when no PostgreSQL
    /// server binaries are on this machine and no --db is given]
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,

    /// PostgreSQL: a connection string (postgres://user:pass@host:port/db or
    /// "host=… dbname=…"); MariaDB: mysql://user:pass@host:port/db; the password
    /// never appears in any output. SQLite: the database file. Default: a
    /// throwaway cluster made with initdb (MariaDB: mariadb-install-db;
    /// SQLite: a file) in the current directory, removed at the end.
    /// Repeatable with --shard: shards spread over the servers given (one
    /// per node), shard I on the ((I-1) mod K + 1)th of K
    #[arg(long = "db", value_name = "URL|FILE")]
    pub dbs: Vec<String>,

    /// The one server of this driver, once `--db` is resolved
    /// ([`crate::request::choose_db`]).
    #[arg(skip)]
    pub db: Option<String>,

    /// A server on another host (PostgreSQL, MariaDB): the agent on that
    /// host to account for its devices and CPU, http[s]://HOST:PORT —
    /// `strata observe --prometheus ADDR --path DATA_DIR` there, or its
    /// node_exporter (a password is best given with
    /// --agent-basic-auth-file). Scraped at both edges of the window and
    /// each second. Repeatable: agents after the first are other hosts (an
    /// NFS server, a second node), recorded and reported per host
    #[arg(long = "agent", value_name = "URL", value_parser = strata_agent::scrape::parse_agent)]
    pub agents: Vec<Endpoint>,

    #[command(flatten)]
    pub agent_access: AgentAccess,

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

    /// How much of the data set the OS page cache may hold: a size, `auto` (a
    /// twentieth of the data set (at least 16 MiB), by a memory cgroup on the throwaway cluster's
    /// processes; caches dropped before the run when no cgroup can be used) or
    /// `none` (test through the cache on purpose) [default: auto]
    #[arg(long, value_name = "SIZE|auto|none", value_parser = parse_page_cache)]
    pub page_cache_limit: Option<PageCacheChoice>,

    /// Each engine's own options (PostgreSQL's throwaway cluster's,
    /// MariaDB's), as the command line gave them
    /// ([`crate::engine_options`]).
    #[arg(skip)]
    pub engine_options: EngineOptionMatches,

    /// Read defaults from a pgio.conf (UPDATE_PCT, RUN_TIME, NUM_SCHEMAS, NUM_THREADS,
    /// WORK_UNIT, UPDATE_WORK_UNIT, SCALE, DBNAME, CONNECT_STRING); options given here win
    #[arg(long, value_name = "FILE")]
    pub pgio_conf: Option<PathBuf>,

    /// Read defaults from SLOB's slob.conf (UPDATE_PCT, SCAN_PCT, RUN_TIME,
    /// WORK_LOOP, SCALE, SCAN_TABLE_SZ, WORK_UNIT, REDO_STRESS,
    /// LOAD_PARALLEL_DEGREE, THREADS_PER_SCHEMA, the hot spot, hot schema and
    /// think-time settings, OBFUSCATE_COLUMNS), in SLOB's units; the
    /// Oracle-only settings are named and ignored; options given here win
    #[arg(long, value_name = "FILE", conflicts_with = "pgio_conf")]
    pub slob_conf: Option<PathBuf>,
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

    /// PostgreSQL: bytes of each updated row's 3,900-byte pad that an update
    /// rewrites with new random bytes, besides the row's counter, so each
    /// update writes that much more WAL (slob.conf's REDO_STRESS: LITE 256,
    /// HEAVY 2432) [default: 0, the counter alone]
    #[arg(long, value_name = "BYTES", value_parser = |s: &str| input::bounded(s, 0, MAX_UPDATE_PAD_BYTES).map(|v| v as u32))]
    pub update_pad_bytes: Option<u32>,

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

    /// List every block request at least this slow (start to end, traced
    /// one by one) with its process, role, device, sector, size, queue and
    /// device time; a device's requests over ten times its p99 device time
    /// are listed too when that is less [default: 500ms, Oracle's
    /// V$KERNEL_IO_OUTLIER]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub io_outlier: Option<Duration>,

    /// Failed sessions do not fail the run: the verdict and the exit status
    /// stay as the rest of the run makes them (the failures are still reported)
    #[arg(long)]
    pub tolerate_failures: bool,

    /// Exit with status 3 when the verdict is "not a storage result" (the
    /// data set fit in a cache, the page cache absorbed reads, the host was
    /// CPU-bound, too few device requests); without it such a run exits 0
    #[arg(long)]
    pub strict: bool,

    /// Write the Recording here, as the run goes; a file already there is
    /// refused before any work [default: strata-run-<UTC time>.strata in
    /// the current directory, never an existing name]
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// Replace the --record file when it exists
    #[arg(long, requires = "record")]
    pub overwrite: bool,

    /// Seed for the sessions' random keys [default: random; with --shard,
    /// one derived from --run-id, the same in every shard]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Run shard I of N drivers of one run (1-based) against --db: session
    /// i of the run (from 0) is shard i mod N + 1's, so the shards together
    /// run what one driver would; they meet in the database and start
    /// together [default under srun: SLURM_PROCID+1 of SLURM_NTASKS; in a
    /// Kubernetes Indexed Job: JOB_COMPLETION_INDEX+1 of --shards]
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,

    /// How many shards the run has, where the scheduler gives only each
    /// one's index (JOB_COMPLETION_INDEX)
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 10_000).map(|v| v as u32))]
    pub shards: Option<u32>,

    /// The run every shard belongs to, the same in each (letters, digits,
    /// '.', '-', '_') [default under Slurm: slurm-$SLURM_JOB_ID]
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    pub run_id: Option<String>,

    /// How long a shard waits at the rendezvous for the others [default: 120s]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub rendezvous_timeout: Option<Duration>,

    /// The database's own capacity curve: one measured window (--warmup,
    /// --duration) per session count on one data set and one server,
    /// sessions dealt round-robin over the schemas: a rising list (1,2,4,8)
    /// or a doubling range (1-32). PostgreSQL
    #[arg(long, value_name = "N,N…|FROM-TO", value_parser = crate::sweep::parse_session_counts)]
    pub sweep_sessions: Option<SessionCounts>,

    /// With --sweep-sessions: the statement p99 under which the sweep names
    /// its most device read requests/s [default: 100ms]
    #[arg(long, value_name = "DURATION", value_parser = input::duration, requires = "sweep_sessions")]
    pub latency_target: Option<Duration>,

    /// With --sweep-sessions: a calibrate Recording of the same storage
    /// (8 KiB random reads at 1 outstanding and more); the report draws its
    /// curve beside the database's and says, per point, what share of the
    /// storage's rate the database reached and where the rest went
    #[arg(long, value_name = "CAL.strata", requires = "sweep_sessions")]
    pub calibration: Option<PathBuf>,

    /// With --sweep-sessions: predict every point from this calibrate
    /// Recording (`strata model predict`) before the sweep, with the CPU
    /// per block measured on the database first, and score the prediction
    /// against the measurement after it
    #[arg(long, value_name = "CAL.strata", requires = "sweep_sessions")]
    pub predict: Option<PathBuf>,

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

/// `--shard I/N`: 1 ≤ I ≤ N.
pub fn parse_shard(text: &str) -> Result<Shard, String> {
    let accepted = "give I/N with 1 <= I <= N (e.g. 2/4)";
    let (index, count) = text
        .split_once('/')
        .ok_or_else(|| format!("'{text}': {accepted}"))?;
    let number = |part: &str| {
        part.trim()
            .parse::<u32>()
            .map_err(|_| format!("'{text}': {accepted}"))
    };
    let (index, count) = (number(index)?, number(count)?);
    if index == 0 || index > count {
        return Err(format!("'{text}': {accepted}"));
    }
    Ok(Shard { index, count })
}

/// `--run-id`: a name every shard can write and a file name can hold.
pub fn parse_run_id(text: &str) -> Result<String, String> {
    let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
    match !text.is_empty() && text.len() <= 64 && text.chars().all(fits) {
        true => Ok(text.to_string()),
        false => Err(format!(
            "'{text}': give at most 64 letters, digits, '.', '-' and '_'"
        )),
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
