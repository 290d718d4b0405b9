//! Running a program to completion and taking its stdout: for the tools a
//! test drives (`losetup`, `mkfs.ext4`, `mount`, …), where failing is a
//! broken test machine, not something to assert on.
//!
//! Not for the program under test: a test that checks strata's exit status
//! or stderr runs it itself and keeps the whole `Output`.

use std::process::Command;

/// Runs `program` with `args` and returns its stdout, trimmed; panics with
/// its stderr when it cannot start or exits unsuccessfully.
pub fn run(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("starting {program}: {error}"));
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}
