//! Keeping the operating system's page cache from holding the data set, so
//! that what the database counts as a read reaches the storage under test.
//!
//! For: a memory cgroup (v2, else v1) with a limit that the server's
//! processes run in, or dropping the page cache where cgroups are unusable.
//!
//! Not for: measuring memory or the page cache of the whole host
//! (`strata-probe` reads `/proc/meminfo`), or choosing the limit.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How the page cache is kept from holding the data set during a run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum PageCacheMethod {
    CgroupV2 {
        path: PathBuf,
        limit_bytes: u64,
    },
    CgroupV1 {
        path: PathBuf,
        limit_bytes: u64,
    },
    /// Cgroups are unusable: the caller calls [`drop_caches`] before the run.
    DropCaches,
    /// The database file's pages are dropped from the page cache
    /// (`posix_fadvise(POSIX_FADV_DONTNEED)`) before the run and every
    /// `interval_ms` during it: for an engine inside strata's own process.
    Evicted {
        interval_ms: u64,
    },
    /// The database opens its data files with O_DIRECT: reads never pass
    /// through the page cache (`how` says which setting does it).
    DirectIo {
        how: String,
    },
    Unlimited,
    /// The server is on another host: its page cache is neither limited nor
    /// dropped from here (what reached its devices is its agent's to say).
    OtherHost,
}

/// What a server's processes use besides shared_buffers and the page cache:
/// the part of PostgreSQL's other shared memory they touch (about 40 MiB
/// with max_connections = 1100) and the private memory of the postmaster,
/// its background processes and a few backends.
pub const SERVER_PROCESS_OVERHEAD_BYTES: u64 = 64 << 20;

/// The memory limit of a cgroup holding a PostgreSQL server whose page cache
/// may reach `page_cache_limit_bytes`:
/// `shared_buffers_bytes + SERVER_PROCESS_OVERHEAD_BYTES + page_cache_limit_bytes`.
///
/// A cgroup's limit covers every page charged to its processes: the page
/// cache they read in, their private memory, and the shared memory they
/// touch, shared_buffers included (the kernel keeps shared memory in the
/// page cache too).
///
/// The figure is approximate both ways. Until shared_buffers fill up, the
/// page cache may use the untouched part. Each backend beyond a few adds its
/// private memory (1–3 MiB idle, more while sorting), which the kernel takes
/// from the page cache; once private memory alone passes the limit, the
/// kernel's OOM killer ends a backend. Many sessions need a larger limit.
pub fn server_memory_limit_bytes(shared_buffers_bytes: u64, page_cache_limit_bytes: u64) -> u64 {
    shared_buffers_bytes
        .saturating_add(SERVER_PROCESS_OVERHEAD_BYTES)
        .saturating_add(page_cache_limit_bytes)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum CgroupVersion {
    V1,
    V2,
}

impl CgroupVersion {
    fn limit_file(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "memory.limit_in_bytes",
            CgroupVersion::V2 => "memory.max",
        }
    }

    fn usage_file(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "memory.usage_in_bytes",
            CgroupVersion::V2 => "memory.current",
        }
    }

    /// `memory.stat` keys for the page cache, in order of preference.
    fn page_cache_keys(self) -> &'static [&'static str] {
        match self {
            CgroupVersion::V1 => &["total_cache", "cache"],
            CgroupVersion::V2 => &["file"],
        }
    }
}

/// A memory cgroup created by strata; removed on drop. Its files (limit,
/// usage, statistics) are read and written through [`CgroupFiles`].
#[derive(Debug)]
pub struct MemoryCgroup {
    files: CgroupFiles,
    procs_file: PathBuf,
    removed: bool,
}

