//! Reads the tables of a plain-text AWR or STATSPACK report.
//!
//! A table is found by its underline: a line of dash runs (`----- ------`),
//! which gives each column's extent. The lines above it (up to a blank
//! line) are the headings, the lines below it (up to a blank line, a
//! section's closing rule or the next title) are the rows. Each word of a
//! row goes to the column it overlaps most, so right-aligned numbers, blank
//! cells and slightly overflowing values all land where they belong. The
//! section title is the last line that is underlined with `~~~` or carries
//! `DB/Inst:`. Form feeds (STATSPACK's page breaks) are ignored.
//!
//! Not for: HTML reports (see `html`), or meaning (see `extract`).

use crate::table::{squeeze, RawTable};

/// Every underlined table of the report, in order, titled by its section.
pub fn tables(report: &str) -> Vec<RawTable> {
    let lines: Vec<&str> = report
        .lines()
        .map(|line| line.trim_end_matches('\r').trim_start_matches('\u{c}'))
        .collect();
    let mut tables = Vec::new();
    let mut title = String::new();
    let mut title_line = usize::MAX;
    let mut index = 0;
    while index < lines.len() {
        if let Some(found) = title_of(&lines, index) {
            title = found;
            title_line = index;
        }
        let Some(columns) = underline_columns(lines[index]) else {
            index += 1;
            continue;
        };
        let header_lines = header_lines(&lines, index, title_line);
        let (rows, next) = table_rows(&lines, index + 1, &columns);
        tables.push(RawTable {
            title: title.clone(),
            heading: title.clone(),
            header: headings(&header_lines, &columns),
            rows,
        });
        index = next.max(index + 1);
    }
    tables
}

/// The section title that starts at line `index`, if one does.
fn title_of(lines: &[&str], index: usize) -> Option<String> {
    let line = lines[index];
    let first = line.chars().next()?;
    if !first.is_ascii_alphanumeric() {
        return None;
    }
    if let Some(at) = line.find("DB/Inst:") {
        return Some(squeeze(&line[..at]));
    }
    let underlined = lines
        .get(index + 1)
        .is_some_and(|next| next.starts_with("~~~"));
    underlined.then(|| squeeze(line))
}

/// Column extents of an underline (`~` counts as blank), or `None` when the
/// line is not one. A section's closing rule (one long indented run) is not.
fn underline_columns(line: &str) -> Option<Vec<(usize, usize)>> {
    let bytes = line.as_bytes();
    if !bytes.contains(&b'-') || bytes.iter().any(|b| !matches!(b, b'-' | b' ' | b'~')) {
        return None;
    }
    let runs = dash_runs(bytes);
    let (first_start, first_end) = *runs.first()?;
    if runs.len() == 1 && first_start >= 4 && first_end - first_start >= 40 {
        return None;
    }
    if runs.iter().all(|(start, end)| end - start < 2) {
        return None;
    }
    let mut columns = Vec::with_capacity(runs.len() + 1);
    if first_start >= 2 {
        columns.push((0, first_start - 1));
    }
    columns.extend(runs);
    Some(columns)
}

