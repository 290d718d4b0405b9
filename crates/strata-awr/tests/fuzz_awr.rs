//! The AWR and STATSPACK reader under garbage: every fixture parses, and
//! mutations of it (truncations, deleted and duplicated tags and spans,
//! huge and subnormal numbers, non-ASCII and non-UTF-8 bytes) give a
//! report or an error, rendered as text and HTML, never a panic. Oracle's
//! number forms on their own as well (`number.rs`).

use std::path::PathBuf;
use strata_awr::number::{data_mib, first_number, millis, number, size_bytes};
use strata_core::fuzz::{mutate, noise, run, FuzzBudget};
use strata_report::render::html::HtmlRenderer;
use strata_report::render::text::TextRenderer;
use strata_report::render::Renderer;

/// Every report in shared/fixtures; those of `awr/` must parse as they are
/// (`awr-real/` holds some strata does not read yet).
fn fixtures() -> Vec<(String, String, bool)> {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures");
    let mut found = Vec::new();
    for folder in ["awr", "awr-real"] {
        for entry in std::fs::read_dir(shared.join(folder)).expect("shared/fixtures") {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".html") || name.ends_with(".txt") {
                let text = std::fs::read_to_string(&path).unwrap();
                found.push((name, text, folder == "awr"));
            }
        }
    }
    found
}

fn read_and_render(text: &str, name: &str) {
    if let Ok(awr) = strata_awr::parse(text, name) {
        let report = strata_awr::build::report(&awr);
        TextRenderer::default().render(&report);
        HtmlRenderer.render(&report);
    }
}

#[test]
fn the_reader_never_panics_on_mutated_reports() {
    let fixtures = fixtures();
    assert!(fixtures.len() >= 7, "{} fixtures", fixtures.len());
    for (name, text, must_parse) in &fixtures {
        let parsed = strata_awr::parse(text, name).is_ok();
        assert!(parsed || !must_parse, "{name} must parse as it is");
        let report = run(
            &format!("awr {name}"),
            &FuzzBudget::from_env(8),
            |rng| mutate(text.as_bytes(), rng),
            |bytes| read_and_render(&String::from_utf8_lossy(bytes), name),
        );
        assert_eq!(
            report.crash_count, 0,
            "{name}: {} crashes",
            report.crash_count
        );
    }
}

#[test]
fn oracle_numbers_never_panic() {
    assert_eq!(data_mib("2.8G"), Some(2.8 * 1024.0));
    assert_eq!(
        data_mib("1.5é"),
        None,
        "a cell ending in a non-ASCII character"
    );
    let report = run(
        "awr numbers",
        &FuzzBudget::from_env(20_000),
        |rng| match rng.below(2) {
            0 => noise(rng, 16),
            _ => mutate("7,692K".as_bytes(), rng),
        },
        |bytes| {
            let text = String::from_utf8_lossy(bytes);
            for value in [
                number(&text),
                data_mib(&text),
                size_bytes(&text),
                millis(&text),
            ] {
                assert!(value.is_none_or(f64::is_finite), "{text:?}");
            }
            let _ = first_number(&text);
        },
    );
    assert_eq!(report.crash_count, 0, "{:?}", report.crashes);
}
