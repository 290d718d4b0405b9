//! `strata merge -o RUN.strata A B C…`: the Recordings of one run's
//! shards written as the one Recording of the run.
//!
//! Not for: merging (strata-recording's `merge`).

use anyhow::bail;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct MergeArgs {
    /// The shards' Recordings (`strata run --shard I/N … --record FILE`)
    #[arg(required = true, value_name = "RECORDING")]
    pub shards: Vec<PathBuf>,
    /// Write the merged Recording here (a new file)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
}

pub fn run(args: MergeArgs) -> anyhow::Result<i32> {
    if args.output.exists() {
        bail!(
            "-o {}: the file exists; strata writes only files it makes (give another name)",
            args.output.display()
        );
    }
    let merged = strata_run::merge::merge_files(&args.shards)?;
    merged.write_to(&args.output)?;
    crate::note!(
        "strata: the merged run written to {}",
        args.output.display()
    );
    Ok(0)
}
