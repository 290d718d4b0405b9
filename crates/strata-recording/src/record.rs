//! Every record a Recording holds after its header, as one enum tagged by
//! `"type"`: what each command writes, in the order `docs/recording.md`
//! gives.
//!
//! Not for: the bodies' own fields (`layers`, `device`, `run`,
//! `calibrate`) or the file (`format`).

use crate::calibrate::{OutlierRecord, PointResult, SecondSample, Summary};
use crate::device::IostatFigures;
use crate::environment::Environment;
use crate::layers::Sample;
use crate::run::{LoadReport, RunFigures, SecondCounts, StatementOutlier};
use crate::sweep::SweepSummary;
use crate::top::TopProcesses;
use crate::written::Written;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One line of a Recording after the header.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)]
pub enum Record {
    /// What was measured, once it is known: a run writes its header before
    /// any work (so a run killed any way leaves a Recording) and its
    /// environment once its server is up, again at its end. The last one
    /// is the header's environment when the file is read back.
    Environment(EnvironmentRecord),
    /// Every layer at one moment (each command samples each second).
    Layers(Sample),
    /// The busiest processes over the interval that ended at the `layers`
    /// record before it (`strata observe --top N`).
    Top(TopProcesses),
    /// What a run's sessions completed in one second of its window.
    RunSecond(SecondCounts),
    /// What a calibrate point completed in one second of its window.
    PointSecond(PointSecond),
    /// iostat -x's figures of one device over a run's window or a point's.
    WindowDevice(WindowDevice),
    /// Every database counter's change over a run's window, by
    /// [`crate::names`]' keys.
    WindowDatabase(WindowDatabase),
    /// A run's data set, loaded or kept.
    Load(LoadReport),
    /// One statement at or over a run's outlier floor.
    StatementOutlier(StatementOutlier),
    /// One I/O at or over a calibration's outlier floor.
    IoOutlier(IoOutlier),
    /// A run stopped before its sessions ran: nothing was measured.
    Stopped(Stopped),
    /// One window of a `--sweep-sessions` run, whole.
    SweepPoint(SweepPoint),
    /// A sweep's curve and conclusions; before its `run_result`.
    Sweep(SweepSummary),
    /// What a run measured over its window; it ends a run's Recording (a
    /// sweep's: its last point's window).
    RunResult(RunResult),
    /// What one calibrate point measured.
    PointResult(PointRecord),
    /// What a calibration concluded; it ends a calibration's Recording.
    Summary(Summary),
}

impl Record {
    /// The record's `"type"`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Record::Environment(_) => "environment",
            Record::Layers(_) => "layers",
            Record::Top(_) => "top",
            Record::RunSecond(_) => "run_second",
            Record::PointSecond(_) => "point_second",
            Record::WindowDevice(_) => "window_device",
            Record::WindowDatabase(_) => "window_database",
            Record::Load(_) => "load",
            Record::StatementOutlier(_) => "statement_outlier",
            Record::IoOutlier(_) => "io_outlier",
            Record::Stopped(_) => "stopped",
            Record::SweepPoint(_) => "sweep_point",
            Record::Sweep(_) => "sweep",
            Record::RunResult(_) => "run_result",
            Record::PointResult(_) => "point_result",
            Record::Summary(_) => "summary",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EnvironmentRecord {
    /// The header's `environment`, as the command wrote it
    /// ([`crate::format::RecordingWriter::write_environment`]).
    pub environment: Written<Environment>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointSecond {
    /// The point's name (`small=4 large=0`).
    pub point: String,
    pub second: SecondSample,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WindowDevice {
    /// The calibrate point whose window it is; `None` for a run's window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    pub interval_s: f64,
    pub device: IostatFigures,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WindowDatabase {
    pub interval_s: f64,
    /// Each counter's change over the window.
    pub counters: BTreeMap<String, f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IoOutlier {
    pub point: String,
    pub outlier: OutlierRecord,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stopped {
    /// `starting the server`, `loading`…
    pub phase: String,
    /// Why, as the user or the error said it.
    pub reason: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    pub figures: RunFigures,
    /// What only this engine counts (InnoDB's pages and requests), as the
    /// engine gives it; strata reads the shared figures, not these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_figures: Option<serde_json::Value>,
    pub histograms: RunHistograms,
}

/// One window of a sweep, whole: the figures a run of that many sessions
/// would have.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SweepPoint {
    pub sessions: u32,
    pub figures: RunFigures,
    pub histograms: RunHistograms,
}

/// The sessions' latency per statement: HdrHistogram V2 encoding, base64,
/// nanoseconds; they merge exactly by adding.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunHistograms {
    pub select_lat_ns_hdr: String,
    pub update_lat_ns_hdr: String,
    pub commit_lat_ns_hdr: String,
    pub scan_lat_ns_hdr: String,
}

impl RunHistograms {
    /// The encoded histogram of `operation` (`select`, `update`, `commit`,
    /// `scan`).
    pub fn of(&self, operation: &str) -> Option<&str> {
        match operation {
            "select" => Some(&self.select_lat_ns_hdr),
            "update" => Some(&self.update_lat_ns_hdr),
            "commit" => Some(&self.commit_lat_ns_hdr),
            "scan" => Some(&self.scan_lat_ns_hdr),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointRecord {
    pub point: PointResult,
    /// Each group's latency by its label, encoded as [`RunHistograms`].
    pub histograms: BTreeMap<String, GroupHistogramsEncoded>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GroupHistogramsEncoded {
    pub read_lat_ns_hdr: String,
    pub write_lat_ns_hdr: String,
    /// Whole sorted batches ([`crate::calibrate::BatchFigures`]); absent
    /// unless the group reads in sorted batches.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub batch_lat_ns_hdr: String,
}
