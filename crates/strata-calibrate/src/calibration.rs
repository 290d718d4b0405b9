//! A whole calibration: checks everything that can be checked before the
//! first I/O, prepares the target, runs the points in order, and writes the
//! Recording as it goes (a header first, then each point's records the moment
//! it ends), so Ctrl-C keeps every finished point and the partial one.
//!
//! Not for: parsing options or drawing progress; the caller passes resolved
//! settings and an observer.

use crate::nfs::{NfsRequest, NfsTarget};
use crate::offsets::ByteRange;
use crate::point::{run_point, PointContext, PointProgress, WatchedDevices};
use crate::result::{PointResult, Summary};
use crate::spec::{PointSpec, StopRule};
use anyhow::{bail, Context};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use strata_core::metrics::Collector;
use strata_core::units::format_size;
use strata_io::target::{self, Preparation, TargetKind, TemporaryFile};
use strata_io::IoEngineKind;
use strata_observe::background::BackgroundSampler;
use strata_probe::blockdev::{self, BlockDevice};
use strata_probe::collectors::{all_os_collectors, DeviceFilter, NfsCollector};
use strata_recording::{Existing, Header, Kind, Record, RecordingWriter};

/// What to measure.
#[derive(Clone, Debug)]
pub enum TargetChoice {
    /// A file of `size_bytes` in `dir`, made for this run and removed after.
    Temporary { dir: PathBuf, size_bytes: u64 },
    /// A file strata creates or reuses (`size_bytes` when it must be made);
    /// an existing file strata did not create may only be read.
    File { path: PathBuf, size_bytes: u64 },
    /// An existing block device.
    Device { path: PathBuf },
    /// A file on an NFS server, through strata's own client.
    Nfs(Box<NfsRequest>),
}

/// A range as the user gave it: bytes, or percentages of the target.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "unit", rename_all = "snake_case")]
pub enum RangeSpec {
    Bytes { start: u64, end: Option<u64> },
    Percent { start: f64, end: f64 },
}

impl RangeSpec {
    pub fn resolve(&self, target_size: u64) -> ByteRange {
        match *self {
            RangeSpec::Bytes { start, end } => ByteRange {
                start_bytes: start,
                end_bytes: end.unwrap_or(target_size),
            },
            RangeSpec::Percent { start, end } => {
                let at = |pct: f64| ((target_size as f64 * pct / 100.0) as u64) / 4096 * 4096;
                ByteRange {
                    start_bytes: at(start),
                    end_bytes: at(end),
                }
            }
        }
    }
}

pub struct CalibrationConfig {
    pub target: TargetChoice,
    pub range: RangeSpec,
    pub engine: IoEngineKind,
    pub direct: bool,
    pub points: Vec<PointSpec>,
    pub stop_rule: StopRule,
    pub outlier_threshold_ns: u64,
    pub lat_target_us: f64,
    pub allow_write_device: bool,
    pub seed: u64,
    pub record: Option<PathBuf>,
    /// `--prometheus`: where to serve the layers while the points run.
    pub prometheus: Option<String>,
    /// Whether the Recording may replace a file at `record`.
    pub record_existing: Existing,
    /// The command line, for the Recording's header.
    pub command: Vec<String>,
    /// Every resolved option, for the Recording's header.
    pub options: ResolvedOptions,
}

/// Every option resolved to its final value, as the Recording keeps it.
#[derive(Clone, Debug, Serialize)]
pub struct ResolvedOptions {
    pub mode: String,
    pub target: Option<PathBuf>,
    pub size_bytes: Option<u64>,
    pub range: RangeSpec,
    pub engine: &'static str,
    pub direct: bool,
    pub stop_rule: StopRule,
    pub lat_target_us: f64,
    pub outlier_us: f64,
    /// I/Os from here on are in the Recording, whatever `--outlier` is.
    pub outlier_floor_us: f64,
    pub seed: u64,
    pub points: Vec<PointSpec>,
}

