//! Reading pgio's `pgio.conf` (shell `NAME=value` lines) so people who
//! already run pgio can run the same test with strata.
//!
//! Not for: deciding what the defaults mean for a run (strata-run's
//! request applies them to a plan and workload) or writing pgio.conf.

use anyhow::{bail, Context as _};
use serde::Serialize;

use crate::schema::BLOCK_BYTES;

/// The settings of one pgio.conf; `None` where the file does not set one.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PgioConf {
    pub update_pct: Option<f64>,
    pub run_time_seconds: Option<u64>,
    pub num_schemas: Option<u32>,
    pub num_threads: Option<u32>,
    pub work_unit: Option<u32>,
    pub update_work_unit: Option<u32>,
    /// SCALE, converted to 8 KiB blocks per schema.
    pub scale_blocks: Option<u64>,
    pub dbname: Option<String>,
    pub connect_string: Option<String>,
    /// Names the file sets that strata does not use, in file order.
    pub unknown: Vec<String>,
}

/// Parses pgio.conf text. Unknown names are listed in `unknown`; a line
/// that is not an assignment, or a bad number, is an error naming its line.
pub fn parse(text: &str) -> anyhow::Result<PgioConf> {
    let mut conf = PgioConf::default();
    for (index, raw_line) in text.lines().enumerate() {
        let line_number = index + 1;
        let Some((name, value)) = split_assignment(raw_line)
            .with_context(|| format!("pgio.conf line {line_number}: {raw_line:?}"))?
        else {
            continue;
        };
        set(&mut conf, name, &value)
            .with_context(|| format!("pgio.conf line {line_number}: {name}={value}"))?;
    }
    Ok(conf)
}

/// `NAME=value` without comment, `export` and quotes; `None` for blank and
/// comment lines.
fn split_assignment(raw_line: &str) -> anyhow::Result<Option<(&str, String)>> {
    let line = raw_line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let line = line.strip_prefix("export ").map_or(line, str::trim_start);
    let Some((name, rest)) = line.split_once('=') else {
        bail!("not a NAME=value line");
    };
    let name = name.trim();
    let valid_name = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !valid_name {
        bail!("{name:?} is not a shell variable name");
    }
    Ok(Some((name, unquote(rest.trim())?)))
}

fn unquote(value: &str) -> anyhow::Result<String> {
    for quote in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(quote) {
            let Some(end) = inner.find(quote) else {
                bail!("unterminated {quote} quote");
            };
            return Ok(inner[..end].to_string());
        }
    }
    let unquoted = match value.find(" #").or_else(|| value.find("\t#")) {
        Some(comment) => &value[..comment],
        None => value,
    };
    Ok(unquoted.trim().to_string())
}

fn set(conf: &mut PgioConf, name: &str, value: &str) -> anyhow::Result<()> {
    match name {
        "UPDATE_PCT" => conf.update_pct = Some(parse_percent(value)?),
        "RUN_TIME" => conf.run_time_seconds = Some(value.parse()?),
        "NUM_SCHEMAS" => conf.num_schemas = Some(value.parse()?),
        "NUM_THREADS" => conf.num_threads = Some(value.parse()?),
        "WORK_UNIT" => conf.work_unit = Some(value.parse()?),
        "UPDATE_WORK_UNIT" => conf.update_work_unit = Some(value.parse()?),
        "SCALE" => conf.scale_blocks = Some(parse_scale_blocks(value)?),
        "DBNAME" => conf.dbname = Some(value.to_string()),
        "CONNECT_STRING" => conf.connect_string = Some(value.to_string()),
        _ => conf.unknown.push(name.to_string()),
    }
    Ok(())
}

fn parse_percent(value: &str) -> anyhow::Result<f64> {
    let percent: f64 = value.parse()?;
    if !(0.0..=100.0).contains(&percent) {
        bail!("{percent} is not a percentage from 0 to 100");
    }
    Ok(percent)
}

