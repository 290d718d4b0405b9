//! Faulting in a server's shared memory before a window, so that a memory
//! cgroup charges all of it up front: shared memory the server allocated
//! but has not touched is otherwise room the page cache of files takes
//! until the server touches it (3.5 MiB at 32 PostgreSQL sessions), and a
//! limit that leaves no such room lets a server that touches it at once be
//! killed (the kernel cannot reclaim shared memory without swap).
//!
//! For: the shared mappings of one process that are shared memory (an
//! anonymous `MAP_SHARED` mapping, System V segments, POSIX `/dev/shm`
//! objects, memfds), read through `/proc/PID/mem`, which allocates each
//! page missing in the process's own memory cgroup. Reading changes no
//! byte of it.
//!
//! Not for: mappings of regular files (reading those would fill the page
//! cache this is meant to keep small), or choosing a cgroup's limit
//! (`pagecache`, and each engine's run).

use anyhow::{Context, Result};
use std::os::unix::fs::FileExt;

/// The shared-memory ranges of `pid` (from `/proc/PID/maps`).
pub fn shared_memory_ranges(pid: u32) -> Result<Vec<std::ops::Range<u64>>> {
    let path = format!("/proc/{pid}/maps");
    let maps = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    Ok(maps.lines().filter_map(shared_memory_range).collect())
}

/// One `/proc/PID/maps` line's range when it maps shared memory.
fn shared_memory_range(line: &str) -> Option<std::ops::Range<u64>> {
    let mut fields = line.split_whitespace();
    let (range, permissions) = (fields.next()?, fields.next()?);
    let path = fields.nth(3).unwrap_or("");
    let is_shared_memory = ["/dev/zero", "/SYSV", "/dev/shm/", "/memfd:"]
        .iter()
        .any(|prefix| path.starts_with(prefix));
    if !permissions.starts_with('r') || permissions.as_bytes().get(3) != Some(&b's') {
        return None;
    }
    if !is_shared_memory {
        return None;
    }
    let (start, end) = range.split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    (end > start).then_some(start..end)
}

/// Reads every page of `pid`'s shared memory once, so that each is
/// allocated and charged now; returns the bytes read.
pub fn touch_shared_memory(pid: u32) -> Result<u64> {
    let path = format!("/proc/{pid}/mem");
    let memory = std::fs::File::open(&path).with_context(|| format!("opening {path}"))?;
    let mut buffer = vec![0u8; 1 << 20];
    let mut touched = 0u64;
    for range in shared_memory_ranges(pid)? {
        let mut at = range.start;
        while at < range.end {
            let length = ((range.end - at) as usize).min(buffer.len());
            let read = memory
                .read_at(&mut buffer[..length], at)
                .with_context(|| format!("reading {path} at {at:#x}"))?;
            if read == 0 {
                break;
            }
            at += read as u64;
            touched += read as u64;
        }
    }
    Ok(touched)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_shared_memory_mappings_are_taken() {
        let lines = [
            "7f0000000000-7f0008000000 rw-s 00000000 00:01 1034 /dev/zero (deleted)",
            "7f0008000000-7f0008001000 rw-s 00000000 00:01 65536 /SYSV0052e2c1 (deleted)",
            "7f0008001000-7f0008101000 rw-s 00000000 00:19 7 /dev/shm/PostgreSQL.3355",
            "7f0008101000-7f0008201000 rw-s 00000000 00:01 9 /memfd:pool (deleted)",
            "7f0010000000-7f0010100000 r--s 00000000 08:01 1234 /srv/data/base/5/16384",
            "7f0020000000-7f0020100000 rw-p 00000000 00:00 0",
            "7f0030000000-7f0030100000 rw-p 00000000 00:01 1034 /dev/zero (deleted)",
            "7f0040000000-7f0040100000 ---s 00000000 00:01 1034 /dev/zero (deleted)",
        ];
        let ranges: Vec<_> = lines
            .iter()
            .filter_map(|l| shared_memory_range(l))
            .collect();
        assert_eq!(
            ranges,
            vec![
                0x7f0000000000..0x7f0008000000,
                0x7f0008000000..0x7f0008001000,
                0x7f0008001000..0x7f0008101000,
                0x7f0008101000..0x7f0008201000,
            ]
        );
    }

    #[test]
    fn touching_allocates_every_page_of_a_shared_mapping() {
        let length = 8usize << 20;
        let mapped = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                length,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(mapped, libc::MAP_FAILED);
        let resident = || {
            let pages = length / 4096;
            let mut vector = vec![0u8; pages];
            let rc = unsafe { libc::mincore(mapped, length, vector.as_mut_ptr()) };
            assert_eq!(rc, 0);
            vector.iter().filter(|page| *page & 1 == 1).count()
        };
        assert_eq!(resident(), 0, "a new anonymous shared mapping has no pages");
        let touched = touch_shared_memory(std::process::id()).unwrap();
        assert!(touched >= length as u64, "{touched} bytes read");
        assert_eq!(resident(), length / 4096, "every page allocated");
        unsafe { libc::munmap(mapped, length) };
    }
}
