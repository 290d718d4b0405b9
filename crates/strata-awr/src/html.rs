//! A small, tolerant reader of the tables in an HTML AWR report.
//!
//! One pass over the bytes: tags are recognised by name, attributes only
//! for `summary`, text outside tables is kept briefly as the next table's
//! title. Broken or unclosed markup ends a cell, row or table where it can;
//! a report cut mid-table still yields the rows before the cut.
//!
//! Not for: general HTML (no DOM, no CSS, no scripts), or meaning (see
//! `extract`).

use crate::table::{squeeze, RawTable};

/// Every table of the page, in document order (nested ones first).
pub fn tables(page: &str) -> Vec<RawTable> {
    let mut reader = Reader::default();
    let bytes = page.as_bytes();
    let mut position = 0;
    while position < bytes.len() {
        match memchr(b'<', &bytes[position..]) {
            Some(offset) => {
                reader.text(&page[position..position + offset]);
                position = reader.tag(page, position + offset);
            }
            None => {
                reader.text(&page[position..]);
                break;
            }
        }
    }
    reader.finish()
}

/// The line size an HTML report was spooled at through SQL*Plus without
/// `trimspool` (`set linesize 132`): nearly every line is exactly that many
/// characters long, cut mid-tag and padded with spaces. `None` for a report
/// as awrrpt wrote it.
pub fn spool_width(page: &str) -> Option<usize> {
    let lengths: Vec<usize> = page
        .lines()
        .map(|line| line.trim_end_matches('\r').chars().count())
        .collect();
    let widest = *lengths.iter().max()?;
    let at_widest = lengths.iter().filter(|length| **length == widest).count();
    (lengths.len() >= 100 && widest <= 512 && at_widest * 10 >= lengths.len() * 9).then_some(widest)
}

/// The page with its spooled lines rejoined: a line cut at `width` (its
/// last character not a space) continues on the next; a padded line ended
/// where the report's own line did.
pub fn rejoin_spooled(page: &str, width: usize) -> String {
    let mut joined = String::with_capacity(page.len());
    for line in page.lines() {
        let line = line.trim_end_matches('\r');
        if line.chars().count() == width && !line.ends_with(' ') {
            joined.push_str(line);
        } else {
            joined.push_str(line.trim_end_matches(' '));
            joined.push('\n');
        }
    }
    joined
}

#[derive(Default)]
struct Reader {
    finished: Vec<RawTable>,
    open: Vec<TableBuilder>,
    /// Text seen since the last table ended: the title of a next table
    /// that has no `summary` (which is the title when present: the text
    /// before a table also holds "Back to Top" links and tables of contents).
    between: String,
}

#[derive(Default)]
struct TableBuilder {
    title: String,
    heading: String,
    header_rows: Vec<Vec<String>>,
    rows: Vec<Vec<String>>,
    row: Option<RowBuilder>,
}

#[derive(Default)]
struct RowBuilder {
    cells: Vec<String>,
    cell: Option<String>,
    cell_is_data: bool,
    /// A `td` with text: a row of `th` (and empty `td` spacers) is a heading.
    has_data_cell: bool,
}

const TITLE_KEEP: usize = 300;

impl Reader {
    fn text(&mut self, raw: &str) {
        if raw.is_empty() {
            return;
        }
        let decoded = decode_entities(raw);
        if self.open.is_empty() {
            self.keep_between(&decoded);
            return;
        }
        let row = self.open.last_mut().and_then(|table| table.row.as_mut());
        if let Some(cell) = row.and_then(|row| row.cell.as_mut()) {
            cell.push_str(&decoded);
        }
    }

    fn keep_between(&mut self, text: &str) {
        self.between.push_str(text);
        self.between.push('\n');
        if self.between.len() > 4 * TITLE_KEEP {
            let mut cut = self.between.len() - TITLE_KEEP;
            while !self.between.is_char_boundary(cut) {
                cut += 1;
            }
            self.between.drain(..cut);
        }
    }

    /// Handles the tag starting at `start` (a '<'); returns where reading
    /// goes on.
    fn tag(&mut self, page: &str, start: usize) -> usize {
        let rest = &page[start..];
        if rest.starts_with("<!--") {
            return rest.find("-->").map_or(page.len(), |end| start + end + 3);
        }
        let Some(length) = memchr(b'>', rest.as_bytes()) else {
            return page.len();
        };
        let inside = &rest[1..length];
        let after = start + length + 1;
        let (closing, name) = tag_name(inside);
        match (closing, name.as_str()) {
            (false, "script") | (false, "style") => skip_until_closed(page, after, &name),
            (false, "table") => {
                self.open_table(inside);
                after
            }
            (true, "table") => {
                self.close_table();
                after
            }
            _ => {
                self.element(closing, &name);
                after
            }
        }
    }

    fn element(&mut self, closing: bool, name: &str) {
        let Some(table) = self.open.last_mut() else {
            return;
        };
        match (closing, name) {
            (false, "tr") => table.start_row(),
            (true, "tr") => table.end_row(),
            (false, "td") | (false, "th") => table.start_cell(name == "td"),
            (true, "td") | (true, "th") => table.end_cell(),
            (false, "br") | (false, "p") | (false, "div") => table.space(),
            _ => {}
        }
    }

    fn open_table(&mut self, inside: &str) {
        let summary = squeeze(&attribute(inside, "summary").unwrap_or_default());
        let heading = tail_chars(&squeeze(&self.between), TITLE_KEEP).to_string();
        let title = if summary.is_empty() {
            heading.clone()
        } else {
            summary
        };
        self.open.push(TableBuilder {
            title,
            heading,
            ..TableBuilder::default()
        });
    }

