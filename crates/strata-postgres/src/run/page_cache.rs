//! The throwaway cluster's page cache kept from holding the data set: the
//! memory cgroup's limit at start, measured again once the sessions are
//! connected and held each second through the window from a thread of its
//! own, or the caches dropped where no cgroup can be used.
//!
//! Not for: making the cgroup (strata-db's `pagecache`) or the window
//! itself (`window`).

use crate::cluster::ThrowawayCluster;
use anyhow::Context;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use strata_db::pagecache::{drop_caches, CgroupFiles, PageCacheMethod};
use strata_run::accounting::PageCacheHeld;
use strata_run::outcome::{data_set_bytes, PageCacheChoice, RunObserver};
use strata_slob::schema::SchemaPlan;

pub(super) fn allowed_page_cache(choice: PageCacheChoice, plan: &SchemaPlan) -> Option<u64> {
    match choice {
        PageCacheChoice::Auto => Some((data_set_bytes(plan) / 20).max(CacheLimit::WINDOW_HEADROOM)),
        PageCacheChoice::Limit(bytes) => Some(bytes),
        PageCacheChoice::Unlimited => None,
    }
}

/// The page-cache limit of a throwaway cluster, set from measurements, so
/// that the page cache of the server's files stays at its target at any
/// session count, and the server's own memory always has room (a backend
/// past the limit is killed by the kernel, which takes the server down).
///
/// Once the sessions are connected (for the warm-up), every page of the
/// server's shared memory is touched, so that the cgroup holds all of it;
/// then the limit is what the cgroup holds that is not the page cache of
/// files (the processes' private memory, the kernel's memory for them, the
/// shared memory), plus any shared memory PostgreSQL allocated
/// (`pg_shmem_allocations`) and has not touched, plus the page cache
/// allowed, plus 16 MiB and 512 KiB per session.
///
/// From the window's start, every second, from a thread of its own: the
/// same with the page cache allowed (at least 16 MiB) and nothing per
/// session (touching shared memory can never be what the limit refuses:
/// shared memory cannot be reclaimed, so the kernel would kill).
/// The page cache is the room a backend that grows takes (the kernel
/// reclaims it before it kills), until the next second gives it back: so
/// it is never less than what a server may add in a second (an autovacuum
/// worker's 8 MiB `autovacuum_work_mem`, a sort's `work_mem`).
pub(super) struct CacheLimit<'a> {
    cluster: &'a ThrowawayCluster,
    allowed_bytes: u64,
    sessions: u64,
    /// All shared memory PostgreSQL allocated (`pg_shmem_allocations`),
    /// read once the sessions are connected.
    allocated_shared_bytes: std::cell::Cell<u64>,
    /// What the window's holder saw.
    held_window: std::cell::RefCell<HeldWindow>,
}

impl CacheLimit<'_> {
    const WARMUP_GROWTH_PER_SESSION: u64 = 512 << 10;
    /// The least page cache the window allows: the room a growing server
    /// gets before the next second's limit.
    const WINDOW_HEADROOM: u64 = 16 << 20;

    pub(super) fn new(
        cluster: &ThrowawayCluster,
        allowed_bytes: u64,
        sessions: u64,
    ) -> CacheLimit<'_> {
        CacheLimit {
            cluster,
            allowed_bytes,
            sessions,
            allocated_shared_bytes: Default::default(),
            held_window: Default::default(),
        }
    }

    /// The limit for the warm-up, once the sessions are connected.
    pub(super) async fn apply(&self, client: &tokio_postgres::Client) -> anyhow::Result<()> {
        let Some(cgroup) = self.cluster.memory_cgroup() else {
            return Ok(());
        };
        let postmaster = self.cluster.postmaster_pid();
        strata_db::shared_memory::touch_shared_memory(postmaster)
            .context("faulting in the server's shared memory")?;
        let row = client
            .query_one(
                "SELECT sum(allocated_size)::bigint FROM pg_shmem_allocations",
                &[],
            )
            .await
            .context("reading pg_shmem_allocations")?;
        let allocated_bytes = row.get::<_, i64>(0).max(0) as u64;
        self.allocated_shared_bytes.set(allocated_bytes);
        let margin = (16 << 20) + self.sessions * Self::WARMUP_GROWTH_PER_SESSION;
        cgroup.set_limit(server_limit(
            cgroup,
            allocated_bytes,
            self.allowed_bytes + margin,
        ))
    }

    /// The page cache the window allows: the allowed, and never less than
    /// the room a growing server needs.
    fn window_target_bytes(&self) -> u64 {
        self.allowed_bytes.max(Self::WINDOW_HEADROOM)
    }

    /// Holds the page cache at its target from `from` (the window's start)
    /// to the window's end: once at `from`, then every second, from a
    /// thread of its own, so that a runtime busy with hundreds of sessions
    /// (which takes the start edge late) never delays it.
    pub(super) fn hold_through_the_window(
        &self,
        from: std::time::Instant,
    ) -> Option<PageCacheHolder> {
        let cgroup = self.cluster.memory_cgroup()?;
        let limit = WindowLimit {
            allocated_shared_bytes: self.allocated_shared_bytes.get(),
            allowed_bytes: self.window_target_bytes(),
        };
        Some(PageCacheHolder::start(cgroup.files(), limit, from))
    }

    /// Keeps what the window's holder saw.
    pub(super) fn keep_what_was_held(&self, holder: PageCacheHolder) {
        *self.held_window.borrow_mut() = holder.finish();
    }

    /// The page cache the window held beside its target.
    pub(super) fn held(&self) -> Option<PageCacheHeld> {
        let held = self.held_window.borrow();
        let samples = &held.file_cache_samples;
        let max_bytes = *samples.iter().max()?;
        Some(PageCacheHeld {
            target_bytes: self.window_target_bytes(),
            mean_bytes: samples.iter().sum::<u64>() / samples.len() as u64,
            max_bytes,
            samples: samples.len(),
            first_oom_kill_s: held.first_oom_kill_s,
            per_second_bytes: samples.clone(),
        })
    }

    pub(super) fn method(&self) -> PageCacheMethod {
        self.cluster.memory_cgroup().map_or_else(
            || self.cluster.page_cache().clone(),
            |cgroup| cgroup.method(),
        )
    }
}

