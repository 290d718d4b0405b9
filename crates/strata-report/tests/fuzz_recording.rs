//! The Recording reader and the report under garbage: mutations of every
//! fixture Recording (cut lines, deleted and duplicated records, wrong
//! types, huge, subnormal and non-finite numbers, non-UTF-8 bytes) give a
//! report or an error naming the line, rendered as text, JSON and HTML with
//! its SVG charts, never a panic.

use std::path::{Path, PathBuf};
use strata_core::fuzz::{mutate, run, FuzzBudget};
use strata_report::recording::{report_with, ReportOptions};
use strata_report::render::html::HtmlRenderer;
use strata_report::render::json::JsonRenderer;
use strata_report::render::text::TextRenderer;
use strata_report::render::Renderer;

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "strata")
        })
        .collect();
    found.sort();
    found
}

/// Reports `bytes` as a Recording and renders it every way; `Ok(false)`
/// when the reader refused it.
fn report_and_render(bytes: &[u8], scratch: &Path) -> bool {
    let path = scratch.join("fuzzed.strata");
    std::fs::write(&path, bytes).unwrap();
    let Ok(report) = report_with(&path, &ReportOptions::default()) else {
        return false;
    };
    TextRenderer::default().render(&report);
    JsonRenderer.render(&report);
    HtmlRenderer.render(&report);
    true
}

#[test]
fn the_recording_reader_and_report_never_panic_on_mutated_recordings() {
    let scratch = tempfile::tempdir().unwrap();
    let fixtures = fixtures();
    assert!(fixtures.len() >= 5);
    for fixture in fixtures {
        let seed = std::fs::read(&fixture).unwrap();
        assert!(
            report_and_render(&seed, scratch.path()),
            "{fixture:?} must report"
        );
        let name = fixture.file_name().unwrap().to_string_lossy().into_owned();
        let report = run(
            &format!("recording {name}"),
            &FuzzBudget::from_env(200),
            |rng| mutate(&seed, rng),
            |bytes| {
                report_and_render(bytes, scratch.path());
            },
        );
        assert_eq!(
            report.crash_count, 0,
            "{name}: {} crashes",
            report.crash_count
        );
    }
}

/// The regression case of a subnormal number in a chart (capacity
/// overflow in the axis ticks once): every IOPS figure of a calibrate sweep
/// made 1e-310, then near f64::MAX, then -0.
#[test]
fn numbers_of_any_magnitude_render() {
    let scratch = tempfile::tempdir().unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/calibrate-sweep.strata");
    let text = std::fs::read_to_string(fixture).unwrap();
    let iops = regex_free_replace(&text, "\"iops\":");
    for extreme in ["1e-310", "1.7976931348623157e308", "-0.0"] {
        let changed = iops.replace("@EXTREME@", extreme);
        assert!(changed.contains(extreme));
        assert!(
            report_and_render(changed.as_bytes(), scratch.path()),
            "{extreme}"
        );
    }
}

/// `text` with the number after every `key` replaced by `@EXTREME@`.
fn regex_free_replace(text: &str, key: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(key) {
        let (before, after) = rest.split_at(at + key.len());
        out.push_str(before);
        let end = after
            .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
            .unwrap_or(after.len());
        out.push_str("@EXTREME@");
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}
