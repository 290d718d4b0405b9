//! Capacity models a DBA or storage engineer does on the back of an envelope:
//! RAID back-end load, remote replication latency, queueing, rotating disk
//! IOPS, flash cache sizing, workload clustering, commit wait breakdown and
//! NFS throughput over a client's channels.
//!
//! Every model function here is pure: numbers in, numbers out, with the
//! inputs checked. [`command`] runs each `strata model` subcommand on its
//! resolved inputs and lays out what it prints (text, `--explain`, JSON, and
//! a report for CSV and HTML); [`input`] parses option values.
//!
//! Not for: command-line definitions or writing the output (the binary), or
//! measuring anything (other crates measure; strata-awr reads `--from`).

pub mod cluster;
pub mod command;
pub mod commit;
pub mod disk;
pub mod flash_cache;
pub mod input;
pub mod nfs;
pub mod predict;
pub mod queue;
pub mod raid;
pub mod replication;

/// An input that makes no sense for the model. `input` is the name of the
/// command-line option that carries it (without the dashes), so the message
/// names the flag the user typed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--{input}: {reason}")]
pub struct ModelError {
    pub input: &'static str,
    pub reason: String,
}

pub(crate) fn invalid(input: &'static str, reason: impl Into<String>) -> ModelError {
    ModelError {
        input,
        reason: reason.into(),
    }
}

/// Why `value` is no number a model can use, or `None`.
fn not_finite(input: &'static str, value: f64) -> Option<ModelError> {
    (!value.is_finite()).then(|| invalid(input, "must be a finite number".to_string()))
}

pub(crate) fn require_positive(input: &'static str, value: f64) -> Result<f64, ModelError> {
    if let Some(error) = not_finite(input, value) {
        return Err(error);
    }
    if value > 0.0 {
        Ok(value)
    } else {
        Err(invalid(input, format!("must be above 0, got {value}")))
    }
}

pub(crate) fn require_non_negative(input: &'static str, value: f64) -> Result<f64, ModelError> {
    if let Some(error) = not_finite(input, value) {
        return Err(error);
    }
    if value >= 0.0 {
        Ok(value)
    } else {
        Err(invalid(input, format!("must not be negative, got {value}")))
    }
}

pub(crate) fn require_fraction(input: &'static str, value: f64) -> Result<f64, ModelError> {
    if let Some(error) = not_finite(input, value) {
        return Err(error);
    }
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(invalid(
            input,
            format!("must be from 0 to 100%, got {}%", value * 100.0),
        ))
    }
}
