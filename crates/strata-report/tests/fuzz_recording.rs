//! The Recording reader and the report under garbage: mutations of every
//! fixture Recording (bytes: cut lines, deleted and duplicated spans,
//! non-UTF-8 bytes; records: values of the wrong type, numbers huge,
//! subnormal or negative, keys removed, arrays grown huge, lines deleted,
//! duplicated or cut) give a report or an error naming the line, rendered
//! as text, JSON and HTML with its SVG charts, never a panic. Charts of
//! any numbers (`NaN`, `∞`, `-0`, subnormal, near `f64::MAX`) render too.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use strata_core::fuzz::{mutate, run, FuzzBudget, FuzzReport};
use strata_core::random::FastRng;
use strata_output::document::{Axis, Block, Chart, ChartKind, Mark, Report, Section, Series};
use strata_output::render::finite_point_count;
use strata_output::render::html::HtmlRenderer;
use strata_output::render::json::JsonRenderer;
use strata_output::render::text::TextRenderer;
use strata_output::render::Renderer;
use strata_report::recording::{report_with, ReportOptions};

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

/// Renders `report` every way and checks what the renderers promise: the
/// JSON reads back as a report, and the HTML draws one `<svg>` per chart
/// with as many points as the chart has finite ones. Returns the text.
fn render_every_way(report: &Report) -> String {
    let json = JsonRenderer.render(report);
    if let Err(error) = serde_json::from_str::<Report>(&json) {
        panic!("the JSON does not read back: {error}");
    }
    let html = HtmlRenderer.render(report);
    let drawn: Vec<usize> = html
        .split(" data-points=\"")
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].parse().unwrap())
        .collect();
    let finite: Vec<usize> = charts(report).map(finite_point_count).collect();
    assert_eq!(drawn, finite, "points drawn per chart");
    TextRenderer::default().render(report)
}

fn charts(report: &Report) -> impl Iterator<Item = &Chart> {
    report
        .sections
        .iter()
        .flat_map(|section| &section.blocks)
        .filter_map(|block| match block {
            Block::Chart(chart) => Some(chart),
            _ => None,
        })
}

/// Reports `bytes` as a Recording and renders it every way; `None` when
/// the reader refused it.
fn report_and_render(bytes: &[u8], scratch: &Path) -> Option<String> {
    let path = scratch.join("fuzzed.strata");
    std::fs::write(&path, bytes).unwrap();
    let report = report_with(&path, &ReportOptions::default()).ok()?;
    Some(render_every_way(&report))
}

/// Values of the wrong type or of extreme size for any field.
fn strange_value(rng: &mut FastRng) -> Value {
    match rng.below(16) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!("text"),
        3 => json!(""),
        4 => json!(0),
        5 => json!(-1),
        6 => json!(u64::MAX),
        7 => json!(i64::MIN),
        8 => json!(1e-310),
        9 => json!(f64::MAX),
        10 => json!(-f64::MAX),
        11 => json!(-0.0),
        12 => json!([]),
        13 => json!({}),
        14 => json!([[1, 2], [3]]),
        _ => json!({"type": "sample"}),
    }
}

/// `value` with one node, reached by a random walk from the top, changed:
/// replaced by a strange value, removed from its object, or (an array)
/// grown to up to 100,000 elements by repeating its first.
fn mutate_value(value: &mut Value, rng: &mut FastRng) {
    let mut node = value;
    loop {
        let children = match node {
            Value::Array(items) => items.len(),
            Value::Object(fields) => fields.len(),
            _ => 0,
        };
        if children == 0 || rng.below(5) == 0 {
            break;
        }
        let pick = rng.below(children as u64) as usize;
        if let Value::Object(fields) = node {
            if rng.below(8) == 0 {
                let key = fields.keys().nth(pick).unwrap().clone();
                fields.remove(&key);
                return;
            }
        }
        node = match node {
            Value::Array(items) => &mut items[pick],
            Value::Object(fields) => fields.values_mut().nth(pick).unwrap(),
            _ => unreachable!(),
        };
    }
    match node {
        Value::Array(items) if !items.is_empty() && rng.below(2) == 0 => {
            // Numbers up to 100,000, records (a few KiB each) up to 1,000.
            let first = items[0].clone();
            let most = if first.is_array() || first.is_object() {
                3
            } else {
                5
            };
            items.resize(10usize.pow(1 + rng.below(most) as u32), first);
        }
        _ => *node = strange_value(rng),
    }
}