/// What was measured, as the header and the JSON document describe it.
#[derive(Clone, Debug, Serialize)]
pub struct TargetDescription {
    pub path: PathBuf,
    pub kind: &'static str,
    pub temporary: bool,
    pub size_bytes: u64,
    pub range: ByteRange,
    pub engine: &'static str,
    pub direct: bool,
    /// The block device the target lives on (or is).
    pub device: Option<BlockDevice>,
    /// The devices under it that do the work.
    pub physical_devices: Vec<BlockDevice>,
    /// Why the device is unknown, when it is.
    pub device_note: Option<String>,
}

pub trait CalibrationObserver {
    fn filling(&mut self, done_bytes: u64, total_bytes: u64);
    fn point_started(&mut self, index: usize, count: usize, spec: &PointSpec);
    fn point_progress(&mut self, progress: &PointProgress);
    fn point_finished(&mut self, result: &PointResult);
}

pub struct CalibrationOutcome {
    pub target: TargetDescription,
    pub points: Vec<PointResult>,
    pub summary: Summary,
    pub interrupted: bool,
    pub preparation: Option<Preparation>,
}

/// A calibration whose checks passed; the target file, if temporary, lives
/// as long as this does.
pub struct Calibration {
    config: CalibrationConfig,
    path: PathBuf,
    size_bytes: u64,
    kind: TargetKind,
    temporary: Option<TemporaryFile>,
    /// The file on an NFS server, for an `nfs://` target.
    nfs: Option<NfsTarget>,
}

/// The hidden temporary files an earlier calibrate left in `dir` (killed
/// before it could remove them): named by a strata whose pid is gone and
/// marked as strata's (`user.strata.target`), or empty; removed, each named.
fn remove_abandoned_temporaries(dir: &Path) {
    let what = "an abandoned calibrate temporary file";
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    for leftover in strata_db::leftovers::abandoned(&dir, ".strata-calibrate-") {
        let empty = std::fs::metadata(&leftover.path).is_ok_and(|meta| meta.len() == 0);
        if !target::created_by_strata(&leftover.path) && !empty {
            continue;
        }
        strata_core::note::note(&match std::fs::remove_file(&leftover.path) {
            Ok(()) => leftover.removed_note(what),
            Err(error) => leftover.kept_note(what, &error.into()),
        });
    }
}

impl Calibration {
    /// Every check that needs no I/O to the target: names, sizes, alignment,
    /// permission to write, O_DIRECT support, free space.
    pub fn check(config: CalibrationConfig) -> anyhow::Result<Self> {
        let writes = config
            .points
            .iter()
            .flat_map(|p| &p.groups)
            .any(|g| g.writes());
        if let (TargetChoice::Temporary { dir, .. } | TargetChoice::File { path: dir, .. }, true) =
            (&config.target, config.direct)
        {
            let dir = if dir.is_dir() {
                dir.as_path()
            } else {
                parent_of(dir)
            };
            target::check_direct_io(dir)?;
        }
        let local = |(path, size, kind, temporary)| (path, size, kind, temporary, None);
        let (path, size_bytes, kind, temporary, nfs) = match &config.target {
            TargetChoice::Temporary { dir, size_bytes } => {
                remove_abandoned_temporaries(dir);
                target::check_free_space(dir, *size_bytes)?;
                let temporary = TemporaryFile::new_in(dir)?;
                let path = temporary.path().to_path_buf();
                (path, *size_bytes, TargetKind::File, Some(temporary), None)
            }
            TargetChoice::File { path, size_bytes } => {
                local(check_file(path, *size_bytes, writes)?)
            }
            TargetChoice::Device { path } => {
                local(check_device(path, writes, config.allow_write_device)?)
            }
            TargetChoice::Nfs(request) => {
                let nfs = request.check(writes)?;
                let path = PathBuf::from(request.url.to_string());
                (path, nfs.size_bytes, TargetKind::File, None, Some(nfs))
            }
        };
        let calibration = Calibration {
            config,
            path,
            size_bytes,
            kind,
            temporary,
            nfs,
        };
        if let Err(error) = calibration.check_geometry() {
            calibration.remove_what_the_checks_made();
            return Err(error);
        }
        Ok(calibration)
    }

