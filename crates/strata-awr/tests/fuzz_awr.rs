//! The AWR and STATSPACK reader under garbage: every fixture parses, and
//! mutations of it (truncations, whole tags, elements and lines deleted or
//! duplicated, numbers made huge, negative or subnormal, non-ASCII and
//! non-UTF-8 bytes, read the way `strata awr` reads a file) give a report
//! or an error, rendered as text, HTML and JSON, never a panic. Oracle's
//! number and time forms on their own as well (`number.rs`).

use std::path::PathBuf;
use strata_awr::number::{data_mib, first_number, millis, number, size_bytes, snap_time_s};
use strata_core::fuzz::{mutate, noise, run, FuzzBudget};
use strata_core::random::FastRng;
use strata_output::document::Report;
use strata_output::render::html::HtmlRenderer;
use strata_output::render::json::JsonRenderer;
use strata_output::render::text::TextRenderer;
use strata_output::render::Renderer;

/// Every report in shared/fixtures; those of `awr/` must parse as they are
/// (`awr-real/` holds some strata does not read yet).
fn fixtures() -> Vec<(String, Vec<u8>, bool)> {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures");
    let mut found = Vec::new();
    for folder in ["awr", "awr-real"] {
        for entry in std::fs::read_dir(shared.join(folder)).expect("shared/fixtures") {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".html") || name.ends_with(".txt") {
                found.push((name, std::fs::read(&path).unwrap(), folder == "awr"));
            }
        }
    }
    found.sort();
    found
}

/// The text report of `bytes` read as `strata awr` reads a file (invalid
/// UTF-8 replaced), or `None` when it is no report; the HTML and JSON are
/// rendered too, and the JSON must read back as a report.
fn read_and_render(bytes: &[u8], name: &str) -> Option<String> {
    let awr = strata_awr::parse(&String::from_utf8_lossy(bytes), name).ok()?;
    let report = strata_awr::build::report(&awr);
    HtmlRenderer.render(&report);
    let json = JsonRenderer.render(&report);
    if let Err(error) = serde_json::from_str::<Report>(&json) {
        panic!("{name}: the JSON does not read back: {error}");
    }
    Some(TextRenderer::default().render(&report))
}

/// The span of one HTML tag at or after a random place: `<…>`, and when
/// it opens an element, up to the end of its closing tag.
fn some_tag(bytes: &[u8], rng: &mut FastRng) -> Option<(usize, usize, Option<usize>)> {
    let from = rng.below(bytes.len() as u64 + 1) as usize;
    let start = from + bytes[from..].iter().position(|&byte| byte == b'<')?;
    let end = start + bytes[start..].iter().position(|&byte| byte == b'>')? + 1;
    let name: Vec<u8> = bytes[start + 1..end - 1]
        .iter()
        .take_while(|byte| byte.is_ascii_alphanumeric())
        .map(u8::to_ascii_lowercase)
        .collect();
    let closing = [b"</".as_slice(), &name].concat();
    let element_end = (!name.is_empty())
        .then(|| {
            let after = bytes[end..]
                .windows(closing.len())
                .position(|window| window.eq_ignore_ascii_case(&closing))?;
            let close = end + after;
            Some(close + bytes[close..].iter().position(|&byte| byte == b'>')? + 1)
        })
        .flatten();
    Some((start, end, element_end))
}

/// Whole tags, elements (`<td>…</td>`, `<tr>…</tr>`, `<table>…</table>`) or
/// lines deleted or duplicated, one to four times.
fn mutate_structure(seed: &[u8], rng: &mut FastRng) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let span = match rng.below(3) {
            0 => some_tag(&bytes, rng).map(|(start, end, _)| (start, end)),
            1 => some_tag(&bytes, rng).and_then(|(start, _, end)| Some((start, end?))),
            _ => {
                let from = rng.below(bytes.len() as u64 + 1) as usize;
                let start = from
                    - bytes[..from]
                        .iter()
                        .rev()
                        .position(|&byte| byte == b'\n')
                        .unwrap_or(from);
                let end = bytes[from..]
                    .iter()
                    .position(|&byte| byte == b'\n')
                    .map_or(bytes.len(), |at| from + at + 1);
                Some((start, end))
            }
        };
        let Some((start, end)) = span else { continue };
        match rng.below(2) {
            0 => {
                bytes.drain(start..end);
            }
            _ => {
                let copy = bytes[start..end].to_vec();
                bytes.splice(end..end, copy);
            }
        }
    }
    bytes
}

fn mutated_report(seed: &[u8], rng: &mut FastRng) -> Vec<u8> {
    match rng.below(3) {
        0 => mutate(seed, rng),
        1 => mutate_structure(seed, rng),
        _ => {
            let changed = mutate_structure(seed, rng);
            mutate(&changed, rng)
        }
    }
}

