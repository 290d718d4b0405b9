//! Prometheus's text exposition format (version 0.0.4, and the sample
//! lines of OpenMetrics 1.0) read into series exactly as Prometheus reads
//! it: `name{label="value",…} value [timestamp]`, lines split at `\n`
//! only; names as `[a-zA-Z_:][a-zA-Z0-9_:]*` or quoted (Prometheus 3's
//! UTF-8 names, `{"name",…}`); label values unescaped as Prometheus does
//! (`\\`, `\"` and `\n`; any other byte, control characters and invalid
//! escapes included, kept as it is); values as Go's `ParseFloat` takes them
//! (exponents, `NaN`, `+Inf`, `-Inf`); an integer timestamp in ms; an
//! OpenMetrics exemplar (` # {…} v`) after the value skipped; nothing read
//! after `# EOF`. `# HELP`, `# TYPE` and other comments are skipped.
//!
//! A line that does not read is skipped and named (its number and why),
//! never a number and never the loss of the rest: a node_exporter on a
//! real server has info series whose labels hold any byte.
//!
//! Every crate on crates.io that reads this format got a case here wrong
//! when this was written (label values split at `,` and `=`, escapes kept,
//! whole node_exporter expositions refused, timestamps or comments not
//! read; tests/fixtures/expositions/SOURCES.md), so the format is read
//! here, and tests/expositions.rs checks every fixture against
//! Prometheus's Python client.
//!
//! Not for: metric families' metadata (HELP, TYPE, units), which strata
//! does not use.

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

/// An exposition read: its samples, each with the timestamp it carried
/// (ms since the Unix epoch), and the lines that did not read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exposition {
    pub series: Vec<Series>,
    pub timestamps_ms: Vec<Option<i64>>,
    /// `line N: why`, in order, the first [`MOST_NAMED`].
    pub skipped: Vec<String>,
    /// The lines skipped past those.
    pub unnamed_skipped: usize,
}

/// The most skipped lines an [`Exposition`] names one by one; past it,
/// they are only counted.
const MOST_NAMED: usize = 20;

impl Exposition {
    /// What was skipped, in one sentence; `None` when nothing was.
    pub fn skipped_note(&self) -> Option<String> {
        let total = self.skipped.len() + self.unnamed_skipped;
        (total > 0).then(|| {
            format!(
                "{total} line(s) of the exposition did not read and were skipped: {}{}",
                self.skipped.join("; "),
                match self.unnamed_skipped {
                    0 => String::new(),
                    more => format!("; and {more} more"),
                }
            )
        })
    }
}

/// Every sample of an exposition that reads; the rest named in `skipped`.
pub fn parse(text: &str) -> Exposition {
    let mut read = Exposition::default();
    for (index, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let content = line.trim_start_matches([' ', '\t']);
        if content.starts_with('#') {
            if is_eof(content) {
                break;
            }
            continue;
        }
        if content.trim_end_matches([' ', '\t']).is_empty() {
            continue;
        }
        match Line::new(content).sample() {
            Ok((series, timestamp_ms)) => {
                read.series.push(series);
                read.timestamps_ms.push(timestamp_ms);
            }
            Err(why) if read.skipped.len() < MOST_NAMED => {
                read.skipped.push(format!("line {}: {why}", index + 1));
            }
            Err(_) => read.unnamed_skipped += 1,
        }
    }
    read
}

fn is_eof(comment: &str) -> bool {
    comment
        .strip_prefix('#')
        .is_some_and(|rest| rest.trim_matches([' ', '\t']) == "EOF")
}

