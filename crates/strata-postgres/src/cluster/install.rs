//! Finding the PostgreSQL server binaries (`initdb`, `postgres`) and their
//! version. Not for: installing PostgreSQL.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment variable naming a directory with `initdb` and `postgres`.
pub const PG_BIN_ENV: &str = "STRATA_PG_BIN";

#[derive(Debug, Clone)]
pub struct PgInstall {
    pub bin_dir: PathBuf,
    pub version_num: u32,
}

impl PgInstall {
    /// Uses `explicit`, else `$STRATA_PG_BIN`, else `pg_config --bindir`,
    /// else the highest `/usr/lib/postgresql/*/bin`.
    pub fn locate(explicit: Option<&Path>) -> Result<PgInstall> {
        let bin_dir = locate_bin_dir(explicit)?;
        let version_num = binary_version_num(&bin_dir.join("postgres"))?;
        Ok(PgInstall {
            bin_dir,
            version_num,
        })
    }

    pub fn binary(&self, name: &str) -> PathBuf {
        self.bin_dir.join(name)
    }
}

fn locate_bin_dir(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(dir) = explicit {
        return require_server_binaries(dir, "--pg-bin");
    }
    if let Some(dir) = std::env::var_os(PG_BIN_ENV) {
        return require_server_binaries(Path::new(&dir), PG_BIN_ENV);
    }
    if let Some(dir) = pg_config_bindir().filter(|dir| has_server_binaries(dir)) {
        return Ok(dir);
    }
    if let Some(dir) = highest_debian_bin_dir(Path::new("/usr/lib/postgresql")) {
        return Ok(dir);
    }
    bail!(
        "cannot find PostgreSQL server binaries (initdb, postgres): set {PG_BIN_ENV}, put \
         pg_config on PATH, or install them under /usr/lib/postgresql/<version>/bin"
    )
}

fn require_server_binaries(dir: &Path, source: &str) -> Result<PathBuf> {
    if has_server_binaries(dir) {
        return Ok(dir.to_path_buf());
    }
    bail!(
        "{} (from {source}) does not hold both initdb and postgres",
        dir.display()
    )
}

fn has_server_binaries(dir: &Path) -> bool {
    dir.join("initdb").is_file() && dir.join("postgres").is_file()
}

fn pg_config_bindir() -> Option<PathBuf> {
    let output = Command::new("pg_config").arg("--bindir").output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| PathBuf::from(text.trim()))
}

fn highest_debian_bin_dir(root: &Path) -> Option<PathBuf> {
    std::fs::read_dir(root)
        .ok()?
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let version = parse_version_parts(entry.file_name().to_str()?)?;
            let bin = entry.path().join("bin");
            has_server_binaries(&bin).then_some((version, bin))
        })
        .max()
        .map(|(_, bin)| bin)
}

fn binary_version_num(postgres: &Path) -> Result<u32> {
    let output = Command::new(postgres)
        .arg("--version")
        .output()
        .with_context(|| format!("running {} --version", postgres.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    parse_version_output(&text).with_context(|| {
        format!(
            "reading the version from `{} --version`, which printed {:?}",
            postgres.display(),
            text.trim()
        )
    })
}

/// `postgres (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)` → 150020;
/// `9.6.24` → 90624, the `server_version_num` encoding.
pub fn parse_version_output(text: &str) -> Result<u32> {
    let version = text
        .split_once("(PostgreSQL)")
        .map_or(text, |(_, rest)| rest)
        .split_whitespace()
        .next()
        .context("no version number")?;
    let parts = parse_version_parts(version).context("no version number")?;
    let part = |i: usize| parts.get(i).copied().unwrap_or(0);
    Ok(if part(0) >= 10 {
        part(0) * 10_000 + part(1)
    } else {
        part(0) * 10_000 + part(1) * 100 + part(2)
    })
}

/// Leading dotted numbers: `15.20` → [15, 20], `18beta1` → [18], `9.6` → [9, 6].
fn parse_version_parts(text: &str) -> Option<Vec<u32>> {
    let mut parts = Vec::new();
    for piece in text.split('.') {
        let digits: String = piece.chars().take_while(char::is_ascii_digit).collect();
        let Ok(number) = digits.parse() else { break };
        parts.push(number);
        if digits.len() < piece.len() {
            break;
        }
    }
    (!parts.is_empty()).then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_output_becomes_version_num() {
        let debian = "postgres (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)\n";
        assert_eq!(parse_version_output(debian).unwrap(), 150020);
        assert_eq!(
            parse_version_output("postgres (PostgreSQL) 18.6").unwrap(),
            180006
        );
        assert_eq!(
            parse_version_output("postgres (PostgreSQL) 18beta1").unwrap(),
            180000
        );
        assert_eq!(
            parse_version_output("postgres (PostgreSQL) 9.6.24").unwrap(),
            90624
        );
        assert!(parse_version_output("postgres (PostgreSQL) devel").is_err());
    }
}
