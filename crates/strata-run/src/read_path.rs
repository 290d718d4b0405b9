//! `--io-method` and `--direct-io`: giving the throwaway cluster the read
//! path asked for (a restart with the settings), refusing to change the
//! user's server, and saying in the result which path the data-file reads
//! took and which processes issued them.
//!
//! Not for: reading or checking the server's settings (`strata-db`'s
//! `postgres::read_path`).

use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeMap;
use strata_db::postgres::cluster::ThrowawayCluster;
use strata_db::postgres::connect::{connect, ConnectionTarget};
use strata_db::postgres::counters::server_version_num;
use strata_db::postgres::read_path::{version_text, ReadPathRequest, ReadPathSettings};

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
    pub fn of(settings: &ReadPathSettings) -> ReadPath {
        let mut unavailable = BTreeMap::new();
        if settings.io_method.is_none() {
            unavailable.insert(
                "io_method",
                format!(
                    "PostgreSQL {} has no io_method (it arrived in 18): each backend reads for itself",
                    version_text(settings.version_num)
                ),
            );
        }
        ReadPath {
            reads_issued_by: match settings.io_method.as_deref() {
                Some("worker") => "io workers (processes of backend_type 'io worker')",
                Some("io_uring") => "the backends, through io_uring",
                _ => "the backends (client backend processes)",
            },
            io_method: settings.io_method.clone(),
            data_files: if settings.direct_data == Some(true) {
                "direct"
            } else {
                "buffered"
            },
            unavailable,
        }
    }

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

/// The settings that give the throwaway cluster the path asked for (to
/// restart it with); refuses what its version or build cannot do.
pub async fn cluster_settings(
    cluster: &ThrowawayCluster,
    request: &ReadPathRequest,
) -> anyhow::Result<Vec<(String, String)>> {
    if request == &ReadPathRequest::default() {
        return Ok(Vec::new());
    }
    let target = ConnectionTarget::parse(&cluster.connection_string())?;
    let client = connect(&target).await?;
    let version_num = server_version_num(&client).await?;
    let settings = ReadPathSettings::read(&client, version_num).await?;
    settings.check_offered(request)?;
    Ok(settings.settings_for(request))
}

/// Restarts the cluster with `settings` when there are any.
pub fn restart_with(
    cluster: &mut ThrowawayCluster,
    settings: &[(String, String)],
) -> anyhow::Result<()> {
    if settings.is_empty() {
        return Ok(());
    }
    cluster.restart_with(settings).context(
        "restarting the throwaway cluster with the read path asked for (--io-method, --direct-io)",
    )
}