/// A Recording changed record by record, one to three times: a line
/// deleted, duplicated or cut short, or a value in it changed.
fn mutate_records(seed: &[u8], rng: &mut FastRng) -> Vec<u8> {
    let text = String::from_utf8_lossy(seed);
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for _ in 0..1 + rng.below(3) {
        if lines.is_empty() {
            break;
        }
        let index = rng.below(lines.len() as u64) as usize;
        match rng.below(8) {
            0 => {
                lines.remove(index);
            }
            1 => lines.insert(index, lines[index].clone()),
            2 => {
                let mut cut = rng.below(lines[index].len() as u64 + 1) as usize;
                while !lines[index].is_char_boundary(cut) {
                    cut -= 1;
                }
                lines[index].truncate(cut);
            }
            _ => {
                if let Ok(mut value) = serde_json::from_str::<Value>(&lines[index]) {
                    mutate_value(&mut value, rng);
                    lines[index] = value.to_string();
                }
            }
        }
    }
    let mut bytes = lines.join("\n").into_bytes();
    bytes.push(b'\n');
    bytes
}

fn mutated_recording(seed: &[u8], rng: &mut FastRng) -> Vec<u8> {
    match rng.below(4) {
        0 => mutate(seed, rng),
        _ => mutate_records(seed, rng),
    }
}

