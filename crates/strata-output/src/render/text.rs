//! The text renderer: the report for a terminal or a mail, at most `width`
//! columns per line (100 by default), counting characters.
//!
//! Order: title and facts, each section (tables, notes, charts as
//! sparklines or x→y lists), the findings (or the sentence saying there are
//! none), then the parts of the input that could not be read.
//!
//! Not for: colour or terminal control codes; the output is plain text.

use super::text_chart::chart_lines;
use super::text_table::layout_table;
use super::wrap::{columns, wrap, wrap_with_prefix};
use super::{source_fact, Renderer, COULD_NOT_READ, NO_FINDINGS};
use crate::document::{Block, Fact, Finding, Report, Section, Severity};

/// Plain text, at most `width` columns per line (a `width` below
/// [`NARROWEST`] is taken as [`NARROWEST`]).
pub struct TextRenderer {
    pub width: usize,
}

/// The narrowest page laid out: room for an indent and a word.
pub const NARROWEST: usize = 20;

impl Default for TextRenderer {
    fn default() -> Self {
        TextRenderer { width: 100 }
    }
}

impl Renderer for TextRenderer {
    fn render(&self, report: &Report) -> String {
        let mut page = Page {
            width: self.width.max(NARROWEST),
            lines: Vec::new(),
        };
        page.header(report);
        for section in &report.sections {
            page.section(section);
        }
        page.findings(&report.findings);
        page.problems(&report.problems);
        let mut text = page.lines.join("\n");
        text.push('\n');
        text
    }
}

/// The lines written so far and the width they must keep to.
struct Page {
    width: usize,
    lines: Vec<String>,
}

impl Page {
    fn push_wrapped(&mut self, text: &str, first: &str, rest: &str) {
        let lines = wrap_with_prefix(text, first, rest, self.width);
        self.lines.extend(lines);
    }

    fn heading(&mut self, title: &str, rule: char) {
        if !self.lines.is_empty() {
            self.lines.push(String::new());
        }
        let title_lines = wrap(title, self.width);
        let longest = title_lines
            .iter()
            .map(|line| columns(line))
            .max()
            .unwrap_or(0);
        self.lines.extend(title_lines);
        self.lines.push(rule.to_string().repeat(longest.max(1)));
    }

    fn header(&mut self, report: &Report) {
        self.heading(&report.title, '=');
        let source = source_fact(&report.source);
        let facts: Vec<&Fact> = report.about.iter().chain(source.as_ref()).collect();
        let label_width = facts
            .iter()
            .map(|fact| columns(&fact.label))
            .max()
            .unwrap_or(0)
            .min(self.width / 3);
        for fact in facts {
            self.fact(fact, label_width);
        }
    }

    /// `label  value`, labels padded to `label_width`; a longer label gets
    /// a line of its own.
    fn fact(&mut self, fact: &Fact, label_width: usize) {
        let indent = " ".repeat(label_width + 2);
        if columns(&fact.label) > label_width {
            self.push_wrapped(&fact.label, "", "");
            self.push_wrapped(&fact.value, &indent, &indent);
        } else {
            let label = format!("{:<label_width$}  ", fact.label);
            self.push_wrapped(&fact.value, &label, &indent);
        }
    }

    fn section(&mut self, section: &Section) {
        self.heading(&section.title, '-');
        for block in &section.blocks {
            self.lines.push(String::new());
            match block {
                Block::Table(table) => {
                    if let Some(title) = &table.title {
                        self.push_wrapped(title, "", "");
                    }
                    self.lines.extend(layout_table(table, self.width));
                }
                Block::Chart(chart) => self.lines.extend(chart_lines(chart, self.width)),
                Block::Note { text } => self.push_wrapped(text, "", ""),
            }
        }
    }

    fn findings(&mut self, findings: &[Finding]) {
        self.heading("Findings", '-');
        if findings.is_empty() {
            self.lines.push(String::new());
            self.push_wrapped(NO_FINDINGS, "", "");
        }
        for finding in findings {
            self.lines.push(String::new());
            let title = format!("{} {}", severity_tag(finding.severity), finding.title);
            self.push_wrapped(&title, "", "  ");
            for evidence in &finding.evidence {
                let line = format!("{}: {}", evidence.label, evidence.text);
                self.push_wrapped(&line, "  ", "    ");
            }
            self.push_wrapped(&finding.why, "  ", "  ");
        }
    }

    fn problems(&mut self, problems: &[String]) {
        if problems.is_empty() {
            return;
        }
        self.lines.push(String::new());
        self.lines.push(COULD_NOT_READ.to_string());
        for problem in problems {
            self.push_wrapped(problem, "  - ", "    ");
        }
    }
}

fn severity_tag(severity: Severity) -> &'static str {
    match severity {
        Severity::Warning => "[warning]",
        Severity::Info => "[info]",
    }
}