/// A cursor over one sample line.
struct Line<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Line<'a> {
    fn new(text: &'a str) -> Line<'a> {
        Line { text, at: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn skip_blanks(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start_matches([' ', '\t']).len();
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.rest().starts_with(c);
        if found {
            self.at += c.len_utf8();
        }
        found
    }

    /// `name{labels} value [timestamp] [# exemplar]`.
    fn sample(mut self) -> Result<(Series, Option<i64>), String> {
        let mut name = match self.rest().starts_with('{') {
            true => None,
            false => Some(self.identifier(is_name_start, is_name_char, "metric name")?),
        };
        self.skip_blanks();
        let mut labels = BTreeMap::new();
        if self.eat('{') {
            self.labels(&mut name, &mut labels)?;
        }
        let name = name.ok_or("a quoted metric name is missing in the braces")?;
        let value = self.value()?;
        let timestamp_ms = self.timestamp()?;
        Ok((
            Series {
                name,
                labels,
                value,
            },
            timestamp_ms,
        ))
    }

    fn identifier(
        &mut self,
        start: fn(char) -> bool,
        rest: fn(char) -> bool,
        what: &str,
    ) -> Result<String, String> {
        let text = self.rest();
        let mut chars = text.char_indices();
        match chars.next() {
            Some((_, c)) if start(c) => {}
            _ => return Err(format!("no {what} at {:?}", preview(text))),
        }
        let end = chars
            .find(|(_, c)| !rest(*c))
            .map_or(text.len(), |(index, _)| index);
        self.at += end;
        Ok(text[..end].to_string())
    }

    /// The labels up to the closing `}`; a quoted string with no `=` after
    /// it is the metric's name (`{"name", a="b"}`).
    fn labels(
        &mut self,
        name: &mut Option<String>,
        labels: &mut BTreeMap<String, String>,
    ) -> Result<(), String> {
        loop {
            self.skip_blanks();
            if self.eat('}') {
                return Ok(());
            }
            let key = match self.rest().starts_with('"') {
                true => {
                    self.at += 1;
                    self.quoted()?
                }
                false => self.identifier(is_label_start, is_label_char, "label name")?,
            };
            self.skip_blanks();
            if self.eat('=') {
                self.skip_blanks();
                if !self.eat('"') {
                    return Err(format!("label {key}'s value has no opening quote"));
                }
                let value = self.quoted()?;
                labels.insert(key, value);
            } else if name.is_none() {
                *name = Some(key);
            } else {
                return Err(format!("label {key} has no `=`"));
            }
            self.skip_blanks();
            if !self.eat(',') && !self.rest().starts_with('}') {
                return Err(format!(
                    "`,` or `}}` expected at {:?}",
                    preview(self.rest())
                ));
            }
        }
    }

    /// A quoted string's content (after its opening quote), unescaped as
    /// Prometheus does.
    fn quoted(&mut self) -> Result<String, String> {
        let text = self.rest();
        let mut value = String::new();
        let mut chars = text.char_indices();
        while let Some((index, c)) = chars.next() {
            match c {
                '"' => {
                    self.at += index + 1;
                    return Ok(value);
                }
                '\\' => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, escaped @ ('\\' | '"'))) => value.push(escaped),
                    Some((_, other)) => {
                        value.push('\\');
                        value.push(other);
                    }
                    None => break,
                },
                c => value.push(c),
            }
        }
        Err("a quoted value without its closing quote".to_string())
    }

    fn value(&mut self) -> Result<f64, String> {
        self.skip_blanks();
        let token = self.token();
        if token.is_empty() {
            return Err("a sample without a value".to_string());
        }
        parse_float(token).ok_or_else(|| format!("{token:?} is not a number"))
    }

    fn timestamp(&mut self) -> Result<Option<i64>, String> {
        self.skip_blanks();
        if self.rest().is_empty() || self.rest().starts_with('#') {
            return Ok(None);
        }
        let token = self.token();
        let timestamp = token
            .parse::<i64>()
            .map_err(|_| format!("{token:?} is not a timestamp (integer ms)"))?;
        self.skip_blanks();
        match self.rest().is_empty() || self.rest().starts_with('#') {
            true => Ok(Some(timestamp)),
            false => Err(format!("{:?} after the timestamp", preview(self.rest()))),
        }
    }

    fn token(&mut self) -> &'a str {
        let rest = self.rest();
        let end = rest.find([' ', '\t']).unwrap_or(rest.len());
        self.at += end;
        &rest[..end]
    }
}

/// A number as Go's `strconv.ParseFloat` reads one: decimal with an
/// optional exponent, `NaN`, `Inf` and `Infinity` in any case, with a
/// sign.
fn parse_float(token: &str) -> Option<f64> {
    let unsigned = token.trim_start_matches(['+', '-']);
    if token.len() - unsigned.len() > 1 {
        return None;
    }
    let plain = unsigned
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
    let named = ["nan", "inf", "infinity"].contains(&unsigned.to_ascii_lowercase().as_str());
    (plain || named).then(|| token.parse().ok()).flatten()
}

