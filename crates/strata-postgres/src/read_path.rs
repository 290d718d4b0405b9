//! The path a PostgreSQL server's data-file reads take: `io_method` (18+:
//! `sync`, the backend reads for itself; `worker`, io worker processes read
//! for it; `io_uring`, the kernel's ring) and whether `debug_io_direct`
//! includes `data` (16+: reads bypass the OS page cache). Also checks a
//! requested path against what the server version and its build offer, and
//! tells which server process is which (`pg_stat_activity.backend_type`).
//!
//! Not for: changing a running server's settings (both are read only at
//! server start; the throwaway cluster writes them into its configuration).

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use strata_run::read_path::ReadPath;
pub use strata_run::read_path::ReadPathRequest;
use tokio_postgres::Client;

pub const IO_METHOD_SINCE: u32 = 180000;
pub const DIRECT_IO_SINCE: u32 = 160000;
/// Every `io_method` PostgreSQL 18 knows; a build may offer fewer.
pub const IO_METHODS: [&str; 3] = ["sync", "worker", "io_uring"];

/// What a server runs with now.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadPathSettings {
    pub version_num: u32,
    /// `io_method`; `None` before 18.
    pub io_method: Option<String>,
    /// The `io_method` values this build accepts (`pg_settings.enumvals`).
    pub io_methods_offered: Vec<String>,
    /// `debug_io_direct` includes `data`; `None` before 16.
    pub direct_data: Option<bool>,
}

impl ReadPathSettings {
    pub async fn read(client: &Client, version_num: u32) -> Result<ReadPathSettings> {
        let mut settings = ReadPathSettings {
            version_num,
            io_method: None,
            io_methods_offered: Vec::new(),
            direct_data: None,
        };
        if version_num >= IO_METHOD_SINCE {
            let row = client
                .query_one(
                    "SELECT setting, enumvals FROM pg_settings WHERE name = 'io_method'",
                    &[],
                )
                .await
                .context("reading io_method from pg_settings")?;
            settings.io_method = Some(row.get(0));
            settings.io_methods_offered = row.get::<_, Option<Vec<String>>>(1).unwrap_or_default();
        }
        if version_num >= DIRECT_IO_SINCE {
            let row = client
                .query_one("SELECT current_setting('debug_io_direct')", &[])
                .await
                .context("reading debug_io_direct")?;
            let value: String = row.get(0);
            settings.direct_data = Some(value.split(',').any(|part| part.trim() == "data"));
        }
        Ok(settings)
    }

    /// Refuses a request this server version or build cannot honour,
    /// naming the option and the values it accepts.
    pub fn check_offered(&self, request: &ReadPathRequest) -> Result<()> {
        check_version(self.version_num, request)?;
        if let Some(method) = &request.io_method {
            if !self.io_methods_offered.contains(method) {
                bail!(
                    "--io-method {method}: this PostgreSQL {} build accepts only {} \
                     (io_uring needs a build with liburing)",
                    version_text(self.version_num),
                    self.io_methods_offered.join(", ")
                );
            }
        }
        Ok(())
    }

    /// Refuses a request that differs from what a server strata did not
    /// start runs with: both settings change only with a restart.
    pub fn check_unchanged(&self, request: &ReadPathRequest, server: &str) -> Result<()> {
        self.check_offered(request)?;
        if let Some(method) = request.io_method.as_ref() {
            let current = self.io_method.as_deref().unwrap_or("");
            if current != method {
                bail!(
                    "--io-method {method}: the server at {server} uses io_method={current}, which \
                     changes only with a server restart; strata does not restart your server \
                     (set io_method in postgresql.conf and restart it, or leave out --io-method)"
                );
            }
        }
        if request.direct_io && self.direct_data != Some(true) {
            bail!(
                "--direct-io: the server at {server} reads data files through the page cache \
                 (debug_io_direct does not include data), which changes only with a server \
                 restart; strata does not restart your server (set debug_io_direct = 'data' \
                 and restart it, or leave out --direct-io)"
            );
        }
        Ok(())
    }

    /// The configuration lines that give `request` on a server of this
    /// version; empty when it already runs that way.
    pub fn settings_for(&self, request: &ReadPathRequest) -> Vec<(String, String)> {
        let mut settings = Vec::new();
        if let Some(method) = &request.io_method {
            if self.io_method.as_ref() != Some(method) {
                settings.push(("io_method".to_string(), method.clone()));
            }
        }
        if request.direct_io && self.direct_data != Some(true) {
            settings.push(("debug_io_direct".to_string(), "data".to_string()));
        }
        settings
    }
}

