//! strata-core: what every strata command shares — units and their printing,
//! latency histograms, and the Recording format.
//!
//! Not for: measuring anything or talking to a database; it does no I/O
//! except reading and writing recordings.

pub mod fuzz;
pub mod histogram;
pub mod input;
pub mod metrics;
pub mod note;
pub mod random;
pub mod recording;
pub mod time;
pub mod units;
pub mod verdict;
