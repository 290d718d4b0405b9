//! Table layout for the text renderer: columns sized to their contents,
//! numbers right-aligned, text left-aligned, each heading carrying its unit
//! (`per s (requests/s)`, wrapped onto more heading lines when narrow).
//!
//! A table wider than the page first gives up room in its text columns
//! (whose cells wrap), then in its headings, always between words; when
//! the numbers and whole words cannot fit side by side, each row is
//! printed as a list of `heading: value` lines. No line is ever wider than
//! the width asked for, and no word is cut to fit one.
//!
//! Not for: the table's title or anything around the table.

use super::wrap::{columns, wrap, wrap_with_prefix};
use crate::document::{Cell, Column, Table};

/// Space between two columns.
const GAP: &str = "  ";
/// Text columns keep at least this many characters while headings shrink.
const TEXT_COLUMN_FLOOR: usize = 6;
/// A text cell's word up to this long is never cut in a column (a longer
/// one, a path, may be).
const LONGEST_UNCUT_WORD: usize = 24;

/// The lines of `table`, each at most `width` characters.
pub fn layout_table(table: &Table, width: usize) -> Vec<String> {
    if table.columns.is_empty() {
        return Vec::new();
    }
    let headings: Vec<String> = table.columns.iter().map(heading).collect();
    match column_widths(table, &headings, width) {
        Some(widths) => side_by_side(table, &headings, &widths),
        None => row_by_row(table, &headings, width),
    }
}

/// A column's heading with its unit: `per s (requests/s)`.
fn heading(column: &Column) -> String {
    match column.unit.as_deref() {
        Some(unit) if !unit.is_empty() => format!("{} ({unit})", column.name),
        _ => column.name.clone(),
    }
}

fn cell_at(row: &[Cell], index: usize) -> &str {
    row.get(index).map_or("", |cell| cell.text.as_str())
}

/// Each column's width, or `None` when the numbers cannot fit side by side.
/// Room is given up in steps: first headings wrap, then text cells, then
/// headings down to the width of their numbers.
fn column_widths(table: &Table, headings: &[String], width: usize) -> Option<Vec<usize>> {
    let gaps = columns(GAP) * (headings.len() - 1);
    let budget = width.checked_sub(gaps)?;
    let fits: Vec<ColumnFit> = (0..headings.len())
        .map(|index| ColumnFit::of(table, headings, index))
        .collect();
    let mut widths: Vec<usize> = fits.iter().map(|fit| fit.natural).collect();
    let steps: [fn(&ColumnFit) -> usize; 3] = [
        |fit| fit.unwrapped_cells,
        |fit| fit.wrapped_text,
        |fit| fit.tightest,
    ];
    for floor_of in steps {
        let floors: Vec<usize> = fits
            .iter()
            .map(|fit| floor_of(fit).min(fit.natural))
            .collect();
        if shrink(&mut widths, &floors, budget) {
            return Some(widths);
        }
    }
    None
}

/// How narrow one column can get at each step of shrinking a table.
struct ColumnFit {
    /// Room for the widest cell and the whole heading on one line.
    natural: usize,
    /// No cell wraps; the heading wraps between words.
    unwrapped_cells: usize,
    /// Text cells wrap too, down to a readable floor.
    wrapped_text: usize,
    /// Numbers and words still fit whole (a word is never cut: a table
    /// that cannot keep them is printed row by row instead).
    tightest: usize,
}

impl ColumnFit {
    fn of(table: &Table, headings: &[String], index: usize) -> Self {
        let widest_cell = table
            .rows
            .iter()
            .map(|row| columns(cell_at(row, index)))
            .max()
            .unwrap_or(0);
        let heading_word = longest_word(&headings[index]);
        let natural = widest_cell.max(columns(&headings[index])).max(1);
        let unwrapped_cells = widest_cell.max(heading_word).max(1);
        let cell_word = table
            .rows
            .iter()
            .map(|row| longest_word(cell_at(row, index)))
            .max()
            .unwrap_or(0)
            .min(LONGEST_UNCUT_WORD);
        let (wrapped_text, tightest) = if table.columns[index].numeric {
            (unwrapped_cells, unwrapped_cells)
        } else {
            let floor = heading_word.max(cell_word).max(TEXT_COLUMN_FLOOR);
            (floor, floor)
        };
        ColumnFit {
            natural,
            unwrapped_cells,
            wrapped_text,
            tightest,
        }
    }
}

fn longest_word(text: &str) -> usize {
    text.split_whitespace().map(columns).max().unwrap_or(0)
}

/// Narrows the widest column still above its floor, one character at a
/// time, until the columns fit `budget`; false when the floors do not fit.
fn shrink(widths: &mut [usize], floors: &[usize], budget: usize) -> bool {
    while widths.iter().sum::<usize>() > budget {
        let widest = (0..widths.len())
            .filter(|&index| widths[index] > floors[index])
            .max_by_key(|&index| widths[index]);
        match widest {
            Some(index) => widths[index] -= 1,
            None => return false,
        }
    }
    true
}

