//! strata-core: what every strata command shares — units and their printing,
//! latency histograms, metrics, verdicts.
//!
//! Not for: measuring anything, talking to a database, or the Recording
//! (strata-recording); it does no I/O.

pub mod fuzz;
pub mod histogram;
pub mod input;
pub mod log_linear;
pub mod metrics;
pub mod note;
pub mod random;
pub mod time;
pub mod units;
pub mod verdict;
