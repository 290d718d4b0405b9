//! Reading pgio's `pgio.conf` (shell `NAME=value` lines) so people who
//! already run pgio can run the same test with strata.
//!
//! Not for: the shell-line parsing it shares with slob.conf (`conf_file`),
//! deciding what the defaults mean for a run (strata-run's request applies
//! them to a plan and workload) or writing pgio.conf.

use anyhow::{bail, Context as _};
use serde::Serialize;

use crate::conf_file::{
    assignments, bytes_with_suffix, parse_percent, read_text, Assignment, Defaults,
};
use crate::schema::{TableSize, BLOCK_BYTES};

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
    for Assignment {
        line_number,
        name,
        value,
    } in assignments(text, "pgio.conf")?
    {
        set(&mut conf, name, &value)
            .with_context(|| format!("pgio.conf line {line_number}: {name}={value}"))?;
    }
    Ok(conf)
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

/// pgio's SCALE: a size with an IEC suffix (`1G` = 2^30 bytes, `100M`,
/// `512K`, `1T`) or a plain number of 8 KiB blocks.
fn parse_scale_blocks(value: &str) -> anyhow::Result<u64> {
    let upper = value.to_ascii_uppercase();
    match bytes_with_suffix(&upper, "KMGT")? {
        Some(bytes) if bytes < BLOCK_BYTES => bail!("{value} is smaller than one 8 KiB block"),
        Some(bytes) => Ok(bytes / BLOCK_BYTES),
        None => Ok(upper.parse()?),
    }
}

/// The defaults of the pgio.conf at `path` (`--pgio-conf`).
pub fn read(path: &std::path::Path) -> anyhow::Result<Defaults> {
    Ok(defaults(parse(&read_text("--pgio-conf", path)?)?))
}

fn defaults(conf: PgioConf) -> Defaults {
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
    let notes = match conf.unknown.is_empty() {
        true => Vec::new(),
        false => vec![format!("--pgio-conf: ignoring {}", conf.unknown.join(", "))],
    };
    Defaults {
        db,
        schemas: conf.num_schemas,
        scale: conf.scale_blocks.map(TableSize::Blocks),
        threads_per_schema: conf.num_threads,
        // pgio reads `BETWEEN k AND k + WORK_UNIT`: WORK_UNIT + 1 blocks.
        work_unit: conf.work_unit.map(|work_unit| work_unit + 1),
        update_pct: conf.update_pct,
        update_work_unit: conf.update_work_unit,
        duration: conf.run_time_seconds.map(std::time::Duration::from_secs),
        notes,
        ..Defaults::default()
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
    fn errors_name_the_line() {
        let error = parse("RUN_TIME=5\nNUM_SCHEMAS=four\n").unwrap_err();
        assert!(format!("{error:#}").contains("line 2"), "{error:#}");
        assert!(parse("just words\n").is_err());
    }
}
