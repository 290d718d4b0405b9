//! Reading SLOB's own `slob.conf` (SLOB 2.5, shell `NAME=value` lines) so
//! people who run SLOB on Oracle can run the same test with strata: each
//! setting that has a strata equivalent becomes a default with SLOB's own
//! meaning and units, the Oracle-only ones are named (never their values:
//! SYSDBA_PASSWD is a password) and ignored.
//!
//! Not for: the shell-line parsing it shares with pgio.conf (`conf_file`),
//! applying the defaults to a plan and workload (strata-run's request), or
//! writing slob.conf.

use std::time::Duration;

use anyhow::{bail, ensure, Context as _};
use strata_core::input::bounded;

use crate::conf_file::{assignments, bytes_with_suffix, parse_percent, read_text, Defaults};
use crate::schema::{TableSize, BLOCK_BYTES};
use crate::session::Hotspot;

/// SLOB's REDO_STRESS: how much of each row an UPDATE rewrites.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RedoStress {
    /// Two 128-byte columns (c2, c20) of each row.
    Lite,
    /// Nineteen 128-byte columns (c2 to c20) of each row.
    Heavy,
}

impl RedoStress {
    /// Bytes of each updated row that SLOB rewrites, which strata rewrites
    /// in the row's pad (`--update-pad-bytes`).
    pub fn pad_bytes(self) -> u32 {
        match self {
            RedoStress::Lite => 2 * 128,
            RedoStress::Heavy => 19 * 128,
        }
    }
}

/// The settings of one slob.conf strata uses; `None` where the file does
/// not set one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SlobConf {
    pub update_pct: Option<f64>,
    pub scan_pct: Option<f64>,
    pub run_time_seconds: Option<u64>,
    pub work_loop: Option<u64>,
    pub scale: Option<TableSize>,
    pub scan_table_size: Option<TableSize>,
    pub work_unit: Option<u32>,
    pub redo_stress: Option<RedoStress>,
    pub load_parallel_degree: Option<usize>,
    pub threads_per_schema: Option<u32>,
    pub do_hotspot: Option<bool>,
    pub hotspot_mb: Option<u64>,
    pub hotspot_offset_mb: Option<u64>,
    pub hotspot_frequency: Option<u32>,
    pub hot_schema_frequency: Option<u32>,
    pub think_tm_frequency: Option<u32>,
    pub think_tm_min: Option<Duration>,
    pub think_tm_max: Option<Duration>,
    pub obfuscate_columns: Option<bool>,
    /// Oracle-only settings the file sets, by name, in file order.
    pub oracle_only: Vec<String>,
    /// SLOB settings with no strata equivalent (EXTERNAL_SCRIPT).
    pub no_equivalent: Vec<String>,
    /// Names that are no SLOB 2.5 setting.
    pub unknown: Vec<String>,
}

/// SLOB settings for Oracle alone: its statistics reports, its SQL*Net
/// services, its privileged login (a password) and the connect strings
/// SLOB builds from them.
pub const ORACLE_ONLY: [&str; 8] = [
    "DATABASE_STATISTICS_TYPE",
    "ADMIN_SQLNET_SERVICE",
    "SQLNET_SERVICE_BASE",
    "SQLNET_SERVICE_MAX",
    "DBA_PRIV_USER",
    "SYSDBA_PASSWD",
    "ADMIN_CONNECT_STRING",
    "NON_ADMIN_CONNECT_STRING",
];

/// SLOB's own values for hot spot and think-time settings a file leaves out.
const STOCK_HOTSPOT_MB: u64 = 8;
const STOCK_HOTSPOT_OFFSET_MB: u64 = 16;
const STOCK_HOTSPOT_FREQUENCY: u32 = 3;
const STOCK_THINK_TM_MIN: Duration = Duration::from_millis(100);
const STOCK_THINK_TM_MAX: Duration = Duration::from_millis(500);

