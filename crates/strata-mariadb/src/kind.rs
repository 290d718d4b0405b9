//! MariaDB as the run's options, checks and text name it: its
//! `--engine` name, label, capabilities and words (strata-run's
//! `EngineTraits`). A module of its own, so that every other module may
//! name it.
//!
//! Not for: configuring or running the engine (`configure`, `run`).

use crate::options::MariaDbOptions;
use strata_run::engine::{Capability, EngineKind, EngineTraits};
use strata_run::engine_options::EngineOptions;

/// MariaDB as the run's options, checks and text name it.
pub const KIND: EngineKind = EngineKind(&EngineTraits {
    recorded: &strata_recording::environment::MARIADB,
    aliases: &["mysql"],
    has_server: true,
    capabilities: &[Capability::Sweep, Capability::Agents],
    log_directory: "redo directory",
    without_counters: "",
    blocks_read: "blocks ({block}) MariaDB read",
    options: EngineOptions::of::<MariaDbOptions>(),
});
