//! Writing a command's output where `--output`/`--html` say (else standard
//! output): rendered at once in the format asked for, or streamed piece by
//! piece (observe's samples).
//!
//! Not for: the options themselves (`strata_output::args`), building
//! documents (each command's crate) or laying them out (the renderers).

use anyhow::{bail, Context};
use strata_output::args::OutputArgs;
use strata_output::render::{render, Format};
use strata_output::Output;

/// Renders `output` in the format `args` asked for and writes it.
pub fn print(args: &OutputArgs, output: &Output) -> anyhow::Result<()> {
    let format = args.chosen();
    let own = match format {
        Format::Text => output.text.clone(),
        Format::Json => output.json.clone(),
        Format::Csv => output.csv.clone(),
        Format::Html => None,
    };
    let text = match (own, &output.document) {
        (Some(text), _) => text,
        (None, Some(report)) => render(report, format),
        (None, None) => bail!("--format {}: nothing to print in it", format.name()),
    };
    write(args, &text, format)
}

fn write(args: &OutputArgs, text: &str, format: Format) -> anyhow::Result<()> {
    match args.file() {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            crate::note!("strata: {} written to {}", format.name(), path.display());
            Ok(())
        }
        None => Ok(crate::out!("{text}")?),
    }
}

/// Output written piece by piece as it comes (observe's samples), to
/// `--output FILE` or standard output, each piece flushed.
pub struct Stream {
    file: Option<std::io::BufWriter<std::fs::File>>,
}

impl Stream {
    pub fn open(args: &OutputArgs) -> anyhow::Result<Stream> {
        let file = match args.file() {
            Some(path) => Some(std::io::BufWriter::new(
                std::fs::File::create(path)
                    .with_context(|| format!("creating {}", path.display()))?,
            )),
            None => None,
        };
        Ok(Stream { file })
    }

    pub fn write(&mut self, text: &str) -> anyhow::Result<()> {
        use std::io::Write as _;
        match &mut self.file {
            Some(file) => {
                file.write_all(text.as_bytes())?;
                file.flush()?;
            }
            None => {
                crate::out!("{text}")?;
                crate::stdout::flush()?;
            }
        }
        Ok(())
    }
}