/// pgio's SCALE: a size with an IEC suffix (`1G` = 2^30 bytes, `100M`,
/// `512K`, `1T`) or a plain number of 8 KiB blocks.
fn parse_scale_blocks(value: &str) -> anyhow::Result<u64> {
    let upper = value.to_ascii_uppercase();
    let suffixes = [('K', 10u32), ('M', 20), ('G', 30), ('T', 40)];
    for (suffix, shift) in suffixes {
        if let Some(number) = upper.strip_suffix(suffix) {
            let count: u64 = number.trim().parse()?;
            let bytes = count
                .checked_mul(1u64 << shift)
                .with_context(|| format!("{value} is too large"))?;
            if bytes < BLOCK_BYTES {
                bail!("{value} is smaller than one 8 KiB block");
            }
            return Ok(bytes / BLOCK_BYTES);
        }
    }
    Ok(upper.parse()?)
}

/// Defaults taken from a pgio.conf, applied where an option was not given.
#[derive(Clone, Debug, Default)]
pub struct Defaults {
    pub db: Option<String>,
    pub schemas: Option<u32>,
    pub scale_blocks: Option<u64>,
    pub threads_per_schema: Option<u32>,
    pub work_unit: Option<u32>,
    pub update_pct: Option<f64>,
    pub update_work_unit: Option<u32>,
    pub duration: Option<std::time::Duration>,
    /// Names the file sets that strata does not use.
    pub ignored: Vec<String>,
}

impl Defaults {
    /// The defaults of the pgio.conf at `path` (`--pgio-conf`); none
    /// without one.
    pub fn read(path: Option<&std::path::Path>) -> anyhow::Result<Defaults> {
        let Some(path) = path else {
            return Ok(Defaults::default());
        };
        let text = std::fs::read_to_string(path)
            .map_err(|error| anyhow::anyhow!("--pgio-conf {}: {error}", path.display()))?;
        Ok(Defaults::of(parse(&text)?))
    }

    fn of(conf: PgioConf) -> Defaults {
        let db = conf
            .connect_string
            .clone()
            .or(conf.dbname.clone())
            .map(|value| {
                if value.contains('=') || value.contains("://") {
                    value
                } else {
                    format!("dbname={value}")
                }
            });
        Defaults {
            db,
            schemas: conf.num_schemas,
            scale_blocks: conf.scale_blocks,
            threads_per_schema: conf.num_threads,
            // pgio reads `BETWEEN k AND k + WORK_UNIT`: WORK_UNIT + 1 blocks.
            work_unit: conf.work_unit.map(|work_unit| work_unit + 1),
            update_pct: conf.update_pct,
            update_work_unit: conf.update_work_unit,
            duration: conf.run_time_seconds.map(std::time::Duration::from_secs),
            ignored: conf.unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_units_are_iec_and_plain_numbers_are_blocks() {
        assert_eq!(parse_scale_blocks("1G").unwrap(), 131_072);
        assert_eq!(parse_scale_blocks("100M").unwrap(), 12_800);
        assert_eq!(parse_scale_blocks("64k").unwrap(), 8);
        assert_eq!(parse_scale_blocks("4096").unwrap(), 4096);
        assert!(parse_scale_blocks("1X").is_err());
        assert!(parse_scale_blocks("4K").is_err());
    }

    #[test]
    fn quotes_comments_and_export_are_shell_like() {
        let conf = parse("export DBNAME='pg 10' # db\nCONNECT_STRING=\"host=x\"\nRUN_TIME=5 # s\n")
            .unwrap();
        assert_eq!(conf.dbname.as_deref(), Some("pg 10"));
        assert_eq!(conf.connect_string.as_deref(), Some("host=x"));
        assert_eq!(conf.run_time_seconds, Some(5));
    }

    #[test]
    fn errors_name_the_line() {
        let error = parse("RUN_TIME=5\nNUM_SCHEMAS=four\n").unwrap_err();
        assert!(format!("{error:#}").contains("line 2"), "{error:#}");
        assert!(parse("just words\n").is_err());
    }
}
