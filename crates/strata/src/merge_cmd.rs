//! `strata merge -o RUN.strata A B C…`: the Recordings of one run's
//! shards written as the one Recording of the run.
//!
//! Not for: merging (strata-run's `merge`).

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
    strata_run::merge::merge_into(&args.shards, &args.output)?;
    crate::note!(
        "strata: the merged run written to {}",
        args.output.display()
    );
    Ok(0)
}
