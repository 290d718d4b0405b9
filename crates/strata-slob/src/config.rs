//! Which configuration file `strata run` takes its defaults from:
//! `--pgio-conf` or `--slob-conf`, never both.
//!
//! Not for: reading either file (`pgio_conf`, `slob_conf`) or the shell
//! lines they share (`conf_file`).

use crate::conf_file::Defaults;
use anyhow::bail;
use std::path::Path;

/// The defaults of `--pgio-conf` or `--slob-conf` (clap refuses both);
/// none without either.
pub fn defaults(pgio_conf: Option<&Path>, slob_conf: Option<&Path>) -> anyhow::Result<Defaults> {
    match (pgio_conf, slob_conf) {
        (Some(_), Some(_)) => bail!("give --pgio-conf or --slob-conf, not both"),
        (Some(path), None) => crate::pgio_conf::read(path),
        (None, Some(path)) => crate::slob_conf::read(path),
        (None, None) => Ok(Defaults::default()),
    }
}
