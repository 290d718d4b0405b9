//! A run's Recording, written as the run goes: the file is created (and an
//! existing one refused) before any work, with the header on its first
//! line; the environment and the load once the server is up; each layer
//! sample as it is taken; the window's records and the result at the end.
//! A run killed any way (SIGKILL, the OOM killer) leaves a Recording that
//! `strata report` reads up to its last complete record.
//!
//! Not for: what the records hold (`strata_recording::record`), or
//! computing them (`accounting`).

use crate::accounting::RunFigures;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use strata_recording::record::{
    RunHistograms, RunResult, Stopped, SweepPoint, WindowDatabase, WindowDevice,
};
use strata_recording::sweep::SweepSummary;
use strata_recording::{Existing, Header, Kind, Record, RecordingWriter};
use strata_slob::load::LoadReport;
use strata_slob::session::RunOutcome;

/// The open Recording of one run; clones write to the same file (the layer
/// sampler's thread, the engine, the binary when the run stops early).
#[derive(Clone)]
pub struct RunRecorder {
    path: PathBuf,
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for RunRecorder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "RunRecorder({})", self.path.display())
    }
}

struct State {
    writer: RecordingWriter,
    /// The record that ends a run (`run_result` or `stopped`) is written.
    ended: bool,
}

/// What the run's end adds to its Recording, from any engine.
pub struct RunEnd<'a> {
    /// Every database counter's change over the window (`window_database`);
    /// `None` for an engine without counters.
    pub database_counters: Option<BTreeMap<String, f64>>,
    pub figures: &'a RunFigures,
    /// What only this engine counts, as it serializes it.
    pub engine_figures: Option<serde_json::Value>,
    pub outcome: &'a RunOutcome,
    /// `--sweep-sessions`: every point, whole, and the curve.
    pub sweep: Option<(&'a [SweepPoint], &'a SweepSummary)>,
}

impl RunRecorder {
    /// Creates `path` with the run's header (its environment comes later,
    /// as an `environment` record); an existing file is refused unless
    /// `existing` says to replace it.
    pub fn create(
        path: &Path,
        command: &[String],
        options: &impl Serialize,
        existing: Existing,
    ) -> anyhow::Result<RunRecorder> {
        let header = Header::new(Kind::Run, command.to_vec(), options, ());
        let writer = RecordingWriter::create(path, &header, existing)?;
        Ok(RunRecorder {
            path: path.to_path_buf(),
            state: Arc::new(Mutex::new(State {
                writer,
                ended: false,
            })),
        })
    }