fn dash_runs(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = None;
    for (index, byte) in bytes.iter().enumerate() {
        match (*byte == b'-', start) {
            (true, None) => start = Some(index),
            (false, Some(from)) => {
                runs.push((from, index));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        runs.push((from, bytes.len()));
    }
    runs
}

/// The heading lines above the underline at `index`, top first. On the
/// title line itself only what follows the title counts.
fn header_lines(lines: &[&str], index: usize, title_line: usize) -> Vec<String> {
    let mut found = Vec::new();
    let mut line_index = index;
    while line_index > 0 && found.len() < 4 {
        line_index -= 1;
        let line = lines[line_index];
        if line.trim().is_empty() || line.trim_start().starts_with("->") {
            break;
        }
        if line_index == title_line {
            found.push(blank_title(line));
            break;
        }
        found.push(line.replace('~', " "));
    }
    found.reverse();
    found
}

/// The title line with its title (text up to the first double space)
/// blanked, so the headings that share the line stay in place.
fn blank_title(line: &str) -> String {
    let end = line.find("  ").unwrap_or(line.len());
    format!("{}{}", " ".repeat(end), &line[end..]).replace('~', " ")
}

fn headings(lines: &[String], columns: &[(usize, usize)]) -> Vec<String> {
    let mut headings = vec![String::new(); columns.len()];
    for line in lines {
        for (column, word) in split_into_columns(line, columns) {
            if !word.bytes().all(|byte| byte == b'-') {
                push_word(&mut headings[column], word);
            }
        }
    }
    headings
}

/// Rows from line `from` until the table ends; returns them and the index
/// of the first line after the table.
fn table_rows(
    lines: &[&str],
    from: usize,
    columns: &[(usize, usize)],
) -> (Vec<Vec<String>>, usize) {
    let mut rows = Vec::new();
    let mut index = from;
    while index < lines.len() {
        let line = lines[index];
        if ends_table(lines, index) {
            break;
        }
        let mut row = vec![String::new(); columns.len()];
        for (column, word) in split_into_columns(line, columns) {
            push_word(&mut row[column], word);
        }
        rows.push(row);
        index += 1;
    }
    (rows, index)
}

fn ends_table(lines: &[&str], index: usize) -> bool {
    let line = lines[index];
    let trimmed = line.trim_start();
    trimmed.is_empty()
        || trimmed.starts_with("->")
        || (trimmed.starts_with("---") && line.len() - trimmed.len() >= 4)
        || trimmed.starts_with("~~~")
        || title_of(lines, index).is_some()
        || underline_columns(line).is_some()
}

fn push_word(cell: &mut String, word: &str) {
    if !cell.is_empty() {
        cell.push(' ');
    }
    cell.push_str(word);
}

/// Each word of `line` with the column it overlaps most (or lies nearest).
fn split_into_columns<'a>(
    line: &'a str,
    columns: &'a [(usize, usize)],
) -> impl Iterator<Item = (usize, &'a str)> + 'a {
    words(line).map(move |(start, word)| (nearest_column(start, start + word.len(), columns), word))
}

fn words(line: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    line.split(' ').filter_map(move |piece| {
        let start = offset;
        offset += piece.len() + 1;
        (!piece.is_empty()).then_some((start, piece))
    })
}

fn nearest_column(start: usize, end: usize, columns: &[(usize, usize)]) -> usize {
    let mut best = 0;
    let mut best_score = i64::MIN;
    for (index, (column_start, column_end)) in columns.iter().enumerate() {
        let overlap = end.min(*column_end) as i64 - start.max(*column_start) as i64;
        if overlap > best_score {
            best = index;
            best_score = overlap;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
Host CPU
~~~~~~~~                  Load Average
 CPUs Cores Sockets     Begin       End     %User   %System      %WIO     %Idle
----- ----- ------- --------- --------- --------- --------- --------- ---------
   40     5       2.56      2.04       2.4       0.5       0.0      97.1

Load Profile                    Per Second   Per Transaction  Per Exec  Per Call
~~~~~~~~~~~~~~~            ---------------   --------------- --------- ---------
             DB Time(s):               1.1               0.1      0.00      0.00
      Redo size (bytes):         146,118.4           7,016.0
";

    #[test]
    fn columns_come_from_the_underline() {
        let tables = tables(SAMPLE);
        assert_eq!(tables.len(), 2);
        let host = &tables[0];
        assert_eq!(host.title, "Host CPU");
        assert_eq!(host.header[0], "CPUs");
        assert_eq!(host.header[8], "%Idle");
        assert_eq!(host.rows[0][2], "", "blank Sockets stays blank");
        assert_eq!(host.rows[0][3], "2.56");
        assert_eq!(host.rows[0][8], "97.1");
    }

    #[test]
    fn labelled_rows_get_an_implicit_first_column() {
        let tables = tables(SAMPLE);
        let profile = &tables[1];
        assert!(profile.titled("load profile"));
        assert_eq!(profile.header[1], "Per Second");
        assert_eq!(profile.rows[1][0], "Redo size (bytes):");
        assert_eq!(profile.rows[1][1], "146,118.4");
        assert_eq!(profile.rows[1][2], "7,016.0");
    }
}
