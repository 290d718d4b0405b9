//! The report: one document model that every source (a run, calibrate or
//! observe Recording, an Oracle AWR or STATSPACK report) is turned into, the
//! renderers that print it (text, JSON, HTML), and the findings that connect
//! the layers.
//!
//! [`recording`] builds reports from Recordings; the AWR reader (crate
//! `strata-awr`) builds the same document from Oracle's reports and feeds the
//! same findings through [`findings::WindowFigures`]. Neither measures
//! anything: this crate reads what was recorded.

pub mod document;
pub mod findings;
pub mod recording;
pub mod render;
