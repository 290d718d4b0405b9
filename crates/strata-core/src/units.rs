//! Parsing and printing of sizes, durations and rates, the one place where
//! strata decides what a unit means.
//!
//! The rules, the same as fio and dd for the ambiguous cases:
//! - Sizes: a bare number is bytes; `k`, `m`, `g`, `t` (either case) and
//!   `KiB`, `MiB`, `GiB`, `TiB` are powers of 1024; `KB`, `MB`, `GB`, `TB` are
//!   powers of 1000. So `8k` = `8KiB` = 8192 bytes and `8KB` = 8000 bytes.
//!   A fraction is allowed when the result is a whole number of bytes
//!   (`1.5GB`, `1.5k`).
//! - Durations: `ns`, `us`, `ms`, `s`, `m` (minutes), `h`; a bare number is
//!   seconds.
//! - Printing: sizes in IEC units (KiB, MiB, GiB), throughput in decimal MB/s
//!   (10^6 bytes per second, like iostat and fio), always with the unit.
//!
//! Not for: counting things (requests, blocks); those are plain integers.

use std::fmt;
use std::time::Duration;

/// A value the user typed that is not a size, duration or percentage.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{input}' is not a valid {expected}: {reason}")]
pub struct UnitError {
    pub input: String,
    pub expected: &'static str,
    pub reason: String,
}

fn unit_error(input: &str, expected: &'static str, reason: impl Into<String>) -> UnitError {
    UnitError {
        input: input.to_string(),
        expected,
        reason: reason.into(),
    }
}

pub const KIB: u64 = 1 << 10;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;
pub const TIB: u64 = 1 << 40;

const SIZE_HELP: &str =
    "use bytes or a unit: k/KiB, m/MiB, g/GiB, t/TiB (1024s) or KB/MB/GB/TB (1000s)";

/// Splits "1.5GB" into ("1.5", "GB").
fn split_number(input: &str) -> (&str, &str) {
    let end = input
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(input.len());
    (&input[..end], input[end..].trim())
}

fn size_multiplier(suffix: &str) -> Option<u64> {
    let multiplier = match suffix {
        "" | "b" | "B" => 1,
        "k" | "K" | "KiB" | "kiB" | "KIB" | "kib" => KIB,
        "m" | "M" | "MiB" | "MIB" | "mib" => MIB,
        "g" | "G" | "GiB" | "GIB" | "gib" => GIB,
        "t" | "T" | "TiB" | "TIB" | "tib" => TIB,
        "KB" | "kB" | "kb" | "Kb" => 1_000,
        "MB" | "mb" | "Mb" => 1_000_000,
        "GB" | "gb" | "Gb" => 1_000_000_000,
        "TB" | "tb" | "Tb" => 1_000_000_000_000,
        _ => return None,
    };
    Some(multiplier)
}

/// Multiplies a decimal string by an integer multiplier without going through
/// floating point, so `1.5GB` is exactly 1,500,000,000 bytes.
fn scaled_integer(number: &str, multiplier: u64) -> Option<(u128, bool)> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    if fraction.len() > 18 || fraction.contains('.') {
        return None;
    }
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let fraction_value: u128 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().ok()?
    };
    let denominator = 10u128.pow(fraction.len() as u32);
    let numerator = whole
        .checked_mul(denominator)?
        .checked_add(fraction_value)?
        .checked_mul(multiplier as u128)?;
    Some((numerator / denominator, numerator % denominator == 0))
}

/// Parses a size in bytes (see the module doc for the rules).
/// Serializes a duration as seconds, a number: for fields named `…_s`.
pub fn serialize_seconds<S: serde::Serializer>(
    duration: &Duration,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(duration.as_secs_f64())
}

/// Serializes a range of durations as `[from, to]` seconds, or null.
pub fn serialize_seconds_range<S: serde::Serializer>(
    range: &Option<(Duration, Duration)>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let seconds = range.map(|(from, to)| [from.as_secs_f64(), to.as_secs_f64()]);
    serde::Serialize::serialize(&seconds, serializer)
}

pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let trimmed = input.trim();
    let (number, suffix) = split_number(trimmed);
    if number.is_empty() {
        return Err(unit_error(input, "size", SIZE_HELP));
    }
    let multiplier = size_multiplier(suffix).ok_or_else(|| unit_error(input, "size", SIZE_HELP))?;
    let (bytes, exact) = scaled_integer(number, multiplier)
        .ok_or_else(|| unit_error(input, "size", "the number does not parse or is too large"))?;
    if !exact {
        return Err(unit_error(
            input,
            "size",
            "it is not a whole number of bytes",
        ));
    }
    u64::try_from(bytes).map_err(|_| unit_error(input, "size", "it is larger than 16 EiB"))
}

/// Parses a duration (see the module doc for the rules).
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    const HELP: &str = "use a number with ns, us, ms, s, m (minutes) or h";
    let trimmed = input.trim();
    let (number, suffix) = split_number(trimmed);
    if number.is_empty() {
        return Err(unit_error(input, "duration", HELP));
    }
    let nanos_per_unit: u64 = match suffix {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "" | "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(unit_error(input, "duration", HELP)),
    };
    let (nanos, _) = scaled_integer(number, nanos_per_unit).ok_or_else(|| {
        unit_error(
            input,
            "duration",
            "the number does not parse or is too large",
        )
    })?;
    let nanos = u64::try_from(nanos).map_err(|_| unit_error(input, "duration", "too long"))?;
    Ok(Duration::from_nanos(nanos))
}