#[test]
fn the_reader_never_panics_on_mutated_reports() {
    let fixtures = fixtures();
    assert!(fixtures.len() >= 7, "{} fixtures", fixtures.len());
    for (name, bytes, must_parse) in &fixtures {
        let text = read_and_render(bytes, name);
        assert!(text.is_some() || !must_parse, "{name} must parse as it is");
        if text.is_some() {
            let with_newline = [bytes.as_slice(), b"\n"].concat();
            assert_eq!(
                read_and_render(&with_newline, name),
                text,
                "{name}: a newline at the end changes nothing"
            );
        }
        let report = run(
            &format!("awr {name}"),
            &FuzzBudget::from_env(12),
            |rng| mutated_report(bytes, rng),
            |bytes| {
                read_and_render(bytes, name);
            },
        );
        assert_eq!(
            report.crash_count, 0,
            "{name}: {} crashes",
            report.crash_count
        );
    }
}

#[test]
fn structure_mutations_cut_whole_elements() {
    let page = b"<table><tr><td>1</td><td>2</td></tr></table>\nline two\n";
    let mut rng = FastRng::seeded(3);
    let outcomes: Vec<Vec<u8>> = (0..2000)
        .map(|_| mutate_structure(page, &mut rng))
        .collect();
    let seen = |wanted: &[u8]| outcomes.iter().any(|outcome| outcome == wanted);
    assert!(seen(b"<table><tr><td>2</td></tr></table>\nline two\n"));
    assert!(seen(
        b"<table><tr><td>1</td><td>1</td><td>2</td></tr></table>\nline two\n"
    ));
    assert!(seen(b"<table><tr><td>1</td><td>2</td></tr></table>\n"));
}

const CELLS: [&str; 6] = [
    "7,692K",
    "1,454.9",
    "420.51us",
    "2.8G",
    "20-Oct-24 21:48:53",
    "117.66 (mins)",
];

#[test]
fn oracle_numbers_never_panic() {
    assert_eq!(data_mib("2.8G"), Some(2.8 * 1024.0));
    let report = run(
        "awr numbers",
        &FuzzBudget::from_env(20_000),
        |rng| match rng.below(2) {
            0 => noise(rng, 24),
            _ => mutate(
                CELLS[rng.below(CELLS.len() as u64) as usize].as_bytes(),
                rng,
            ),
        },
        |bytes| {
            let text = String::from_utf8_lossy(bytes);
            for value in [
                number(&text),
                data_mib(&text),
                size_bytes(&text),
                millis(&text),
                first_number(&text),
                snap_time_s(&text),
            ] {
                assert!(value.is_none_or(f64::is_finite), "{text:?}");
            }
        },
    );
    assert_eq!(
        report.crash_count,
        0,
        "{:?}",
        report
            .crashes
            .iter()
            .map(|input| String::from_utf8_lossy(input).into_owned())
            .collect::<Vec<_>>()
    );
}

/// Found when the IOStat 'Data' column was fuzzed: a cell ending in a
/// non-ASCII character was sliced inside it.
#[test]
fn an_iostat_data_cell_ending_in_a_non_ascii_character_is_no_number() {
    assert_eq!(data_mib("1.5é"), None);
    assert_eq!(size_bytes("8∞"), None);
    assert_eq!(data_mib("é"), None);
}

/// Found by `awr numbers`: the largest double with a K/M/G/T suffix
/// overflowed to infinity and was taken as a number.
#[test]
fn a_number_that_overflows_to_infinity_is_no_number() {
    for cell in ["1.7976931348623157e308K", "1.7976931348623157e308T"] {
        assert_eq!(number(cell), None, "{cell}");
        assert_eq!(size_bytes(cell), None, "{cell}");
    }
    assert_eq!(data_mib("1.7976931348623157e308T"), None);
    assert_eq!(millis("1.7976931348623157e308s"), None);
}

/// Found by `awr numbers`: a snapshot time with a huge day, year or clock
/// field overflowed `i64` while counting seconds since 1970.
#[test]
fn a_snapshot_time_with_huge_fields_is_no_overflow() {
    for cell in [
        "20-Oct-9223372036854775807 21:48:53",
        "9223372036854775807-Oct-24 21:48:53",
        "20-Oct-24 21:-9223372036854775808:53",
        "203-Oct-24 9223372036854775807:4",
        "20-Oct-24294967296 -9223372036854775808:48:53",
    ] {
        assert!(snap_time_s(cell).is_none_or(f64::is_finite), "{cell}");
    }
    assert_eq!(snap_time_s("203-Oct-24 9223372036854775807:4"), None);
    assert_eq!(snap_time_s("01-Jan-70 00:00:01"), Some(1.0));
}
