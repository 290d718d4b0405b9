//! The units parser under garbage: sizes, durations and percentages from
//! noise and from mutated good values never panic, and a size that parses
//! reads back the same from its byte count.

use strata_core::fuzz::{mutate, noise, run, FuzzBudget};
use strata_core::random::FastRng;
use strata_core::units::{parse_duration, parse_percent, parse_size};

const GOOD: [&str; 10] = [
    "8GiB", "1.5s", "50%", "64k", "250ms", "1e3", "0.5%", "16MiB", "2m", "100us",
];

fn input(rng: &mut FastRng) -> Vec<u8> {
    match rng.below(2) {
        0 => noise(rng, 24),
        _ => mutate(GOOD[rng.below(GOOD.len() as u64) as usize].as_bytes(), rng),
    }
}

#[test]
fn units_parsers_never_panic_and_sizes_read_back() {
    assert_eq!(parse_size("8GiB"), Ok(8 << 30));
    let report = run("units", &FuzzBudget::from_env(20_000), input, |bytes| {
        let text = String::from_utf8_lossy(bytes);
        if let Ok(size) = parse_size(&text) {
            assert_eq!(parse_size(&size.to_string()), Ok(size), "{text:?}");
        }
        let _ = parse_duration(&text);
        if let Ok(percent) = parse_percent(&text) {
            assert!(percent.is_finite(), "{text:?}");
        }
    });
    assert!(report.tried > 0);
    assert_eq!(
        report.crash_count, 0,
        "crashing inputs: {:?}",
        report.crashes
    );
}
