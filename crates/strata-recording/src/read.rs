//! A Recording read back, typed: its header, the typed parts of its
//! options and environment, and its records with their line numbers. A
//! version 1 file is upgraded as it is read (`v1`). A record that lacks a
//! field its type needs is an error naming the field, the line and the
//! file.
//!
//! Not for: writing (`format::RecordingWriter`).

use crate::calibrate::Summary;
use crate::format::{header_version, Existing, Header, Kind, RecordingWriter};
use crate::layers::Sample;
use crate::parse::{field_error, parse_lines, Line};
use crate::record::{
    IoOutlier, PointRecord, PointSecond, Record, RunResult, Stopped, WindowDatabase, WindowDevice,
};
use crate::run::{LoadReport, SecondCounts, StatementOutlier};
use anyhow::{bail, Context};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// How a version 2 `layers` record begins, as the writer writes it.
const LAYERS_LINE: &str = "{\"type\":\"layers\"";
/// A header is a few KiB; a file whose first line is longer is no
/// Recording, and is said to be without reading on (`/dev/zero`).
const MAX_HEADER_BYTES: u64 = 1 << 20;
/// The longest record strata writes (a sweep's, or a result with its
/// histograms) is a few MiB.
const MAX_LINE_BYTES: u64 = 64 << 20;

/// One line of the file, without its newline.
struct FileLine {
    text: String,
    /// It ended with a newline (only a file's last line may not).
    whole: bool,
}

/// The next line, read no further than `most` bytes: a longer one, or one
/// that is not UTF-8, is an error; `None` at the end of the file.
fn next_line(reader: &mut impl BufRead, most: u64) -> anyhow::Result<Option<FileLine>> {
    let mut bytes = Vec::new();
    let read = reader
        .by_ref()
        .take(most + 1)
        .read_until(b'\n', &mut bytes)?;
    if read == 0 {
        return Ok(None);
    }
    let whole = bytes.last() == Some(&b'\n');
    if whole {
        bytes.pop();
    } else if read as u64 > most {
        bail!(
            "a line longer than {}: not a strata Recording",
            strata_core::units::format_size(most)
        );
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("a line that is not UTF-8 text: not a strata Recording"))?;
    Ok(Some(FileLine { text, whole }))
}

/// The numbered lines after the header, and why a cut-off last one was
/// left out.
type LaterLines = (Vec<(usize, String)>, Option<String>);

/// The lines after the header, numbered, those `skipped` says left out;
/// a last line cut off mid-record (no newline, no complete JSON) is left
/// out too, and said so.
fn later_lines(
    reader: &mut impl BufRead,
    path: &Path,
    skipped: &dyn Fn(&str) -> bool,
) -> anyhow::Result<LaterLines> {
    let mut numbered = Vec::new();
    let mut number = 1;
    while let Some(line) = next_line(reader, MAX_LINE_BYTES)
        .with_context(|| format!("{}: line {}", path.display(), number + 1))?
    {
        number += 1;
        let cut_off =
            !line.whole && serde_json::from_str::<serde::de::IgnoredAny>(&line.text).is_err();
        if cut_off {
            let truncated = format!(
                "line {number} of {} ends mid-record (its writer stopped while writing it: \
                 killed, or its filesystem full); read up to line {}",
                path.display(),
                number - 1
            );
            return Ok((numbered, Some(truncated)));
        }
        if !skipped(&line.text) {
            numbered.push((number, line.text));
        }
    }
    Ok((numbered, None))
}

/// The last `environment` record becomes the header's environment; the
/// records themselves are not kept.
fn fold_environment(header: &mut Header, lines: &mut Vec<Line>) {
    let last = lines.iter().rev().find_map(|line| match &line.record {
        Record::Environment(record) => Some(record.environment.clone()),
        _ => None,
    });
    if let Some(environment) = last {
        header.environment = environment;
        lines.retain(|line| !matches!(line.record, Record::Environment(_)));
    }
}

#[derive(Debug)]
pub struct Recording {
    pub path: PathBuf,
    /// The header, its environment the last `environment` record's.
    pub header: Header,
    pub lines: Vec<Line>,
    /// Why the file's last line was left out: cut off mid-line (the writer
    /// killed while writing it); `None` when every line was whole.
    pub truncated: Option<String>,
}

