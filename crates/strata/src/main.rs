//! The `strata` binary: parses the command line and hands each subcommand to
//! the crate that does the work. Nothing clever lives here.

mod awr_cmd;
mod calibrate_cmd;
mod engines;
mod interrupt;
mod merge_cmd;
mod model_cmd;
mod observe_cmd;
mod output;
mod progress;
mod report_cmd;
mod run_cmd;
mod shell_cmd;
mod stdout;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// strata tells database and storage people the truth about the storage
/// under their database.
#[derive(Parser)]
#[command(name = "strata", version, about, long_about = None, max_term_width = 110)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure storage alone the way a database uses it: small random reads at
    /// rising queue depth, large sequential reads, durable log writes, mixes.
    Calibrate(Box<calibrate_cmd::CalibrateArgs>),
    /// The SLOB method on PostgreSQL, MariaDB or SQLite: sessions that turn every
    /// logical read into a physical one, with every I/O accounted for at every
    /// layer. With no --db, on a throwaway PostgreSQL cluster that strata makes
    /// and removes.
    Run(Box<run_cmd::RunArgs>),
    /// Load the SLOB schemas (one row per 8 KiB block) for `strata run --db`.
    Setup(Box<run_cmd::SetupArgs>),
    /// Sample every layer at once — block devices, NFS, NICs, CPU and run queue,
    /// memory, processes, PostgreSQL, MariaDB — live, to a Recording, or for Prometheus.
    Observe(Box<observe_cmd::ObserveArgs>),
    /// Capacity models on the back of an envelope: RAID back-end load, remote
    /// replication, queueing, disk IOPS, flash cache sizing, workload clusters,
    /// commit wait breakdown.
    Model(Box<model_cmd::ModelArgs>),
    /// An AWR-style report of a Recording (run, calibrate, observe): load
    /// profile, top waits, I/O by layer, latency, findings; as text, --json or --html.
    Report(Box<report_cmd::ReportArgs>),
    /// Merge the Recordings of one run's shards (`strata run --shard I/N`)
    /// into the one Recording of the run: work and latency histograms added,
    /// the database and its host counted once.
    Merge(merge_cmd::MergeArgs),
    /// Read Oracle AWR and STATSPACK reports and print the honest I/O reading of
    /// them: requests vs blocks, decimal vs binary units, commit waits decomposed.
    Awr(Box<awr_cmd::AwrArgs>),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(shell_cmd::CompletionsArgs),
    /// Print the manual page strata(1), or write every page with --dir
    Man(shell_cmd::ManArgs),
}

/// The command line strata parses: every engine's own options among
/// `run`'s and `setup`'s.
pub fn command_line() -> clap::Command {
    let with_engines = |command| engines::REGISTRY.with_engine_options(command);
    Cli::command()
        .mut_subcommand("run", with_engines)
        .mut_subcommand("setup", with_engines)
}

fn main() {
    let matches = command_line()
        .try_get_matches()
        .unwrap_or_else(|error| stdout::exit_with_clap(error));
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|error| stdout::exit_with_clap(error));
    let engine_options = || {
        let subcommand = matches.subcommand().map(|(_, subcommand)| subcommand);
        subcommand
            .map(strata_run::engine_options::EngineOptionMatches::of)
            .unwrap_or_default()
    };
    let result = match cli.command {
        Command::Calibrate(args) => calibrate_cmd::run(*args),
        Command::Run(args) => run_cmd::run(*args, engine_options()),
        Command::Setup(args) => run_cmd::setup(*args, engine_options()),
        Command::Observe(args) => observe_cmd::run(*args),
        Command::Model(args) => model_cmd::run(*args),
        Command::Report(args) => report_cmd::run(*args),
        Command::Merge(args) => merge_cmd::run(args),
        Command::Awr(args) => awr_cmd::run(*args),
        Command::Completions(args) => shell_cmd::completions(args),
        Command::Man(args) => shell_cmd::man(args),
    };
    let result = result.and_then(|code| Ok(stdout::flush().map(|()| code)?));
    match result {
        Ok(code) => std::process::exit(code),
        Err(error) => {
            crate::note!("strata: error: {error:#}");
            let output_failed = error.downcast_ref::<stdout::StdoutFailed>().is_some();
            std::process::exit(if output_failed { 1 } else { 2 });
        }
    }
}
