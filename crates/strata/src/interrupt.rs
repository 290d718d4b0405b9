//! Ctrl-C (SIGINT) and SIGTERM: the first asks the running work to stop
//! cleanly (partial results kept, servers stopped, temporary files removed)
//! and sets the exit code to 128 + the signal's number, as a shell reports
//! it (130, 143); a second exits at once.
//!
//! Not for: SIGKILL, which nothing can catch; what a killed strata leaves
//! behind is stopped by the server's own watchdogs.

use signal_hook::consts::{SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Once;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(SIGINT);
static INSTALL: Once = Once::new();

/// Installs the handler (once) and returns the flag the work polls.
pub fn install() -> &'static AtomicBool {
    INSTALL.call_once(|| {
        if let Err(error) = listen() {
            crate::note!("strata: warning: Ctrl-C and SIGTERM will not stop cleanly: {error}");
        }
    });
    &INTERRUPTED
}

/// 130 after SIGINT, 143 after SIGTERM.
pub fn exit_code() -> i32 {
    128 + SIGNAL.load(Ordering::SeqCst)
}

/// "SIGINT" or "SIGTERM", for what a stopped run records.
pub fn signal_name() -> &'static str {
    if SIGNAL.load(Ordering::SeqCst) == SIGTERM {
        "SIGTERM"
    } else {
        "SIGINT"
    }
}

fn listen() -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("strata-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let name = if signal == SIGTERM {
                    "SIGTERM"
                } else {
                    "Ctrl-C"
                };
                if INTERRUPTED.swap(true, Ordering::SeqCst) {
                    crate::note!("\nstrata: {name} again, exiting now");
                    std::process::exit(128 + signal);
                }
                SIGNAL.store(signal, Ordering::SeqCst);
                crate::note!("\nstrata: stopping on {name} ({name} again to exit at once)…");
            }
        })?;
    Ok(())
}
