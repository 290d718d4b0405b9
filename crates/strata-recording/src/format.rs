//! The file: JSON lines, the first the [`Header`], each later one a
//! [`Record`] tagged by its `"type"`. Lines are flushed as they are
//! written, so an interrupted command leaves a readable prefix.
//!
//! Not for: what the records hold (`record`) or reading version 1 (`v1`).

use crate::environment::{Environment, Options};
use crate::record::Record;
use crate::written::{SortedKeys, Written};
use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const FORMAT_NAME: &str = "strata-recording";
/// Version 2: every record typed, tagged by `"type"` alone.
pub const FORMAT_VERSION: u32 = 2;

/// Which command made a Recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Run,
    Calibrate,
    Observe,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Calibrate => "calibrate",
            Kind::Observe => "observe",
        }
    }

    /// The record type that ends a Recording of this kind: a run's
    /// `run_result`, a calibration's `summary`; an observation has none.
    pub fn final_record(self) -> Option<&'static str> {
        match self {
            Kind::Run => Some("run_result"),
            Kind::Calibrate => Some("summary"),
            Kind::Observe => None,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// Where a recording was made.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub cpus: usize,
    pub memory_bytes: u64,
}

impl HostInfo {
    pub fn current() -> Self {
        let read = |path: &str| {
            std::fs::read_to_string(path)
                .map(|text| text.trim().to_string())
                .unwrap_or_default()
        };
        HostInfo {
            hostname: read("/proc/sys/kernel/hostname"),
            kernel: read("/proc/sys/kernel/osrelease"),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes: mem_total_bytes(&read("/proc/meminfo")),
        }
    }
}

/// `MemTotal` of a `/proc/meminfo` text in bytes; 0 when it is missing,
/// not a number or more than 64 bits hold.
fn mem_total_bytes(meminfo: &str) -> u64 {
    meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .and_then(|kib| kib.checked_mul(1024))
        .unwrap_or(0)
}

/// The first line of every recording. A command writes its own types as
/// `options` and `environment`; a reader reads them as [`Written`] parts of
/// strata's [`Options`] and [`Environment`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Header<O = Written<Options>, E = Written<Environment>> {
    pub format: String,
    pub version: u32,
    pub kind: Kind,
    pub strata_version: String,
    /// UTC, RFC 3339.
    pub created: String,
    pub host: HostInfo,
    /// The command line, with secrets already removed by the caller.
    pub command: Vec<String>,
    /// Every option resolved to its final value.
    pub options: O,
    /// What was measured (targets, devices and their topology, databases);
    /// a run writes it in `environment` records instead, and its header's
    /// is null.
    pub environment: E,
}

impl<O: Serialize, E: Serialize> Header<O, E> {
    /// The header as it is written: its parts' keys in order
    /// ([`SortedKeys`]).
    fn with_sorted_parts(&self) -> Header<SortedKeys<&O>, SortedKeys<&E>> {
        Header {
            format: self.format.clone(),
            version: self.version,
            kind: self.kind,
            strata_version: self.strata_version.clone(),
            created: self.created.clone(),
            host: self.host.clone(),
            command: self.command.clone(),
            options: SortedKeys(&self.options),
            environment: SortedKeys(&self.environment),
        }
    }
}

impl<O, E> Header<O, E> {
    pub fn new(kind: Kind, command: Vec<String>, options: O, environment: E) -> Self {
        Header {
            format: FORMAT_NAME.to_string(),
            version: FORMAT_VERSION,
            kind,
            strata_version: env!("CARGO_PKG_VERSION").to_string(),
            created: strata_core::time::utc_now_rfc3339(),
            host: HostInfo::current(),
            command,
            options,
            environment,
        }
    }
}

/// Whether a Recording may replace a file already at its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// The file is left alone and the Recording refused (the default of
    /// every command: a Recording is never lost to another).
    Refuse,
    /// `--overwrite`: the file is replaced.
    Replace,
}

/// Writes a recording record by record, each line whole with one write: a
/// line that cannot be written whole (a full filesystem) is cut off again,
/// so the file stays readable up to its last complete record, and every
/// later write is refused with the same error.
pub struct RecordingWriter {
    path: PathBuf,
    out: File,
    complete_bytes: u64,
    failed: Option<String>,
}

