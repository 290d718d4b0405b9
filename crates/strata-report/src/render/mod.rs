//! Renderers: lay a [`Report`] out as text (100 columns), JSON or one
//! self-contained HTML page. They compute nothing; every figure and every
//! label comes from the report.

use crate::document::Report;

pub mod html;
pub mod json;
pub mod text;

/// Turns a report into one output format.
pub trait Renderer {
    fn render(&self, report: &Report) -> String;
}