/// Parses slob.conf text. A bad value is an error naming its line, the
/// setting and the values accepted; Oracle-only and unknown names are
/// listed, never parsed.
pub fn parse(text: &str) -> anyhow::Result<SlobConf> {
    let mut conf = SlobConf::default();
    for assignment in assignments(text, "slob.conf")? {
        let (name, value) = (assignment.name, assignment.value.as_str());
        let line_number = assignment.line_number;
        set(&mut conf, name, value)
            .with_context(|| format!("slob.conf line {line_number}: {name}={value}"))?;
    }
    Ok(conf)
}

fn set(conf: &mut SlobConf, name: &str, value: &str) -> anyhow::Result<()> {
    if set_workload(conf, name, value)? || set_pattern(conf, name, value)? {
        return Ok(());
    }
    match name {
        _ if ORACLE_ONLY.contains(&name) => conf.oracle_only.push(name.to_string()),
        "EXTERNAL_SCRIPT" => conf.no_equivalent.push(name.to_string()),
        _ => conf.unknown.push(name.to_string()),
    }
    Ok(())
}

/// The data set, the loop mix and how the run ends; false for other names.
fn set_workload(conf: &mut SlobConf, name: &str, value: &str) -> anyhow::Result<bool> {
    match name {
        "UPDATE_PCT" => conf.update_pct = Some(parse_percent(value)?),
        "SCAN_PCT" => conf.scan_pct = Some(parse_percent(value)?),
        "RUN_TIME" => conf.run_time_seconds = Some(whole(value, 1, u64::MAX, "seconds")?),
        "WORK_LOOP" => conf.work_loop = Some(whole(value, 0, u64::MAX, "loops (0: RUN_TIME)")?),
        "SCALE" => conf.scale = Some(parse_size(value)?),
        "SCAN_TABLE_SZ" => conf.scan_table_size = Some(parse_size(value)?),
        "WORK_UNIT" => conf.work_unit = Some(whole(value, 2, 1 << 20, "blocks")? as u32),
        "REDO_STRESS" => conf.redo_stress = Some(parse_redo_stress(value)?),
        "LOAD_PARALLEL_DEGREE" => {
            conf.load_parallel_degree = Some(whole(value, 1, 64, "loaders")? as usize)
        }
        "THREADS_PER_SCHEMA" => {
            conf.threads_per_schema = Some(whole(value, 1, 10_000, "sessions")? as u32)
        }
        "OBFUSCATE_COLUMNS" => conf.obfuscate_columns = Some(parse_bool(value)?),
        _ => return Ok(false),
    }
    Ok(true)
}

/// Hot spot, hot schema and think time; false for other names.
fn set_pattern(conf: &mut SlobConf, name: &str, value: &str) -> anyhow::Result<bool> {
    let every = |value: &str| whole(value, 0, 1 << 30, "loops (0: off)").map(|n| n as u32);
    match name {
        "DO_HOTSPOT" => conf.do_hotspot = Some(parse_bool(value)?),
        "HOTSPOT_MB" => conf.hotspot_mb = Some(whole(value, 1, 1 << 30, "MB")?),
        "HOTSPOT_OFFSET_MB" => conf.hotspot_offset_mb = Some(whole(value, 0, 1 << 30, "MB")?),
        "HOTSPOT_FREQUENCY" => conf.hotspot_frequency = Some(every(value)?),
        "HOT_SCHEMA_FREQUENCY" => conf.hot_schema_frequency = Some(every(value)?),
        "THINK_TM_FREQUENCY" => conf.think_tm_frequency = Some(every(value)?),
        "THINK_TM_MIN" => conf.think_tm_min = Some(parse_seconds(value)?),
        "THINK_TM_MAX" => conf.think_tm_max = Some(parse_seconds(value)?),
        _ => return Ok(false),
    }
    Ok(true)
}

/// A whole number of `unit` in `min..=max`.
fn whole(value: &str, min: u64, max: u64, unit: &str) -> anyhow::Result<u64> {
    bounded(value, min, max).map_err(|error| {
        let range = match max {
            u64::MAX => format!("from {min}"),
            _ => format!("from {min} to {max}"),
        };
        anyhow::anyhow!("{error}: give a whole number of {unit} {range}")
    })
}