impl Recording {
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        Self::read_keeping(path, true)
    }

    /// The Recording without its layer samples (a version 2 file's
    /// `layers` lines are skipped unread): what a merge needs of every
    /// shard but the one whose layers it keeps.
    pub fn read_without_layers(path: &Path) -> anyhow::Result<Self> {
        Self::read_keeping(path, false)
    }

    fn read_keeping(path: &Path, layers: bool) -> anyhow::Result<Self> {
        let file =
            File::open(path).with_context(|| format!("opening recording {}", path.display()))?;
        let mut reader = BufReader::new(file);
        let at_header = || format!("{}: line 1 (the header)", path.display());
        let first = match next_line(&mut reader, MAX_HEADER_BYTES).with_context(at_header)? {
            Some(line) => line.text,
            None => bail!("{}: empty file, not a recording", path.display()),
        };
        let version = header_version(&first).with_context(at_header)?;
        let skipped = |line: &str| !layers && version >= 2 && line.starts_with(LAYERS_LINE);
        let (numbered, truncated) = later_lines(&mut reader, path, &skipped)?;
        let (mut header, mut lines) = match version {
            1 => crate::v1::upgrade(&first, &numbered).map_err(|error| {
                error.context(format!("{}: a version 1 Recording", path.display()))
            })?,
            _ => {
                let header: Header = serde_json::from_str(&first)
                    .map_err(field_error)
                    .with_context(at_header)?;
                (header, parse_lines(&numbered, path)?)
            }
        };
        fold_environment(&mut header, &mut lines);
        check_order(header.kind, &lines).with_context(|| path.display().to_string())?;
        check_spans(&lines).with_context(|| path.display().to_string())?;
        Ok(Recording {
            path: path.to_path_buf(),
            header,
            lines,
            truncated,
        })
    }

    /// A Recording made in memory (from another source than a file: a
    /// Prometheus server's record of a fleet), its records numbered as
    /// lines after the header; `path` names the source.
    pub fn of(path: PathBuf, header: Header, records: Vec<Record>) -> anyhow::Result<Self> {
        let lines: Vec<Line> = records
            .into_iter()
            .enumerate()
            .map(|(index, record)| Line {
                number: index + 2,
                record,
            })
            .collect();
        check_order(header.kind, &lines)?;
        check_spans(&lines)?;
        Ok(Recording {
            path,
            header,
            lines,
            truncated: None,
        })
    }

    /// Writes the Recording again in the current version: its header and
    /// every record in order (a version 1 file comes out upgraded).
    pub fn write_to(&self, path: &Path) -> anyhow::Result<()> {
        let mut writer = RecordingWriter::create(path, &self.header, Existing::Refuse)?;
        self.records().try_for_each(|record| writer.write(record))
    }

    pub fn records(&self) -> impl Iterator<Item = &Record> {
        self.lines.iter().map(|line| &line.record)
    }

    pub fn layers(&self) -> impl Iterator<Item = &Sample> {
        self.records().filter_map(|record| match record {
            Record::Layers(sample) => Some(sample),
            _ => None,
        })
    }

    /// Each interval's samples with the top processes recorded after it
    /// (`strata observe --top N`; `None` where there were none).
    pub fn layers_with_top(&self) -> Vec<(&Sample, Option<&crate::top::TopProcesses>)> {
        let mut intervals: Vec<(&Sample, Option<&crate::top::TopProcesses>)> = Vec::new();
        for record in self.records() {
            match record {
                Record::Layers(sample) => intervals.push((sample, None)),
                Record::Top(top) => {
                    if let Some(last) = intervals.last_mut().filter(|(s, _)| s.t_s == top.t_s) {
                        last.1 = Some(top);
                    }
                }
                _ => {}
            }
        }
        intervals
    }

    pub fn run_seconds(&self) -> impl Iterator<Item = &SecondCounts> {
        self.records().filter_map(|record| match record {
            Record::RunSecond(second) => Some(second),
            _ => None,
        })
    }

    pub fn point_seconds(&self) -> impl Iterator<Item = &PointSecond> {
        self.records().filter_map(|record| match record {
            Record::PointSecond(second) => Some(second),
            _ => None,
        })
    }

    pub fn window_devices(&self) -> impl Iterator<Item = &WindowDevice> {
        self.records().filter_map(|record| match record {
            Record::WindowDevice(device) => Some(device),
            _ => None,
        })
    }

    pub fn window_database(&self) -> Option<&WindowDatabase> {
        self.records().find_map(|record| match record {
            Record::WindowDatabase(database) => Some(database),
            _ => None,
        })
    }

    pub fn load(&self) -> Option<&LoadReport> {
        self.records().find_map(|record| match record {
            Record::Load(load) => Some(load),
            _ => None,
        })
    }

    pub fn statement_outliers(&self) -> impl Iterator<Item = &StatementOutlier> {
        self.records().filter_map(|record| match record {
            Record::StatementOutlier(outlier) => Some(outlier),
            _ => None,
        })
    }

    pub fn io_outliers(&self) -> impl Iterator<Item = &IoOutlier> {
        self.records().filter_map(|record| match record {
            Record::IoOutlier(outlier) => Some(outlier),
            _ => None,
        })
    }

    pub fn stopped(&self) -> Option<&Stopped> {
        self.records().find_map(|record| match record {
            Record::Stopped(stopped) => Some(stopped),
            _ => None,
        })
    }

    pub fn run_result(&self) -> Option<&RunResult> {
        self.records().find_map(|record| match record {
            Record::RunResult(result) => Some(result),
            _ => None,
        })
    }

    pub fn sweep_points(&self) -> impl Iterator<Item = &crate::record::SweepPoint> {
        self.records().filter_map(|record| match record {
            Record::SweepPoint(point) => Some(point),
            _ => None,
        })
    }

    pub fn sweep(&self) -> Option<&crate::sweep::SweepSummary> {
        self.records().find_map(|record| match record {
            Record::Sweep(sweep) => Some(sweep),
            _ => None,
        })
    }

    pub fn point_results(&self) -> impl Iterator<Item = &PointRecord> {
        self.records().filter_map(|record| match record {
            Record::PointResult(point) => Some(point),
            _ => None,
        })
    }

    pub fn summary(&self) -> Option<&Summary> {
        self.records().find_map(|record| match record {
            Record::Summary(summary) => Some(summary),
            _ => None,
        })
    }
}

