//! SQLite as the run's options, checks and text name it: its
//! `--engine` name, label, capabilities and words (strata-run's
//! `EngineTraits`). A module of its own, so that every other module may
//! name it.
//!
//! Not for: configuring or running the engine (`configure`, `run`).

use strata_run::engine::{Capability, EngineKind, EngineTraits};
use strata_run::engine_options::EngineOptions;

/// SQLite as the run's options, checks and text name it.
pub const KIND: EngineKind = EngineKind(&EngineTraits {
    recorded: &strata_recording::environment::SQLITE,
    aliases: &[],
    has_server: false,
    capabilities: &[Capability::PageCacheLimit],
    log_directory: "WAL directory ",
    without_counters: "\nDatabase: SQLite has no I/O counters; the devices and the sessions' own \
                       page reads below are the accounting\n",
    blocks_read: "pages ({block}) SQLite's sessions read",
    options: EngineOptions::NONE,
});