/// SLOB's SCALE and SCAN_TABLE_SZ: a count of blocks (one row each), or a
/// size with SLOB's suffixes M, G or T (powers of 1024).
fn parse_size(value: &str) -> anyhow::Result<TableSize> {
    let accepted = "give a count of blocks (10000) or a size with M, G or T (80M, 1G)";
    let size = match bytes_with_suffix(value, "MGT") {
        Ok(Some(bytes)) => TableSize::Bytes(bytes),
        Ok(None) => TableSize::Blocks(value.parse().ok().context(accepted)?),
        Err(_) => bail!(accepted),
    };
    match size {
        TableSize::Bytes(bytes) if bytes < BLOCK_BYTES => bail!("less than one block: {accepted}"),
        TableSize::Blocks(0) => bail!("no blocks: {accepted}"),
        size => Ok(size),
    }
}

fn parse_redo_stress(value: &str) -> anyhow::Result<RedoStress> {
    match value.to_ascii_uppercase().as_str() {
        "LITE" => Ok(RedoStress::Lite),
        "HEAVY" => Ok(RedoStress::Heavy),
        _ => bail!("give LITE or HEAVY"),
    }
}

fn parse_bool(value: &str) -> anyhow::Result<bool> {
    match value.to_ascii_uppercase().as_str() {
        "TRUE" => Ok(true),
        "FALSE" => Ok(false),
        _ => bail!("give TRUE or FALSE"),
    }
}

/// SLOB's think times: seconds, fractions allowed (`.1`).
fn parse_seconds(value: &str) -> anyhow::Result<Duration> {
    let accepted = "give seconds from 0 to 3600, fractions allowed (.1)";
    let seconds: f64 = value.parse().ok().context(accepted)?;
    ensure!((0.0..=3600.0).contains(&seconds), accepted);
    Ok(Duration::from_secs_f64(seconds))
}

/// The defaults of the slob.conf at `path` (`--slob-conf`); a bad value
/// is an error naming the file.
pub fn read(path: &std::path::Path) -> anyhow::Result<Defaults> {
    let text = read_text("--slob-conf", path)?;
    parse(&text)
        .and_then(defaults)
        .with_context(|| format!("--slob-conf {}", path.display()))
}

/// strata's defaults from SLOB's settings, in strata's units.
pub fn defaults(conf: SlobConf) -> anyhow::Result<Defaults> {
    let work_loops = conf.work_loop.filter(|&loops| loops > 0);
    // SLOB reads and updates `custid > r - WORK_UNIT AND custid < r`.
    let rows = conf.work_unit.map(|work_unit| work_unit - 1);
    let (think_time, think_every) = think(&conf)?;
    Ok(Defaults {
        scale: conf.scale,
        scan_table_size: conf.scan_table_size,
        random_data: conf.obfuscate_columns == Some(true),
        load_parallel: conf.load_parallel_degree,
        threads_per_schema: conf.threads_per_schema,
        work_unit: rows,
        update_pct: conf.update_pct,
        update_work_unit: rows,
        update_pad_bytes: conf.redo_stress.map(RedoStress::pad_bytes),
        scan_pct: conf.scan_pct,
        think_time,
        think_every,
        hotspot: hotspot(&conf)?,
        hot_schema_every: conf.hot_schema_frequency.filter(|&every| every > 0),
        duration: conf.run_time_seconds.map(Duration::from_secs),
        work_loops,
        notes: notes(&conf),
        ..Defaults::default()
    })
}

/// strata's think time: the pause's range and after how many loops.
type Think = (Option<(Duration, Duration)>, Option<u32>);

/// THINK_TM_FREQUENCY (0: none) with THINK_TM_MIN and THINK_TM_MAX.
fn think(conf: &SlobConf) -> anyhow::Result<Think> {
    let shortest = conf.think_tm_min.unwrap_or(STOCK_THINK_TM_MIN);
    let longest = conf.think_tm_max.unwrap_or(STOCK_THINK_TM_MAX);
    if shortest > longest {
        bail!(
            "THINK_TM_MIN ({}s) is more than THINK_TM_MAX ({}s): give MIN <= MAX",
            shortest.as_secs_f64(),
            longest.as_secs_f64()
        );
    }
    Ok(match conf.think_tm_frequency.filter(|&every| every > 0) {
        Some(every) => (Some((shortest, longest)), Some(every)),
        None => (None, None),
    })
}

