//! Which file a block request touched: the files under a directory by
//! where their bytes lie on the disk (each file's extents from the FIEMAP
//! ioctl, what `filefrag -v` shows, shifted by its partition's start), so
//! that a traced request's disk and sector name the file and the offset in
//! it.
//!
//! Not for: tracing, or a filesystem on a device-mapper or md device
//! (their requests reach other disks: no file is named), or a filesystem
//! without FIEMAP (none is named either).

use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// `_IOWR('f', 11, struct fiemap)`.
const FS_IOC_FIEMAP: u64 = 0xC020_660B;
const FIEMAP_HEADER_BYTES: usize = 32;
const FIEMAP_EXTENT_BYTES: usize = 56;
const EXTENTS_PER_CALL: usize = 512;
const FIEMAP_EXTENT_LAST: u32 = 0x1;
/// The most files a directory's map is made of.
const MOST_FILES: usize = 100_000;

/// One stretch of a file on its filesystem's device, bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extent {
    pub logical: u64,
    pub physical: u64,
    pub length: u64,
}

/// A file's extents (`FS_IOC_FIEMAP`); an error where the filesystem has
/// no FIEMAP or the file cannot be opened.
pub fn extents(path: &Path) -> std::io::Result<Vec<Extent>> {
    let file = std::fs::File::open(path)?;
    let mut found = Vec::new();
    let mut start = 0u64;
    loop {
        let mut buffer =
            vec![0u64; (FIEMAP_HEADER_BYTES + EXTENTS_PER_CALL * FIEMAP_EXTENT_BYTES) / 8];
        buffer[0] = start;
        buffer[1] = u64::MAX - start;
        // fm_flags 0, fm_mapped_extents 0, fm_extent_count, fm_reserved 0.
        buffer[3] = EXTENTS_PER_CALL as u64;
        // SAFETY: the buffer is a `struct fiemap` with room for
        // EXTENTS_PER_CALL extents, as fm_extent_count says.
        let result =
            unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP as _, buffer.as_mut_ptr()) };
        if result != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mapped = (buffer[2] >> 32) as usize;
        let mut last = mapped == 0;
        for index in 0..mapped.min(EXTENTS_PER_CALL) {
            let at = (FIEMAP_HEADER_BYTES + index * FIEMAP_EXTENT_BYTES) / 8;
            let extent = Extent {
                logical: buffer[at],
                physical: buffer[at + 1],
                length: buffer[at + 2],
            };
            let flags = buffer[at + 5] as u32;
            last |= flags & FIEMAP_EXTENT_LAST != 0;
            start = extent.logical + extent.length;
            found.push(extent);
        }
        if last || mapped < EXTENTS_PER_CALL {
            return Ok(found);
        }
    }
}

/// The files under a directory by where they lie on their disk.
#[derive(Debug, Default)]
pub struct FileMap {
    /// The disk the directory's filesystem is on (its name, as
    /// /proc/diskstats has it).
    pub disk: String,
    files: Vec<PathBuf>,
    /// (first byte on the disk, one past the last, the file's offset
    /// there, index into `files`), by the first byte.
    ranges: Vec<(u64, u64, u64, usize)>,
}

impl FileMap {
    /// Every regular file under `dir` (its own filesystem only); `None`
    /// where its device is not a disk or a disk's partition.
    pub fn of(dir: &Path) -> Option<FileMap> {
        let (disk, start) = crate::blockdev::position_on_disk(dir)?;
        let mut map = FileMap {
            disk,
            ..FileMap::default()
        };
        let device = std::fs::metadata(dir).ok()?.dev();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(at) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&at) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(metadata) = entry.metadata() else {
                    continue;
                };
                if metadata.dev() != device || map.files.len() >= MOST_FILES {
                    continue;
                }
                if metadata.is_dir() {
                    pending.push(entry.path());
                } else if metadata.is_file() {
                    map.add(entry.path(), start);
                }
            }
        }
        map.ranges.sort_by_key(|range| range.0);
        Some(map)
    }

    fn add(&mut self, path: PathBuf, partition_start: u64) {
        let Ok(extents) = extents(&path) else {
            return;
        };
        let index = self.files.len();
        self.files.push(path);
        for extent in extents {
            let first = partition_start + extent.physical;
            self.ranges
                .push((first, first + extent.length, extent.logical, index));
        }
    }

    /// The file holding byte `at` of the disk, and the byte's offset in it.
    pub fn file_at(&self, at: u64) -> Option<(&Path, u64)> {
        let after = self.ranges.partition_point(|range| range.0 <= at);
        let (first, end, logical, index) = *self.ranges.get(after.checked_sub(1)?)?;
        (at < end).then(|| (self.files[index].as_path(), logical + (at - first)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_file_is_found_at_its_own_extents() {
        let dir = std::env::temp_dir().join(format!("strata-extents-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("data");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        std::process::Command::new("sync").status().unwrap();
        let found = extents(&path).expect("FIEMAP on this filesystem");
        let bytes: u64 = found.iter().map(|extent| extent.length).sum();
        assert!(bytes >= 1 << 20, "{found:?}");
        let map = FileMap::of(&dir).expect("a disk under the temporary directory");
        let (_, start) = crate::blockdev::position_on_disk(&dir).unwrap();
        let middle = found[0].physical + start + 4096;
        let (file, offset) = map.file_at(middle).unwrap();
        assert_eq!((file, offset), (path.as_path(), found[0].logical + 4096));
        assert!(map.file_at(u64::MAX - 1).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
