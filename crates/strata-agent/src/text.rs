//! Prometheus's text exposition format (version 0.0.4) read into series:
//! `name{label="value",…} value [timestamp]`, `# HELP` and `# TYPE`
//! lines skipped, label values unescaped (`\\`, `\"`, `\n`).
//!
//! prometheus-parse, the crate for this, splits label values at every `,`
//! and `=` (a strata agent's `md_members="sda,sdb"` comes out wrong), so
//! the format is read here, as its specification gives it.
//!
//! Not for: OpenMetrics' extra syntax (exemplars, `# EOF` is only skipped).

use anyhow::{bail, Context};
use std::collections::BTreeMap;

/// One sample of one series.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

impl Series {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.get(key).map(String::as_str)
    }
}

/// Every sample of an exposition; a line that is not one is an error
/// naming its number.
pub fn parse(text: &str) -> anyhow::Result<Vec<Series>> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
        .map(|(index, line)| {
            parse_line(line.trim()).with_context(|| format!("line {}: {line:?}", index + 1))
        })
        .collect()
}

fn parse_line(line: &str) -> anyhow::Result<Series> {
    let name_end = line
        .find(|c: char| c == '{' || c.is_whitespace())
        .context("a sample has a name and a value")?;
    let name = &line[..name_end];
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    {
        bail!("{name:?} is not a metric name");
    }
    let (labels, rest) = match line[name_end..].strip_prefix('{') {
        Some(inside) => parse_labels(inside)?,
        None => (BTreeMap::new(), &line[name_end..]),
    };
    let value = rest
        .split_whitespace()
        .next()
        .context("a sample has a value")?;
    Ok(Series {
        name: name.to_string(),
        labels,
        value: parse_value(value)?,
    })
}

/// The labels up to the closing `}`, and the text after it.
fn parse_labels(mut text: &str) -> anyhow::Result<(BTreeMap<String, String>, &str)> {
    let mut labels = BTreeMap::new();
    loop {
        text = text.trim_start_matches([' ', ',']);
        if let Some(rest) = text.strip_prefix('}') {
            return Ok((labels, rest));
        }
        let (key, after_key) = text.split_once('=').context("a label without `=`")?;
        let quoted = after_key
            .strip_prefix('"')
            .context("a label value without its opening quote")?;
        let (value, after_value) = unquote(quoted)?;
        labels.insert(key.trim().to_string(), value);
        text = after_value;
    }
}

/// An escaped value up to its closing quote, and the text after it.
fn unquote(text: &str) -> anyhow::Result<(String, &str)> {
    let mut value = String::new();
    let mut chars = text.char_indices();
    while let Some((index, c)) = chars.next() {
        match c {
            '"' => return Ok((value, &text[index + 1..])),
            '\\' => match chars.next() {
                Some((_, 'n')) => value.push('\n'),
                Some((_, escaped)) => value.push(escaped),
                None => break,
            },
            c => value.push(c),
        }
    }
    bail!("a label value without its closing quote")
}

fn parse_value(text: &str) -> anyhow::Result<f64> {
    match text {
        "+Inf" | "Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ => text
            .parse()
            .with_context(|| format!("{text:?} is not a number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_with_commas_quotes_and_escapes_read_whole() {
        let text = "# HELP x y\n# TYPE strata_device_in_flight gauge\n\
            strata_device_in_flight{host=\"db1\",md_members=\"sda,sdb\",odd=\"a=\\\"b\\\\\\n\"} 2\n\
            node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 1.5e3 1700000000000\n\
            up 1\nnan_value NaN\n";
        let series = parse(text).unwrap();
        assert_eq!(series.len(), 4);
        assert_eq!(series[0].label("md_members"), Some("sda,sdb"));
        assert_eq!(series[0].label("odd"), Some("a=\"b\\\n"));
        assert_eq!(series[0].value, 2.0);
        assert_eq!(series[1].value, 1500.0);
        assert_eq!(series[2].name, "up");
        assert!(series[3].value.is_nan());
    }

    #[test]
    fn a_broken_line_is_named_by_number() {
        let error = format!("{:#}", parse("up 1\nbroken{a=\"x} 1\n").unwrap_err());
        assert!(error.contains("line 2"), "{error}");
        let error = format!("{:#}", parse("x{a=\"1\"} many\n").unwrap_err());
        assert!(error.contains("not a number"), "{error}");
    }
}
