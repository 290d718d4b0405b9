//! The one verdict every measurement ends with — a storage result; not a
//! storage result, with every reason and its figures; or failed, with the
//! causes — as a type every command shares (run, calibrate, and the shards
//! and sweep points built from them), so that JSON, Recordings and reports
//! carry it the same way.
//!
//! Not for: judging (each command knows its own reasons: `strata-run`'s
//! `verdict`, `strata-calibrate`'s), or exit codes (the binary).

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// A storage result.
    Valid,
    /// The run worked, but what it measured is not the storage.
    NotAStorageResult { reasons: Vec<Reason> },
    /// The run went wrong: its figures are not one run's.
    Failed { causes: Vec<String> },
    /// Made before strata gave verdicts (a version 1 Recording): nothing
    /// was judged.
    NotRecorded,
}

/// One reason a run is not a storage result: a stable code and the
/// sentence with its figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    pub code: String,
    pub text: String,
}

impl Reason {
    pub fn new(code: &str, text: impl Into<String>) -> Reason {
        Reason {
            code: code.to_string(),
            text: text.into(),
        }
    }
}

impl Verdict {
    /// Failed when there is any cause; else not a storage result when there
    /// is any reason; else valid.
    pub fn of(causes: Vec<String>, reasons: Vec<Reason>) -> Verdict {
        if !causes.is_empty() {
            Verdict::Failed { causes }
        } else if !reasons.is_empty() {
            Verdict::NotAStorageResult { reasons }
        } else {
            Verdict::Valid
        }
    }

    /// What a Recording made before strata gave verdicts holds.
    pub fn not_recorded() -> Verdict {
        Verdict::NotRecorded
    }

    /// `valid`, `not a storage result`, `failed` or `not recorded`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::NotAStorageResult { .. } => "not a storage result",
            Verdict::Failed { .. } => "failed",
            Verdict::NotRecorded => "not recorded",
        }
    }

    /// Its reasons' or causes' sentences; none for a valid one.
    pub fn details(&self) -> Vec<&str> {
        match self {
            Verdict::Valid => Vec::new(),
            Verdict::NotAStorageResult { reasons } => {
                reasons.iter().map(|reason| reason.text.as_str()).collect()
            }
            Verdict::Failed { causes } => causes.iter().map(String::as_str).collect(),
            Verdict::NotRecorded => vec!["a Recording made before strata gave verdicts"],
        }
    }

    /// The verdict and its reasons or causes, one per line, for the top of
    /// a command's output.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!("verdict: {}", self.name())];
        lines.extend(self.details().iter().map(|detail| format!("  - {detail}")));
        lines
    }
}
