//! Numbers as Oracle prints them: thousands separators, K/M/G suffixes,
//! `us`/`ms`/`ns`/`s` on wait averages, `####` where a column overflowed,
//! and snapshot times like `20-Oct-24 21:48:53`.
//!
//! Not for: deciding what a number means (the extractor knows the column).

/// A plain count or rate: `1,454.9`, `.015`, `1.0E+02`; a K/M/G/T suffix
/// multiplies by 1000s (Oracle's counts). `None` for text, blanks and `###`.
pub fn number(text: &str) -> Option<f64> {
    let cleaned = clean(text);
    if cleaned.is_empty() {
        return None;
    }
    let (digits, scale) = match cleaned.as_bytes()[cleaned.len() - 1] {
        b'K' | b'k' => (&cleaned[..cleaned.len() - 1], 1e3),
        b'M' => (&cleaned[..cleaned.len() - 1], 1e6),
        b'G' => (&cleaned[..cleaned.len() - 1], 1e9),
        b'T' => (&cleaned[..cleaned.len() - 1], 1e12),
        _ => (cleaned.as_str(), 1.0),
    };
    plain(digits)
        .map(|value| value * scale)
        .filter(|value| value.is_finite())
}

/// The value of one unit in the last printed digit of a count or time
/// (`2,701` → 1, `116.34` → 0.01, `276.6M` → 100,000, `420.51us` →
/// 0.00001 in ms); `None` where `text` is not a number.
pub fn resolution(text: &str) -> Option<f64> {
    let cleaned = clean(text);
    let body = cleaned.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    plain(body)?;
    let scale = match &cleaned[body.len()..] {
        "" | "ms" => 1.0,
        "K" | "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "us" => 1e-3,
        "ns" => 1e-6,
        "s" => 1e3,
        _ => return None,
    };
    let (mantissa, exponent) = match body.find(['E', 'e']) {
        Some(at) => (&body[..at], body[at + 1..].parse::<i32>().ok()?),
        None => (body, 0),
    };
    let decimals = mantissa.find('.').map_or(0, |dot| mantissa.len() - dot - 1) as i32;
    Some(10f64.powi(exponent - decimals) * scale)
}

/// An IOStat 'Data' figure in MiB: there, M/G/T/P are 1024 multiples
/// (`2.8G` = 2,867.2 MiB, `.801M` = 0.801 MiB, `7,692K` = 7.5 MiB).
pub fn data_mib(text: &str) -> Option<f64> {
    let cleaned = clean(text);
    let last = cleaned.chars().last()?;
    let body = &cleaned[..cleaned.len() - last.len_utf8()];
    let scale = match last {
        'K' => 1.0 / 1024.0,
        'M' => 1.0,
        'G' => 1024.0,
        'T' => 1024.0 * 1024.0,
        'P' => 1024.0 * 1024.0 * 1024.0,
        _ => return plain(&cleaned),
    };
    plain(body)
        .map(|value| value * scale)
        .filter(|value| value.is_finite())
}

/// A size with a K/M/G suffix in 1024 multiples, in bytes (`8K` = 8192).
pub fn size_bytes(text: &str) -> Option<f64> {
    data_mib(text)
        .map(|mib| mib * 1024.0 * 1024.0)
        .filter(|bytes| bytes.is_finite())
        .or_else(|| number(text))
}

/// A wait time in milliseconds: `1.43ms`, `420.51us`, `.00ns`, `2s`; a
/// bare number is taken as milliseconds (the old `Avg wait (ms)` columns).
pub fn millis(text: &str) -> Option<f64> {
    let cleaned = clean(text);
    let units: [(&str, f64); 4] = [("us", 1e-3), ("ns", 1e-6), ("ms", 1.0), ("s", 1e3)];
    for (suffix, scale) in units {
        if let Some(body) = cleaned.strip_suffix(suffix) {
            return plain(body)
                .map(|value| value * scale)
                .filter(|value| value.is_finite());
        }
    }
    plain(&cleaned)
}

fn clean(text: &str) -> String {
    text.trim()
        .chars()
        .filter(|c| *c != ',' && !c.is_whitespace())
        .collect()
}

fn plain(text: &str) -> Option<f64> {
    if text.is_empty() || text.starts_with('#') {
        return None;
    }
    let first = text.as_bytes()[0];
    if !(first.is_ascii_digit() || first == b'.' || first == b'-' || first == b'+') {
        return None;
    }
    text.parse::<f64>().ok().filter(|value| value.is_finite())
}

