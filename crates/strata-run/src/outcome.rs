//! What a run of any engine produces and how it describes where it ran:
//! the outcome the binary prints, the environment the header and the JSON
//! document show, and the data set's size.
//!
//! Not for: running anything (each engine's crate) or printing (`output`).

use crate::accounting::{RunDevices, RunFigures};
use crate::engine_options::EngineOptions;
use crate::read_path::ReadPath;
use serde::Serialize;
use std::path::PathBuf;
use strata_db::pagecache::PageCacheMethod;
use strata_db::workdir::WorkDir;
use strata_probe::blockdev::BlockDevice;
use strata_recording::environment::RecordedEngine;
use strata_slob::load::LoadReport;
use strata_slob::schema::{SchemaPlan, BLOCK_BYTES};

pub use strata_slob::session::RunObserver;

/// What a database engine is, as the run's options, checks and text name
/// it: each engine's crate holds its own (beside its `EngineEntry`), and
/// nothing else names an engine.
#[derive(Debug)]
pub struct EngineTraits {
    /// Its name (the value of `--engine` that chooses it, and the
    /// Recording's) and label (the product's name as its users write it),
    /// as readers of its Recordings know them.
    pub recorded: &'static RecordedEngine,
    /// Other values of `--engine` that choose it.
    pub aliases: &'static [&'static str],
    /// Whether the database runs as server processes of its own (SQLite
    /// runs inside strata's session threads).
    pub has_server: bool,
    /// What it can do beyond the SLOB method every engine runs: the one
    /// table an option that needs a capability is checked against.
    pub capabilities: &'static [Capability],
    /// What the run's text calls its log's directory (PostgreSQL's WAL,
    /// InnoDB's redo), as wide as "data directory".
    pub log_directory: &'static str,
    /// The run's text where its database counters are missing.
    pub without_counters: &'static str,
    /// What the text calls the data set's blocks it read, `{block}` their
    /// size.
    pub blocks_read: &'static str,
    /// Its own options, beside those every engine takes.
    pub options: EngineOptions,
}

/// Which database a run drives: the value of `--engine`.
#[derive(Clone, Copy, Debug)]
pub struct EngineKind(pub &'static EngineTraits);

impl PartialEq for EngineKind {
    fn eq(&self, other: &EngineKind) -> bool {
        self.name() == other.name()
    }
}

impl Eq for EngineKind {}

impl Serialize for EngineKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl EngineKind {
    /// Whether `--engine text` chooses it.
    pub fn is_named(self, text: &str) -> bool {
        self.name() == text || self.0.aliases.contains(&text)
    }

    /// The value of `--engine` that chooses it.
    pub fn name(self) -> &'static str {
        self.0.recorded.name
    }

    /// The product's name as its users write it.
    pub fn label(self) -> &'static str {
        self.0.recorded.label
    }

    /// Whether the database runs as server processes of its own.
    pub fn has_server(self) -> bool {
        self.0.has_server
    }

    /// Whether it has `capability`.
    pub fn can(self, capability: Capability) -> bool {
        self.0.capabilities.contains(&capability)
    }
}

/// A capability an engine may have (`EngineTraits::capabilities`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// Updates that pad their rows (`--update-pad-bytes`).
    UpdatePadding,
    /// A capacity curve of windows at several session counts
    /// (`--sweep-sessions`).
    Sweep,
    /// Several drivers on one server, merged (`--shard`).
    Shards,
    /// A server on another host, seen through its agent (`--agent`).
    Agents,
    /// The OS page cache kept from holding the data set
    /// (`--page-cache-limit`).
    PageCacheLimit,
    /// The throwaway server's page cache held at its limit by a memory
    /// cgroup through the window (which caps the sessions per CPU).
    CgroupPageCache,
    /// Defaults read from pgio.conf or SLOB's slob.conf (`--pgio-conf`,
    /// `--slob-conf`).
    ConfFiles,
    /// Several loaders at once (`--load-parallel`).
    LoadParallel,
    /// The server's read path chosen (`--io-method`, `--direct-io`).
    ReadPath,
}