fn preview(text: &str) -> String {
    text.chars().take(40).collect()
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

fn is_label_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_label_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// A counter's value as a whole count; what no counter can hold is an
/// error saying what it was.
pub fn count(value: f64) -> Result<u64, String> {
    match value.is_finite() && (0.0..u64::MAX as f64).contains(&value) {
        true => Ok(value.round() as u64),
        false => Err(format!("is {value}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> Series {
        let read = parse(line);
        assert!(read.skipped.is_empty(), "{line:?}: {:?}", read.skipped);
        assert_eq!(read.series.len(), 1, "{line:?}");
        read.series[0].clone()
    }

    #[test]
    fn labels_with_commas_quotes_and_escapes_read_whole() {
        let text = "# HELP x y\n# TYPE strata_device_in_flight gauge\n\
            strata_device_in_flight{host=\"db1\",md_members=\"sda,sdb\",odd=\"a=\\\"b\\\\\\n\"} 2\n\
            node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 1.5e3 1700000000000\n\
            up 1\nnan_value NaN\n";
        let read = parse(text);
        let series = &read.series;
        assert_eq!(series.len(), 4);
        assert_eq!(series[0].label("md_members"), Some("sda,sdb"));
        assert_eq!(series[0].label("odd"), Some("a=\"b\\\n"));
        assert_eq!(series[0].value, 2.0);
        assert_eq!(series[1].value, 1500.0);
        assert_eq!(read.timestamps_ms[1], Some(1_700_000_000_000));
        assert_eq!(series[2].name, "up");
        assert!(series[3].value.is_nan());
    }

    #[test]
    fn any_byte_but_the_three_escapes_is_kept_as_it_is() {
        let dell =
            one("node_dmi_info{product_version=\"A\u{FFFD}\u{1c}\\\\\\\"q\",tab=\"a\tb\"} 1");
        assert_eq!(dell.label("product_version"), Some("A\u{FFFD}\u{1c}\\\"q"));
        assert_eq!(dell.label("tab"), Some("a\tb"));
        let kept = one("x{path=\"C:\\temp\\x\",brace=\"}{\\\"x\\\"}\",hash=\"#1 SMP\"} 1");
        assert_eq!(
            kept.label("path"),
            Some("C:\\temp\\x"),
            "an unknown escape is two bytes"
        );
        assert_eq!(kept.label("brace"), Some("}{\"x\"}"));
        assert_eq!(kept.label("hash"), Some("#1 SMP"));
    }

    #[test]
    fn values_timestamps_spacing_and_empty_braces_as_prometheus_reads_them() {
        for (line, value) in [
            ("a 1", 1.0),
            ("a{} -2.5E-3", -0.0025),
            ("a{b=\"c\",} +Inf", f64::INFINITY),
            ("a { b = \"c\" , d=\"e\" }\t-Inf", f64::NEG_INFINITY),
            ("a 6.02e+23 -5", 6.02e23),
            ("a inf", f64::INFINITY),
            ("a -0", 0.0),
            ("a 1 # {trace_id=\"x\"} 0.5 12", 1.0),
            ("{\"my.metric\", \"a.b\"=\"c\"} 7", 7.0),
        ] {
            assert_eq!(one(line).value, value, "{line}");
        }
        assert_eq!(one("{\"my.metric\", \"a.b\"=\"c\"} 7").name, "my.metric");
        assert_eq!(
            one("{\"my.metric\", \"a.b\"=\"c\"} 7").label("a.b"),
            Some("c")
        );
        assert_eq!(parse("a 1 -5\n").timestamps_ms, [Some(-5)]);
        assert!(parse("a NaN").series[0].value.is_nan());
    }

    #[test]
    fn an_odd_line_is_skipped_by_number_and_the_rest_is_read() {
        let read = parse(
            "up 1\nbroken{a=\"x} 1\nx{a=\"1\"} many\nx 1 2.5\nx 1 2 3\n9lives 1\nx{a=b} 1\n\
             ++1 1\nlast 3\r\n# EOF\nafter 4\n",
        );
        let names: Vec<&str> = read
            .series
            .iter()
            .map(|series| series.name.as_str())
            .collect();
        assert_eq!(names, ["up", "last"]);
        assert_eq!(read.skipped.len(), 7, "{:?}", read.skipped);
        for (skipped, words) in read.skipped.iter().zip([
            "line 2: a quoted value without its closing quote",
            "line 3: \"many\" is not a number",
            "line 4: \"2.5\" is not a timestamp",
            "line 5: \"3\" after the timestamp",
            "line 6: no metric name",
            "line 7: label a's value has no opening quote",
            "line 8: no metric name",
        ]) {
            assert!(skipped.starts_with(words), "{skipped} / {words}");
        }
        let note = read.skipped_note().unwrap();
        assert!(note.starts_with("7 line(s)"), "{note}");
        assert_eq!(parse("up 1\n").skipped_note(), None);
    }

    #[test]
    fn past_twenty_skipped_lines_are_counted_not_named() {
        let read = parse(&"bad line\n".repeat(25));
        assert_eq!(read.skipped.len(), 20);
        assert!(read.skipped_note().unwrap().ends_with("; and 5 more"));
    }
}