/// The first number in `text` (`117.66 (mins)` → 117.66).
pub fn first_number(text: &str) -> Option<f64> {
    text.split_whitespace().find_map(number)
}

/// Seconds since 1970 (UTC, as printed) of an Oracle snapshot time:
/// `20-Oct-24 21:48:53` or `18-Sep-16 14:54`.
pub fn snap_time_s(text: &str) -> Option<f64> {
    let mut parts = text.split_whitespace();
    let date = parts.next()?;
    let time = parts.next().unwrap_or("00:00");
    let mut fields = date.split('-');
    let day: i64 = fields.next()?.parse().ok()?;
    let month = month_number(fields.next()?)?;
    let year_text = fields.next()?;
    let mut year: i64 = year_text.parse().ok()?;
    if year_text.len() == 2 {
        year += if year < 70 { 2000 } else { 1900 };
    }
    let seconds = clock_seconds(time)?;
    Some((days_from_civil(year, month, day) * 86_400 + i128::from(seconds)) as f64)
}

fn month_number(name: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = name.to_ascii_lowercase();
    MONTHS
        .iter()
        .position(|month| lower.starts_with(month))
        .map(|index| index as i64 + 1)
}

fn clock_seconds(time: &str) -> Option<i64> {
    let mut total: i64 = 0;
    let mut fields = 0;
    for field in time.split(':') {
        total = total
            .checked_mul(60)?
            .checked_add(field.parse::<i64>().ok()?)?;
        fields += 1;
    }
    match fields {
        2 => total.checked_mul(60),
        3 => Some(total),
        _ => None,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm), in `i128` so that no year or day a report may hold overflows.
fn days_from_civil(year: i64, month: i64, day: i64) -> i128 {
    let (year, month, day) = (i128::from(year), i128::from(month), i128::from(day));
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_is_one_unit_of_the_last_printed_digit() {
        assert_eq!(resolution("2,701"), Some(1.0));
        assert!((resolution("116.34").unwrap() - 0.01).abs() < 1e-12);
        assert!((resolution("276.6M").unwrap() - 1e5).abs() < 1e-6);
        assert!((resolution("420.51us").unwrap() - 1e-5).abs() < 1e-15);
        assert!((resolution(".015").unwrap() - 0.001).abs() < 1e-15);
        assert!((resolution("1.0E+02").unwrap() - 10.0).abs() < 1e-12);
        assert_eq!(resolution("2s"), Some(1000.0));
        assert_eq!(resolution("####"), None);
        assert_eq!(resolution("n/a"), None);
    }

    #[test]
    fn counts_rates_and_suffixes() {
        assert_eq!(number("1,454.9"), Some(1454.9));
        assert_eq!(number(" .015 "), Some(0.015));
        assert_eq!(number("8.4M"), Some(8_400_000.0));
        assert_eq!(number("364.2K"), Some(364_200.0));
        assert_eq!(number("1.0E+02"), Some(100.0));
        assert_eq!(number("############"), None);
        assert_eq!(number(""), None);
        assert_eq!(number("User I/O"), None);
    }

    #[test]
    fn data_columns_are_binary() {
        assert_eq!(data_mib("2.8G"), Some(2.8 * 1024.0));
        assert_eq!(data_mib(".801M"), Some(0.801));
        assert_eq!(data_mib("0M"), Some(0.0));
        assert_eq!(size_bytes("8K"), Some(8192.0));
        assert_eq!(size_bytes("16K"), Some(16384.0));
    }

    #[test]
    fn wait_averages_carry_units() {
        assert_eq!(millis("1.43ms"), Some(1.43));
        assert!((millis("420.51us").unwrap() - 0.42051).abs() < 1e-12);
        assert_eq!(millis(".00ns"), Some(0.0));
        assert_eq!(millis("21"), Some(21.0));
        assert_eq!(millis("3000.06ms"), Some(3000.06));
    }

    #[test]
    fn snapshot_times() {
        assert_eq!(snap_time_s("01-Jan-70 00:00:00"), Some(0.0));
        let begin = snap_time_s("20-Oct-24 19:51:14").unwrap();
        let end = snap_time_s("20-Oct-24 21:48:53").unwrap();
        assert_eq!(end - begin, 7059.0);
        assert_eq!(
            snap_time_s("18-Sep-16 14:54"),
            snap_time_s("18-Sep-16 14:54:00")
        );
    }
}
