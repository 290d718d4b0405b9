//! The `strata` binary: parses the command line and hands each subcommand to
//! the crate that does the work. Nothing clever lives here.

mod calibrate_cmd;
mod interrupt;
mod parse;
mod progress;

use clap::{Parser, Subcommand};

/// strata tells database and storage people the truth about the storage
/// under their database.
#[derive(Parser)]
#[command(name = "strata", version, about, long_about = None, max_term_width = 110)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure storage alone the way a database uses it: small random reads at
    /// rising queue depth, large sequential reads, durable log writes, mixes.
    Calibrate(Box<calibrate_cmd::CalibrateArgs>),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Calibrate(args) => calibrate_cmd::run(*args),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(error) => {
            eprintln!("strata: error: {error:#}");
            std::process::exit(2);
        }
    }
}
