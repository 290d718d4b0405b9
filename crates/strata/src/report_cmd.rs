//! `strata report`: reads a Recording (or two, to compare) and prints the
//! report as text, JSON or a self-contained HTML page.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct ReportArgs {
    /// The Recording to report on
    pub recording: Option<PathBuf>,
}

pub fn run(args: ReportArgs) -> anyhow::Result<i32> {
    let _ = args.recording;
    Ok(0)
}
