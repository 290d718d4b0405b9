//! Which filesystem a Recording's file is on and how full it is, for the
//! errors of a write that failed: the file's own filesystem is named, not
//! another command's work directory.
//!
//! Not for: checking free space before work (`strata_io::target`).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use strata_core::units::format_size;

/// "the filesystem mounted at /mnt/x (tmpfs): 0 B free of 64.0 KiB", or
/// what of it could be read.
pub fn describe(path: &Path) -> String {
    let dir = directory_of(path);
    let mount = mount_of(&dir);
    let mounted = match &mount {
        Some((point, fstype)) => format!("the filesystem mounted at {point} ({fstype})"),
        None => format!("the filesystem of {}", dir.display()),
    };
    match space_of(&dir) {
        Some((free, total)) => format!(
            "{mounted}: {} free of {}",
            format_size(free),
            format_size(total)
        ),
        None => mounted,
    }
}

/// The directory the file is (or would be) in, resolved.
fn directory_of(path: &Path) -> PathBuf {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    parent
        .canonicalize()
        .unwrap_or_else(|_| parent.to_path_buf())
}

/// Bytes free for an unprivileged writer, and the filesystem's size.
fn space_of(dir: &Path) -> Option<(u64, u64)> {
    let dir = CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(dir.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    let block = stat.f_frsize as u64;
    Some((stat.f_bavail as u64 * block, stat.f_blocks as u64 * block))
}

/// The mount point and type of the longest mount that holds `dir`, from
/// `/proc/self/mountinfo` (fields 5 and the first after ` - `).
fn mount_of(dir: &Path) -> Option<(String, String)> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mountinfo
        .lines()
        .filter_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let point = before.split(' ').nth(4)?.replace("\\040", " ");
            let fstype = after.split(' ').next()?.to_string();
            dir.starts_with(&point).then_some((point, fstype))
        })
        .max_by_key(|(point, _)| point.len())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_root_filesystem_is_named_with_its_space() {
        let described = super::describe(std::path::Path::new("/x.strata"));
        assert!(
            described.starts_with("the filesystem mounted at / ("),
            "{described}"
        );
        assert!(described.contains(" free of "), "{described}");
    }
}
