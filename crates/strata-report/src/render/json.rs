//! The JSON renderer: the report document as documented in docs/report.md.

use super::Renderer;
use crate::document::Report;

/// Pretty-printed JSON of the whole report.
pub struct JsonRenderer;

impl Renderer for JsonRenderer {
    fn render(&self, report: &Report) -> String {
        let mut text = serde_json::to_string_pretty(report).expect("a report serializes");
        text.push('\n');
        text
    }
}
