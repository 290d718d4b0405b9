//! `strata awr`: reads Oracle AWR and STATSPACK reports and prints their
//! honest I/O reading through the same output path as `strata report`. One
//! file gives its report, two are compared, a directory or three or more
//! files (or `--series`) become a time series.

use anyhow::{bail, Context};
use clap::Args;
use std::path::{Path, PathBuf};
use strata_awr::AwrReport;
use strata_core::units::format_size;
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
    /// In a series, keep only this database's reports (its name or DBID)
    #[arg(long, value_name = "NAME")]
    pub database: Option<String>,
}

pub fn run(args: AwrArgs) -> anyhow::Result<i32> {
    let (files, from_directory) = expand(&args.inputs)?;
    let series = args.series || from_directory || files.len() > 2;
    if args.database.is_some() && !series {
        bail!("--database chooses among the databases of a series: give --series, a directory or three or more reports");
    }
    let (reports, unread) = read_all(&files, series)?;
    if reports.is_empty() {
        bail!("no report could be read: {}", unread.join("; "));
    }
    let report = match reports.as_slice() {
        [one] if !series => strata_awr::build::report(one),
        [a, b] if !series => strata_awr::compare::report(a, b),
        many => strata_awr::series::report(many, args.database.as_deref())?,
    };
    for problem in &report.problems {
        crate::note!("strata: warning: {problem}");
    }
    crate::output::print(&args.output, &Output::document(report))?;
    for failure in &unread {
        crate::note!("strata: error: not read: {failure}");
    }
    Ok(if unread.is_empty() { 0 } else { 1 })
}

/// Every file read; in a series a file that cannot be read is named and
/// the others go on (the exit status says so), otherwise it ends the run.
fn read_all(files: &[PathBuf], series: bool) -> anyhow::Result<(Vec<AwrReport>, Vec<String>)> {
    let mut reports = Vec::new();
    let mut unread = Vec::new();
    for file in files {
        match read(file) {
            Ok(report) => reports.push(report),
            Err(error) if series => unread.push(format!("{error:#}")),
            Err(error) => return Err(error),
        }
    }
    Ok((reports, unread))
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

/// The largest report read: AWR and STATSPACK reports of a busy database
/// over a day are tens of MiB.
const MAX_REPORT_BYTES: u64 = 256 << 20;
/// How much of a file says whether it is text at all.
const SNIFF_BYTES: usize = 64 << 10;

/// The report's text, read no further than [`MAX_REPORT_BYTES`]; a file
/// whose start is not text (NUL bytes: a binary file, `/dev/zero`) is
/// refused after its first [`SNIFF_BYTES`].
fn read(file: &Path) -> anyhow::Result<AwrReport> {
    use std::io::Read;
    let opened = std::fs::File::open(file).with_context(|| format!("reading {}", show(file)))?;
    let mut reader = opened.take(MAX_REPORT_BYTES + 1);
    let mut bytes = vec![0; SNIFF_BYTES];
    let mut sniffed = 0;
    while sniffed < SNIFF_BYTES {
        match reader.read(&mut bytes[sniffed..])? {
            0 => break,
            read => sniffed += read,
        }
    }
    bytes.truncate(sniffed);
    if bytes.contains(&0) {
        anyhow::bail!(
            "{}: binary data (NUL bytes in its first {} bytes): not an AWR or STATSPACK report",
            show(file),
            bytes.len()
        );
    }
    reader
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {}", show(file)))?;
    if bytes.len() as u64 > MAX_REPORT_BYTES {
        anyhow::bail!(
            "{}: larger than {}: not an AWR or STATSPACK report",
            show(file),
            format_size(MAX_REPORT_BYTES)
        );
    }
    let text = String::from_utf8_lossy(&bytes);
    strata_awr::parse(&text, &show(file))
}

fn show(path: &Path) -> String {
    path.display().to_string()
}
