//! The Recording: the one file format every strata command writes and
//! `strata report` reads. JSON lines: the first line is the [`Header`], each
//! later line one record object with a `"type"` field (`sample`, `event`,
//! `result`, `summary`). Lines are flushed as they are written, so an
//! interrupted run leaves a readable prefix. `docs/recording.md` is the
//! specification.
//!
//! Not for: deciding what goes into records; each command defines its own
//! record bodies and documents them there.

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

pub const FORMAT_NAME: &str = "strata-recording";
pub const FORMAT_VERSION: u32 = 1;

/// Where and when a recording was made.
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

/// The first line of every recording.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Header {
    pub format: String,
    pub version: u32,
    /// Which command made it: `calibrate`, `run`, `observe`.
    pub kind: String,
    pub strata_version: String,
    /// UTC, RFC 3339.
    pub created: String,
    pub host: HostInfo,
    /// The command line, with secrets already removed by the caller.
    pub command: Vec<String>,
    /// Every option resolved to its final value.
    pub options: serde_json::Value,
    /// What was measured: targets, devices and their topology, databases.
    pub environment: serde_json::Value,
}

impl Header {
    pub fn new(kind: &str, command: Vec<String>) -> Self {
        Header {
            format: FORMAT_NAME.to_string(),
            version: FORMAT_VERSION,
            kind: kind.to_string(),
            strata_version: env!("CARGO_PKG_VERSION").to_string(),
            created: crate::time::utc_now_rfc3339(),
            host: HostInfo::current(),
            command,
            options: serde_json::Value::Null,
            environment: serde_json::Value::Null,
        }
    }
}

/// Writes a recording line by line.
pub struct RecordingWriter {
    path: PathBuf,
    out: BufWriter<File>,
}

impl RecordingWriter {
    pub fn create(path: &Path, header: &Header) -> anyhow::Result<Self> {
        let file =
            File::create(path).with_context(|| format!("creating recording {}", path.display()))?;
        let mut writer = RecordingWriter {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
        };
        writer.write_line(header)?;
        Ok(writer)
    }

    /// Writes one record; `record_type` becomes its `"type"` field.
    pub fn write(&mut self, record_type: &str, body: &impl Serialize) -> anyhow::Result<()> {
        let mut value = serde_json::to_value(body)?;
        let object = value
            .as_object_mut()
            .context("a record body must serialize to a JSON object")?;
        object.insert("type".into(), record_type.into());
        self.write_line(&value)
    }

    fn write_line(&mut self, value: &impl Serialize) -> anyhow::Result<()> {
        serde_json::to_writer(&mut self.out, value)?;
        self.out.write_all(b"\n")?;
        self.out
            .flush()
            .with_context(|| format!("writing recording {}", self.path.display()))
    }
}

/// A recording read back: its header and its records in order.
#[derive(Debug)]
pub struct Recording {
    pub header: Header,
    pub records: Vec<serde_json::Value>,
}

impl Recording {
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let file =
            File::open(path).with_context(|| format!("opening recording {}", path.display()))?;
        let mut lines = BufReader::new(file).lines();
        let first = lines
            .next()
            .with_context(|| format!("{}: empty file, not a recording", path.display()))??;
        let header = parse_header(&first)
            .with_context(|| format!("{}: line 1 (the header)", path.display()))?;
        let mut records = Vec::new();
        let mut result_line = None;
        for (index, line) in lines.enumerate() {
            let line = line?;
            let number = index + 2;
            let record: serde_json::Value = serde_json::from_str(&line).with_context(|| {
                format!(
                    "{}: line {number} is not a complete record (truncated recording?)",
                    path.display()
                )
            })?;
            check_order(&header, &record, number, result_line)
                .with_context(|| format!("{}: line {number}", path.display()))?;
            if Some(record["type"].as_str().unwrap_or_default()) == final_record(&header.kind) {
                result_line = Some(number);
            }
            records.push(record);
        }
        Ok(Recording { header, records })
    }

    /// The records whose `"type"` is `record_type`.
    pub fn records_of<'a>(
        &'a self,
        record_type: &'a str,
    ) -> impl Iterator<Item = &'a serde_json::Value> + 'a {
        self.records
            .iter()
            .filter(move |record| record["type"] == record_type)
    }
}

/// The record type that ends a Recording of `kind`: a run's `result`, a
/// calibration's `summary`; an observation has none.
fn final_record(kind: &str) -> Option<&'static str> {
    match kind {
        "run" => Some("result"),
        "calibrate" => Some("summary"),
        _ => None,
    }
}

