//! What a run's Recording measured, as `strata model predict --from` takes
//! it: its block size, its statements and its result.
//!
//! Not for: the work per block computed from it (`predict_inputs`, the
//! sweep's `DatabaseWork`).

use anyhow::Context;
use std::path::Path;
use strata_recording::environment::WorkloadOptions;
use strata_recording::record::RunResult;
use strata_recording::Recording;

/// A run's Recording (`--from`), its layers left unread.
pub fn read(path: &Path) -> anyhow::Result<Recording> {
    Recording::read_without_layers(path).with_context(|| format!("--from {}", path.display()))
}

/// The run's block, bytes: PostgreSQL's environment names its block,
/// MariaDB's its page.
pub fn block_bytes(recording: &Recording) -> Option<u64> {
    let environment = &recording.header.environment;
    let bytes = environment.block_bytes.or(environment.page_bytes)?;
    (bytes.fract() == 0.0 && bytes >= 0.0).then_some(bytes as u64)
}

/// The run's statements, as its options hold them.
pub fn workload(recording: &Recording) -> Option<&WorkloadOptions> {
    recording.header.options.workload.as_ref()
}

/// The run's result.
pub fn result(recording: &Recording) -> anyhow::Result<&RunResult> {
    let name = recording.path.display();
    recording
        .run_result()
        .with_context(|| format!("--from {name}: not a run's Recording (no run_result)"))
}
