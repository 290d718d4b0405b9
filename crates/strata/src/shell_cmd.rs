//! `strata completions SHELL` and `strata man`: shell completion scripts
//! and roff manual pages generated from the same clap definitions that
//! parse the command line, so they never disagree with `--help`.
//!
//! Not for: anything a command does; these only describe the commands.

use anyhow::Context;
use clap::Args;
use clap_complete::Shell;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    #[arg(value_name = "SHELL")]
    shell: Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write strata.1 and a page per subcommand (strata-run.1, …) into DIR
    /// instead of printing strata(1)
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Prints the completion script for `args.shell`.
pub fn completions(args: CompletionsArgs) -> anyhow::Result<i32> {
    let mut command = crate::command_line();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "strata", &mut script);
    crate::out!("{}", String::from_utf8_lossy(&script))?;
    Ok(0)
}

/// Prints strata(1), or writes every page into `--dir`.
pub fn man(args: ManArgs) -> anyhow::Result<i32> {
    let command = crate::command_line();
    let Some(dir) = args.dir else {
        crate::out!("{}", page(&command, "strata")?)?;
        return Ok(0);
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("--dir {}", dir.display()))?;
    let mut written = vec![write_page(&dir, "strata", &command)?];
    for sub in command.get_subcommands() {
        let name = format!("strata-{}", sub.get_name());
        let sub = sub
            .clone()
            .name(name.clone())
            .bin_name(format!("strata {}", sub.get_name()));
        written.push(write_page(&dir, &name, &sub)?);
    }
    crate::note!(
        "strata: {} manual pages written to {}",
        written.len(),
        dir.display()
    );
    Ok(0)
}

fn page(command: &clap::Command, title: &str) -> anyhow::Result<String> {
    let mut roff = Vec::new();
    clap_mangen::Man::new(command.clone())
        .title(title.to_uppercase())
        .render(&mut roff)?;
    Ok(String::from_utf8_lossy(&roff).into_owned())
}

fn write_page(
    dir: &std::path::Path,
    name: &str,
    command: &clap::Command,
) -> anyhow::Result<PathBuf> {
    let path = dir.join(format!("{name}.1"));
    std::fs::write(&path, page(command, name)?)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}
