//! PostgreSQL as the run's options, checks and text name it: its
//! `--engine` name, label, capabilities and words (strata-run's
//! `EngineTraits`). A module of its own, so that every other module may
//! name it.
//!
//! Not for: configuring or running the engine (`configure`, `run`).

use crate::options::PostgresOptions;
use strata_run::engine::{Capability, EngineKind, EngineTraits};
use strata_run::engine_options::EngineOptions;

/// PostgreSQL as the run's options, checks and text name it.
pub const KIND: EngineKind = EngineKind(&EngineTraits {
    recorded: &strata_recording::environment::POSTGRESQL,
    aliases: &["postgres", "pg"],
    has_server: true,
    capabilities: &[
        Capability::UpdatePadding,
        Capability::Sweep,
        Capability::Shards,
        Capability::Agents,
        Capability::PageCacheLimit,
        Capability::CgroupPageCache,
        Capability::ConfFiles,
        Capability::LoadParallel,
        Capability::ReadPath,
    ],
    log_directory: "WAL directory ",
    without_counters: "\nDatabase: counters unavailable (see warnings)\n",
    blocks_read: "blocks ({block}) PostgreSQL read",
    options: EngineOptions::of::<PostgresOptions>(),
});
