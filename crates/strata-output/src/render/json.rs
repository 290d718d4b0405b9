//! The JSON renderer: the report document as documented in docs/report.md
//! and described exactly by docs/report.schema.json.
//!
//! Not for: a second shape of the report; JSON is the document serialized.

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
