//! `strata awr`: reads Oracle AWR and STATSPACK reports and prints their
//! honest I/O reading through the same output path as `strata report`. One
//! file gives its report, two are compared, a directory or three or more
//! files (or `--series`) become a time series.

use anyhow::{bail, Context};
use clap::Args;
use std::path::{Path, PathBuf};
use strata_awr::AwrReport;
use strata_output::args::OutputArgs;
use strata_output::Output;

#[derive(Args)]
pub struct AwrArgs {
    /// AWR or STATSPACK reports (HTML or text), or a directory of them
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Treat the reports as a time series even when there are only one or two
    #[arg(long)]
    pub series: bool,
}

pub fn run(args: AwrArgs) -> anyhow::Result<i32> {
    let (files, from_directory) = expand(&args.inputs)?;
    let reports = files
        .iter()
        .map(|file| read(file))
        .collect::<anyhow::Result<Vec<AwrReport>>>()?;
    let report = match reports.as_slice() {
        [one] if !args.series && !from_directory => strata_awr::build::report(one),
        [a, b] if !args.series && !from_directory => strata_awr::compare::report(a, b),
        many => strata_awr::series::report(many),
    };
    for problem in &report.problems {
        crate::note!("strata: warning: {problem}");
    }
    crate::output::print(&args.output, &Output::document(report))?;
    Ok(0)
}

/// The files to read: directories become their files (sorted by name).
fn expand(inputs: &[PathBuf]) -> anyhow::Result<(Vec<PathBuf>, bool)> {
    let mut files = Vec::new();
    let mut from_directory = false;
    for input in inputs {
        if input.is_dir() {
            from_directory = true;
            files.extend(directory_files(input)?);
        } else {
            files.push(input.clone());
        }
    }
    if files.is_empty() {
        bail!(
            "no files to read in {}: expected AWR or STATSPACK reports",
            show(&inputs[0])
        );
    }
    Ok((files, from_directory))
}

fn directory_files(directory: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(directory)
        .with_context(|| format!("reading directory {}", show(directory)))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.is_file() && is_report_name(path))
        .collect();
    files.sort();
    Ok(files)
}

/// Reports are .html/.htm/.txt/.lst/.out files; other files in a directory
/// (notes, checksums) are left alone.
fn is_report_name(path: &Path) -> bool {
    let extension = path
        .extension()
        .map(|extension| extension.to_string_lossy().to_ascii_lowercase());
    matches!(
        extension.as_deref(),
        Some("html" | "htm" | "txt" | "lst" | "out")
    )
}

fn read(file: &Path) -> anyhow::Result<AwrReport> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", show(file)))?;
    let text = String::from_utf8_lossy(&bytes);
    strata_awr::parse(&text, &show(file))
}

fn show(path: &Path) -> String {
    path.display().to_string()
}
