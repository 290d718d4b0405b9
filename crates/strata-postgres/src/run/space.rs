//! The data set beside the free space of the filesystem it goes to: refused
//! before a load that would not fit, and a full filesystem named with its
//! figures when the server reports one.
//!
//! Not for: the Recording's own filesystem (its writer names it).

use anyhow::bail;
use std::path::Path;
use strata_core::units::format_size;
use strata_run::outcome::data_set_bytes;
use strata_slob::schema::SchemaPlan;

/// Refuses a data set that would not fit (heap plus ~10% for indexes);
/// returns the free bytes it found.
pub(super) fn check_free_space(dir: &Path, plan: &SchemaPlan) -> anyhow::Result<u64> {
    let needed = needed_bytes(plan);
    let free = strata_io::target::free_bytes(dir)?;
    if needed > free {
        bail!(
            "--scale: the data set needs about {} but {} has {} free; choose a smaller --scale or --schemas",
            format_size(needed),
            dir.display(),
            format_size(free)
        );
    }
    Ok(free)
}

fn needed_bytes(plan: &SchemaPlan) -> u64 {
    data_set_bytes(plan) + data_set_bytes(plan) / 10
}

/// A server error that says its filesystem filled up (PostgreSQL's
/// SQLSTATE 53100, or ENOSPC), given the figures the user needs: what was
/// free when the run started and what the data set needs. The Recording's
/// own full filesystem is named by its writer, not blamed on this one.
pub(super) fn name_a_full_filesystem(
    error: anyhow::Error,
    dir: &Path,
    free: u64,
    plan: &SchemaPlan,
) -> anyhow::Error {
    let text = format!("{error:#}");
    let servers = text.contains("53100") || text.contains("No space left on device");
    if !servers || text.contains("writing recording ") {
        return error;
    }
    error.context(format!(
        "the filesystem of {} is full: it had {} free when the run started, and the data set \
         needs about {} plus the cluster's own files (catalogs, WAL); give --work-dir a \
         directory with more space, or choose a smaller --scale or --schemas",
        dir.display(),
        format_size(free),
        format_size(needed_bytes(plan))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four schemas of `blocks_per_schema` blocks of 8 KiB.
    fn plan(blocks_per_schema: u64) -> SchemaPlan {
        strata_testkit::slob::plan(4, blocks_per_schema)
    }

    #[test]
    fn a_data_set_needs_its_heap_and_a_tenth_for_its_indexes() {
        assert_eq!(needed_bytes(&plan(1000)), 32_768_000 + 3_276_800);
    }

    #[test]
    fn a_data_set_larger_than_the_free_space_is_refused_naming_both() {
        let dir = tempfile::tempdir().unwrap();
        let free = check_free_space(dir.path(), &plan(1)).unwrap();
        assert!(free > 0);
        let refused = check_free_space(dir.path(), &plan(u64::MAX / (8 << 10) / 8));
        let text = format!("{:#}", refused.unwrap_err());
        assert!(
            text.starts_with("--scale: the data set needs about "),
            "{text}"
        );
        assert!(
            text.contains(&format!("{} has ", dir.path().display())),
            "{text}"
        );
    }

    #[test]
    fn only_the_servers_full_filesystem_is_named_with_its_figures() {
        let dir = Path::new("/var/tmp/strata-x");
        let named = |text: &str| {
            let error = anyhow::anyhow!("{text}");
            format!(
                "{:#}",
                name_a_full_filesystem(error, dir, 10 << 20, &plan(1000))
            )
        };
        let full = named("db error: ERROR: could not extend file (SQLSTATE 53100)");
        assert!(
            full.starts_with("the filesystem of /var/tmp/strata-x is full: it had 10 MiB free"),
            "{full}"
        );
        assert!(full.contains("needs about 34.38 MiB"), "{full}");
        let recording = "writing recording r.strata: No space left on device";
        assert_eq!(named(recording), recording);
        assert_eq!(named("connection refused"), "connection refused");
    }
}