/// DO_HOTSPOT=TRUE: HOTSPOT_MB at HOTSPOT_OFFSET_MB, every
/// HOTSPOT_FREQUENCYth loop, in SLOB's 8 KiB blocks, inside SCALE.
fn hotspot(conf: &SlobConf) -> anyhow::Result<Option<Hotspot>> {
    if conf.do_hotspot != Some(true) {
        return Ok(None);
    }
    let blocks_per_mb = (1 << 20) / BLOCK_BYTES;
    let size_mb = conf.hotspot_mb.unwrap_or(STOCK_HOTSPOT_MB);
    let offset_mb = conf.hotspot_offset_mb.unwrap_or(STOCK_HOTSPOT_OFFSET_MB);
    let every = conf.hotspot_frequency.unwrap_or(STOCK_HOTSPOT_FREQUENCY);
    ensure!(
        every > 0,
        "DO_HOTSPOT=TRUE needs HOTSPOT_FREQUENCY of at least 1 (or give DO_HOTSPOT=FALSE)"
    );
    let scale_mb = match conf.scale {
        Some(TableSize::Bytes(bytes)) => Some(bytes >> 20),
        Some(TableSize::Blocks(blocks)) => Some(blocks / blocks_per_mb),
        None => None,
    };
    if let Some(scale_mb) = scale_mb.filter(|&scale_mb| offset_mb + size_mb > scale_mb) {
        bail!(
            "HOTSPOT_OFFSET_MB {offset_mb} + HOTSPOT_MB {size_mb} is beyond SCALE ({scale_mb} MB): \
             the hot spot must lie inside the table"
        );
    }
    Ok(Some(Hotspot {
        offset_blocks: offset_mb * blocks_per_mb,
        size_blocks: size_mb * blocks_per_mb,
        every,
    }))
}

/// What the file sets that strata ignores, by name and why; never values.
fn notes(conf: &SlobConf) -> Vec<String> {
    let mut notes = Vec::new();
    let mut ignoring = |names: &[String], why: &str| {
        if !names.is_empty() {
            notes.push(format!(
                "--slob-conf: ignoring {} ({why})",
                names.join(", ")
            ));
        }
    };
    ignoring(
        &conf.oracle_only,
        "Oracle only: AWR/Statspack, SQL*Net and the SYSDBA login; strata reads the \
         server's own statistics and connects with --db",
    );
    ignoring(
        &conf.no_equivalent,
        "strata runs no script of yours around the run",
    );
    ignoring(&conf.unknown, "not a SLOB 2.5 setting strata knows");
    if let (Some(loops), Some(_)) = (conf.work_loop.filter(|&n| n > 0), conf.run_time_seconds) {
        notes.push(format!(
            "--slob-conf: WORK_LOOP={loops} ends the run, not RUN_TIME (as in SLOB)"
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_unit_is_slob_s_open_range() {
        let defaults = defaults(parse("WORK_UNIT=64\nREDO_STRESS=HEAVY\n").unwrap()).unwrap();
        assert_eq!(defaults.work_unit, Some(63));
        assert_eq!(defaults.update_work_unit, Some(63));
        assert_eq!(defaults.update_pad_bytes, Some(2432));
    }

    #[test]
    fn think_time_and_hot_spots_are_off_at_frequency_zero() {
        let text =
            "THINK_TM_FREQUENCY=0\nTHINK_TM_MIN=.1\nDO_HOTSPOT=FALSE\nHOT_SCHEMA_FREQUENCY=0\n";
        let defaults = defaults(parse(text).unwrap()).unwrap();
        assert_eq!(defaults.think_time, None);
        assert_eq!(defaults.think_every, None);
        assert!(defaults.hotspot.is_none());
        assert_eq!(defaults.hot_schema_every, None);
    }
}
