//! Where a MariaDB run happens: the server's version and settings that
//! decide what a read is (page size, buffer pool, flush method), the
//! connection without its password, the data and redo directories, the
//! physical devices under them (when the server runs on this machine), and
//! the server's process.
//!
//! Not for: measuring anything.

use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, Row};
use serde::Serialize;
use std::path::{Path, PathBuf};
use strata_probe::blockdev::{device_of_path, physical_devices, BlockDevice};
use strata_run::accounting::RunDevices;
use strata_slob::schema::SchemaPlan;

use crate::locality::{self, Locality};
use crate::server::ThrowawayInfo;
use crate::target::MariaDbTarget;

/// `MariaDbEnvironment::engine`.
pub const ENGINE: &str = "mariadb";

/// How sessions reach the server, as the environment says it.
pub const SESSION_MODEL: &str = "one OS thread per session with its own connection (the mysql crate is synchronous): fine for tens of sessions";

#[derive(Clone, Debug, Serialize)]
pub struct MariaDbEnvironment {
    pub engine: &'static str,
    /// `@@version`, e.g. `10.11.19-MariaDB-0+deb12u1`.
    pub server_version: String,
    /// `@@version_comment`.
    pub server_build: String,
    /// The URL without its password, or the throwaway server's socket.
    pub connection: String,
    pub database: String,
    pub throwaway: Option<ThrowawayInfo>,
    pub data_directory: Option<PathBuf>,
    /// `innodb_log_group_home_dir`, resolved against the data directory.
    pub redo_directory: Option<PathBuf>,
    pub devices: RunDevices,
    pub device_details: Vec<BlockDevice>,
    pub device_note: Option<String>,
    pub page_bytes: u32,
    pub buffer_pool_bytes: u64,
    pub flush_method: String,
    /// Whether the OS page cache is in the read path, and why.
    pub page_cache: String,
    pub flush_log_at_trx_commit: u32,
    pub performance_schema: bool,
    /// mariadbd's process id when it runs on this machine.
    pub server_pid: Option<u32>,
    pub sessions: &'static str,
    pub plan: SchemaPlan,
    /// The server's host seen through `--agent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_host: Option<strata_recording::environment::ServerHost>,
    /// Other hosts followed beside the server's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_hosts: Vec<strata_recording::environment::ServerHost>,
}

/// The server's settings, as text.
struct Settings {
    version: String,
    build: String,
    data_dir: String,
    redo_dir: String,
    page_bytes: u32,
    buffer_pool_bytes: u64,
    flush_method: String,
    flush_log_at_trx_commit: u32,
    performance_schema: bool,
    pid_file: String,
}

fn settings(conn: &mut Conn) -> Result<Settings> {
    let row: Row = conn
        .query_first(
            "SELECT @@version, @@version_comment, @@datadir, @@innodb_log_group_home_dir, \
             @@innodb_page_size, @@innodb_buffer_pool_size, @@innodb_flush_method, \
             @@innodb_flush_log_at_trx_commit, @@performance_schema, @@pid_file",
        )?
        .context("the server returned no settings")?;
    let text = |index: usize| -> String {
        row.get::<Option<String>, _>(index)
            .flatten()
            .unwrap_or_default()
    };
    let performance_schema = text(8);
    Ok(Settings {
        version: text(0),
        build: text(1),
        data_dir: text(2),
        redo_dir: text(3),
        page_bytes: text(4).parse().context("@@innodb_page_size")?,
        buffer_pool_bytes: text(5).parse().context("@@innodb_buffer_pool_size")?,
        flush_method: text(6),
        flush_log_at_trx_commit: text(7).parse().unwrap_or(1),
        performance_schema: performance_schema == "1"
            || performance_schema.eq_ignore_ascii_case("ON"),
        pid_file: text(9),
    })
}