/// The bytes of `fixture` (version 1) read and written again as version 2.
fn version_two_of(fixture: &Path, scratch: &Path) -> Vec<u8> {
    let name = fixture.file_name().unwrap().to_string_lossy();
    let path = scratch.join(format!("version-2-{name}"));
    let recording = strata_recording::Recording::read(fixture).unwrap();
    recording.write_to(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let first = String::from_utf8_lossy(&bytes);
    assert!(
        first.starts_with(&format!(
            "{{\"format\":\"strata-recording\",\"version\":{}",
            strata_recording::FORMAT_VERSION
        )),
        "{}",
        &first[..80]
    );
    bytes
}

fn assert_no_crash(name: &str, report: &FuzzReport) {
    assert!(report.tried > 0);
    assert_eq!(
        report.crash_count, 0,
        "{name}: {} crashes",
        report.crash_count
    );
}

#[test]
fn the_recording_reader_and_report_never_panic_on_mutated_recordings() {
    let scratch = tempfile::tempdir().unwrap();
    let fixtures = fixtures();
    assert!(fixtures.len() >= 5);
    for fixture in fixtures {
        let seed = std::fs::read(&fixture).unwrap();
        let text = report_and_render(&seed, scratch.path());
        assert!(text.is_some(), "{fixture:?} must report");
        let reserialized: String = String::from_utf8(seed.clone())
            .unwrap()
            .lines()
            .map(|line| format!("{}\n", serde_json::from_str::<Value>(line).unwrap()))
            .collect();
        assert_eq!(
            report_and_render(reserialized.as_bytes(), scratch.path()),
            text,
            "{fixture:?}: every record written again the same reports the same"
        );
        let upgraded = version_two_of(&fixture, scratch.path());
        assert_eq!(
            report_and_render(&upgraded, scratch.path()),
            text,
            "{fixture:?}: written again as version 2, it reports the same"
        );
        let name = fixture.file_name().unwrap().to_string_lossy().into_owned();
        for (version, seed) in [("1", &seed), ("2", &upgraded)] {
            let report = run(
                &format!("recording {name} (version {version})"),
                &FuzzBudget::from_env(100),
                |rng| mutated_recording(seed, rng),
                |bytes| {
                    report_and_render(bytes, scratch.path());
                },
            );
            assert_no_crash(&name, &report);
        }
    }
}

#[test]
fn record_mutations_change_types_and_grow_arrays() {
    let seed = b"{\"a\":[1,2],\"b\":{\"c\":\"x\"}}\n";
    let mut rng = FastRng::seeded(4);
    let outcomes: Vec<Value> = (0..2000)
        .filter_map(|_| {
            let bytes = mutate_records(seed, &mut rng);
            serde_json::from_slice(&bytes).ok()
        })
        .collect();
    let grown = |value: &Value| value["a"].as_array().is_some_and(|a| a.len() >= 10);
    assert!(outcomes.iter().any(grown));
    assert!(outcomes.iter().any(|value| value["b"]["c"].is_number()));
    assert!(outcomes.iter().any(|value| value["b"].get("c").is_none()));
}

/// A number of any magnitude, sign or kind, often a special one.
fn any_f64(rng: &mut FastRng) -> f64 {
    const SPECIAL: [f64; 12] = [
        0.0,
        -0.0,
        1e-310,
        5e-324,
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1.0,
        1e308,
    ];
    match rng.below(4) {
        0 => f64::from_bits(rng.next_u64()),
        1 => (rng.unit_f64() - 0.5) * 10f64.powi(rng.below(40) as i32 - 20),
        _ => SPECIAL[rng.below(SPECIAL.len() as u64) as usize],
    }
}

/// A report of one chart of random kind, axes and points; the points are
/// 8-byte numbers in `bytes` after a byte each for the kind and the axes.
fn chart_report(bytes: &[u8]) -> Report {
    let kinds = [ChartKind::Line, ChartKind::Scatter, ChartKind::Bars];
    let flag = |at: usize| bytes.get(at).copied().unwrap_or(0);
    let numbers: Vec<f64> = bytes[3.min(bytes.len())..]
        .chunks_exact(8)
        .map(|chunk| f64::from_le_bytes(chunk.try_into().unwrap()))
        .collect();
    let points: Vec<[f64; 2]> = numbers.chunks_exact(2).map(|xy| [xy[0], xy[1]]).collect();
    let (marked, drawn) = points.split_at(points.len() / 4);
    let axis = |log: bool| Axis {
        label: "value".to_string(),
        unit: "ms".to_string(),
        log,
    };
    let chart = Chart {
        id: "fuzzed".to_string(),
        title: "fuzzed".to_string(),
        kind: kinds[flag(0) as usize % 3],
        x: axis(flag(1) % 2 == 1),
        y: axis(flag(2) % 2 == 1),
        series: drawn
            .chunks(1 + drawn.len() / 3)
            .map(|points| Series {
                name: "series".to_string(),
                points: points.to_vec(),
            })
            .collect(),
        marks: marked
            .iter()
            .map(|&[x, y]| Mark {
                x,
                y,
                label: "mark".to_string(),
            })
            .collect(),
    };
    let mut report = Report::new("fuzzed chart", "run", vec![]);
    report.sections.push(Section {
        id: "chart".to_string(),
        title: "chart".to_string(),
        blocks: vec![Block::Chart(chart)],
    });
    report
}

#[test]
fn charts_of_any_numbers_render() {
    let report = run(
        "charts",
        &FuzzBudget::from_env(3_000),
        |rng| {
            let mut bytes: Vec<u8> = (0..3).map(|_| rng.next_u64() as u8).collect();
            for _ in 0..rng.below(40) {
                bytes.extend(any_f64(rng).to_le_bytes());
            }
            bytes
        },
        |bytes| {
            render_every_way(&chart_report(bytes));
        },
    );
    assert_no_crash("charts", &report);
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
            report_and_render(changed.as_bytes(), scratch.path()).is_some(),
            "{extreme}"
        );
    }
}

/// The same on both axes of every kind of chart, linear and log, with
/// `NaN` and `∞` (which a Recording cannot hold) as well.
#[test]
fn charts_of_extreme_numbers_render_on_every_axis() {
    let extremes = [1e-310, f64::MAX, -f64::MAX, -0.0, f64::NAN, f64::INFINITY];
    for kind in 0u8..3 {
        for axes in 0u8..4 {
            for extreme in extremes {
                let mut bytes = vec![kind, axes % 2, axes / 2];
                for value in [1.0, 2.0, extreme, 3.0, 4.0, extreme, extreme, 5.0] {
                    bytes.extend(f64::to_le_bytes(value));
                }
                let text = render_every_way(&chart_report(&bytes));
                assert!(text.contains("fuzzed"), "{kind} {axes} {extreme}");
            }
        }
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
