//! The HTML renderer: one self-contained page (inline CSS and SVG charts,
//! no network, no JavaScript), readable on screen and on paper.
//!
//! Order: title and facts, the findings box (warnings highlighted) and the
//! parts that could not be read, then each section's tables, notes and
//! charts (`svg`). A content security policy in the page forbids scripts
//! and every external resource, so the page stays what it is when mailed.
//!
//! Not for: styling choices by the reader; there are no themes or options.

use super::markup::escape;
use super::svg::chart_svg;
use super::{source_fact, Renderer, COULD_NOT_READ, NO_FINDINGS};
use crate::document::{Block, Cell, Column, Fact, Finding, Report, Section, Severity, Table};

/// One self-contained HTML page.
pub struct HtmlRenderer;

impl Renderer for HtmlRenderer {
    fn render(&self, report: &Report) -> String {
        let mut page = head(&report.title);
        page.push_str("<body>\n");
        page.push_str(&header(report));
        page.push_str(&findings(&report.findings));
        page.push_str(&problems(&report.problems));
        for section in &report.sections {
            page.push_str(&section_html(section));
        }
        page.push_str(&format!(
            "<footer>Document {} version {}.</footer>\n</body>\n</html>\n",
            escape(&report.schema),
            report.schema_version
        ));
        page
    }
}

const STYLE: &str = include_str!("report.css");

/// No scripts, no fetches: styles inline, images only as data.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CONTENT_SECURITY_POLICY}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n",
        escape(title)
    )
}

fn header(report: &Report) -> String {
    let source = source_fact(&report.source);
    let facts: String = report
        .about
        .iter()
        .chain(source.as_ref())
        .map(fact_html)
        .collect();
    format!(
        "<header>\n<h1>{}</h1>\n<dl class=\"facts\">\n{facts}</dl>\n</header>\n",
        escape(&report.title)
    )
}

fn fact_html(fact: &Fact) -> String {
    format!(
        "<dt>{}</dt><dd>{}</dd>\n",
        escape(&fact.label),
        escape(&fact.value)
    )
}

fn findings(findings: &[Finding]) -> String {
    let mut html =
        String::from("<section class=\"findings\" id=\"findings\">\n<h2>Findings</h2>\n");
    if findings.is_empty() {
        html.push_str(&format!(
            "<p class=\"no-findings\">{}</p>\n",
            escape(NO_FINDINGS)
        ));
    }
    for finding in findings {
        html.push_str(&finding_html(finding));
    }
    html.push_str("</section>\n");
    html
}

fn finding_html(finding: &Finding) -> String {
    let severity = match finding.severity {
        Severity::Warning => "warning",
        Severity::Info => "info",
    };
    let evidence: String = finding
        .evidence
        .iter()
        .map(|evidence| {
            format!(
                "<li><span class=\"label\">{}</span>: <strong>{}</strong></li>",
                escape(&evidence.label),
                escape(&evidence.text)
            )
        })
        .collect();
    format!(
        "<article class=\"finding {severity}\" data-finding-id=\"{}\">\
         <h3><span class=\"severity\">{severity}</span> {}</h3>\
         <ul class=\"evidence\">{evidence}</ul><p class=\"why\">{}</p></article>\n",
        escape(&finding.id),
        escape(&finding.title),
        escape(&finding.why)
    )
}

fn problems(problems: &[String]) -> String {
    if problems.is_empty() {
        return String::new();
    }
    let items: String = problems
        .iter()
        .map(|problem| format!("<li>{}</li>", escape(problem)))
        .collect();
    format!(
        "<section class=\"problems\" id=\"problems\">\n<h2>{}</h2>\n<ul>{items}</ul>\n</section>\n",
        escape(COULD_NOT_READ.trim_end_matches(':'))
    )
}

fn section_html(section: &Section) -> String {
    let mut html = format!(
        "<section class=\"report-section\" id=\"section-{id}\" data-section-id=\"{id}\">\n<h2>{}</h2>\n",
        escape(&section.title),
        id = escape(&section.id)
    );
    for block in &section.blocks {
        let block_html = match block {
            Block::Table(table) => table_html(table),
            Block::Chart(chart) => format!(
                "<figure class=\"chart\" id=\"chart-{}\"><figcaption>{}</figcaption>{}</figure>\n",
                escape(&chart.id),
                escape(&chart.title),
                chart_svg(chart)
            ),
            Block::Note { text } => format!("<p class=\"note\">{}</p>\n", escape(text)),
        };
        html.push_str(&block_html);
    }
    html.push_str("</section>\n");
    html
}

fn table_html(table: &Table) -> String {
    let caption = table
        .title
        .as_deref()
        .map(|title| format!("<caption>{}</caption>", escape(title)))
        .unwrap_or_default();
    let headings: String = table.columns.iter().map(heading_html).collect();
    let rows: String = table
        .rows
        .iter()
        .map(|row| {
            let cells: String = table
                .columns
                .iter()
                .enumerate()
                .map(|(index, column)| cell_html(row.get(index), column))
                .collect();
            format!("<tr>{cells}</tr>\n")
        })
        .collect();
    format!(
        "<div class=\"table-wrap\"><table>{caption}<thead><tr>{headings}</tr></thead>\n\
         <tbody>\n{rows}</tbody></table></div>\n"
    )
}

fn numeric_class(column: &Column) -> &'static str {
    if column.numeric {
        " class=\"num\""
    } else {
        ""
    }
}

fn heading_html(column: &Column) -> String {
    let unit = match column.unit.as_deref() {
        Some(unit) if !unit.is_empty() => {
            format!(" <span class=\"unit\">({})</span>", escape(unit))
        }
        _ => String::new(),
    };
    format!(
        "<th scope=\"col\"{}>{}{unit}</th>",
        numeric_class(column),
        escape(&column.name)
    )
}

fn cell_html(cell: Option<&Cell>, column: &Column) -> String {
    let Some(cell) = cell else {
        return format!("<td{}></td>", numeric_class(column));
    };
    let value = match (cell.value, cell.unit.as_deref()) {
        (Some(value), unit) if value.is_finite() => format!(
            " data-value=\"{value}\" data-unit=\"{}\"",
            escape(unit.unwrap_or(""))
        ),
        _ => String::new(),
    };
    format!(
        "<td{}{value}>{}</td>",
        numeric_class(column),
        escape(&cell.text)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_has_no_script_and_no_external_resource() {
        let mut report = Report::new("a <title>", "run", vec!["x.strata".into()]);
        report.about.push(Fact::new("host", "db01 & db02"));
        let page = HtmlRenderer.render(&report);
        assert!(page.contains("<title>a &lt;title&gt;</title>"));
        assert!(page.contains("db01 &amp; db02"));
        assert!(page.contains(&escape(NO_FINDINGS)));
        for forbidden in ["<script", "http://", "https://", "src=", "@import", "url("] {
            assert!(!page.contains(forbidden), "{forbidden}");
        }
    }
}