/// Private memory a backend uses, which the memory cgroup charges beside
/// the page cache (measured: about 1.5 MiB per idle backend).
const BACKEND_MEMORY_BYTES: u64 = 2 << 20;

/// Memory a loader may use while it builds an index or vacuums
/// (maintenance_work_mem, 64 MiB by default, and its working set).
const LOADER_MEMORY_BYTES: u64 = 192 << 20;

/// What the cgroup allows at start on top of shared_buffers and the server's
/// fixed overhead: the page cache the user allows plus every session's
/// backend and every loader's working memory, so the load and the
/// connecting sessions are never squeezed. `tighten_page_cache` replaces it
/// with a measured limit before the run.
pub(super) fn page_cache_limit(
    choice: PageCacheChoice,
    plan: &SchemaPlan,
    sessions: u32,
    loaders: usize,
) -> Option<u64> {
    let working = u64::from(sessions) * BACKEND_MEMORY_BYTES + loaders as u64 * LOADER_MEMORY_BYTES;
    allowed_page_cache(choice, plan).map(|allowed| allowed + working)
}

/// Makes sure the page cache does not hold the data set when the run starts.
pub(super) fn keep_cache_out(
    choice: PageCacheChoice,
    method: &PageCacheMethod,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<PageCacheMethod> {
    match (choice, method) {
        (PageCacheChoice::Unlimited, _) => Ok(PageCacheMethod::Unlimited),
        (_, PageCacheMethod::CgroupV1 { .. } | PageCacheMethod::CgroupV2 { .. }) => {
            Ok(method.clone())
        }
        _ => {
            observer.phase(
                "dropping the page cache before the run (no memory cgroup limits this server)",
            );
            drop_caches().context("--page-cache-limit: cannot limit this server's page cache with a cgroup, and dropping caches failed; run as root or use --page-cache-limit none")?;
            Ok(PageCacheMethod::DropCaches)
        }
    }
}

/// The window's limit: all shared memory and the page cache allowed beside
/// the cgroup's private memory ([`server_limit`]), measured again each
/// second. No room per session beside the target: that room would become
/// page cache (41.5 MiB for a 25.6 MiB target at 1,000 sessions); a backend
/// that grows within a second takes it from the page cache, which the next
/// second gives back.
struct WindowLimit {
    allocated_shared_bytes: u64,
    allowed_bytes: u64,
}

impl WindowLimit {
    /// Sets the limit from what the cgroup holds now; returns the page cache
    /// of files it then holds.
    fn apply(&self, cgroup: &CgroupFiles) -> anyhow::Result<u64> {
        cgroup.set_limit(server_limit(
            cgroup,
            self.allocated_shared_bytes,
            self.allowed_bytes,
        ))?;
        Ok(cgroup.file_cache_bytes().unwrap_or(0))
    }
}

/// A cgroup limit that leaves `room_bytes` for the page cache of files:
/// what the cgroup holds besides that page cache (private memory, the
/// kernel's memory for it, and the shared memory touched), plus the shared
/// memory PostgreSQL allocated and has not touched (touching it can never
/// be what the limit refuses: the kernel cannot reclaim shared memory, so
/// it would kill), plus `room_bytes`. [`CacheLimit::apply`] touches all of
/// it first, so that no untouched room becomes page cache (it did: 29.0 MiB
/// for a 25.6 MiB target at 32 sessions).
fn server_limit(cgroup: &CgroupFiles, allocated_shared_bytes: u64, room_bytes: u64) -> u64 {
    let usage_bytes = cgroup.usage_bytes().unwrap_or(0);
    let held_bytes = usage_bytes.saturating_sub(cgroup.file_cache_bytes().unwrap_or(0));
    let untouched_bytes = allocated_shared_bytes.saturating_sub(cgroup.shmem_bytes().unwrap_or(0));
    held_bytes + untouched_bytes + room_bytes
}

/// Applies `limit` and keeps the page cache it holds; says once when it
/// cannot.
fn hold_once(limit: &WindowLimit, cgroup: &CgroupFiles, samples: &mut Vec<u64>, warned: &mut bool) {
    match limit.apply(cgroup) {
        Ok(bytes) => samples.push(bytes),
        Err(error) if !std::mem::replace(warned, true) => {
            let _ = std::io::Write::write_fmt(
                &mut std::io::stderr().lock(),
                format_args!("strata: warning: could not hold the page-cache limit: {error:#}\n"),
            );
        }
        Err(_) => {}
    }
}

/// The thread that holds the page cache through the window, and the page
/// cache it saw each second.
pub(super) struct PageCacheHolder {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<HeldWindow>,
}

/// What the holder saw: the page cache each second, and when the cgroup's
/// OOM kill count first grew.
#[derive(Default)]
struct HeldWindow {
    file_cache_samples: Vec<u64>,
    first_oom_kill_s: Option<f64>,
}

impl PageCacheHolder {
    /// Applies the limit at `from`, then each second after it until
    /// `finish`, all from its own thread: lowering a cgroup v1 limit below
    /// what the cgroup holds reclaims in the writer until it wins the race
    /// with the sessions' reads (seconds, seen here), which must never hold
    /// up the runtime that takes the window's edges.
    fn start(cgroup: CgroupFiles, limit: WindowLimit, from: std::time::Instant) -> PageCacheHolder {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            // Ahead of a thousand sessions on two CPUs, or the limit is set
            // seconds apart and the page cache fills what they free between.
            unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, -20) };
            // True once `moment` has come, even when the window ended at
            // the same instant (its last second is held and sampled);
            // false when stopped before it.
            let wait_until = |moment: std::time::Instant| {
                while std::time::Instant::now() < moment && !stopped.load(Ordering::Relaxed) {
                    std::thread::park_timeout(
                        moment.saturating_duration_since(std::time::Instant::now()),
                    );
                }
                std::time::Instant::now() >= moment
            };
            let mut held = HeldWindow::default();
            let mut warned = false;
            let mut next = from;
            if !wait_until(next) {
                return held;
            }
            let kills_at_start = cgroup.oom_kills();
            while wait_until(next) {
                hold_once(&limit, &cgroup, &mut held.file_cache_samples, &mut warned);
                if held.first_oom_kill_s.is_none() && cgroup.oom_kills() > kills_at_start {
                    held.first_oom_kill_s = Some(from.elapsed().as_secs_f64());
                }
                next += Duration::from_secs(1);
            }
            held
        });
        PageCacheHolder { stop, thread }
    }

    fn finish(self) -> HeldWindow {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.thread().unpark();
        self.thread.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four schemas of `blocks_per_schema` blocks of 8 KiB.
    fn plan(blocks_per_schema: u64) -> SchemaPlan {
        strata_testkit::slob::plan(4, blocks_per_schema)
    }

    #[test]
    fn auto_allows_a_twentieth_of_the_data_set_and_never_less_than_the_headroom() {
        let large = plan(1 << 20);
        assert_eq!(
            allowed_page_cache(PageCacheChoice::Auto, &large),
            Some((4u64 << 20) * 8192 / 20)
        );
        let small = plan(1000);
        assert_eq!(
            allowed_page_cache(PageCacheChoice::Auto, &small),
            Some(CacheLimit::WINDOW_HEADROOM)
        );
        let limit = PageCacheChoice::Limit(1 << 30);
        assert_eq!(allowed_page_cache(limit, &small), Some(1 << 30));
        assert_eq!(allowed_page_cache(PageCacheChoice::Unlimited, &small), None);
    }

    #[test]
    fn the_limit_at_start_leaves_room_for_every_backend_and_loader() {
        let limit = PageCacheChoice::Limit(64 << 20);
        let at_start = page_cache_limit(limit, &plan(1000), 10, 2);
        assert_eq!(
            at_start,
            Some((64 << 20) + 10 * BACKEND_MEMORY_BYTES + 2 * LOADER_MEMORY_BYTES)
        );
        assert_eq!(
            page_cache_limit(PageCacheChoice::Unlimited, &plan(1000), 10, 2),
            None
        );
    }
}