/// Figures only one engine has (InnoDB's page reads vs read requests, its
/// redo writes), printed after the database layer and kept whole in the
/// JSON document's `engine_figures`.
#[derive(Clone, Debug, Serialize)]
pub struct EngineFigures {
    /// The section's title with its sources: `InnoDB (SHOW GLOBAL STATUS)`.
    pub title: String,
    /// Lines for the text output, each labelled with its unit.
    pub lines: Vec<String>,
    /// The figures as the engine serializes them.
    pub figures: serde_json::Value,
}

/// How much of the data set the OS page cache may hold.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PageCacheChoice {
    /// A tenth of the data set.
    Auto,
    Limit(u64),
    /// Deliberately test through the cache.
    Unlimited,
}

/// Where the run happened, as the header and the JSON document show it.
#[derive(Clone, Debug, Serialize)]
pub struct RunEnvironment {
    /// Which database engine ran.
    pub engine: EngineKind,
    /// The engine's version as its users write it (`15.20`, `3.50.4`).
    pub server_version: String,
    /// How strata reached it: `throwaway cluster`, `throwaway server`,
    /// `external server`, `database file`.
    pub server: &'static str,
    /// The size of the engine's block or page, bytes (8192 for PostgreSQL,
    /// 16384 for InnoDB's default, the file's page size for SQLite): one row
    /// of the data set per block.
    pub block_bytes: u32,
    pub connection: String,
    pub server_version_num: u32,
    /// Where strata made the throwaway server's files (or SQLite's
    /// temporary file), and why there; `None` for the user's server or file.
    pub work_directory: Option<WorkDir>,
    pub data_directory: Option<PathBuf>,
    pub wal_directory: Option<PathBuf>,
    pub devices: RunDevices,
    pub device_details: Vec<BlockDevice>,
    pub device_note: Option<String>,
    pub page_cache: PageCacheMethod,
    /// io_method, direct or buffered data files, and which processes
    /// issued the reads.
    pub read_path: ReadPath,
    pub plan: SchemaPlan,
    /// The server's host seen through `--agent`; absent when strata
    /// observes this machine or no host at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_host: Option<strata_recording::environment::ServerHost>,
    /// Other hosts followed beside the server's (`--agent` after the
    /// first).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_hosts: Vec<strata_recording::environment::ServerHost>,
    /// This driver's shard of a run (`--shard`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<strata_recording::environment::ShardRecord>,
}

/// A throwaway cluster left running by `--keep`.
#[derive(Clone, Debug, Serialize)]
pub struct KeptInfo {
    pub connection_string: String,
    pub data_directory: PathBuf,
    pub how_to_connect: String,
    pub how_to_stop: String,
}

pub struct SlobOutcome {
    pub environment: RunEnvironment,
    pub load: Option<LoadReport>,
    pub figures: Option<RunFigures>,
    /// How to reach and stop a cluster left running by `--keep`.
    pub kept: Option<KeptInfo>,
    /// The engine's own figures, beside the shared ones.
    pub engine_figures: Option<EngineFigures>,
    /// `--sweep-sessions`: the curve; `figures` are its last point's.
    pub sweep: Option<strata_recording::sweep::SweepSummary>,
}

/// The data set's size on disk, roughly: heap blocks of every table.
pub fn data_set_bytes(plan: &SchemaPlan) -> u64 {
    data_set_bytes_in_blocks_of(plan, BLOCK_BYTES)
}

/// The data set's size for an engine whose blocks (one row each) are
/// `block_bytes`: every table's blocks.
pub fn data_set_bytes_in_blocks_of(plan: &SchemaPlan, block_bytes: u64) -> u64 {
    let schemas = if plan.single_schema {
        1
    } else {
        u64::from(plan.schemas)
    };
    schemas * (plan.blocks_per_schema + plan.scan_table_blocks) * block_bytes
}
