//! Breaking down a commit wait (DOMAIN lesson 4): what is left of the
//! average commit wait after the log write I/O and the log writer's own CPU
//! is time spent waking the session and getting it back on a CPU.
//!
//! Not for: reading the inputs from a Recording or an AWR report
//! (strata-awr's `measured`).

use crate::{invalid, require_non_negative, require_positive, ModelError};
use serde::Serialize;

#[derive(Debug, Clone, Copy, Serialize)]
pub struct CommitBreakdown {
    pub commit_wait_s: f64,
    pub log_write_io_s: f64,
    pub log_writer_cpu_s: f64,
    /// Commit wait − log write I/O − log writer CPU: scheduling / run queue.
    pub remainder_s: f64,
    pub log_write_io_percent: f64,
    pub log_writer_cpu_percent: f64,
    pub remainder_percent: f64,
}

pub fn breakdown(
    commit_wait_s: f64,
    log_write_io_s: f64,
    log_writer_cpu_s: f64,
) -> Result<CommitBreakdown, ModelError> {
    require_positive("commit-wait", commit_wait_s)?;
    require_non_negative("log-write-io", log_write_io_s)?;
    require_non_negative("log-writer-cpu", log_writer_cpu_s)?;
    let remainder_s = commit_wait_s - log_write_io_s - log_writer_cpu_s;
    if remainder_s < 0.0 {
        return Err(invalid(
            "commit-wait",
            "is shorter than --log-write-io plus --log-writer-cpu",
        ));
    }
    let percent = |part: f64| 100.0 * part / commit_wait_s;
    Ok(CommitBreakdown {
        commit_wait_s,
        log_write_io_s,
        log_writer_cpu_s,
        remainder_s,
        log_write_io_percent: percent(log_write_io_s),
        log_writer_cpu_percent: percent(log_writer_cpu_s),
        remainder_percent: percent(remainder_s),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_case_leaves_sixty_two_ms_for_the_cpu() {
        let result = breakdown(0.101, 0.037, 0.0023).unwrap();
        assert!((result.remainder_s - 0.0617).abs() < 1e-9);
        assert!((result.remainder_percent - 61.09).abs() < 0.01);
        assert!(breakdown(0.010, 0.037, 0.0).is_err());
    }
}
