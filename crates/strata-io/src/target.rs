//! Targets: the file or block device that I/O goes to. Creates and fills
//! test files (random data, so compression and thin provisioning can't fake
//! reads), remembers which files strata made (an extended attribute), and
//! opens targets with the flags a workload needs, turning the kernel's
//! refusals into errors that say what to do.
//!
//! Not for: deciding whether a block device may be written; that check lives
//! in `strata_probe::safety` and must run before a target is opened for writes.

use crate::buffer::AlignedBuffer;
use anyhow::{bail, Context};
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Set on every file strata created; its value is "filled" once the file
/// holds random data from end to end.
const MARK_ATTRIBUTE: &str = "user.strata.target";
const FILL_CHUNK: usize = 4 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    File,
    BlockDevice,
}

/// What kind of thing is at `path`, if anything.
pub fn kind_of(path: &Path) -> anyhow::Result<Option<TargetKind>> {
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.file_type().is_block_device() => Ok(Some(TargetKind::BlockDevice)),
        Ok(metadata) if metadata.is_file() => Ok(Some(TargetKind::File)),
        Ok(_) => bail!(
            "{} is neither a regular file nor a block device",
            path.display()
        ),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("checking {}", path.display())),
    }
}

fn read_mark(path: &Path) -> Option<String> {
    let path_c = CString::new(path.as_os_str().as_bytes()).ok()?;
    let name = CString::new(MARK_ATTRIBUTE).ok()?;
    let mut value = [0u8; 64];
    let len = unsafe {
        libc::getxattr(
            path_c.as_ptr(),
            name.as_ptr(),
            value.as_mut_ptr().cast(),
            value.len(),
        )
    };
    (len >= 0).then(|| String::from_utf8_lossy(&value[..len as usize]).into_owned())
}