/// Refuses what PostgreSQL `version_num` cannot do at all, whatever its
/// build: known from the binaries' version before any server starts.
pub fn check_version(version_num: u32, request: &ReadPathRequest) -> Result<()> {
    let version = version_text(version_num);
    if let Some(method) = &request.io_method {
        if version_num < IO_METHOD_SINCE {
            bail!(
                "--io-method {method}: PostgreSQL {version} has no io_method (it arrived in \
                 PostgreSQL 18, which accepts {}); leave out --io-method",
                IO_METHODS.join(", ")
            );
        }
    }
    if request.direct_io && version_num < DIRECT_IO_SINCE {
        bail!(
            "--direct-io: PostgreSQL {version} cannot read data files with direct I/O \
             (debug_io_direct arrived in PostgreSQL 16); leave out --direct-io"
        );
    }
    Ok(())
}

/// `150020` → `15.20`, `180006` → `18.6`.
pub fn version_text(version_num: u32) -> String {
    format!("{}.{}", version_num / 10_000, version_num % 10_000)
}

/// The role of strata's own connections among the server's processes.
pub const MONITOR_ROLE: &str = "client backend (strata's own monitoring)";

/// Every server process PostgreSQL lists (`pg_stat_activity`, all backend
/// types: client backend, io worker, checkpointer, …) by PID; strata's own
/// connections as [`MONITOR_ROLE`].
pub async fn backend_types(client: &Client) -> Result<BTreeMap<u32, String>> {
    let rows = client
        .query(
            "SELECT pid, CASE WHEN backend_type = 'client backend' AND application_name = $1 \
                    THEN $2::text ELSE backend_type END \
             FROM pg_stat_activity WHERE backend_type IS NOT NULL",
            &[&crate::connect::MONITOR_APPLICATION_NAME, &MONITOR_ROLE],
        )
        .await
        .context("reading backend types from pg_stat_activity")?;
    Ok(rows
        .iter()
        .filter_map(|row| Some((u32::try_from(row.get::<_, i32>(0)).ok()?, row.get(1))))
        .collect())
}

/// The path the settings give, as the result says it.
pub fn read_path_of(settings: &ReadPathSettings) -> ReadPath {
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

/// The settings that give the throwaway cluster the path asked for (to
/// restart it with); refuses what its version or build cannot do.
pub async fn cluster_settings(
    cluster: &crate::cluster::ThrowawayCluster,
    request: &ReadPathRequest,
) -> Result<Vec<(String, String)>> {
    if request == &ReadPathRequest::default() {
        return Ok(Vec::new());
    }
    let target = crate::connect::ConnectionTarget::parse(&cluster.connection_string())?;
    let client = crate::connect::connect(&target).await?;
    let version_num = crate::counters::server_version_num(&client).await?;
    let settings = ReadPathSettings::read(&client, version_num).await?;
    settings.check_offered(request)?;
    Ok(settings.settings_for(request))
}

/// Restarts the cluster with `settings` when there are any.
pub fn restart_with(
    cluster: &mut crate::cluster::ThrowawayCluster,
    settings: &[(String, String)],
) -> Result<()> {
    if settings.is_empty() {
        return Ok(());
    }
    cluster.restart_with(settings).context(
        "restarting the throwaway cluster with the read path asked for (--io-method, --direct-io)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(version_num: u32, offered: &[&str]) -> ReadPathSettings {
        ReadPathSettings {
            version_num,
            io_method: (version_num >= IO_METHOD_SINCE).then(|| "worker".to_string()),
            io_methods_offered: offered.iter().map(|v| v.to_string()).collect(),
            direct_data: (version_num >= DIRECT_IO_SINCE).then_some(false),
        }
    }

    fn request(io_method: Option<&str>, direct_io: bool) -> ReadPathRequest {
        ReadPathRequest {
            io_method: io_method.map(str::to_string),
            direct_io,
        }
    }

    #[test]
    fn older_servers_and_missing_methods_are_refused_with_the_option_named() {
        let pg15 = server(150020, &[]);
        let error = pg15
            .check_offered(&request(Some("worker"), false))
            .unwrap_err();
        assert!(error
            .to_string()
            .contains("--io-method worker: PostgreSQL 15.20"));
        assert!(error.to_string().contains("sync, worker, io_uring"));
        let error = pg15.check_offered(&request(None, true)).unwrap_err();
        assert!(error.to_string().contains("--direct-io"));
        let pg18 = server(180006, &["sync", "worker"]);
        let error = pg18
            .check_offered(&request(Some("io_uring"), true))
            .unwrap_err();
        assert!(error.to_string().contains("accepts only sync, worker"));
        assert!(pg18.check_offered(&request(Some("sync"), true)).is_ok());
    }

    #[test]
    fn settings_change_only_what_differs() {
        let pg18 = server(180006, &["sync", "worker"]);
        assert!(pg18
            .settings_for(&request(Some("worker"), false))
            .is_empty());
        assert_eq!(
            pg18.settings_for(&request(Some("sync"), true)),
            vec![
                ("io_method".to_string(), "sync".to_string()),
                ("debug_io_direct".to_string(), "data".to_string())
            ]
        );
        assert!(pg18
            .check_unchanged(&request(Some("sync"), false), "h")
            .is_err());
        assert!(pg18
            .check_unchanged(&request(Some("worker"), false), "h")
            .is_ok());
    }
}