/// Parses a percentage from 0 to 100; a trailing `%` is allowed.
pub fn parse_percent(input: &str) -> Result<f64, UnitError> {
    let number = input.trim().trim_end_matches('%');
    let value: f64 = number
        .parse()
        .map_err(|_| unit_error(input, "percentage", "use a number from 0 to 100"))?;
    if !(0.0..=100.0).contains(&value) {
        return Err(unit_error(input, "percentage", "it must be from 0 to 100"));
    }
    Ok(value)
}

/// A size in bytes that prints in IEC units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size(pub u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_size(self.0))
    }
}

/// `count` and the noun in its number: "1 process", "3 processes".
pub fn counted(count: u64, one: &str, many: &str) -> String {
    match count {
        1 => format!("1 {one}"),
        count => format!("{count} {many}"),
    }
}

/// `count` with a comma between each group of three digits: "57,012".
pub fn thousands(count: u64) -> String {
    let digits = count.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Prints a size in the largest IEC unit it reaches: exact sizes print
/// without decimals (`8 KiB`, `1 MiB`), others with two (`1.50 GiB`).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [(TIB, "TiB"), (GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit {
            return if bytes.is_multiple_of(unit) {
                format!("{} {name}", bytes / unit)
            } else {
                format!("{:.2} {name}", bytes as f64 / unit as f64)
            };
        }
    }
    format!("{bytes} B")
}

/// Bytes per second as decimal megabytes per second (10^6 bytes).
pub fn mb_per_s(bytes: u64, seconds: f64) -> f64 {
    if seconds <= 0.0 {
        return 0.0;
    }
    bytes as f64 / 1e6 / seconds
}

/// Prints a throughput in decimal MB/s.
pub fn format_mb_per_s(value: f64) -> String {
    format!("{value:.1} MB/s")
}

/// Prints a latency given in nanoseconds in us, ms or s, with the unit.
pub fn format_latency_ns(nanos: f64) -> String {
    if nanos < 1_000_000.0 {
        format!("{:.1} us", nanos / 1e3)
    } else if nanos < 1e9 {
        format!("{:.2} ms", nanos / 1e6)
    } else {
        format!("{:.2} s", nanos / 1e9)
    }
}

/// Prints a duration the way it can be typed back in (`10s`, `500ms`).
pub fn format_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    const STEPS: [(u128, &str); 5] = [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
    ];
    for (unit, name) in STEPS {
        if nanos >= unit && nanos.is_multiple_of(unit) {
            return format!("{}{name}", nanos / unit);
        }
    }
    format!("{nanos}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped_by_three_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(57_012), "57,012");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn bare_letters_are_binary_and_b_suffixes_decimal() {
        assert_eq!(parse_size("8k").unwrap(), 8192);
        assert_eq!(parse_size("8KiB").unwrap(), 8192);
        assert_eq!(parse_size("8KB").unwrap(), 8000);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("1MiB").unwrap(), 1 << 20);
        assert_eq!(parse_size("1.5GB").unwrap(), 1_500_000_000);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("2g").unwrap(), 2 << 30);
    }

    #[test]
    fn bad_sizes_are_refused_with_the_rule() {
        for bad in ["", "k", "8x", "-1", "1.2.3k", "0.1", "99999999999T"] {
            assert!(parse_size(bad).is_err(), "{bad} should not parse");
        }
        let message = parse_size("8q").unwrap_err().to_string();
        assert!(
            message.contains("KiB") && message.contains("KB"),
            "{message}"
        );
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("500us").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_duration("2ms").unwrap(), Duration::from_millis(2));
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("10 parsecs").is_err());
    }

    #[test]
    fn sizes_round_trip_through_print_and_parse() {
        for bytes in [512, 8192, 1 << 20, 3 << 30, 5 * TIB, 1536 * KIB] {
            let printed = format_size(bytes);
            let typed = printed.replace(' ', "");
            assert_eq!(parse_size(&typed).unwrap(), bytes, "{printed}");
        }
        assert_eq!(format_size(1_500_000_000), "1.40 GiB");
    }

    #[test]
    fn durations_round_trip_through_print_and_parse() {
        for duration in [
            Duration::from_micros(500),
            Duration::from_secs(10),
            Duration::from_secs(3600),
            Duration::from_millis(1500),
        ] {
            assert_eq!(
                parse_duration(&format_duration(duration)).unwrap(),
                duration
            );
        }
    }

    #[test]
    fn throughput_is_decimal() {
        assert_eq!(mb_per_s(1_000_000, 1.0), 1.0);
        assert_eq!(format_mb_per_s(mb_per_s(MIB, 1.0)), "1.0 MB/s");
        assert_eq!(format_latency_ns(85_300.0), "85.3 us");
        assert_eq!(format_latency_ns(2_500_000.0), "2.50 ms");
    }

    #[test]
    fn percentages_are_bounded() {
        assert_eq!(parse_percent("20").unwrap(), 20.0);
        assert_eq!(parse_percent("20%").unwrap(), 20.0);
        assert!(parse_percent("101").is_err());
        assert!(parse_percent("-1").is_err());
    }
}
