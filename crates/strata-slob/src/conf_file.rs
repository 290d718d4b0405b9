//! What pgio.conf and slob.conf share: both are shell files of `NAME=value`
//! lines (comments, quotes, `export`) that pgio's and SLOB's scripts source,
//! and both become the same [`Defaults`] for `strata run` — applied where
//! an option was not given on the command line.
//!
//! Not for: what any one file's settings mean (`pgio_conf`, `slob_conf`),
//! or applying the defaults to a plan and workload (strata-run's request).

use std::time::Duration;

use anyhow::{bail, Context as _};

use crate::schema::TableSize;
use crate::session::Hotspot;

/// One `NAME=value` line of a configuration file, unquoted.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment<'a> {
    /// From 1.
    pub line_number: usize,
    pub name: &'a str,
    pub value: String,
}

/// The assignments of `text`, in file order. Blank lines, comments and
/// `export NAME…` lines are skipped. An error names `file` and the line but
/// never echoes it: a line may hold a password.
pub fn assignments<'a>(text: &'a str, file: &str) -> anyhow::Result<Vec<Assignment<'a>>> {
    let mut found = Vec::new();
    for (index, raw_line) in text.lines().enumerate() {
        let line_number = index + 1;
        let assignment =
            split_assignment(raw_line).with_context(|| format!("{file} line {line_number}"))?;
        if let Some((name, value)) = assignment {
            found.push(Assignment {
                line_number,
                name,
                value,
            });
        }
    }
    Ok(found)
}

/// `NAME=value` without comment, `export` and quotes; `None` for blank,
/// comment and bare `export NAME NAME…` lines.
fn split_assignment(raw_line: &str) -> anyhow::Result<Option<(&str, String)>> {
    let line = raw_line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let line = line.strip_prefix("export ").map_or(line, str::trim_start);
    let Some((name, rest)) = line.split_once('=') else {
        if raw_line.trim_start().starts_with("export ") && line.split_whitespace().all(is_name) {
            return Ok(None);
        }
        bail!("not a NAME=value line");
    };
    let name = name.trim();
    if !is_name(name) {
        bail!("the part before '=' is not a shell variable name");
    }
    Ok(Some((name, unquote(rest.trim())?)))
}

fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
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

/// A percentage from 0 to 100.
pub fn parse_percent(value: &str) -> anyhow::Result<f64> {
    let accepted = "give a percentage from 0 to 100";
    let percent: f64 = value.parse().ok().context(accepted)?;
    if !(0.0..=100.0).contains(&percent) {
        bail!(accepted);
    }
    Ok(percent)
}

/// Bytes of a whole number with one of `suffixes` (each letter a power of
/// 1024: K 2^10, M 2^20, G 2^30, T 2^40); `None` without a suffix.
pub fn bytes_with_suffix(value: &str, suffixes: &str) -> anyhow::Result<Option<u64>> {
    let shifts = [('K', 10u32), ('M', 20), ('G', 30), ('T', 40)];
    for (suffix, shift) in shifts.into_iter().filter(|(c, _)| suffixes.contains(*c)) {
        if let Some(number) = value.strip_suffix(suffix) {
            let count: u64 = number.trim().parse()?;
            let bytes = count
                .checked_mul(1u64 << shift)
                .with_context(|| format!("{value} is too large"))?;
            return Ok(Some(bytes));
        }
    }
    Ok(None)
}

/// Defaults taken from a pgio.conf or a slob.conf, applied where an option
/// was not given; `None` (or false) where the file does not set one.
#[derive(Clone, Debug, Default)]
pub struct Defaults {
    pub db: Option<String>,
    pub schemas: Option<u32>,
    pub scale: Option<TableSize>,
    pub scan_table_size: Option<TableSize>,
    /// Only ever turns `--random-data` on.
    pub random_data: bool,
    pub load_parallel: Option<usize>,
    pub threads_per_schema: Option<u32>,
    pub work_unit: Option<u32>,
    pub update_pct: Option<f64>,
    pub update_work_unit: Option<u32>,
    pub update_pad_bytes: Option<u32>,
    pub scan_pct: Option<f64>,
    pub think_time: Option<(Duration, Duration)>,
    pub think_every: Option<u32>,
    pub hotspot: Option<Hotspot>,
    pub hot_schema_every: Option<u32>,
    pub duration: Option<Duration>,
    /// Batch mode: ends the run instead of `duration`.
    pub work_loops: Option<u64>,
    /// What to say on stderr about the file (the settings it ignores, by
    /// name only), without the `strata: ` prefix.
    pub notes: Vec<String>,
}

/// The text of a configuration file; an error names the option and path.
pub fn read_text(option: &str, path: &std::path::Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path)
        .map_err(|error| anyhow::anyhow!("{option} {}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_comments_and_export_are_shell_like() {
        let text = "export DBNAME='pg 10' # db\nX=\"host=x\"\nRUN_TIME=5 # s\n\
                    export A B_2 C\n  # indented comment\n";
        let found = assignments(text, "f.conf").unwrap();
        let pairs: Vec<_> = found.iter().map(|a| (a.name, a.value.as_str())).collect();
        assert_eq!(
            pairs,
            [("DBNAME", "pg 10"), ("X", "host=x"), ("RUN_TIME", "5")]
        );
        assert_eq!(found[2].line_number, 3);
    }

    #[test]
    fn a_bad_line_is_named_by_file_and_number_never_by_its_text() {
        let error = assignments("A=1\nSYSDBA_PASSWD=\"hunter2\n", "slob.conf").unwrap_err();
        let message = format!("{error:#}");
        assert!(message.contains("slob.conf line 2"), "{message}");
        assert!(message.contains("unterminated"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
        assert!(assignments("just words\n", "f").is_err());
        assert!(assignments("export A=1 B\n", "f").is_ok());
        assert!(assignments("1A=2\n", "f").is_err());
    }

    #[test]
    fn sizes_take_only_the_suffixes_given() {
        assert_eq!(bytes_with_suffix("2M", "MGT").unwrap(), Some(2 << 20));
        assert_eq!(bytes_with_suffix("1T", "KMGT").unwrap(), Some(1 << 40));
        assert_eq!(bytes_with_suffix("64K", "MGT").unwrap(), None);
        assert_eq!(bytes_with_suffix("4096", "KMGT").unwrap(), None);
        assert!(bytes_with_suffix("xG", "G").is_err());
        assert!(bytes_with_suffix("99999999999T", "T").is_err());
    }
}