/// The environment of a run against `target` (a throwaway server when
/// `throwaway` is given).
pub fn environment(
    conn: &mut Conn,
    target: &MariaDbTarget,
    throwaway: Option<&ThrowawayInfo>,
    plan: &SchemaPlan,
) -> Result<MariaDbEnvironment> {
    let settings = settings(conn)
        .map_err(|error| target.error("reading the settings of", format!("{error:#}")))?;
    let locality = match throwaway {
        Some(info) => Locality::Local {
            data_directory: PathBuf::from(&settings.data_dir),
            server_pid: info.pid,
        },
        None => locality::locate(conn, &settings.data_dir, &settings.pid_file),
    };
    let (data_dir, server_pid, remote) = match locality {
        Locality::Local {
            data_directory,
            server_pid,
        } => (Some(data_directory), Some(server_pid), None),
        Locality::Remote { reason } => (None, None, Some(reason)),
    };
    let redo_dir = data_dir.as_ref().map(|dir| dir.join(&settings.redo_dir));
    let (devices, device_details, device_note) = match &remote {
        Some(reason) => (
            RunDevices::unobserved(&format!("the server's host is not observed ({reason})")),
            Vec::new(),
            Some(strata_run::server_host::not_observed_note(reason)),
        ),
        None => devices(data_dir.as_deref(), redo_dir.as_deref()),
    };
    Ok(MariaDbEnvironment {
        engine: ENGINE,
        page_cache: page_cache_note(&settings.flush_method),
        server_version: settings.version,
        server_build: settings.build,
        connection: target.redacted(),
        database: target.database().to_string(),
        throwaway: throwaway.cloned(),
        data_directory: data_dir,
        redo_directory: redo_dir,
        devices,
        device_details,
        device_note,
        page_bytes: settings.page_bytes,
        buffer_pool_bytes: settings.buffer_pool_bytes,
        flush_method: settings.flush_method,
        flush_log_at_trx_commit: settings.flush_log_at_trx_commit,
        performance_schema: settings.performance_schema,
        server_pid,
        sessions: SESSION_MODEL,
        plan: plan.clone(),
        server_host: None,
        other_hosts: Vec::new(),
    })
}

pub fn page_cache_note(flush_method: &str) -> String {
    if flush_method.starts_with("O_DIRECT") {
        format!("bypassed: innodb_flush_method={flush_method} opens the data files with O_DIRECT, so every buffer pool miss is a device read and no page-cache limit is needed")
    } else {
        format!("in the read path: innodb_flush_method={flush_method} reads data files through the OS page cache, so reads it holds never reach a device")
    }
}

type Devices = (RunDevices, Vec<BlockDevice>, Option<String>);

fn devices(data_dir: Option<&Path>, redo_dir: Option<&Path>) -> Devices {
    let Some(data_dir) = data_dir else {
        return (
            RunDevices::default(),
            Vec::new(),
            Some(
                "the server does not show its data directory: its devices are not measured".into(),
            ),
        );
    };
    let under = |dir: &Path| physical_devices(&device_of_path(dir)?);
    let data = match under(data_dir) {
        Ok(devices) => devices,
        Err(error) => {
            return (
                RunDevices::default(),
                Vec::new(),
                Some(format!("{error:#}")),
            )
        }
    };
    let redo = redo_dir
        .and_then(|dir| under(dir).ok())
        .unwrap_or_else(|| data.clone());
    let names =
        |devices: &[BlockDevice]| devices.iter().map(|device| device.name.clone()).collect();
    let mut details = data.clone();
    details.extend(
        redo.iter()
            .filter(|device| !data.iter().any(|known| known.name == device.name))
            .cloned(),
    );
    (
        RunDevices {
            data: names(&data),
            wal: names(&redo),
            unobserved: None,
        },
        details,
        None,
    )
}

impl strata_run::server_host::ServerHostPlace for MariaDbEnvironment {
    fn server_host_place(&mut self) -> strata_run::server_host::HostPlace<'_> {
        (
            &mut self.devices,
            &mut self.device_details,
            &mut self.device_note,
            &mut self.server_host,
        )
    }
}
