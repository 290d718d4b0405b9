//! `strata run --engine sqlite` from start to end: check the options, make
//! the file (or a temporary one), load what is missing, keep the data set
//! out of the page cache, run the sessions between the two OS edges,
//! account, record, and remove the temporary directory — also on an error
//! or an interrupt.
//!
//! Not for: parsing options or drawing progress (the binary passes resolved
//! settings and an observer).

use crate::cache::{Evictor, EVICT_EVERY};
use crate::connection::{check_page_bytes, file_page_bytes, open_read_only};
use crate::environment::{environment, sqlite_version_num};
use crate::figures::EdgeTaker;
use crate::session::SqliteOpener;
use crate::setup::{setup, SetupOptions};
use crate::window::{SqliteWindow, Windows};
use anyhow::{bail, ensure, Context};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use strata_core::metrics::Collector;
use strata_db::pagecache::PageCacheMethod;
use strata_db::workdir::WorkDir;
use strata_observe::background::SampleClock;
use strata_run::accounting::local_collectors;
use strata_run::engine::{EngineRun, Measured, Skeleton};
use strata_run::outcome::data_set_bytes_in_blocks_of;
use strata_run::outcome::{PageCacheChoice, RunEnvironment, RunObserver, SlobOutcome};
use strata_run::recorder::RunRecorder;
use strata_run::verdict::CacheFit;
use strata_slob::load::LoadReport;
use strata_slob::session::{validate_options, DriverOptions};

/// The name of the file in a temporary directory.
pub const TEMPORARY_FILE_NAME: &str = "strata-slob.sqlite";

/// SQLite's page cache of each session by default: 2 MiB, room for the
/// index and interior pages of a few GiB of table but a small share of the
/// data set, so the rows' pages are read from the OS.
pub const DEFAULT_SESSION_CACHE_BYTES: u64 = 2 << 20;

/// Which file the run uses.
#[derive(Clone, Debug)]
pub enum SqliteDatabase {
    /// A file in a new temporary directory under the work directory, removed with
    /// its WAL and shared-memory files at the end, also on error or interrupt.
    Temporary { work_dir: WorkDir },
    /// The user's file, created when missing; strata adds and drops only
    /// its own tables there.
    File(PathBuf),
}

#[derive(Clone, Debug)]
pub struct SqliteRunConfig {
    pub database: SqliteDatabase,
    /// `Auto`: the file's pages are dropped from the OS page cache before
    /// the run and every 20 ms during it (`cache::EVICT_EVERY`); `Unlimited`: left alone;
    /// `Limit` is refused (a byte limit needs a memory cgroup, which threads
    /// of strata cannot have apart from strata).
    pub page_cache: PageCacheChoice,
    /// `PRAGMA cache_size` of each session, in bytes.
    pub session_cache_bytes: u64,
    /// Page size of a new file; `None`: 8 KiB (or the existing file's).
    pub page_bytes: Option<u32>,
    pub replace: bool,
    pub driver: DriverOptions,
    pub setup_only: bool,
    /// The run's Recording, open since before any work.
    pub record: Option<RunRecorder>,
    pub command: Vec<String>,
}

/// Runs `strata run --engine sqlite` (or its setup alone).
pub fn run(
    config: &SqliteRunConfig,
    observer: &mut dyn RunObserver,
    interrupt: &AtomicBool,
) -> anyhow::Result<SlobOutcome> {
    check_config(config)?;
    let file = DatabaseFile::make(&config.database)?;
    let result = run_on(config, &file.path, observer, interrupt);
    if file.temporary.is_some() {
        observer.phase("removing the temporary SQLite file");
    }
    drop(file);
    result
}

/// Refuses what cannot work, before any file is touched.
pub fn check_config(config: &SqliteRunConfig) -> anyhow::Result<()> {
    validate_options(&config.driver)?;
    if let PageCacheChoice::Limit(_) = config.page_cache {
        bail!("--page-cache-limit SIZE needs a memory cgroup around the database's processes, and SQLite runs inside strata: use auto (the file's pages are dropped before and during the run) or none");
    }
    if let Some(page_bytes) = config.page_bytes {
        check_page_bytes(page_bytes)?;
    }
    ensure!(
        config.session_cache_bytes >= 1024,
        "the session cache must be at least 1 KiB"
    );
    match &config.database {
        SqliteDatabase::Temporary { work_dir } => {
            let parent_dir = &work_dir.path;
            ensure!(!config.setup_only, "setup without --db would load a temporary file and remove it at once: give --db FILE");
            ensure!(
                parent_dir.is_dir(),
                "{} is not a directory",
                parent_dir.display()
            );
        }
        SqliteDatabase::File(path) => {
            let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty());
            ensure!(
                dir.is_none_or(Path::is_dir),
                "the directory of {} does not exist",
                path.display()
            );
            ensure!(
                !path.is_dir(),
                "{} is a directory, not a SQLite file",
                path.display()
            );
        }
    }
    Ok(())
}

/// The file, and the temporary directory that holds it when there is one
/// (removed when this is dropped).
struct DatabaseFile {
    path: PathBuf,
    temporary: Option<tempfile::TempDir>,
}

