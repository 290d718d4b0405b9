//! strata-calibrate: storage measured alone, the way a database uses it —
//! small random reads at rising queue depth, large sequential streams, small
//! durable log writes and mixes — with ORION-style matrices and
//! CALIBRATE_IO-style summaries.
//!
//! Not for: command-line parsing or printing to a terminal (the `strata`
//! binary does that), nor device safety checks (`strata_probe::safety`).

pub mod calibration;
pub mod filer;
pub mod kernel_nfs;
pub mod nfs;
pub mod nfs_tables;
pub mod offsets;
pub mod options;
pub mod output;
pub mod plan;
pub mod point;
pub mod record;
pub mod request;
pub mod result;
pub mod spec;
pub mod verdict;
pub mod worker;
