//! The report: every Recording (a run, calibrate or observe) turned into
//! strata-output's document, and the findings that connect the layers.
//!
//! [`recording`] builds reports from Recordings; the AWR reader (crate
//! `strata-awr`) builds the same document from Oracle's reports and feeds the
//! same findings through [`findings::WindowFigures`]. Neither measures
//! anything: this crate reads what was recorded.

pub mod findings;
pub mod recording;
