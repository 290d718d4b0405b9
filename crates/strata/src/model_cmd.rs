//! `strata model`: the command line of the capacity models — the options
//! (their doc comments are the `--help` text), turned into a request of
//! `strata_model::command`, run, and printed through the shared output path
//! (`--format text|json|csv|html`, `--json`, `--output`, `--html`).
//!
//! Not for: any arithmetic or layout (strata-model's `command` and `input`),
//! the requests made from the options (its `command::requests`), or
//! reading `--from` (strata-run's `measured`).

use std::path::Path;
use strata_model::command::args::*;
use strata_model::command::{
    cluster, commit, disk, flash_cache, nfs, predict, queue, raid, replication,
};
use strata_report::findings::WindowFigures;
use strata_run::measured::window as measured;

pub use strata_model::command::args::ModelArgs;

pub fn run(args: ModelArgs) -> anyhow::Result<i32> {
    let (output, printed) = match args.model {
        ModelCommand::Raid(args) => {
            let measured = from(args.measured_from(), measured::front_end_load)?;
            (args.output.clone(), raid::run(&args.request(measured))?)
        }
        ModelCommand::Replication(args) => {
            (args.output.clone(), replication::run(&args.request())?)
        }
        ModelCommand::Queue(args) => {
            let device = args.device.as_deref();
            let read = |figures: &_, path: &_| measured::device_queue(figures, path, device);
            let measured = from(args.from.as_deref(), read)?;
            (args.output.clone(), queue::run(&args.request(measured))?)
        }
        ModelCommand::Disk(args) => (args.output.clone(), disk::run(&args.request())?),
        ModelCommand::FlashCache(args) => (args.output.clone(), flash_cache::run(&args.request())?),
        ModelCommand::Cluster(args) => (args.output.clone(), cluster::run(&args.request()?)?),
        ModelCommand::Commit(args) => {
            let measured = from(args.measured_from(), measured::commit_inputs)?;
            (args.output.clone(), commit::run(&args.request(measured))?)
        }
        ModelCommand::Nfs(args) => {
            let measured = args.from.as_deref().map(strata_run::measured::nfs::read);
            let request = args.request(measured.transpose()?);
            (args.output.clone(), nfs::run(&request)?)
        }
        ModelCommand::Predict(args) => {
            let printed = predict::run(&strata_run::predict_inputs::request(&args)?)?;
            (args.output, printed)
        }
    };
    crate::output::print(&output, &printed)?;
    Ok(0)
}

/// What `--from` (a Recording, an AWR or STATSPACK report) measured, as
/// `inputs` takes it from the window's figures.
fn from<T>(
    path: Option<&Path>,
    inputs: impl FnOnce(&WindowFigures, &Path) -> anyhow::Result<T>,
) -> anyhow::Result<Option<T>> {
    path.map(|path| inputs(&measured::read(path)?, path))
        .transpose()
}