    /// An NFS file made by the checks, when a later check refused the
    /// calibration (a local temporary file goes with `temporary`).
    fn remove_what_the_checks_made(self) {
        let made = self.nfs.filter(|nfs| nfs.made_now);
        if let Some(file) = made.and_then(|nfs| Arc::into_inner(nfs.file)) {
            let _ = file.remove();
        }
    }

    fn check_geometry(&self) -> anyhow::Result<()> {
        let range = self.config.range.resolve(self.size_bytes);
        if range.end_bytes > self.size_bytes || range.is_empty() {
            bail!(
                "--range {}..{} does not fit the target ({} bytes)",
                range.start_bytes,
                range.end_bytes,
                self.size_bytes
            );
        }
        let alignment = self.alignment();
        if self.config.direct
            && (!range.start_bytes.is_multiple_of(alignment)
                || !range.end_bytes.is_multiple_of(alignment))
        {
            bail!("--range start and end must be multiples of {alignment} bytes with O_DIRECT (or use --buffered)");
        }
        for group in self.config.points.iter().flat_map(|p| &p.groups) {
            let block = u64::from(group.block_size_bytes);
            if self.config.direct && block % alignment != 0 {
                bail!(
                    "--bs {} is not a multiple of the device's {alignment}-byte logical block, which O_DIRECT requires (or use --buffered)",
                    format_size(block)
                );
            }
            if block > range.len() {
                bail!(
                    "--bs {} is larger than the range ({})",
                    format_size(block),
                    format_size(range.len())
                );
            }
        }
        Ok(())
    }

    fn alignment(&self) -> u64 {
        if self.nfs.is_some() {
            return 4096;
        }
        let device = match self.kind {
            TargetKind::BlockDevice => blockdev::device_of_node(&self.path).ok(),
            TargetKind::File => blockdev::device_of_path(parent_of(&self.path)).ok(),
        };
        device.map_or(4096, |device| u64::from(device.logical_block_size.max(512)))
    }

    pub fn target_path(&self) -> &Path {
        &self.path
    }

    /// Fills the file if needed, then runs every point.
    pub fn run(
        &mut self,
        interrupt: &AtomicBool,
        observer: &mut dyn CalibrationObserver,
    ) -> anyhow::Result<CalibrationOutcome> {
        let preparation = self.prepare_target(interrupt, observer)?;
        let description = self.describe();
        let watched = WatchedDevices {
            target_device: description.device.as_ref().map(|d| d.name.clone()),
            physical: description
                .physical_devices
                .iter()
                .map(|d| d.name.clone())
                .collect(),
        };
        let mut recording = self.start_recording(&description)?;
        let kernel_mount = match self.nfs {
            Some(_) => None,
            None => crate::kernel_nfs::mount_of_path(&self.path),
        };
        let context = PointContext {
            target: &self.path,
            range: description.range,
            engine: self.config.engine,
            direct: self.config.direct,
            stop_rule: self.config.stop_rule,
            outlier_threshold_ns: self.config.outlier_threshold_ns,
            devices: &watched,
            interrupt,
            seed: self.config.seed,
            nfs: self.nfs.as_ref(),
            kernel_nfs: kernel_mount.as_ref(),
        };
        if let Some(address) = &self.config.prometheus {
            let collectors = layer_collectors(&watched, self.nfs.as_ref());
            strata_observe::watch::serve_layers(address, collectors)?;
        }
        let sampler = recording.as_ref().map(|_| {
            let collectors = layer_collectors(&watched, self.nfs.as_ref());
            BackgroundSampler::start(collectors, std::time::Duration::from_secs(1))
        });
        let points = self.run_points(&context, observer, recording.as_mut())?;
        if let (Some(writer), Some(sampler)) = (recording.as_mut(), sampler) {
            for sample in sampler.finish() {
                strata_observe::record::write_sample(writer, &sample)?;
            }
        }
        let verdict = crate::verdict::judge(&points, self.config.direct);
        let summary = Summary::of(&points, self.config.lat_target_us, verdict);
        if let Some(writer) = recording.as_mut() {
            writer.write(&Record::Summary(summary.clone()))?;
        }
        let interrupted = interrupt.load(Ordering::Relaxed) || points.iter().any(|p| p.interrupted);
        Ok(CalibrationOutcome {
            target: description,
            points,
            summary,
            interrupted,
            preparation,
        })
    }

