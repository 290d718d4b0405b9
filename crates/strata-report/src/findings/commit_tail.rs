//! `commit_tail_against_the_wal_device`: the commits' p99 beside the WAL
//! device's own p99 for the writes and flushes it served (traced one by
//! one), the way the seed read a "log file sync" histogram: when the
//! device served the log in a fraction of what commits waited, the tail is
//! the host's (CPU, scheduling, the log writer), not storage.
//!
//! Not for: the averages' split (`commit_waits_decomposed`).

use super::{finding, run_queue_evidence, WindowFigures};
use strata_output::document::{Evidence, Finding, Severity};

/// The commits' tail and the WAL device's, from a run whose block requests
/// were traced.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitTail {
    /// strata's COMMIT latency p99, ms.
    pub commit_p99_ms: f64,
    /// The device that holds the WAL.
    pub wal_device: String,
    /// Its write requests' device time p99 (issue → end), ms.
    pub write_p99_ms: Option<f64>,
    /// Which writes: those of the WAL's writers, or every write.
    pub write_label: String,
    /// Its flush requests' device time p99, ms (none where the device got
    /// no flush: a cache without volatile write-back).
    pub flush_p99_ms: Option<f64>,
}

/// A commit tail twice the device's, and 1 ms over it, is not storage.
const NOT_STORAGE_RATIO: f64 = 2.0;
const NOT_STORAGE_MS: f64 = 1.0;

pub(super) fn commit_tail_against_the_wal_device(figures: &WindowFigures) -> Option<Finding> {
    let tail = figures.commit.as_ref()?.tail.as_ref()?;
    let device_ms = tail.write_p99_ms? + tail.flush_p99_ms.unwrap_or(0.0);
    let rest_ms = (tail.commit_p99_ms - device_ms).max(0.0);
    let mut evidence = vec![
        Evidence::new("strata's COMMIT latency (p99)", tail.commit_p99_ms, 3, "ms"),
        Evidence::new(
            format!(
                "{}: {}: device time (p99, traced)",
                tail.wal_device, tail.write_label
            ),
            tail.write_p99_ms?,
            3,
            "ms",
        ),
    ];
    if let Some(flush_ms) = tail.flush_p99_ms {
        evidence.push(Evidence::new(
            format!("{}: flush device time (p99, traced)", tail.wal_device),
            flush_ms,
            3,
            "ms",
        ));
    }
    evidence.push(Evidence::new("the rest (not the device)", rest_ms, 3, "ms"));
    let not_storage =
        tail.commit_p99_ms >= NOT_STORAGE_RATIO * device_ms && rest_ms >= NOT_STORAGE_MS;
    if !not_storage {
        let title = format!(
            "The commits' tail is the WAL device's: it served writes and flushes in {device_ms:.3} ms p99 of the commits' {:.3} ms",
            tail.commit_p99_ms
        );
        let why = "The slowest commits waited about as long as the WAL device took for its slowest writes and flushes: a faster log device would shorten them.";
        return Some(finding(ID, Severity::Info, title, evidence, why));
    }
    evidence.extend(run_queue_evidence(figures));
    let title = format!(
        "Not storage: {} served WAL writes and flushes in {device_ms:.3} ms p99 while commits waited {:.3} ms p99",
        tail.wal_device, tail.commit_p99_ms
    );
    let why = "Each request's device time was traced in the kernel: the device's slowest writes and flushes explain a fraction of the slowest commits. The rest is the host's: the committing backend or the WAL writer waiting for a CPU, for the WAL lock, or for its turn; a faster disk would not fix it.";
    Some(finding(ID, Severity::Warning, title, evidence, why))
}

const ID: &str = "commit_tail_against_the_wal_device";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{evaluate, CommitFigures};

    fn figures(commit_p99_ms: f64, write_p99_ms: f64) -> WindowFigures {
        WindowFigures {
            commit: Some(CommitFigures {
                commits: 1000.0,
                commit_avg_ms: commit_p99_ms / 3.0,
                commit_label: "strata's COMMIT latency (mean)".to_string(),
                log_write_avg_ms: None,
                log_write_label: String::new(),
                tail: Some(CommitTail {
                    commit_p99_ms,
                    wal_device: "vdb".to_string(),
                    write_p99_ms: Some(write_p99_ms),
                    write_label: "writes by the backends and the WAL writer".to_string(),
                    flush_p99_ms: Some(0.1),
                }),
            }),
            ..WindowFigures::default()
        }
    }

    fn the_finding(figures: &WindowFigures) -> Finding {
        evaluate(figures)
            .into_iter()
            .find(|finding| finding.id == ID)
            .expect("the commit tail finding")
    }

    #[test]
    fn a_fast_wal_device_under_slow_commits_is_not_storage() {
        let finding = the_finding(&figures(30.0, 0.3));
        assert_eq!(finding.severity, Severity::Warning);
        assert!(
            finding.title.starts_with("Not storage: vdb"),
            "{}",
            finding.title
        );
        let rest = finding
            .evidence
            .iter()
            .find(|evidence| evidence.label == "the rest (not the device)")
            .unwrap();
        assert!((rest.value - 29.6).abs() < 1e-9, "{rest:?}");
    }

    #[test]
    fn a_slow_wal_device_is_the_commits_tail() {
        let finding = the_finding(&figures(5.0, 4.5));
        assert_eq!(finding.severity, Severity::Info);
        assert!(
            finding.title.contains("is the WAL device's"),
            "{}",
            finding.title
        );
    }
}