/// A Recording is one run of one command: a second header means two
/// files were joined (`cat a.strata b.strata`), and nothing follows the
/// record that ends it (a run's `result`, a calibration's `summary`).
fn check_order(
    header: &Header,
    record: &serde_json::Value,
    number: usize,
    result_line: Option<usize>,
) -> anyhow::Result<()> {
    if record["format"] == FORMAT_NAME {
        bail!(
            "a second header: this file holds more than one Recording (joined with cat?); each \
             run has its own file"
        );
    }
    if let Some(result) = result_line {
        bail!(
            "a record after the {} record of line {result}, which ends a `strata {}` \
             Recording (line {number} belongs to another run?)",
            final_record(&header.kind).unwrap_or("final"),
            header.kind
        );
    }
    Ok(())
}

fn parse_header(line: &str) -> anyhow::Result<Header> {
    let value: serde_json::Value = serde_json::from_str(line)?;
    if value["format"] != FORMAT_NAME {
        bail!("not a strata recording (no \"format\": \"{FORMAT_NAME}\")");
    }
    let version = value["version"].as_u64().unwrap_or(0);
    if version > u64::from(FORMAT_VERSION) {
        bail!(
            "recording format version {version} is newer than this strata reads ({FORMAT_VERSION}); upgrade strata"
        );
    }
    Ok(serde_json::from_value(value)?)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn write_then_read_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.strata");
        let header = Header::new("calibrate", vec!["strata".into(), "calibrate".into()]);
        let mut writer = RecordingWriter::create(&path, &header).unwrap();
        writer
            .write(
                "sample",
                &serde_json::json!({"t_s": 1, "read_requests": 10}),
            )
            .unwrap();
        drop(writer);
        let recording = Recording::read(&path).unwrap();
        assert_eq!(recording.header, header);
        assert_eq!(recording.records_of("sample").count(), 1);
        assert_eq!(recording.records[0]["read_requests"], 10);
    }

    #[test]
    fn newer_version_and_truncation_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.strata");
        let mut header = serde_json::to_value(Header::new("calibrate", vec![])).unwrap();
        header["version"] = 99.into();
        std::fs::write(&path, format!("{header}\n")).unwrap();
        let error = format!("{:#}", Recording::read(&path).unwrap_err());
        assert!(
            error.contains("version 99") && error.contains("line 1"),
            "{error}"
        );

        header["version"] = FORMAT_VERSION.into();
        std::fs::write(&path, format!("{header}\n{{\"type\":\"sam")).unwrap();
        let error = format!("{:#}", Recording::read(&path).unwrap_err());
        assert!(error.contains("line 2"), "{error}");
    }

    #[test]
    fn joined_recordings_and_records_after_a_run_result_are_refused_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.strata");
        let header = Header::new("run", vec!["strata".into(), "run".into()]);
        let mut writer = RecordingWriter::create(&path, &header).unwrap();
        writer
            .write("result", &serde_json::json!({"result": {}}))
            .unwrap();
        drop(writer);
        let one = std::fs::read_to_string(&path).unwrap();
        assert!(Recording::read(&path).is_ok());

        std::fs::write(&path, format!("{one}{one}")).unwrap();
        let error = format!("{:#}", Recording::read(&path).unwrap_err());
        assert!(error.contains("line 3: a second header"), "{error}");

        let sample = "{\"type\":\"sample\",\"layer\":\"cpu\"}\n";
        std::fs::write(&path, format!("{one}{sample}")).unwrap();
        let error = format!("{:#}", Recording::read(&path).unwrap_err());
        assert!(
            error.contains("line 3: a record after the result record of line 2"),
            "{error}"
        );
    }

    #[test]
    fn records_after_a_calibration_s_summary_are_refused_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("calibrate.strata");
        let header = Header::new("calibrate", vec!["strata".into(), "calibrate".into()]);
        let mut writer = RecordingWriter::create(&path, &header).unwrap();
        writer
            .write("result", &serde_json::json!({"point": {}}))
            .unwrap();
        writer
            .write("result", &serde_json::json!({"point": {}}))
            .unwrap();
        writer.write("summary", &serde_json::json!({})).unwrap();
        drop(writer);
        assert!(Recording::read(&path).is_ok(), "a result per point");
        let one = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{one}{{\"type\":\"result\"}}\n")).unwrap();
        let error = format!("{:#}", Recording::read(&path).unwrap_err());
        assert!(
            error.contains("line 5: a record after the summary record of line 4"),
            "{error}"
        );
    }
}