    fn close_table(&mut self) {
        if let Some(table) = self.open.pop() {
            self.finished.push(table.finish());
        }
        if self.open.is_empty() {
            self.between.clear();
        }
    }

    fn finish(mut self) -> Vec<RawTable> {
        while !self.open.is_empty() {
            self.close_table();
        }
        self.finished
    }
}

impl TableBuilder {
    fn start_row(&mut self) {
        self.end_row();
        self.row = Some(RowBuilder::default());
    }

    fn end_row(&mut self) {
        let Some(mut row) = self.row.take() else {
            return;
        };
        row.end_cell();
        if row.cells.iter().all(String::is_empty) {
            return;
        }
        if row.has_data_cell || !self.rows.is_empty() {
            self.rows.push(row.cells);
        } else {
            self.header_rows.push(row.cells);
        }
    }

    fn start_cell(&mut self, data: bool) {
        let row = self.row.get_or_insert_with(RowBuilder::default);
        row.end_cell();
        row.cell = Some(String::new());
        row.cell_is_data = data;
    }

    fn end_cell(&mut self) {
        if let Some(row) = self.row.as_mut() {
            row.end_cell();
        }
    }

    fn space(&mut self) {
        if let Some(cell) = self.row.as_mut().and_then(|row| row.cell.as_mut()) {
            cell.push(' ');
        }
    }

    fn finish(mut self) -> RawTable {
        self.end_row();
        RawTable {
            title: self.title,
            heading: self.heading,
            header: self.header_rows.pop().unwrap_or_default(),
            rows: self.rows,
        }
    }
}

impl RowBuilder {
    fn end_cell(&mut self) {
        if let Some(cell) = self.cell.take() {
            let text = squeeze(&cell);
            self.has_data_cell |= self.cell_is_data && !text.is_empty();
            self.cells.push(text);
        }
    }
}

/// (closing?, lower-case name) of the text between '<' and '>'.
fn tag_name(inside: &str) -> (bool, String) {
    let trimmed = inside.trim_start();
    let (closing, body) = match trimmed.strip_prefix('/') {
        Some(body) => (true, body),
        None => (false, trimmed),
    };
    let name: String = body
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    (closing, name)
}

fn skip_until_closed(page: &str, from: usize, name: &str) -> usize {
    let closing = format!("</{name}");
    let rest = &page.as_bytes()[from..];
    let found = rest
        .windows(closing.len())
        .position(|window| window.eq_ignore_ascii_case(closing.as_bytes()));
    match found {
        Some(offset) => from + offset,
        None => page.len(),
    }
}

/// The value of attribute `name` in a tag's text, quoted either way.
fn attribute(inside: &str, name: &str) -> Option<String> {
    let lower = inside.to_ascii_lowercase();
    let at = lower.find(&format!("{name}="))? + name.len() + 1;
    let rest = &inside[at..];
    let quote = rest.chars().next()?;
    let value = if quote == '"' || quote == '\'' {
        let body = &rest[1..];
        &body[..body.find(quote).unwrap_or(body.len())]
    } else {
        rest.split_whitespace().next().unwrap_or("")
    };
    Some(decode_entities(value))
}

fn tail_chars(text: &str, keep: usize) -> &str {
    if text.len() <= keep {
        return text;
    }
    let mut cut = text.len() - keep;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    &text[cut..]
}

/// `&#160;`, `&nbsp;`, `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;`; anything
/// else is left as written.
pub fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut decoded = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        decoded.push_str(&rest[..at]);
        let after = &rest[at..];
        match after.find(';').filter(|end| *end <= 8) {
            Some(end) => {
                match entity(&after[1..end]) {
                    Some(c) => decoded.push(c),
                    None => decoded.push_str(&after[..=end]),
                }
                rest = &after[end + 1..];
            }
            None => {
                decoded.push('&');
                rest = &after[1..];
            }
        }
    }
    decoded.push_str(rest);
    decoded
}

fn entity(name: &str) -> Option<char> {
    match name {
        "nbsp" => Some(' '),
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => {
            let code = name.strip_prefix('#')?;
            let value = match code.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => code.parse().ok()?,
            };
            let c = char::from_u32(value)?;
            Some(if c == '\u{a0}' { ' ' } else { c })
        }
    }
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|byte| *byte == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_rows_and_data_rows() {
        let page = "<h3>Load Profile</h3><table summary=\"This table displays load profile\">\
            <tr><th></th><th>Per Second</th></tr>\
            <tr><td>Redo size (bytes):</td><td align=right>&#160;1,454.9</td></tr></table>";
        let tables = tables(page);
        assert_eq!(tables.len(), 1);
        assert!(tables[0].titled("load profile"));
        let untitled = super::tables("<h3>Host CPU</h3><table><tr><td>1</td></tr></table>");
        assert_eq!(untitled[0].title, "Host CPU");
        assert_eq!(tables[0].header, vec!["", "Per Second"]);
        assert_eq!(tables[0].rows, vec![vec!["Redo size (bytes):", "1,454.9"]]);
    }

    #[test]
    fn a_cut_table_keeps_its_rows() {
        let page = "<table><tr><th>Event</th></tr><tr><td>log file sync</td></tr><tr><td>db fi";
        let tables = tables(page);
        assert_eq!(tables[0].rows.len(), 2);
        assert_eq!(tables[0].rows[1], vec!["db fi"]);
    }

    #[test]
    fn nested_markup_inside_cells() {
        let page =
            "<table><tr><th>I#</th></tr><tr><td><div class=\"hidden\">   *</div></td></tr></table>";
        assert_eq!(tables(page)[0].rows[0], vec!["*"]);
    }
}
