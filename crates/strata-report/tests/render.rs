//! The renderers on a report with one of everything: text keeps to its
//! width, JSON matches docs/report.schema.json, HTML draws every point.

mod common;

use common::{finite_points, rich_report};
use serde_json::Value;
use strata_output::render::html::HtmlRenderer;
use strata_output::render::json::JsonRenderer;
use strata_output::render::text::TextRenderer;
use strata_output::render::Renderer;

fn schema() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/report.schema.json");
    let text = std::fs::read_to_string(path).expect("docs/report.schema.json");
    serde_json::from_str(&text).expect("the schema is JSON")
}

fn schema_errors(instance: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(&schema()).expect("the schema compiles");
    validator
        .iter_errors(instance)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect()
}

#[test]
fn text_keeps_every_line_within_100_columns() {
    let text = TextRenderer::default().render(&rich_report());
    let too_wide: Vec<&str> = text
        .lines()
        .filter(|line| line.chars().count() > 100)
        .collect();
    assert!(
        too_wide.is_empty(),
        "lines over 100 columns: {too_wide:#?}\n{text}"
    );
    for expected in [
        "Load profile",
        "Findings",
        "[warning] Blocks read",
        "[info] Throughput",
        "Could not read:",
        "mark: knee",
        "▁",
    ] {
        assert!(text.contains(expected), "{expected} missing:\n{text}");
    }
}

#[test]
fn text_keeps_a_narrow_width_too() {
    let text = TextRenderer { width: 40 }.render(&rich_report());
    let too_wide: Vec<&str> = text
        .lines()
        .filter(|line| line.chars().count() > 40)
        .collect();
    assert!(too_wide.is_empty(), "lines over 40 columns: {too_wide:#?}");
}

#[test]
fn text_says_so_when_there_are_no_findings() {
    let mut report = rich_report();
    report.findings.clear();
    let text = TextRenderer::default().render(&report);
    let sentence =
        "No findings: none of the finding rules' evidence was present or crossed its threshold.";
    assert!(text.lines().any(|line| line == sentence), "{text}");
}

#[test]
fn json_of_a_rich_report_matches_the_schema() {
    let json: Value = serde_json::from_str(&JsonRenderer.render(&rich_report())).unwrap();
    let errors = schema_errors(&json);
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn json_of_every_fixture_recordings_report_matches_the_schema() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let mut checked = 0;
    for entry in std::fs::read_dir(fixtures).unwrap() {
        let path = entry.unwrap().path();
        if path
            .extension()
            .is_none_or(|extension| extension != "strata")
        {
            continue;
        }
        let report = strata_report::recording::report_from_recording(&path, None).unwrap();
        let json: Value = serde_json::from_str(&JsonRenderer.render(&report)).unwrap();
        let errors = schema_errors(&json);
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
        let text = TextRenderer::default().render(&report);
        assert!(
            text.lines().all(|line| line.chars().count() <= 100),
            "{}",
            path.display()
        );
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} fixture recordings");
}

#[test]
fn the_schema_rejects_what_the_document_cannot_be() {
    let json: Value = serde_json::from_str(&JsonRenderer.render(&rich_report())).unwrap();
    let mut unknown_severity = json.clone();
    unknown_severity["findings"][0]["severity"] = "critical".into();
    let mut unknown_block = json.clone();
    unknown_block["sections"][0]["blocks"][0]["type"] = "image".into();
    let mut missing_field = json.clone();
    missing_field.as_object_mut().unwrap().remove("problems");
    let mut unknown_chart_kind = json;
    unknown_chart_kind["sections"][1]["blocks"][0]["kind"] = "pie".into();
    for broken in [
        unknown_severity,
        unknown_block,
        missing_field,
        unknown_chart_kind,
    ] {
        assert!(!schema_errors(&broken).is_empty());
    }
}

#[test]
fn html_has_one_svg_per_chart_with_every_finite_point() {
    let report = rich_report();
    let page = HtmlRenderer.render(&report);
    for chart in report.charts() {
        let tag = format!("data-chart-id=\"{}\"", chart.id);
        let start = page
            .find(&tag)
            .unwrap_or_else(|| panic!("no svg for {}", chart.id));
        let svg = &page[start..start + page[start..].find("</svg>").unwrap()];
        let points = finite_points(chart);
        assert!(
            svg.contains(&format!("data-points=\"{points}\"")),
            "{}",
            chart.id
        );
        assert_eq!(
            svg.matches("<circle class=\"point").count(),
            points,
            "{}",
            chart.id
        );
    }
    assert!(page.contains(">no data</text>"));
    assert!(page.contains("&lt;slob&gt; &amp; &quot;friends&quot;"));
    assert!(!page.contains("<slob>") && !page.contains("<script"));
}
