//! The text renderer: fits `width` columns (100 by default).

use super::Renderer;
use crate::document::Report;

/// Plain text, at most `width` columns per line.
pub struct TextRenderer {
    pub width: usize,
}

impl Default for TextRenderer {
    fn default() -> Self {
        TextRenderer { width: 100 }
    }
}

impl Renderer for TextRenderer {
    fn render(&self, report: &Report) -> String {
        format!("{}\n", report.title)
    }
}