fn side_by_side(table: &Table, headings: &[String], widths: &[usize]) -> Vec<String> {
    let numeric: Vec<bool> = table.columns.iter().map(|column| column.numeric).collect();
    let mut lines = aligned_lines(headings, widths, &numeric);
    let rule: Vec<String> = widths.iter().map(|&width| "-".repeat(width)).collect();
    lines.push(rule.join(GAP));
    for row in &table.rows {
        let texts: Vec<&str> = (0..widths.len()).map(|index| cell_at(row, index)).collect();
        lines.extend(aligned_lines(&texts, widths, &numeric));
    }
    lines
}

/// One table row (or the headings), each text wrapped in its column and
/// aligned: as many lines as its tallest cell.
fn aligned_lines<S: AsRef<str>>(texts: &[S], widths: &[usize], numeric: &[bool]) -> Vec<String> {
    let wrapped: Vec<Vec<String>> = texts
        .iter()
        .zip(widths)
        .map(|(text, &width)| wrap(text.as_ref(), width))
        .collect();
    let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
    (0..height)
        .map(|line| {
            let cells: Vec<String> = wrapped
                .iter()
                .enumerate()
                .map(|(index, cell)| {
                    let text = cell.get(line).map_or("", String::as_str);
                    pad(text, widths[index], numeric[index])
                })
                .collect();
            cells.join(GAP).trim_end().to_string()
        })
        .collect()
}

fn pad(text: &str, width: usize, right_aligned: bool) -> String {
    let fill = " ".repeat(width.saturating_sub(columns(text)));
    if right_aligned {
        format!("{fill}{text}")
    } else {
        format!("{text}{fill}")
    }
}

/// Each row as its first cell, then one `heading: value` line per other
/// column: for tables too wide to print side by side.
fn row_by_row(table: &Table, headings: &[String], width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for (row_index, row) in table.rows.iter().enumerate() {
        if row_index > 0 {
            lines.push(String::new());
        }
        lines.extend(wrap(cell_at(row, 0), width));
        for (index, heading) in headings.iter().enumerate().skip(1) {
            let line = format!("{heading}: {}", cell_at(row, index));
            lines.extend(wrap_with_prefix(&line, "  ", "    ", width));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_profile() -> Table {
        let mut table = Table::new(
            None,
            vec![
                Column::text("metric"),
                Column::number("per s", Some("requests/s")),
                Column::number("per txn", None),
            ],
        );
        table.push(vec![
            Cell::text("read requests"),
            Cell::number(8047.0, 0, "requests/s"),
            Cell::number(2.5, 1, "requests"),
        ]);
        table.push(vec![
            Cell::text("writes"),
            Cell::number(12.0, 0, "requests/s"),
            Cell::empty(),
        ]);
        table
    }

    #[test]
    fn numbers_align_right_text_left_units_in_headings() {
        let lines = layout_table(&load_profile(), 100);
        assert_eq!(
            lines,
            [
                "metric         per s (requests/s)  per txn",
                "-------------  ------------------  -------",
                "read requests               8,047      2.5",
                "writes                         12",
            ]
        );
    }

    #[test]
    fn a_narrow_page_wraps_headings_before_text_cells() {
        let lines = layout_table(&load_profile(), 32);
        assert!(lines.iter().all(|line| columns(line) <= 32), "{lines:#?}");
        assert_eq!(lines[0], "metric                per s  per");
        assert_eq!(lines[1], "               (requests/s)  txn");
        assert_eq!(lines[3], "read requests         8,047  2.5");
        assert!(lines.iter().any(|line| line.starts_with("read requests")));
    }

    #[test]
    fn a_table_too_wide_for_the_page_is_printed_row_by_row() {
        let lines = layout_table(&load_profile(), 16);
        assert!(lines.iter().all(|line| columns(line) <= 16), "{lines:#?}");
        assert_eq!(lines[0], "read requests");
        assert_eq!(lines[1], "  per s");
        assert!(
            lines.iter().any(|line| line.contains(": 8,047")),
            "{lines:#?}"
        );
        assert!(lines.contains(&"writes".to_string()), "{lines:#?}");
    }

    #[test]
    fn long_text_cells_wrap_within_their_column() {
        let mut table = Table::new(
            None,
            vec![Column::text("event"), Column::number("ms", None)],
        );
        let event = "db file sequential read on a very slow device behind a busy controller";
        table.push(vec![Cell::text(event), Cell::number(12.0, 1, "ms")]);
        let lines = layout_table(&table, 30);
        assert!(lines.iter().all(|line| columns(line) <= 30), "{lines:#?}");
        assert!(lines[2].ends_with("12.0"), "{lines:#?}");
        assert!(lines.len() > 3);
    }
}
