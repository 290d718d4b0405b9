//! The units parser under garbage: sizes, durations and percentages from
//! noise, from mutated good values and from numbers of any length never
//! panic; a size that parses is the exact product of its number and unit
//! and reads back the same from its byte count, a duration reads back the
//! same from its printed form, a percentage is within 0–100; and the
//! formatters of sizes, rates and latencies take any number.

use std::time::Duration;
use strata_core::fuzz::{mutate, noise, run, FuzzBudget, FuzzReport};
use strata_core::random::FastRng;
use strata_core::units::{
    format_duration, format_latency_ns, format_mb_per_s, format_size, mb_per_s, parse_duration,
    parse_percent, parse_size,
};

const GOOD: [&str; 10] = [
    "8GiB", "1.5s", "50%", "64k", "250ms", "1e3", "0.5%", "16MiB", "2m", "100us",
];

/// Size suffixes and their multipliers, as the module doc gives them.
const SIZE_UNITS: [(&str, u64); 9] = [
    ("", 1),
    ("B", 1),
    ("k", 1 << 10),
    ("MiB", 1 << 20),
    ("g", 1 << 30),
    ("TiB", 1 << 40),
    ("KB", 1_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
];

/// A number of up to 45 digits, sometimes with a fraction of up to 20,
/// and one of the size suffixes (or a duration's, or nothing).
fn long_number(rng: &mut FastRng) -> Vec<u8> {
    let digits = |rng: &mut FastRng, most: u64| -> String {
        let count = rng.below(most + 1);
        (0..count)
            .map(|_| char::from(b'0' + rng.below(10) as u8))
            .collect()
    };
    let whole = digits(rng, 45);
    let mut text = match rng.below(3) {
        0 => whole,
        _ => format!("{whole}.{}", digits(rng, 20)),
    };
    let suffixes = [
        "", "B", "k", "MiB", "g", "TiB", "KB", "GB", "TB", "ns", "ms", "h", "%",
    ];
    text.push_str(suffixes[rng.below(suffixes.len() as u64) as usize]);
    text.into_bytes()
}

fn input(rng: &mut FastRng) -> Vec<u8> {
    match rng.below(3) {
        0 => noise(rng, 24),
        1 => mutate(GOOD[rng.below(GOOD.len() as u64) as usize].as_bytes(), rng),
        _ => long_number(rng),
    }
}

/// The bytes `text` (digits, an optional fraction, a size suffix) stands
/// for, worked out in decimal digits: `None` when it is not a number with a
/// size suffix, `Some(None)` when it is not a whole number of bytes or is
/// larger than `u64`.
fn exact_size(text: &str) -> Option<Option<u64>> {
    let (number, unit) = SIZE_UNITS
        .iter()
        .rev()
        .find_map(|(suffix, unit)| Some((text.strip_suffix(suffix)?, *unit)))?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let all_digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) || fraction.len() > 18 {
        return None;
    }
    let whole = whole.trim_start_matches('0');
    // More than 20 significant digits is more than u64 holds, whatever the
    // fraction; otherwise u128 holds the sums below.
    if whole.len() > 20 {
        return Some(None);
    }
    let whole: u128 = whole.parse().unwrap_or(0);
    let fraction_value: u128 = fraction.parse().unwrap_or(0);
    let denominator = 10u128.pow(fraction.len() as u32);
    let fraction_bytes = fraction_value * u128::from(unit);
    let bytes = whole * u128::from(unit) + fraction_bytes / denominator;
    if !fraction_bytes.is_multiple_of(denominator) {
        return Some(None);
    }
    Some(u64::try_from(bytes).ok())
}

