//! The output options every command takes: `--format text|json|csv|html`
//! (`--json` is `--format json`), `--output FILE` (else standard output)
//! and `--html FILE` (`--format html --output FILE`), the same in every
//! command; and the Recording an HTML page is made from.
//!
//! Not for: writing the output (the binary writes to standard output or
//! the file, through `strata_output::render`).

use crate::render::Format;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Output format: text, json, csv or html
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = format)]
    pub format: Format,

    /// The same as --format json
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Write the output to FILE instead of standard output
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The same as --format html --output FILE
    #[arg(long, value_name = "FILE", conflicts_with_all = ["format", "json", "output"])]
    pub html: Option<PathBuf>,
}

fn format(input: &str) -> Result<Format, String> {
    Format::parse(input).ok_or_else(|| {
        format!(
            "'{input}' is not an output format; accepted: {}",
            Format::NAMES.join(", ")
        )
    })
}

impl OutputArgs {
    /// The format asked for, `--json` and `--html` included.
    pub fn chosen(&self) -> Format {
        match (&self.html, self.json) {
            (Some(_), _) => Format::Html,
            (None, true) => Format::Json,
            (None, false) => self.format,
        }
    }

    /// Where the output goes: `--html`'s or `--output`'s file, else stdout.
    pub fn file(&self) -> Option<&PathBuf> {
        self.html.as_ref().or(self.output.as_ref())
    }

    /// Refuses, before any work, an output file that could not be written
    /// at the end: its directory missing, not writable, or the file itself
    /// read-only. Nothing is left behind by the check.
    pub fn check_writable(&self) -> anyhow::Result<()> {
        let Some(file) = self.file() else {
            return Ok(());
        };
        let option = match self.html {
            Some(_) => "--html",
            None => "--output",
        };
        if file.exists() {
            std::fs::OpenOptions::new()
                .write(true)
                .open(file)
                .with_context(|| format!("{option} {}: cannot be written", file.display()))?;
            return Ok(());
        }
        let dir = match file.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => std::path::Path::new("."),
        };
        if !dir.is_dir() {
            anyhow::bail!(
                "{option} {}: its directory {} does not exist",
                file.display(),
                dir.display()
            );
        }
        tempfile::Builder::new()
            .prefix(".strata-check-")
            .tempfile_in(dir)
            .map(drop)
            .with_context(|| {
                format!(
                    "{option} {}: no file can be created in {}",
                    file.display(),
                    dir.display()
                )
            })
    }

    /// Whether the text for a terminal is what goes to standard output
    /// (live progress and tables may then be drawn there).
    pub fn text_to_stdout(&self) -> bool {
        self.chosen() == Format::Text && self.file().is_none()
    }
}

/// Where a command's Recording goes: the file asked for, else, when the
/// HTML page (the report of the Recording) is asked for, a temporary file
/// removed when this is dropped, else none.
pub enum RecordingPath {
    Asked(PathBuf),
    Temporary(tempfile::TempPath),
    None,
}

impl RecordingPath {
    pub fn for_output(asked: Option<PathBuf>, format: Format) -> anyhow::Result<RecordingPath> {
        Ok(match (asked, format) {
            (Some(path), _) => RecordingPath::Asked(path),
            (None, Format::Html) => RecordingPath::Temporary(
                tempfile::Builder::new()
                    .prefix(".strata-report-")
                    .suffix(".strata")
                    .tempfile()
                    .context("a temporary Recording for the HTML page")?
                    .into_temp_path(),
            ),
            (None, _) => RecordingPath::None,
        })
    }

    pub fn path(&self) -> Option<PathBuf> {
        match self {
            RecordingPath::Asked(path) => Some(path.clone()),
            RecordingPath::Temporary(path) => Some(path.to_path_buf()),
            RecordingPath::None => None,
        }
    }
}