/// A Recording is one run of one command: nothing follows the record that
/// ends it (a run's result, a calibration's summary).
/// Refuses a time no clock gives: a window, interval or moment that is
/// negative, not a number or infinite (a window of 0 s is a run stopped
/// before its window began). Each error names the line, the record and
/// the field.
fn check_spans(lines: &[Line]) -> anyhow::Result<()> {
    for line in lines {
        let spans: [(&str, f64); 2] = match &line.record {
            Record::RunResult(result) => [("figures.window_s", result.figures.window_s); 2],
            Record::SweepPoint(point) => [("figures.window_s", point.figures.window_s); 2],
            Record::WindowDevice(window) => [("interval_s", window.interval_s); 2],
            Record::WindowDatabase(window) => [("interval_s", window.interval_s); 2],
            Record::Layers(sample) => [("t_s", sample.t_s), ("interval_s", sample.interval_s)],
            _ => continue,
        };
        for (field, value) in spans {
            if !(value.is_finite() && value >= 0.0) {
                bail!(
                    "line {}: the {} record's {field} is {value}: it must be 0 s or more",
                    line.number,
                    line.record.type_name()
                );
            }
        }
    }
    Ok(())
}

fn check_order(kind: Kind, lines: &[Line]) -> anyhow::Result<()> {
    let Some(last) = kind.final_record() else {
        return Ok(());
    };
    let mut ended_at = None;
    for line in lines {
        if let Some(result) = ended_at {
            bail!(
                "line {}: a record after the {last} record of line {result}, which ends a \
                 `strata {kind}` Recording (line {} belongs to another run?)",
                line.number,
                line.number
            );
        }
        if line.record.type_name() == last {
            ended_at = Some(line.number);
        }
    }
    Ok(())
}
