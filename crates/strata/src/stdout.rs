//! Standard output that fails as an error, not a panic: `print!` panics
//! when stdout cannot be written (a full disk, `> /dev/full`, a closed
//! pipe); `out!` and `outln!` return [`StdoutFailed`] instead, which the
//! binary reports in one line with exit code 1.
//!
//! Messages and progress on stderr go through `note!`, which never fails:
//! a closed stderr (`2>&1 | head -2`) must not stop a run half way, with
//! its server and files left behind.
//!
//! Not for: files a command writes.

use std::io::Write;

/// Writing to standard output failed; the cause is the OS error.
#[derive(Debug, thiserror::Error)]
#[error("writing to standard output")]
pub struct StdoutFailed(#[from] pub std::io::Error);

/// Writes `arguments` to stdout.
pub fn write(arguments: std::fmt::Arguments) -> Result<(), StdoutFailed> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_fmt(arguments)?;
    Ok(())
}

/// Writes out what is still buffered: a final line without a newline is
/// only sent here, so its failure is seen.
pub fn flush() -> Result<(), StdoutFailed> {
    std::io::stdout().lock().flush()?;
    Ok(())
}

/// `print!` that returns an error instead of panicking; use with `?`.
#[macro_export]
macro_rules! out {
    ($($argument:tt)*) => {
        $crate::stdout::write(format_args!($($argument)*))
    };
}

/// `println!` that returns an error instead of panicking; use with `?`.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::stdout::write(format_args!("\n"))
    };
    ($($argument:tt)*) => {
        $crate::stdout::write(format_args!("{}\n", format_args!($($argument)*)))
    };
}

/// Help and version text from clap, through [`write`] so that a stdout
/// that cannot be written is an error here too; clap's own errors go to
/// stderr as usual.
pub fn exit_with_clap(error: clap::Error) -> ! {
    if error.use_stderr() {
        error.exit();
    }
    let text = error.render();
    let written = match std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        true => write(format_args!("{}", text.ansi())),
        false => write(format_args!("{text}")),
    };
    match written.and_then(|()| flush()) {
        Ok(()) => std::process::exit(0),
        Err(failed) => {
            crate::note!("strata: error: {:#}", anyhow::Error::new(failed));
            std::process::exit(1);
        }
    }
}

/// `eprintln!` that ignores a stderr that cannot be written instead of
/// panicking: a message lost is better than a run abandoned.
#[macro_export]
macro_rules! note {
    ($($argument:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($argument)*);
    }};
}
