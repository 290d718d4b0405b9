//! Keeping the OS page cache from holding the data set. SQLite reads
//! through the page cache and runs inside strata, so no memory cgroup can
//! be put around it alone; instead the file's cached pages are dropped with
//! `posix_fadvise(POSIX_FADV_DONTNEED)` before the run and again every
//! [`EVICT_EVERY`] during it, so a page read again later is read from the
//! device again, as SLOB intends. Dirty pages are not dropped (the kernel
//! starts writing them back instead).
//!
//! Not for: the WAL (commits write and sync it; readers that need a page
//! from it read it through the cache) or the SQLite page cache of each
//! session (`PRAGMA cache_size`).

use anyhow::Context;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the file's pages are dropped during a run.
pub const EVICT_EVERY: Duration = Duration::from_millis(20);

/// Drops the cached pages of the file at `path`.
pub fn evict(path: &Path) -> anyhow::Result<()> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    evict_file(&file).with_context(|| format!("posix_fadvise DONTNEED on {}", path.display()))
}

fn evict_file(file: &File) -> std::io::Result<()> {
    let result = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    match result {
        0 => Ok(()),
        error => Err(std::io::Error::from_raw_os_error(error)),
    }
}

/// A thread dropping the file's cached pages every [`EVICT_EVERY`].
pub struct Evictor {
    stop: Arc<AtomicBool>,
    evictions: Arc<AtomicU64>,
    handle: JoinHandle<()>,
}

impl Evictor {
    pub fn start(path: &Path) -> anyhow::Result<Evictor> {
        let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
        evict_file(&file)
            .with_context(|| format!("posix_fadvise DONTNEED on {}", path.display()))?;
        let stop = Arc::new(AtomicBool::new(false));
        let evictions = Arc::new(AtomicU64::new(1));
        let (stopping, counting) = (Arc::clone(&stop), Arc::clone(&evictions));
        let handle = std::thread::Builder::new()
            .name("strata-evict".into())
            .spawn(move || {
                while !stopping.load(Ordering::Relaxed) {
                    std::thread::sleep(EVICT_EVERY);
                    if evict_file(&file).is_ok() {
                        counting.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
            .context("starting the page-cache evictor thread")?;
        Ok(Evictor {
            stop,
            evictions,
            handle,
        })
    }

    /// Stops the thread; returns how many times the pages were dropped.
    pub fn finish(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.handle.join();
        self.evictions.load(Ordering::Relaxed)
    }
}
