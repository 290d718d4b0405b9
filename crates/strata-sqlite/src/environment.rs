//! Where a SQLite run happens, in strata-run's `RunEnvironment`: the file,
//! SQLite's version, the directory holding the file and its WAL, the
//! physical devices under it, how the page cache was kept out, the read
//! path and the plan.
//!
//! Not for: measuring anything.

use std::path::Path;
use strata_db::pagecache::PageCacheMethod;
use strata_probe::blockdev::{device_of_path, physical_devices};
use strata_run::accounting::RunDevices;
use strata_run::outcome::RunEnvironment;
use strata_run::read_path::ReadPath;
use strata_slob::schema::SchemaPlan;

/// `RunEnvironment::server` of a SQLite run: there is no server, only the file.
pub const SERVER: &str = "database file";

/// SQLite's version as a number (3.45.1 is 3045001).
pub fn sqlite_version_num() -> u32 {
    rusqlite::version_number() as u32
}

/// The environment of a run on the file at `path` (its directory holds the
/// WAL too, so one set of devices has both roles).
pub fn environment(
    path: &Path,
    page_bytes: u32,
    page_cache: PageCacheMethod,
    plan: &SchemaPlan,
) -> RunEnvironment {
    let file = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let directory = file.parent().map(Path::to_path_buf);
    let (names, details, note) = match directory.as_deref().map(devices_under) {
        Some(Ok(devices)) => (
            devices.iter().map(|device| device.name.clone()).collect(),
            devices,
            None,
        ),
        Some(Err(error)) => (Vec::new(), Vec::new(), Some(format!("{error:#}"))),
        None => (
            Vec::new(),
            Vec::new(),
            Some("the file has no directory".into()),
        ),
    };
    RunEnvironment {
        engine: crate::kind::KIND,
        block_bytes: page_bytes,
        server_version: rusqlite::version().to_string(),
        server: SERVER,
        connection: file.display().to_string(),
        server_version_num: sqlite_version_num(),
        work_directory: None,
        data_directory: directory.clone(),
        wal_directory: directory,
        devices: RunDevices {
            data: names.clone(),
            wal: names,
            unobserved: None,
        },
        device_details: details,
        device_note: note,
        page_cache,
        read_path: read_path(),
        plan: plan.clone(),
        server_host: None,
        other_hosts: Vec::new(),
        shard: None,
    }
}

fn devices_under(dir: &Path) -> anyhow::Result<Vec<strata_probe::blockdev::BlockDevice>> {
    physical_devices(&device_of_path(dir)?)
}

fn read_path() -> ReadPath {
    ReadPath {
        io_method: None,
        data_files: "buffered (SQLite reads pages with pread through the OS page cache)",
        reads_issued_by:
            "strata's session threads (SQLite runs inside strata, one connection per thread)",
        unavailable: [(
            "io_method",
            "SQLite has no io_method: each session thread reads for itself, one page at a time"
                .to_string(),
        )]
        .into(),
    }
}
