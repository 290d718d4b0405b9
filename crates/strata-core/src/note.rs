//! A line for the person running strata, on standard error, that never
//! fails: a closed or full stderr (`2>&1 | head -2`) must not stop a run
//! half way with its server and files left behind, so a message that
//! cannot be written is dropped.
//!
//! Not for: results (those go to standard output or `--output`).

use std::io::Write as _;

/// Writes `text` and a newline to stderr, ignoring a stderr that cannot
/// be written.
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