/// Refuses, before any work, a Recording path that [`RecordingWriter::create`]
/// would refuse at the end: a file already there (unless replaced), or a
/// directory that does not exist.
pub fn check_path(path: &Path, existing: Existing) -> anyhow::Result<()> {
    if existing == Existing::Refuse && path.exists() {
        bail!(
            "recording {} already exists: strata does not replace it (give another path, or \
             --overwrite to replace it)",
            path.display()
        );
    }
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "creating recording {}: its directory does not exist",
            path.display()
        );
    }
    Ok(())
}

impl RecordingWriter {
    /// Creates the file and writes the header: refused when a file is
    /// already there unless `existing` is [`Existing::Replace`]. A new file
    /// whose header cannot be written is removed again.
    pub fn create(
        path: &Path,
        header: &Header<impl Serialize, impl Serialize>,
        existing: Existing,
    ) -> anyhow::Result<Self> {
        let mut options = std::fs::OpenOptions::new();
        match existing {
            Existing::Refuse => options.write(true).create_new(true),
            Existing::Replace => options.write(true).create(true).truncate(true),
        };
        let file = options.open(path).map_err(|error| match error.kind() {
            std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::NotFound => {
                check_path(path, existing)
                    .err()
                    .unwrap_or_else(|| error.into())
            }
            _ => anyhow::Error::new(error).context(format!(
                "creating recording {} ({})",
                path.display(),
                crate::filesystem::describe(path)
            )),
        })?;
        let mut writer = RecordingWriter {
            path: path.to_path_buf(),
            out: file,
            complete_bytes: 0,
            failed: None,
        };
        if let Err(error) = writer.write_line(&header.with_sorted_parts()) {
            if existing == Existing::Refuse {
                let _ = std::fs::remove_file(path);
            }
            return Err(error);
        }
        Ok(writer)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn write(&mut self, record: &Record) -> anyhow::Result<()> {
        self.write_line(record)
    }

    /// An `environment` record of the command's own type (read back as
    /// [`Record::Environment`]).
    pub fn write_environment(&mut self, environment: &impl Serialize) -> anyhow::Result<()> {
        #[derive(Serialize)]
        struct EnvironmentLine<'a, E> {
            #[serde(rename = "type")]
            record_type: &'static str,
            environment: &'a E,
        }
        self.write_line(&EnvironmentLine {
            record_type: "environment",
            environment: &SortedKeys(environment),
        })
    }

    fn write_line(&mut self, value: &impl Serialize) -> anyhow::Result<()> {
        if let Some(failed) = &self.failed {
            bail!("{failed}");
        }
        let mut line = serde_json::to_vec(value)?;
        line.push(b'\n');
        match self.out.write_all(&line) {
            Ok(()) => {
                self.complete_bytes += line.len() as u64;
                Ok(())
            }
            Err(error) => {
                let kept = match self.out.set_len(self.complete_bytes) {
                    Ok(()) => format!(
                        "the {} bytes of complete records before it are kept, readable",
                        self.complete_bytes
                    ),
                    Err(_) => "its last line may be cut short".to_string(),
                };
                let failed = format!(
                    "writing recording {}: {error} ({}); {kept}",
                    self.path.display(),
                    crate::filesystem::describe(&self.path)
                );
                self.failed = Some(failed.clone());
                bail!("{failed}")
            }
        }
    }
}

/// The version a header line declares, once it is known to be a
/// Recording's header and not newer than this strata reads.
pub(crate) fn header_version(line: &str) -> anyhow::Result<u32> {
    #[derive(Deserialize)]
    struct Declared {
        format: Option<String>,
        version: Option<u32>,
    }
    let declared: Declared = serde_json::from_str(line)?;
    if declared.format.as_deref() != Some(FORMAT_NAME) {
        bail!("not a strata recording (no \"format\": \"{FORMAT_NAME}\")");
    }
    let version = declared.version.context("the header has no `version`")?;
    if version > FORMAT_VERSION {
        bail!(
            "recording format version {version} is newer than this strata reads ({FORMAT_VERSION}); upgrade strata"
        );
    }
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::mem_total_bytes;

    /// A `MemTotal` past 16 EiB overflowed on its way to bytes (a panic in
    /// a debug build).
    #[test]
    fn mem_total_too_large_for_bytes_is_unknown() {
        assert_eq!(
            mem_total_bytes("MemTotal:       24684084 kB\n"),
            24684084 * 1024
        );
        assert_eq!(mem_total_bytes("MemTotal: 18446744073709551615 kB\n"), 0);
        assert_eq!(mem_total_bytes("MemFree: 1 kB\n"), 0);
    }
}
