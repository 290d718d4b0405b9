//! Ctrl-C handling: the first press asks the running work to stop cleanly
//! (partial results kept, temporary files removed); a second press exits at
//! once.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the handler and returns the flag the work polls.
pub fn install() -> &'static AtomicBool {
    let installed = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            eprintln!("\nstrata: interrupted twice, exiting now");
            std::process::exit(130);
        }
        eprintln!("\nstrata: stopping (Ctrl-C again to exit at once)…");
    });
    if let Err(error) = installed {
        eprintln!("strata: warning: Ctrl-C will not stop cleanly: {error}");
    }
    &INTERRUPTED
}
