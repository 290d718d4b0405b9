//! The sessions' latency histograms as a MariaDB run's result carries them.
//! The Recording itself is written by strata-run's `write_run_recording`
//! (environment with `engine` = `mariadb`, `window_database` with every
//! InnoDB counter's change, the `mariadb` layer each second).
//!
//! Not for: computing figures (`figures`).

use serde::Serialize;
use strata_slob::session::RunOutcome;

/// The sessions' latency histograms: HdrHistogram V2, base64, nanoseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Histograms {
    pub select_lat_ns_hdr: String,
    pub update_lat_ns_hdr: String,
    pub commit_lat_ns_hdr: String,
    pub scan_lat_ns_hdr: String,
}

impl Histograms {
    pub fn of(outcome: &RunOutcome) -> Histograms {
        Histograms {
            select_lat_ns_hdr: outcome.select.to_base64(),
            update_lat_ns_hdr: outcome.update.to_base64(),
            commit_lat_ns_hdr: outcome.commit.to_base64(),
            scan_lat_ns_hdr: outcome.scan.to_base64(),
        }
    }
}