    /// `strata-run-<stamp>.strata` in `dir`, or `-2`, `-3`… after it when
    /// another run (started in the same second) has that name: never one
    /// that exists.
    pub fn create_unique(
        dir: &Path,
        stamp: &str,
        command: &[String],
        options: &impl Serialize,
    ) -> anyhow::Result<RunRecorder> {
        let mut last_error = None;
        for attempt in 1..=100 {
            let name = match attempt {
                1 => format!("strata-run-{stamp}.strata"),
                n => format!("strata-run-{stamp}-{n}.strata"),
            };
            let path = dir.join(name);
            if path.exists() {
                continue;
            }
            match Self::create(&path, command, options, Existing::Refuse) {
                Ok(recorder) => return Ok(recorder),
                Err(error) if path.exists() => last_error = Some(error),
                Err(error) => return Err(error),
            }
        }
        Err(last_error.unwrap_or_else(|| {
            anyhow::anyhow!(
                "every name strata-run-{stamp}[-N].strata in {} is taken",
                dir.display()
            )
        }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write_environment(&self, environment: &impl Serialize) -> anyhow::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.writer.write_environment(environment)
    }

    pub fn write(&self, record: &Record) -> anyhow::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(record, Record::RunResult(_) | Record::Stopped(_)) {
            state.ended = true;
        }
        state.writer.write(record)
    }

    /// The environment once the server is up, and the data set loaded or
    /// kept: written before the window starts.
    pub fn begin(
        &self,
        environment: &impl Serialize,
        load: Option<&LoadReport>,
    ) -> anyhow::Result<()> {
        self.write_environment(environment)?;
        match load {
            Some(load) => self.write(&Record::Load(load.clone())),
            None => Ok(()),
        }
    }

    /// Writes each layer sample as the sampler takes it; a sample that
    /// cannot be written is left out (the writer keeps the error, and the
    /// run's end reports it).
    pub fn sample_writer(&self) -> Box<dyn FnMut(&strata_observe::sampler::Sample) + Send> {
        let recorder = self.clone();
        Box::new(move |sample| {
            let mut state = recorder
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let _ = strata_observe::record::write_sample(&mut state.writer, sample);
        })
    }

    /// The window's records and the result, after the layer samples: the
    /// final environment (as the engine describes it at the end: its shard,
    /// its page-cache method; it replaces the one written at the start), per-second workload, window device and database
    /// records, the statement outliers, a sweep's points and curve, and
    /// the result with the latency histograms.
    pub fn finish(&self, environment: &impl Serialize, end: &RunEnd<'_>) -> anyhow::Result<()> {
        self.write_environment(environment)?;
        let figures = end.figures;
        for second in &figures.per_second {
            self.write(&Record::RunSecond(second.clone()))?;
        }
        for device in &figures.devices {
            self.write(&Record::WindowDevice(WindowDevice {
                point: None,
                interval_s: figures.window_s,
                device: device.clone(),
            }))?;
        }
        if let Some(counters) = &end.database_counters {
            self.write(&Record::WindowDatabase(WindowDatabase {
                interval_s: figures.window_s,
                counters: counters.clone(),
            }))?;
        }
        for outlier in &end.outcome.outliers {
            self.write(&Record::StatementOutlier(outlier.clone()))?;
        }
        if let Some((points, summary)) = end.sweep {
            for point in points {
                self.write(&Record::SweepPoint(point.clone()))?;
            }
            self.write(&Record::Sweep(summary.clone()))?;
        }
        self.write(&Record::RunResult(RunResult {
            figures: figures.clone(),
            engine_figures: end.engine_figures.clone(),
            histograms: histograms(end.outcome),
        }))
    }

    /// Removes the Recording again: for a run refused before any work (bad
    /// input found while its engine was configured), which leaves nothing.
    pub fn discard(self) {
        let _ = std::fs::remove_file(&self.path);
    }

    /// A run stopped before its result (during the server's start, the
    /// load, or by an error): one `stopped` record that says in which
    /// phase and why, unless the run's end is already written. Says on
    /// stderr where the Recording is, or why it could not be finished.
    pub fn stop(&self, phase: &str, reason: &str) {
        let ended = self
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .ended;
        if ended {
            return;
        }
        let written = self.write(&Record::Stopped(Stopped {
            phase: phase.to_string(),
            reason: reason.to_string(),
        }));
        let note = match written {
            Ok(()) => format!("strata: recording written to {}", self.path.display()),
            Err(error) if reason.contains(&format!("{error:#}")) => return,
            Err(error) => format!("strata: the Recording could not be finished: {error:#}"),
        };
        strata_core::note::note(&note);
    }
}

/// The sessions' latency histograms: HdrHistogram V2, base64, nanoseconds.
pub fn histograms(outcome: &RunOutcome) -> RunHistograms {
    RunHistograms {
        select_lat_ns_hdr: outcome.select.to_base64(),
        update_lat_ns_hdr: outcome.update.to_base64(),
        commit_lat_ns_hdr: outcome.commit.to_base64(),
        scan_lat_ns_hdr: outcome.scan.to_base64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two runs started in the same second in one directory: each its own
    /// file, the first one kept.
    #[test]
    fn default_names_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let options = serde_json::json!({});
        let first = RunRecorder::create_unique(dir.path(), "20261201T000000Z", &[], &options);
        let second = RunRecorder::create_unique(dir.path(), "20261201T000000Z", &[], &options);
        let (first, second) = (first.unwrap(), second.unwrap());
        assert_eq!(
            first.path(),
            dir.path().join("strata-run-20261201T000000Z.strata")
        );
        assert_eq!(
            second.path(),
            dir.path().join("strata-run-20261201T000000Z-2.strata")
        );
        first.stop("loading", "stopped by SIGINT");
        let again = RunRecorder::create(first.path(), &[], &options, Existing::Refuse);
        let error = format!("{:#}", again.unwrap_err());
        assert!(error.contains("already exists"), "{error}");
        let kept = strata_recording::Recording::read(first.path()).unwrap();
        assert_eq!(kept.stopped().unwrap().reason, "stopped by SIGINT");
    }
}