    /// Runs the points in order until one fails or Ctrl-C; each finished
    /// point goes into the Recording at once.
    fn run_points(
        &self,
        context: &PointContext,
        observer: &mut dyn CalibrationObserver,
        mut recording: Option<&mut RecordingWriter>,
    ) -> anyhow::Result<Vec<PointResult>> {
        let mut points = Vec::new();
        let count = self.config.points.len();
        for (index, spec) in self.config.points.iter().enumerate() {
            if context.interrupt.load(Ordering::Relaxed) {
                break;
            }
            observer.point_started(index, count, spec);
            let result = run_point(spec, context, &mut |progress| {
                observer.point_progress(progress)
            })?;
            observer.point_finished(&result);
            if let Some(writer) = recording.as_mut() {
                crate::record::record_point(writer, &result)?;
            }
            let failed = !result.errors.is_empty();
            points.push(result);
            if failed {
                break;
            }
        }
        Ok(points)
    }

    fn prepare_target(
        &self,
        interrupt: &AtomicBool,
        observer: &mut dyn CalibrationObserver,
    ) -> anyhow::Result<Option<Preparation>> {
        if let Some(nfs) = &self.nfs {
            return nfs.fill(interrupt, &mut |done, total| observer.filling(done, total));
        }
        if self.kind == TargetKind::BlockDevice || (self.temporary.is_none() && !self.must_fill()) {
            return Ok(None);
        }
        let preparation = target::prepare_file(&self.path, self.size_bytes, &mut |done, total| {
            observer.filling(done, total);
            !interrupt.load(Ordering::Relaxed)
        })?;
        Ok(Some(preparation))
    }

    /// An existing file strata did not make is used as it is, read-only.
    fn must_fill(&self) -> bool {
        !self.path.exists() || target::created_by_strata(&self.path)
    }

    fn describe(&self) -> TargetDescription {
        if let Some(nfs) = &self.nfs {
            return self.describe_nfs(nfs);
        }
        let device = match self.kind {
            TargetKind::BlockDevice => blockdev::device_of_node(&self.path),
            TargetKind::File => blockdev::device_of_path(&self.path),
        };
        let (device, device_note) = match device {
            Ok(device) => (Some(device), None),
            Err(error) => (None, Some(format!("{error:#}"))),
        };
        let physical_devices = device
            .as_ref()
            .and_then(|device| blockdev::physical_devices(device).ok())
            .unwrap_or_default();
        TargetDescription {
            path: self.path.clone(),
            kind: match self.kind {
                TargetKind::File => "file",
                TargetKind::BlockDevice => "block_device",
            },
            temporary: self.temporary.is_some(),
            size_bytes: self.size_bytes,
            range: self.config.range.resolve(self.size_bytes),
            engine: self.config.engine.name(),
            direct: self.config.direct,
            device,
            physical_devices,
            device_note,
        }
    }