/// The files of a memory cgroup: its limit, usage and statistics. A clone
/// reads and sets the same cgroup (from another thread, say) and shares its
/// record of the limit; it never removes the cgroup.
#[derive(Clone, Debug)]
pub struct CgroupFiles {
    dir: PathBuf,
    version: CgroupVersion,
    limit_bytes: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl std::ops::Deref for MemoryCgroup {
    type Target = CgroupFiles;

    fn deref(&self) -> &CgroupFiles {
        &self.files
    }
}

impl MemoryCgroup {
    /// Creates `<cgroup v2 mount>/<name>` when the v2 memory controller is
    /// available (enabling it in the mount root's `cgroup.subtree_control`
    /// when needed), else `<v1 memory mount>/<name>`, and sets its limit.
    pub fn create(name: &str, limit_bytes: u64) -> Result<MemoryCgroup> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            bail!("invalid cgroup name {name:?}: must be one path component");
        }
        let mounts = CgroupMounts::read()?;
        let mut failures = Vec::new();
        match &mounts.v2 {
            Some(root) => match Self::create_in(root, CgroupVersion::V2, name, limit_bytes) {
                Ok(cgroup) => return Ok(cgroup),
                Err(error) => failures.push(format!("cgroup v2: {error:#}")),
            },
            None => failures.push("cgroup v2: not mounted".to_string()),
        }
        match &mounts.v1_memory {
            Some(root) => match Self::create_in(root, CgroupVersion::V1, name, limit_bytes) {
                Ok(cgroup) => return Ok(cgroup),
                Err(error) => failures.push(format!("cgroup v1: {error:#}")),
            },
            None => failures.push("cgroup v1: no memory controller mounted".to_string()),
        }
        bail!(
            "cannot create memory cgroup {name:?}: {}",
            failures.join("; ")
        )
    }

    fn create_in(
        root: &Path,
        version: CgroupVersion,
        name: &str,
        limit_bytes: u64,
    ) -> Result<MemoryCgroup> {
        if version == CgroupVersion::V2 {
            enable_v2_memory_controller(root)?;
        }
        let dir = root.join(name);
        std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let cgroup = MemoryCgroup {
            procs_file: dir.join("cgroup.procs"),
            files: CgroupFiles {
                dir,
                version,
                limit_bytes: std::sync::Arc::new(limit_bytes.into()),
            },
            removed: false,
        };
        cgroup.set_limit(limit_bytes)?;
        Ok(cgroup)
    }

    /// Write a pid here to move that process into the cgroup.
    pub fn procs_file(&self) -> &Path {
        &self.procs_file
    }

    /// Its files, to read and set from elsewhere.
    pub fn files(&self) -> CgroupFiles {
        self.files.clone()
    }

    /// Leaves the cgroup in place (for a server that keeps running) and
    /// returns its directory.
    pub fn keep(mut self) -> PathBuf {
        self.removed = true;
        self.files.dir.clone()
    }

    /// Moves any remaining processes to the parent cgroup and removes the
    /// directory.
    pub fn remove(mut self) -> Result<()> {
        self.remove_now()
    }

    fn remove_now(&mut self) -> Result<()> {
        if self.removed {
            return Ok(());
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            self.move_processes_to_parent();
            match std::fs::remove_dir(&self.dir) {
                Ok(()) => break,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => break,
                Err(error) if Instant::now() >= deadline => {
                    return Err(error).with_context(|| format!("removing {}", self.dir.display()))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        self.removed = true;
        Ok(())
    }

    fn move_processes_to_parent(&self) {
        let Some(parent) = self.dir.parent() else {
            return;
        };
        let parent_procs = parent.join("cgroup.procs");
        let pids = std::fs::read_to_string(&self.procs_file).unwrap_or_default();
        for pid in pids.split_whitespace() {
            let _ = std::fs::write(&parent_procs, pid);
        }
    }
}

/// Removes the memory cgroups named `<prefix><pid>-…` whose strata is gone
/// and that hold no process (a cgroup still in use, a kept server's, stays),
/// in the v2 and v1 hierarchies; returns those removed.
pub fn remove_abandoned_cgroups(prefix: &str) -> Vec<crate::leftovers::Leftover> {
    let Ok(mounts) = CgroupMounts::read() else {
        return Vec::new();
    };
    let roots = [mounts.v2, mounts.v1_memory];
    roots
        .iter()
        .flatten()
        .flat_map(|root| crate::leftovers::abandoned(root, prefix))
        .filter(|leftover| std::fs::remove_dir(&leftover.path).is_ok())
        .collect()
}

impl CgroupFiles {
    pub fn path(&self) -> &Path {
        &self.dir
    }

    pub fn limit_bytes(&self) -> u64 {
        self.limit_bytes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sets a new limit; a lower one makes the kernel reclaim page cache
    /// down to it at once (it fails when private memory alone is above it).
    pub fn set_limit(&self, limit_bytes: u64) -> Result<()> {
        let limit_file = self.dir.join(self.version.limit_file());
        std::fs::write(&limit_file, limit_bytes.to_string())
            .with_context(|| format!("writing {limit_bytes} to {}", limit_file.display()))?;
        self.limit_bytes
            .store(limit_bytes, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Private (anonymous) memory of the cgroup's processes now.
    pub fn anon_bytes(&self) -> Option<u64> {
        let stat = std::fs::read_to_string(self.dir.join("memory.stat")).ok()?;
        let key = match self.version {
            CgroupVersion::V1 => "rss",
            CgroupVersion::V2 => "anon",
        };
        memory_stat_value(&stat, key)
    }

    pub fn method(&self) -> PageCacheMethod {
        let path = self.dir.clone();
        let limit_bytes = self.limit_bytes();
        match self.version {
            CgroupVersion::V1 => PageCacheMethod::CgroupV1 { path, limit_bytes },
            CgroupVersion::V2 => PageCacheMethod::CgroupV2 { path, limit_bytes },
        }
    }

    /// All memory charged to the cgroup now.
    pub fn usage_bytes(&self) -> Option<u64> {
        let text = std::fs::read_to_string(self.dir.join(self.version.usage_file())).ok()?;
        text.trim().parse().ok()
    }

    /// Page cache charged to the cgroup now (includes shared memory, which
    /// the kernel keeps in the page cache too).
    pub fn page_cache_bytes(&self) -> Option<u64> {
        let stat = std::fs::read_to_string(self.dir.join("memory.stat")).ok()?;
        self.cache_in(&stat)
    }

    /// Page cache of files alone: the page cache less the shared memory the
    /// kernel keeps in it (shared_buffers once touched). `memory.stat`'s
    /// `file − shmem` (v2) or `cache − shmem` (v1).
    pub fn file_cache_bytes(&self) -> Option<u64> {
        let stat = std::fs::read_to_string(self.dir.join("memory.stat")).ok()?;
        Some(self.cache_in(&stat)?.saturating_sub(self.shmem_in(&stat)))
    }

    /// Shared memory charged to the cgroup now (touched; kept in the page
    /// cache, never reclaimed without swap).
    pub fn shmem_bytes(&self) -> Option<u64> {
        let stat = std::fs::read_to_string(self.dir.join("memory.stat")).ok()?;
        Some(self.shmem_in(&stat))
    }

    fn cache_in(&self, stat: &str) -> Option<u64> {
        self.version
            .page_cache_keys()
            .iter()
            .find_map(|key| memory_stat_value(stat, key))
    }

    fn shmem_in(&self, stat: &str) -> u64 {
        let key = match self.version {
            CgroupVersion::V1 => "total_shmem",
            CgroupVersion::V2 => "shmem",
        };
        memory_stat_value(stat, key)
            .or_else(|| memory_stat_value(stat, "shmem"))
            .unwrap_or(0)
    }

    /// Processes the kernel's OOM killer ended inside this cgroup since it
    /// was made: `oom_kill` of `memory.events` (v2) or `memory.oom_control`
    /// (v1, from Linux 4.13); `None` when the kernel does not say.
    pub fn oom_kills(&self) -> Option<u64> {
        let file = match self.version {
            CgroupVersion::V1 => "memory.oom_control",
            CgroupVersion::V2 => "memory.events",
        };
        let text = std::fs::read_to_string(self.dir.join(file)).ok()?;
        memory_stat_value(&text, "oom_kill")
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        let _ = self.remove_now();
    }
}

fn memory_stat_value(stat: &str, key: &str) -> Option<u64> {
    stat.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok()).flatten()
    })
}

fn enable_v2_memory_controller(root: &Path) -> Result<()> {
    let controllers_file = root.join("cgroup.controllers");
    let controllers = std::fs::read_to_string(&controllers_file)
        .with_context(|| format!("reading {}", controllers_file.display()))?;
    if !controllers.split_whitespace().any(|c| c == "memory") {
        bail!(
            "memory controller not available in {} (has: {})",
            controllers_file.display(),
            controllers.trim()
        );
    }
    let subtree_file = root.join("cgroup.subtree_control");
    let subtree = std::fs::read_to_string(&subtree_file)
        .with_context(|| format!("reading {}", subtree_file.display()))?;
    if !subtree.split_whitespace().any(|c| c == "memory") {
        std::fs::write(&subtree_file, "+memory")
            .with_context(|| format!("writing +memory to {}", subtree_file.display()))?;
    }
    Ok(())
}

/// Where the cgroup hierarchies that can limit memory are mounted.
struct CgroupMounts {
    v2: Option<PathBuf>,
    v1_memory: Option<PathBuf>,
}

impl CgroupMounts {
    fn read() -> Result<CgroupMounts> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
            .context("reading /proc/self/mountinfo")?;
        Ok(Self::parse(&mountinfo))
    }

    /// `/proc/self/mountinfo` lines: `id parent dev root mountpoint opts
    /// [optional fields] - fstype source superopts`.
    fn parse(mountinfo: &str) -> CgroupMounts {
        let mut mounts = CgroupMounts {
            v2: None,
            v1_memory: None,
        };
        for line in mountinfo.lines() {
            let Some((before, after)) = line.split_once(" - ") else {
                continue;
            };
            let Some(mount_point) = before.split(' ').nth(4) else {
                continue;
            };
            let mut tail = after.split(' ');
            let fstype = tail.next().unwrap_or_default();
            let super_options = tail.nth(1).unwrap_or_default();
            let mount_point = PathBuf::from(unescape_mountinfo(mount_point));
            match fstype {
                "cgroup2" if mounts.v2.is_none() => mounts.v2 = Some(mount_point),
                "cgroup" if super_options.split(',').any(|o| o == "memory") => {
                    mounts.v1_memory.get_or_insert(mount_point);
                }
                _ => {}
            }
        }
        mounts
    }
}

/// mountinfo writes space, tab, newline and backslash as `\ooo` octal.
fn unescape_mountinfo(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|digits| {
            let text = std::str::from_utf8(digits).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Writes dirty pages back (`sync`) and drops the clean page cache, dentries
/// and inodes (`3` into `/proc/sys/vm/drop_caches`). Needs root.
pub fn drop_caches() -> Result<()> {
    let euid = unsafe { libc::geteuid() };
    if euid != 0 {
        bail!(
            "dropping the page cache needs root: /proc/sys/vm/drop_caches is writable only by \
             root, and strata runs as uid {euid}"
        );
    }
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3").context("writing 3 to /proc/sys/vm/drop_caches")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cgroup files strata reads under garbage: `/proc/self/mountinfo`
    /// and `memory.stat` mutated (cut, spans deleted and duplicated, huge
    /// numbers, `\ooo` escapes broken, non-UTF-8 bytes) never panic.
    #[test]
    fn cgroup_parsers_never_panic_on_mutated_files() {
        use strata_core::fuzz::{mutate, run, FuzzBudget};
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let stat = "cache 1048576\nrss 4096\nfile 8192\nactive_file 42\n";
        assert_eq!(memory_stat_value(stat, "file"), Some(8192));
        for (target, seed) in [
            ("mountinfo cgroups", mountinfo.as_str()),
            ("memory.stat", stat),
        ] {
            let report = run(
                target,
                &FuzzBudget::from_env(2_000),
                |rng| mutate(seed.as_bytes(), rng),
                |bytes| {
                    let text = String::from_utf8_lossy(bytes);
                    CgroupMounts::parse(&text);
                    unescape_mountinfo(&text);
                    memory_stat_value(&text, "file");
                },
            );
            assert_eq!(report.crash_count, 0, "{target}: {:?}", report.crashes);
        }
    }

    #[test]
    fn mountinfo_finds_v2_and_v1_memory_mounts() {
        let mountinfo = "\
30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw,relatime shared:5 - cgroup2 cgroup2 rw
34 30 0:30 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 30 0:31 / /sys/fs/cgroup/my\\040memory rw,relatime - cgroup cgroup rw,memory
";
        let mounts = CgroupMounts::parse(mountinfo);
        assert_eq!(mounts.v2, Some(PathBuf::from("/sys/fs/cgroup/unified")));
        assert_eq!(
            mounts.v1_memory,
            Some(PathBuf::from("/sys/fs/cgroup/my memory"))
        );
    }

    #[test]
    fn memory_stat_reads_exact_keys_only() {
        let stat = "cache 8192\nrss 4096\ntotal_cache 12288\nfile_mapped 1\nfile 77\n";
        assert_eq!(memory_stat_value(stat, "cache"), Some(8192));
        assert_eq!(memory_stat_value(stat, "total_cache"), Some(12288));
        assert_eq!(memory_stat_value(stat, "file"), Some(77));
        assert_eq!(memory_stat_value(stat, "shmem"), None);
    }

    #[test]
    fn memory_limit_adds_shared_buffers_and_overhead() {
        assert_eq!(
            server_memory_limit_bytes(128 << 20, 32 << 20),
            (128 + 64 + 32) << 20
        );
    }
}
