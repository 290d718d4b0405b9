//! What a run of any engine produces and how it describes where it ran:
//! the outcome the binary prints, the environment the header and the JSON
//! document show, and the data set's size.
//!
//! Not for: running anything (each engine's crate) or printing (`output`).

use crate::accounting::{RunDevices, RunFigures};
use crate::read_path::ReadPath;
use serde::Serialize;
use std::path::PathBuf;
use strata_db::pagecache::PageCacheMethod;
use strata_db::workdir::WorkDir;
use strata_probe::blockdev::BlockDevice;
use strata_slob::load::LoadReport;
use strata_slob::schema::{SchemaPlan, BLOCK_BYTES};

pub use strata_slob::session::RunObserver;

/// Which database a run drives: the value of `--engine`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Postgresql,
    Sqlite,
    Mariadb,
}

impl EngineKind {
    /// The accepted values of `--engine`.
    pub const NAMES: [&'static str; 3] = ["postgresql", "sqlite", "mariadb"];

    pub fn parse(name: &str) -> Option<EngineKind> {
        match name {
            "postgresql" | "postgres" | "pg" => Some(EngineKind::Postgresql),
            "sqlite" => Some(EngineKind::Sqlite),
            "mariadb" | "mysql" => Some(EngineKind::Mariadb),
            _ => None,
        }
    }

    /// The value of `--engine` that chooses it.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Postgresql => "postgresql",
            EngineKind::Sqlite => "sqlite",
            EngineKind::Mariadb => "mariadb",
        }
    }

    /// The product's name as its users write it.
    pub fn label(self) -> &'static str {
        match self {
            EngineKind::Postgresql => "PostgreSQL",
            EngineKind::Sqlite => "SQLite",
            EngineKind::Mariadb => "MariaDB",
        }
    }

    /// Whether the database runs as server processes of its own (SQLite
    /// runs inside strata's session threads).
    pub fn has_server(self) -> bool {
        self != EngineKind::Sqlite
    }

    /// Every engine, in the order their names are listed.
    pub const ALL: [EngineKind; 3] = [
        EngineKind::Postgresql,
        EngineKind::Sqlite,
        EngineKind::Mariadb,
    ];

    /// What the engine can do beyond the SLOB method every engine runs:
    /// the one table an option that needs a capability is checked against.
    pub fn capabilities(self) -> &'static [Capability] {
        match self {
            EngineKind::Postgresql => &[
                Capability::UpdatePadding,
                Capability::Sweep,
                Capability::Shards,
            ],
            EngineKind::Mariadb => &[Capability::Sweep],
            EngineKind::Sqlite => &[],
        }
    }

    /// Refuses `option` (as the user gave it) where the engine lacks
    /// `capability`, naming the engines that have it.
    pub fn refuse_without(self, capability: Capability, option: &str) -> anyhow::Result<()> {
        if self.capabilities().contains(&capability) {
            return Ok(());
        }
        let having: Vec<&str> = EngineKind::ALL
            .into_iter()
            .filter(|kind| kind.capabilities().contains(&capability))
            .map(EngineKind::label)
            .collect();
        anyhow::bail!(
            "{option} does not apply to --engine {} ({} only, so far)",
            self.name(),
            having.join(" and ")
        )
    }
}

/// A capability an engine may have (`EngineKind::capabilities`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// Updates that pad their rows (`--update-pad-bytes`).
    UpdatePadding,
    /// A capacity curve of windows at several session counts
    /// (`--sweep-sessions`).
    Sweep,
    /// Several drivers on one server, merged (`--shard`).
    Shards,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_an_engine_cannot_take_is_refused_naming_those_that_can() {
        let error = |kind: EngineKind, capability, option| {
            format!("{:#}", kind.refuse_without(capability, option).unwrap_err())
        };
        assert_eq!(
            error(EngineKind::Sqlite, Capability::Sweep, "--sweep-sessions"),
            "--sweep-sessions does not apply to --engine sqlite (PostgreSQL and MariaDB only, so far)"
        );
        assert_eq!(
            error(EngineKind::Mariadb, Capability::Shards, "--shard 1/2"),
            "--shard 1/2 does not apply to --engine mariadb (PostgreSQL only, so far)"
        );
        assert!(EngineKind::Postgresql
            .refuse_without(Capability::UpdatePadding, "--update-pad-bytes")
            .is_ok());
    }
}
