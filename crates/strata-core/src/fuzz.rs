//! A seeded fuzz loop on stable Rust for every parser that reads outside
//! input: inputs made from scratch or by mutating real fixtures
//! (truncations, deleted and duplicated spans, huge numbers, non-UTF-8
//! bytes), each fed to a check under `catch_unwind`, counting inputs tried
//! and crashes found. The test suite runs a bounded number of cases with a
//! fixed seed; `scripts/fuzz DURATION` runs each target for that long with
//! a fresh seed (`STRATA_FUZZ_SECONDS`, `STRATA_FUZZ_SEED`,
//! `STRATA_FUZZ_CASES`).
//!
//! Not for: coverage-guided fuzzing (cargo fuzz needs nightly), or checking
//! that parses are right (the parsers' own tests do that).

use crate::random::FastRng;
use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// How long and from where a fuzz target runs.
#[derive(Clone, Debug)]
pub struct FuzzBudget {
    pub cases: u64,
    pub time: Option<Duration>,
    pub seed: u64,
}

impl FuzzBudget {
    /// `cases` with a fixed seed, unless the environment asks for more:
    /// `STRATA_FUZZ_SECONDS` (then cases are unbounded), `STRATA_FUZZ_CASES`,
    /// `STRATA_FUZZ_SEED`.
    pub fn from_env(cases: u64) -> FuzzBudget {
        let number = |name: &str| std::env::var(name).ok()?.parse::<u64>().ok();
        let time = number("STRATA_FUZZ_SECONDS").map(Duration::from_secs);
        FuzzBudget {
            cases: number("STRATA_FUZZ_CASES").unwrap_or(if time.is_some() {
                u64::MAX
            } else {
                cases
            }),
            time,
            seed: number("STRATA_FUZZ_SEED").unwrap_or(0x05ee_d0f5_7a7a),
        }
    }
}

/// What a fuzz target did.
#[derive(Debug)]
pub struct FuzzReport {
    pub target: String,
    pub tried: u64,
    /// The inputs that made the check panic (the first ten).
    pub crashes: Vec<Vec<u8>>,
    pub crash_count: u64,
}

impl FuzzReport {
    /// One line, as `scripts/fuzz` prints it.
    pub fn line(&self, seed: u64) -> String {
        format!(
            "fuzz {}: {} inputs tried, {} crashes found (seed {seed})",
            self.target, self.tried, self.crash_count
        )
    }
}

/// Feeds `check` inputs from `make` until the budget is spent. A panic in
/// `check` is a crash: counted, its input kept; the loop goes on.
pub fn run(
    target: &str,
    budget: &FuzzBudget,
    mut make: impl FnMut(&mut FastRng) -> Vec<u8>,
    check: impl Fn(&[u8]),
) -> FuzzReport {
    let mut rng = FastRng::seeded(budget.seed);
    let started = Instant::now();
    let mut report = FuzzReport {
        target: target.to_string(),
        tried: 0,
        crashes: Vec::new(),
        crash_count: 0,
    };
    let in_time = |started: Instant| budget.time.is_none_or(|time| started.elapsed() < time);
    while report.tried < budget.cases && in_time(started) {
        let input = make(&mut rng);
        report.tried += 1;
        if catch_unwind(AssertUnwindSafe(|| check(&input))).is_err() {
            report.crash_count += 1;
            if report.crashes.len() < 10 {
                report.crashes.push(input);
            }
        }
    }
    // `scripts/fuzz` counts these lines; a closed stderr must not fail a run.
    let _ = writeln!(std::io::stderr().lock(), "{}", report.line(budget.seed));
    report
}

/// `seed` changed in one to eight places: bytes flipped, spans deleted,
/// duplicated or cut off, numbers replaced by huge, negative or tiny ones
/// (or inserted), non-UTF-8 bytes and multi-byte characters inserted.
pub fn mutate(seed: &[u8], rng: &mut FastRng) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..1 + rng.below(8) {
        mutate_once(&mut bytes, rng);
    }
    bytes
}

const SPICE: [&[u8]; 12] = [
    b"1e-310",
    b"1.7976931348623157e308",
    b"-0.0",
    b"NaN",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"\xff\xfe",
    "é".as_bytes(),
    "∞".as_bytes(),
    b"\n",
    b"<td>",
    b"\"",
];

