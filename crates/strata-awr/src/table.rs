//! The one shape both readers produce: a titled table with column headings
//! and rows of cell text, whatever the report's format. Lookups match
//! titles and headings by words, never by position in the file.
//!
//! Not for: interpreting cells (see `extract`).

/// A table as read from the report, cells still text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawTable {
    /// The section title, the HTML `summary` and the text before the table.
    pub title: String,
    /// The last words of text before the table (an HTML report's section
    /// heading, which its `summary` may not repeat); a text report's title.
    pub heading: String,
    /// Column headings; for multi-row headings, the row nearest the data.
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl RawTable {
    /// The title contains `phrase` (case-insensitive, spaces squeezed).
    pub fn titled(&self, phrase: &str) -> bool {
        squeeze(&self.title)
            .to_ascii_lowercase()
            .contains(&squeeze(phrase).to_ascii_lowercase())
    }

    /// The first column whose heading contains all words of `words`.
    pub fn column(&self, words: &str) -> Option<usize> {
        self.columns(words).next()
    }

    /// Every column whose heading contains all words of `words`, in order.
    pub fn columns<'a>(&'a self, words: &'a str) -> impl Iterator<Item = usize> + 'a {
        self.header
            .iter()
            .enumerate()
            .filter(move |(_, heading)| contains_words(heading, words))
            .map(|(index, _)| index)
    }

    /// The heading is exactly `name` (case-insensitive, spaces squeezed).
    pub fn column_named(&self, name: &str) -> Option<usize> {
        self.header
            .iter()
            .position(|heading| squeeze(heading).eq_ignore_ascii_case(&squeeze(name)))
    }

    /// Every heading together contains all of these headings' words.
    pub fn has_columns(&self, names: &[&str]) -> bool {
        names.iter().all(|name| self.column(name).is_some())
    }

    /// The first row whose first cell starts with `label` (case-insensitive).
    pub fn row_labelled(&self, label: &str) -> Option<&[String]> {
        self.rows
            .iter()
            .find(|row| {
                row.first()
                    .is_some_and(|cell| starts_with_ignore_case(cell.trim(), label))
            })
            .map(Vec::as_slice)
    }
}

/// A cell of a row, or "" past its end.
pub fn cell(row: &[String], index: Option<usize>) -> &str {
    index
        .and_then(|index| row.get(index))
        .map(|text| text.trim())
        .unwrap_or("")
}

/// `haystack` contains each whitespace-separated word of `words`,
/// ignoring case.
pub fn contains_words(haystack: &str, words: &str) -> bool {
    let lower = haystack.to_ascii_lowercase();
    words
        .split_whitespace()
        .all(|word| lower.contains(&word.to_ascii_lowercase()))
}

pub fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.len() >= prefix.len()
        && text.is_char_boundary(prefix.len())
        && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Runs of whitespace become one space; ends trimmed.
pub fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
