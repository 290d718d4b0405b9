//! The verdict on a calibration: a storage result; not one, with every
//! reason (buffered I/O, a device that moved less or more than strata
//! completed, points without I/O, a target on no device strata can watch);
//! or failed, naming the points whose I/O failed.
//!
//! Not for: a point's own device check (`point::verify`), or exit codes
//! (the binary: failed 1; not a storage result 0, or 3 with `--strict`).

use crate::result::PointResult;
use strata_core::verdict::{Reason, Verdict};

/// Judges the points of one calibration.
pub fn judge(points: &[PointResult], direct: bool) -> Verdict {
    let causes: Vec<String> = points
        .iter()
        .filter_map(|point| {
            let first = point.errors.first()?;
            Some(format!(
                "point {}: {} I/O error(s) (first: {first})",
                point.name,
                point.errors.len()
            ))
        })
        .collect();
    let reasons = [
        (!direct).then(|| {
            Reason::new(
                "buffered_io",
                "buffered I/O (--buffered): the page cache sits between strata and the device",
            )
        }),
        check_reason(points, "device_saw_less"),
        check_reason(points, "device_saw_more"),
        check_reason(points, "nothing_to_check"),
        unchecked_reason(points, direct),
    ];
    Verdict::of(causes, reasons.into_iter().flatten().collect())
}

/// The points whose device check came out `check`, with the first one's
/// note, as one reason.
fn check_reason(points: &[PointResult], check: &str) -> Option<Reason> {
    let matching: Vec<&PointResult> = points
        .iter()
        .filter(|point| {
            point
                .verification
                .as_ref()
                .is_some_and(|verification| verification.verdict == check)
        })
        .collect();
    let first = matching.first()?;
    let note = &first.verification.as_ref()?.note;
    Some(Reason::new(
        check,
        format!(
            "{} of {} points: {note} (at {})",
            matching.len(),
            points.len(),
            first.name
        ),
    ))
}

/// Direct I/O whose device strata cannot watch (a file on tmpfs, an
/// unknown device): nothing shows the I/O reached one.
fn unchecked_reason(points: &[PointResult], direct: bool) -> Option<Reason> {
    let unchecked = points
        .iter()
        .filter(|point| point.verification.is_none())
        .count();
    let nfs_unchecked = (points.iter())
        .filter(|point| point.verification.is_none())
        .find_map(|point| point.nfs.as_ref());
    if let Some(nfs) = nfs_unchecked {
        return Some(Reason::new(
            "no_device_checked",
            format!(
                "{unchecked} of {} points went to NFS server {}, whose devices strata did not \
                 watch (its agent, --agent, counts them): nothing shows that their I/O reached a \
                 device (the server's cache may have served it)",
                points.len(),
                nfs.server
            ),
        ));
    }
    (direct && unchecked > 0).then(|| {
        Reason::new(
            "no_device_checked",
            format!(
                "{unchecked} of {} points ran on no block device strata can watch: nothing shows \
                 that their I/O reached a device",
                points.len()
            ),
        )
    })
}
