//! PostgreSQL's own options of `strata run` and `strata setup`: those of
//! the throwaway cluster strata makes (strata-run's `EngineOptions`), with
//! the names the Recording's options give them.
//!
//! Not for: the options every engine takes (strata-run's `options`).

use serde::Serialize;
use std::path::PathBuf;
use strata_core::input;
use strata_core::units::format_size;

/// The throwaway cluster's shared_buffers unless `--shared-buffers`.
pub const DEFAULT_SHARED_BUFFERS: u64 = 128 << 20;

/// The smallest shared_buffers PostgreSQL starts with (16 buffers).
const MIN_SHARED_BUFFERS: u64 = 128 << 10;

/// PostgreSQL's own options.
#[derive(clap::Args, Clone, Debug, Default, Serialize)]
#[command(next_help_heading = "PostgreSQL")]
pub struct PostgresOptions {
    /// Throwaway cluster: shared_buffers [default: 128MiB]
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    #[serde(rename = "shared_buffers_bytes")]
    pub shared_buffers: Option<u64>,

    /// Throwaway cluster: the OS account the server runs as when strata runs as root [default: postgres]
    #[arg(long, value_name = "USER")]
    #[serde(skip)]
    pub os_user: Option<String>,

    /// Throwaway cluster: leave it running at the end and print how to connect
    #[arg(long)]
    #[serde(skip)]
    pub keep: bool,

    /// Throwaway cluster: the directory with the server binaries (initdb,
    /// postgres); the server's version is what it reports [default:
    /// $STRATA_PG_BIN, else pg_config --bindir, else the newest
    /// /usr/lib/postgresql/*/bin]
    #[arg(long, value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,
}

impl PostgresOptions {
    /// The throwaway cluster's shared_buffers, bytes.
    pub fn shared_buffers_bytes(&self) -> u64 {
        self.shared_buffers.unwrap_or(DEFAULT_SHARED_BUFFERS)
    }

    /// Refuses what the server would refuse only after initdb.
    pub fn check(&self) -> anyhow::Result<()> {
        if let Some(bytes) = self
            .shared_buffers
            .filter(|&bytes| bytes < MIN_SHARED_BUFFERS)
        {
            anyhow::bail!(
                "--shared-buffers {}: PostgreSQL needs at least 128 KiB (16 buffers of 8 KiB)",
                format_size(bytes)
            );
        }
        Ok(())
    }
}
