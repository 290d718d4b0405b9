//! What a directory holds: the entries a test expects a run to have cleaned
//! up, and everything under a directory.
//!
//! Not for creating scratch directories: those depend on where a crate's
//! tests may write (`CARGO_TARGET_TMPDIR` is only set when compiling an
//! integration test), so each crate's tests make their own.

use std::path::{Path, PathBuf};

/// The entries of `dir` (not recursive) whose names start with `prefix`:
/// what a run may have left behind there.
pub fn leftovers(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(prefix)
        })
        .collect()
}

/// Every entry under `dir`, recursively: a directory's contents come before
/// the directory itself.
pub fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()))
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            found.extend(entries(&path));
        }
        found.push(path);
    }
    found
}

/// The names of the entries of `dir` (not recursive).
pub fn names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}