fn check_units(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let size = parse_size(&text);
    if let Some(expected) = exact_size(&text) {
        assert_eq!(size.clone().ok(), expected, "{text:?}");
    }
    if let Ok(size) = size {
        assert_eq!(parse_size(&size.to_string()), Ok(size), "{text:?}");
        let printed = format_size(size);
        if !printed.contains('.') {
            assert_eq!(parse_size(&printed.replace(' ', "")), Ok(size), "{text:?}");
        }
    }
    if let Ok(duration) = parse_duration(&text) {
        let nanos = format!("{}ns", duration.as_nanos());
        assert_eq!(parse_duration(&nanos), Ok(duration), "{text:?}");
        assert_eq!(
            parse_duration(&format_duration(duration)),
            Ok(duration),
            "{text:?}"
        );
    }
    if let Ok(percent) = parse_percent(&text) {
        assert!((0.0..=100.0).contains(&percent), "{text:?}");
    }
}

fn assert_no_crash(report: &FuzzReport) {
    assert!(report.tried > 0);
    let crashes: Vec<String> = report
        .crashes
        .iter()
        .map(|input| String::from_utf8_lossy(input).into_owned())
        .collect();
    assert_eq!(report.crash_count, 0, "crashing inputs: {crashes:?}");
}

#[test]
fn units_parsers_never_panic_and_sizes_read_back() {
    assert_eq!(parse_size("8GiB"), Ok(8 << 30));
    assert_eq!(exact_size("1.5k"), Some(Some(1536)));
    assert_eq!(exact_size("0.1"), Some(None));
    let report = run("units", &FuzzBudget::from_env(20_000), input, check_units);
    assert_no_crash(&report);
}

/// A number of any magnitude, sign or kind (subnormal, `-0`, `NaN`, `∞`)
/// from eight bytes: often a special one, otherwise any bit pattern.
fn any_f64(rng: &mut FastRng) -> f64 {
    const SPECIAL: [f64; 9] = [
        0.0,
        -0.0,
        1e-310,
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    match rng.below(3) {
        0 => SPECIAL[rng.below(SPECIAL.len() as u64) as usize],
        _ => f64::from_bits(rng.next_u64()),
    }
}

/// Sizes, rates and latencies made from figures read outside (counters,
/// elapsed seconds) print with their unit whatever the figure.
#[test]
fn formatters_of_sizes_rates_and_latencies_take_any_number() {
    let report = run(
        "units formatters",
        &FuzzBudget::from_env(20_000),
        |rng| {
            let mut bytes = rng.next_u64().to_le_bytes().to_vec();
            bytes.extend(any_f64(rng).to_le_bytes());
            bytes.extend(rng.next_u64().to_le_bytes());
            bytes
        },
        |bytes| {
            let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
            let (count, figure) = (word(0), f64::from_bits(word(8)));
            assert!(format_size(count).ends_with('B'));
            let rate = mb_per_s(count, figure);
            assert!(rate.is_nan() || rate >= 0.0, "{count} bytes in {figure} s");
            assert!(format_mb_per_s(rate).ends_with(" MB/s"));
            assert!(format_mb_per_s(figure).ends_with(" MB/s"));
            assert!(format_latency_ns(figure).ends_with('s'));
            let duration = Duration::from_nanos(word(16));
            assert_eq!(parse_duration(&format_duration(duration)), Ok(duration));
        },
    );
    assert_no_crash(&report);
}

/// Found by `units`: a number of 28 or more digits with a fraction
/// overflowed `u128` before the size check: a panic in a debug build; in a
/// release build the product wrapped, so that the last input here read as
/// 1 byte. It is a size too large.
#[test]
fn a_size_or_duration_too_long_for_u128_is_refused() {
    for input in [
        "34028236692093846346337460743176821146.6",
        "12476977666147164390428109361821.5887924973579MiB",
        "2817822479091225352001394987.776166933964B",
        "4932695468960185060340268557857.8834020696",
    ] {
        let error = parse_size(input).unwrap_err();
        assert!(error.reason.contains("too large"), "{input}: {error}");
    }
    let error = parse_duration("6215190483887897696234976395857161800.6472ms").unwrap_err();
    assert!(error.reason.contains("too large"), "{error}");
    assert_eq!(parse_size("1.5k"), Ok(1536));
}