    /// An NFS file: its devices are the server's, not this machine's.
    fn describe_nfs(&self, nfs: &NfsTarget) -> TargetDescription {
        let url = &nfs.file.url;
        TargetDescription {
            path: self.path.clone(),
            kind: "nfs_file",
            temporary: false,
            size_bytes: self.size_bytes,
            range: self.config.range.resolve(self.size_bytes),
            engine: self.config.engine.name(),
            direct: self.config.direct,
            device: None,
            physical_devices: Vec::new(),
            device_note: Some(format!(
                "the file is on NFS server {} (export {}{}): its devices are the server's, not \
                 this machine's{}{}",
                url.host,
                nfs.file.export,
                nfs.paths_said(),
                (nfs.filer.as_ref()).map_or(String::new(), |filer| format!("; {}", filer.said())),
                crate::kernel_nfs::kernel_client_absent()
                    .map_or(String::new(), |absent| format!("; {absent}"))
            )),
        }
    }

    fn start_recording(
        &self,
        description: &TargetDescription,
    ) -> anyhow::Result<Option<RecordingWriter>> {
        let Some(path) = &self.config.record else {
            return Ok(None);
        };
        #[derive(Serialize)]
        struct CalibrateEnvironment<'a> {
            target: &'a TargetDescription,
        }
        let header = Header::new(
            Kind::Calibrate,
            self.config.command.clone(),
            &self.config.options,
            CalibrateEnvironment {
                target: description,
            },
        );
        Ok(Some(RecordingWriter::create(
            path,
            &header,
            self.config.record_existing,
        )?))
    }
}

/// Every layer of a calibration (the target's devices only; for an NFS
/// target, strata's own calls in the `nfs` layer), sampled each second for
/// the Recording, and served with `--prometheus`.
fn layer_collectors(watched: &WatchedDevices, nfs: Option<&NfsTarget>) -> Vec<Box<dyn Collector>> {
    let names: Vec<String> = watched
        .target_device
        .iter()
        .chain(&watched.physical)
        .cloned()
        .collect();
    let filter = if names.is_empty() {
        DeviceFilter::All
    } else {
        DeviceFilter::Names(names)
    };
    let mut collectors = all_os_collectors(filter, Vec::new()).unwrap_or_default();
    if let Some(nfs) = nfs {
        let own_client = NfsCollector::with_own_client(nfs.client_metrics());
        collectors.retain(|collector| collector.layer() != strata_recording::names::layer::NFS);
        collectors.push(Box::new(own_client));
    }
    collectors
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

fn check_file(
    path: &Path,
    size_bytes: u64,
    writes: bool,
) -> anyhow::Result<(PathBuf, u64, TargetKind, Option<TemporaryFile>)> {
    match target::kind_of(path)? {
        Some(TargetKind::BlockDevice) => bail!("internal: {} is a block device", path.display()),
        Some(TargetKind::File) if !target::created_by_strata(path) => {
            if writes {
                bail!(
                    "--target {} exists and was not created by strata: strata only reads it. \
                     Choose a read-only workload, or name a new file for write workloads",
                    path.display()
                );
            }
            let size = std::fs::metadata(path)?.len();
            Ok((path.to_path_buf(), size, TargetKind::File, None))
        }
        Some(TargetKind::File) => Ok((path.to_path_buf(), size_bytes, TargetKind::File, None)),
        None => {
            target::check_free_space(parent_of(path), size_bytes)?;
            Ok((path.to_path_buf(), size_bytes, TargetKind::File, None))
        }
    }
}

fn check_device(
    path: &Path,
    writes: bool,
    allow_write_device: bool,
) -> anyhow::Result<(PathBuf, u64, TargetKind, Option<TemporaryFile>)> {
    if writes {
        if !allow_write_device {
            bail!(
                "the workload writes and --target {} is a block device: writing destroys what it \
                 holds. Pass --allow-write-device to confirm, or choose a read-only workload",
                path.display()
            );
        }
        strata_probe::safety::check_device_writable(path)?;
    }
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let size = target::size_of(&file)?;
    Ok((path.to_path_buf(), size, TargetKind::BlockDevice, None))
}