fn write_mark(file: &File, value: &str) -> io::Result<()> {
    let name = CString::new(MARK_ATTRIBUTE).expect("constant has no NUL");
    let result = unsafe {
        libc::fsetxattr(
            file.as_raw_fd(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether strata created the file at `path` (and so may write to it).
pub fn created_by_strata(path: &Path) -> bool {
    read_mark(path).is_some()
}

/// Bytes free for an unprivileged writer on the filesystem holding `dir`.
pub fn free_bytes(dir: &Path) -> anyhow::Result<u64> {
    let path_c = CString::new(dir.as_os_str().as_bytes())?;
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path_c.as_ptr(), &mut stat) } != 0 {
        return Err(io::Error::last_os_error())
            .with_context(|| format!("reading free space of {}", dir.display()));
    }
    Ok(stat.f_bavail as u64 * stat.f_frsize as u64)
}

/// Refuses a file of `size` bytes that would not fit in `dir`.
pub fn check_free_space(dir: &Path, size: u64) -> anyhow::Result<()> {
    let free = free_bytes(dir)?;
    if size > free {
        bail!(
            "--size {} is larger than the free space on {} ({})",
            strata_core::units::format_size(size),
            dir.display(),
            strata_core::units::format_size(free)
        );
    }
    Ok(())
}

/// Refuses a directory whose filesystem does not do O_DIRECT, by opening a
/// scratch file there with it (the file is removed at once).
pub fn check_direct_io(dir: &Path) -> anyhow::Result<()> {
    let probe = TemporaryFile::new_in(dir)?;
    File::create(probe.path()).with_context(|| format!("creating a file in {}", dir.display()))?;
    open_target(probe.path(), true, true, false).map(drop)
}

/// How a prepared file came to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preparation {
    /// It was already there, made and filled by strata, at the right size.
    Reused,
    /// strata created or refilled it.
    Filled,
}

/// Makes sure `path` is a strata file of exactly `size` bytes full of random
/// data. `progress(done, total)` is called while filling; returning false
/// stops early with an error (the file is then left unmarked, so it is
/// refilled next time rather than trusted).
pub fn prepare_file(
    path: &Path,
    size: u64,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> anyhow::Result<Preparation> {
    let existing = std::fs::metadata(path).ok();
    if let Some(metadata) = &existing {
        match read_mark(path) {
            None => bail!(
                "{} already exists and was not created by strata; strata will not write to it. \
                 Name a new file, or use it read-only with its existing size",
                path.display()
            ),
            Some(mark) if mark == "filled" && metadata.len() == size => {
                return Ok(Preparation::Reused)
            }
            Some(_) => {}
        }
    } else {
        check_free_space(&parent_dir(path), size)?;
    }
    fill_file(path, size, progress)?;
    Ok(Preparation::Filled)
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn fill_file(
    path: &Path,
    size: u64,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> anyhow::Result<()> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    write_mark(&file, "created").ok();
    file.set_len(size)
        .with_context(|| format!("sizing {} to {size} bytes", path.display()))?;
    let direct = open_with(path, true, true, false).ok();
    let writer = direct.as_ref().unwrap_or(&file);
    let mut buffer = AlignedBuffer::new(FILL_CHUNK);
    let mut rng = strata_core::random::FastRng::from_entropy();
    let mut done = 0u64;
    while done < size {
        if !progress(done, size) {
            bail!("filling {} was interrupted", path.display());
        }
        let len = (size - done).min(FILL_CHUNK as u64) as usize;
        let len = if direct.is_some() && !len.is_multiple_of(4096) {
            len.next_multiple_of(4096)
        } else {
            len
        };
        rng.fill(&mut buffer.as_mut_slice()[..len]);
        write_all_at(writer, &buffer.as_slice()[..len], done)
            .with_context(|| format!("filling {}", path.display()))?;
        done += len as u64;
    }
    file.set_len(size)?;
    file.sync_all()
        .with_context(|| format!("syncing {}", path.display()))?;
    progress(size, size);
    write_mark(&file, "filled").ok();
    Ok(())
}

fn write_all_at(file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(bytes, offset)
}

fn open_with(path: &Path, direct: bool, write: bool, dsync: bool) -> io::Result<File> {
    let mut flags = 0;
    if direct {
        flags |= libc::O_DIRECT;
    }
    if dsync {
        flags |= libc::O_DSYNC;
    }
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(flags)
        .open(path)
}

/// Opens a target for a workload. O_DIRECT refusals become an error that
/// suggests `--buffered`.
pub fn open_target(path: &Path, direct: bool, write: bool, dsync: bool) -> anyhow::Result<File> {
    match open_with(path, direct, write, dsync) {
        Ok(file) => Ok(file),
        Err(error) if direct && error.raw_os_error() == Some(libc::EINVAL) => bail!(
            "the filesystem holding {} refuses O_DIRECT (direct I/O); use --buffered to test \
             through the page cache instead",
            path.display()
        ),
        Err(error) => Err(error).with_context(|| format!("opening {}", path.display())),
    }
}

/// Size in bytes of a regular file or a block device.
pub fn size_of(file: &File) -> anyhow::Result<u64> {
    let metadata = file.metadata()?;
    if !metadata.file_type().is_block_device() {
        return Ok(metadata.len());
    }
    let mut bytes: u64 = 0;
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    if unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64, &mut bytes) } != 0 {
        return Err(io::Error::last_os_error()).context("reading the block device's size");
    }
    Ok(bytes)
}

/// A file strata made for this run alone; removed when dropped.
pub struct TemporaryFile {
    path: PathBuf,
}

impl TemporaryFile {
    /// A fresh name in `dir`; nothing is created until [`prepare_file`].
    pub fn new_in(dir: &Path) -> anyhow::Result<Self> {
        let dir =
            std::fs::canonicalize(dir).with_context(|| format!("resolving {}", dir.display()))?;
        let name = format!(
            ".strata-calibrate-{}-{:x}.tmp",
            std::process::id(),
            strata_core::random::FastRng::from_entropy().next_u64() & 0xffff_ffff
        );
        Ok(TemporaryFile {
            path: dir.join(name),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TemporaryFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepared_file_is_random_marked_and_reused() {
        let dir =
            tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target")).unwrap();
        let path = dir.path().join("target");
        let size = 3 << 20;
        let first = prepare_file(&path, size, &mut |_, _| true).unwrap();
        assert_eq!(first, Preparation::Filled);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.chunks(4096).all(|page| page.iter().any(|&b| b != 0)));
        assert!(created_by_strata(&path));
        assert_eq!(
            prepare_file(&path, size, &mut |_, _| true).unwrap(),
            Preparation::Reused
        );
        assert_eq!(
            prepare_file(&path, size * 2, &mut |_, _| true).unwrap(),
            Preparation::Filled
        );
    }

    #[test]
    fn a_file_strata_did_not_create_is_never_written() {
        let dir =
            tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target")).unwrap();
        let path = dir.path().join("precious");
        std::fs::write(&path, b"keep me").unwrap();
        let error = prepare_file(&path, 1 << 20, &mut |_, _| true).unwrap_err();
        assert!(
            error.to_string().contains("not created by strata"),
            "{error}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"keep me");
    }

    #[test]
    fn temporary_file_is_removed_on_drop() {
        let dir =
            tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target")).unwrap();
        let temporary = TemporaryFile::new_in(dir.path()).unwrap();
        prepare_file(temporary.path(), 1 << 20, &mut |_, _| true).unwrap();
        let path = temporary.path().to_path_buf();
        assert!(path.exists());
        drop(temporary);
        assert!(!path.exists());
    }
}
