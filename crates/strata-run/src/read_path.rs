//! The path a run's data-file reads took and which processes issued them,
//! as the result says it for every engine.
//!
//! Not for: reading or changing a server's settings (each engine's crate:
//! PostgreSQL's `read_path`).

use serde::Serialize;
use std::collections::BTreeMap;

/// The read path a run asks for (`--io-method`, `--direct-io`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReadPathRequest {
    pub io_method: Option<String>,
    pub direct_io: bool,
}

/// The path the run's data-file reads took.
#[derive(Clone, Debug, Serialize)]
pub struct ReadPath {
    /// `io_method` (18+): `sync`, `worker` or `io_uring`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_method: Option<String>,
    /// `direct` (`debug_io_direct` includes data: the OS page cache is
    /// bypassed) or `buffered` (through the OS page cache).
    pub data_files: &'static str,
    /// Which processes issue the reads to the OS.
    pub reads_issued_by: &'static str,
    /// Why an absent field is absent.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub unavailable: BTreeMap<&'static str, String>,
}

impl ReadPath {
    /// `io_method=worker, data files buffered, reads issued by …`
    pub fn text(&self) -> String {
        format!(
            "io_method={}, data files {}, reads issued by {}",
            self.io_method.as_deref().unwrap_or("n/a"),
            self.data_files,
            self.reads_issued_by
        )
    }
}