/// Numbers an existing number is replaced by: the edges of the integer
/// types a parser may hold it in, and floats it cannot.
const NUMBERS: [&[u8]; 12] = [
    b"0",
    b"4294967295",
    b"4294967296",
    b"9223372036854775807",
    b"18446744073709551615",
    b"99999999999999999999999",
    b"-1",
    b"-9223372036854775808",
    b"1e-310",
    b"1.7976931348623157e308",
    b"-0.0",
    b"NaN",
];

/// A run of digits in `bytes`, picked at random: (start, end).
fn some_number(bytes: &[u8], rng: &mut FastRng) -> Option<(usize, usize)> {
    let from = rng.below(bytes.len() as u64 + 1) as usize;
    let start = from + bytes[from..].iter().position(u8::is_ascii_digit)?;
    let length = bytes[start..]
        .iter()
        .position(|byte| !byte.is_ascii_digit())
        .unwrap_or(bytes.len() - start);
    Some((start, start + length))
}

fn mutate_once(bytes: &mut Vec<u8>, rng: &mut FastRng) {
    let at = |rng: &mut FastRng, bytes: &Vec<u8>| rng.below(bytes.len() as u64 + 1) as usize;
    if rng.below(4) == 0 {
        if let Some((start, end)) = some_number(bytes, rng) {
            let number = NUMBERS[rng.below(NUMBERS.len() as u64) as usize];
            bytes.splice(start..end, number.iter().copied());
            return;
        }
    }
    match rng.below(6) {
        0 => bytes.truncate(at(rng, bytes)),
        1 => {
            let start = at(rng, bytes);
            let end = (start + 1 + rng.below(64) as usize).min(bytes.len());
            bytes.drain(start..end.max(start));
        }
        2 => {
            let start = at(rng, bytes);
            let end = (start + 1 + rng.below(256) as usize).min(bytes.len());
            let span = bytes[start..end.max(start)].to_vec();
            let to = at(rng, bytes);
            bytes.splice(to..to, span);
        }
        3 if !bytes.is_empty() => {
            let index = rng.below(bytes.len() as u64) as usize;
            bytes[index] = rng.next_u64() as u8;
        }
        _ => {
            let spice = SPICE[rng.below(SPICE.len() as u64) as usize];
            let to = at(rng, bytes);
            bytes.splice(to..to, spice.iter().copied());
        }
    }
}

/// Up to `max_len` bytes, mostly printable with digits, units and line
/// breaks, sometimes anything.
pub fn noise(rng: &mut FastRng, max_len: usize) -> Vec<u8> {
    const ALPHABET: &[u8] = b"0123456789 .,-+:eEkKmMgGtTpPiIbBsSuUnN%_/\n\t";
    let len = rng.below(max_len as u64 + 1) as usize;
    let anything = rng.below(8) == 0;
    (0..len)
        .map(|_| match anything {
            true => rng.next_u64() as u8,
            false => ALPHABET[rng.below(ALPHABET.len() as u64) as usize],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_check_is_counted_and_its_input_kept() {
        let budget = FuzzBudget {
            cases: 200,
            time: None,
            seed: 7,
        };
        let report = run(
            "self-test",
            &budget,
            |rng| noise(rng, 4),
            |input| assert!(!input.contains(&b'7')),
        );
        assert_eq!(report.tried, 200);
        assert!(report.crash_count > 0);
        assert!(report.crashes.iter().all(|input| input.contains(&b'7')));
    }

    #[test]
    fn mutations_stay_within_reason() {
        let mut rng = FastRng::seeded(1);
        for _ in 0..1000 {
            let mutated = mutate(b"12,345.6 ms", &mut rng);
            assert!(mutated.len() < 12 + 8 * 300);
        }
    }

    #[test]
    fn numbers_are_replaced_whole() {
        let mut rng = FastRng::seeded(2);
        let replaced = (0..1000)
            .map(|_| mutate(b"read 12 of 34\n", &mut rng))
            .filter(|mutated| {
                mutated == b"read 18446744073709551615 of 34\n"
                    || mutated == b"read 12 of 18446744073709551615\n"
            })
            .count();
        assert!(replaced > 0);
    }
}