impl DatabaseFile {
    fn make(database: &SqliteDatabase) -> anyhow::Result<DatabaseFile> {
        match database {
            SqliteDatabase::File(path) => Ok(DatabaseFile {
                path: path.clone(),
                temporary: None,
            }),
            SqliteDatabase::Temporary { work_dir } => {
                let parent_dir = &work_dir.path;
                let dir = tempfile::Builder::new()
                    .prefix("strata-sqlite-")
                    .tempdir_in(parent_dir)
                    .with_context(|| {
                        format!("making a temporary directory in {}", parent_dir.display())
                    })?;
                Ok(DatabaseFile {
                    path: dir.path().join(TEMPORARY_FILE_NAME),
                    temporary: Some(dir),
                })
            }
        }
    }
}

fn run_on(
    config: &SqliteRunConfig,
    path: &Path,
    observer: &mut dyn RunObserver,
    interrupt: &AtomicBool,
) -> anyhow::Result<SlobOutcome> {
    let skeleton = Skeleton {
        record: config.record.as_ref(),
        driver: &config.driver,
        sweep: None,
        setup_only: config.setup_only,
    };
    let run = SqliteRun {
        config,
        path,
        page_bytes: 0,
        evictor: None,
    };
    skeleton.run(run, interrupt, observer)
}

/// The run on one file, as strata-run's skeleton calls it: the file is
/// made and loaded, its pages dropped from the page cache during the
/// windows, the sessions' edges taken from the OS alone.
struct SqliteRun<'a> {
    config: &'a SqliteRunConfig,
    path: &'a Path,
    /// The file's page size, once loaded.
    page_bytes: u32,
    /// Drops the file's pages from the page cache during the windows.
    evictor: Option<Evictor>,
}

impl EngineRun for SqliteRun<'_> {
    type Environment = RunEnvironment;
    type Window = SqliteWindow;
    type Outcome = SlobOutcome;
    type Windows<'a>
        = Windows<'a>
    where
        Self: 'a;

    /// Nothing to connect to: the file is opened by each session.
    fn reach(&mut self, _: &mut dyn RunObserver) -> anyhow::Result<()> {
        Ok(())
    }

    fn load(
        &mut self,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<Option<LoadReport>> {
        let load = load(self.config, self.path, observer, interrupt)?;
        self.page_bytes = file_page_bytes(&open_read_only(self.path)?)?;
        Ok(Some(load))
    }

    fn environment(&mut self) -> anyhow::Result<RunEnvironment> {
        let plan = &self.config.driver.plan;
        let unlimited = PageCacheMethod::Unlimited;
        let mut environment = environment(self.path, self.page_bytes, unlimited, plan);
        if let SqliteDatabase::Temporary { work_dir } = &self.config.database {
            environment.work_directory = Some(work_dir.clone());
        }
        Ok(environment)
    }

    fn before_windows(
        &mut self,
        environment: &mut RunEnvironment,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<()> {
        if let PageCacheChoice::Unlimited = self.config.page_cache {
            return Ok(());
        }
        observer.phase(&format!("dropping the file's pages from the page cache (posix_fadvise DONTNEED, then every {} ms)", EVICT_EVERY.as_millis()));
        environment.page_cache = PageCacheMethod::Evicted {
            interval_ms: EVICT_EVERY.as_millis() as u64,
        };
        self.evictor = Some(Evictor::start(self.path)?);
        Ok(())
    }

    fn collectors(&mut self, environment: &RunEnvironment) -> Vec<Box<dyn Collector>> {
        local_collectors(&environment.devices, Vec::new())
    }

    fn windows<'a>(
        &'a mut self,
        environment: &'a RunEnvironment,
        sample_clock: Option<SampleClock>,
    ) -> anyhow::Result<Windows<'a>> {
        let config = self.config;
        let page_bytes = self.page_bytes;
        let plan = &config.driver.plan;
        Ok(Windows {
            opener: SqliteOpener {
                path: self.path,
                cache_kib: config.session_cache_bytes / 1024,
            },
            edges: EdgeTaker {
                version_num: sqlite_version_num(),
                sample_clock,
            },
            devices: &environment.devices,
            page_bytes,
            cache: CacheFit {
                setting: "cache_size (each session's)",
                cache_bytes: config.session_cache_bytes,
                data_set_bytes: data_set_bytes_in_blocks_of(plan, u64::from(page_bytes)),
            },
            tolerate_failures: config.driver.tolerate_failures,
        })
    }

    fn after_windows(&mut self, _: &mut RunEnvironment, _: Option<&mut SqliteWindow>) {
        self.evictor.take().map(Evictor::finish);
    }

    fn outcome(
        self,
        environment: RunEnvironment,
        load: Option<LoadReport>,
        measured: Option<Measured<SqliteWindow>>,
    ) -> SlobOutcome {
        SlobOutcome {
            environment,
            load,
            figures: measured.map(|measured| measured.window.figures),
            kept: None,
            engine_figures: None,
            sweep: None,
        }
    }
}

fn load(
    config: &SqliteRunConfig,
    path: &Path,
    observer: &mut dyn RunObserver,
    interrupt: &AtomicBool,
) -> anyhow::Result<LoadReport> {
    observer.phase("loading the SLOB tables");
    let options = SetupOptions {
        path: path.to_path_buf(),
        plan: config.driver.plan.clone(),
        replace: config.replace,
        page_bytes: config.page_bytes,
    };
    setup(
        &options,
        &mut |progress| observer.loading(progress),
        interrupt,
    )
}
