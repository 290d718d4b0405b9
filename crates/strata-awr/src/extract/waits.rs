//! Wait events: the top timed events, the foreground and background event
//! lists and the wait classes. Column headings differ by release
//! (`Time(s)`, `Total Wait Time (sec)`, `Total(s)`; `Avg wait (ms)`,
//! `Avg Wait` with units in the cells); RAC tables keep the cluster-wide
//! (`*`) rows.

use crate::model::{AwrReport, EventTable, WaitEvent};
use crate::number::{millis, number, resolution};
use crate::table::{cell, contains_words, RawTable};

pub fn read(tables: &[RawTable], report: &mut AwrReport) {
    let event_tables: Vec<(&RawTable, EventTable)> = tables
        .iter()
        .filter(|table| is_event_table(table))
        .map(|table| (table, table_kind(table)))
        .collect();
    report.top_events = top_events(&event_tables);
    report.foreground_events = first_list(&event_tables, EventTable::Foreground, false);
    report.background_events = first_list(&event_tables, EventTable::Background, false);
    if report.background_events.is_empty() {
        report.background_events = first_list(&event_tables, EventTable::Background, true);
    }
    report.other_events = event_tables
        .iter()
        .filter(|(_, kind)| *kind == EventTable::AllSessions)
        .flat_map(|(table, kind)| events(table, table.column_named("Event"), *kind))
        .collect();
    report.wait_classes = tables
        .iter()
        .find(|table| is_wait_class_table(table))
        .map(|table| events(table, table.column("Wait Class"), EventTable::AllSessions))
        .unwrap_or_default();
}

fn is_event_table(table: &RawTable) -> bool {
    table.column_named("Event").is_some()
        && table.column_named("Waits").is_some()
        && !table.titled("histogram")
}

fn is_wait_class_table(table: &RawTable) -> bool {
    table.titled("wait class")
        && !table.titled("foreground wait class")
        && !table.titled("service")
        && table.column("Wait Class").is_some()
        && table.column_named("Waits").is_some()
}

/// Whose waits a table counts. The title (an HTML `summary`) names it
/// first ("Top Timed Foreground Events. . … Background Activity" is a
/// foreground table); where it names neither, the heading before the
/// table does (11g: "Top 10 Foreground Events by Total Wait Time"); where
/// neither does, the table counts every session (STATSPACK's "Top 5 Timed
/// Events", a RAC report's "Top Timed Events", "Wait Events (fg and bg)").
fn table_kind(table: &RawTable) -> EventTable {
    let title = table.title.to_ascii_lowercase();
    if title.contains("fg and bg") {
        return EventTable::AllSessions;
    }
    let named = |text: &str, last: bool| {
        let find = |word: &str| {
            if last {
                text.rfind(word)
            } else {
                text.find(word)
            }
        };
        match (find("foreground"), find("background")) {
            (Some(fg), Some(bg)) if (fg < bg) != last => Some(EventTable::Foreground),
            (Some(_), Some(_)) => Some(EventTable::Background),
            (Some(_), None) => Some(EventTable::Foreground),
            (None, Some(_)) => Some(EventTable::Background),
            (None, None) => None,
        }
    };
    named(&title, false)
        .or_else(|| named(&last_heading_words(&table.heading), true))
        .unwrap_or(EventTable::AllSessions)
}

/// The heading's last words: the section title just above the table, not
/// a link to another section further back.
fn last_heading_words(heading: &str) -> String {
    let words: Vec<&str> = heading.split_whitespace().collect();
    words[words.len().saturating_sub(8)..]
        .join(" ")
        .to_ascii_lowercase()
}

/// The top timed events: the foreground table where the report has one
/// (11g and later), else the all-session one (STATSPACK, 10g, a RAC
/// report's Top Timed Events).
fn top_events(tables: &[(&RawTable, EventTable)]) -> Vec<WaitEvent> {
    let top: Vec<&(&RawTable, EventTable)> = tables
        .iter()
        .filter(|(table, kind)| table.titled("top") && *kind != EventTable::Background)
        .collect();
    top.iter()
        .find(|(_, kind)| *kind == EventTable::Foreground)
        .or(top.first())
        .map(|(table, kind)| events(table, table.column_named("Event"), *kind))
        .unwrap_or_default()
}

/// The first non-empty list of `kind`: the full event lists, or (with
/// `top`) the top timed tables.
fn first_list(tables: &[(&RawTable, EventTable)], kind: EventTable, top: bool) -> Vec<WaitEvent> {
    tables
        .iter()
        .filter(|(table, table_kind)| *table_kind == kind && table.titled("top") == top)
        .map(|(table, kind)| events(table, table.column_named("Event"), *kind))
        .find(|events| !events.is_empty())
        .unwrap_or_default()
}

fn events(table: &RawTable, name_column: Option<usize>, kind: EventTable) -> Vec<WaitEvent> {
    let columns = EventColumns::of(table, name_column);
    table
        .rows
        .iter()
        .filter(|row| columns.instance.is_none() || cell(row, columns.instance) == "*")
        .filter_map(|row| columns.event(row, kind))
        .collect()
}

struct EventColumns {
    name: Option<usize>,
    instance: Option<usize>,
    waits: Option<usize>,
    time: Option<usize>,
    average: Option<usize>,
    percent: Option<usize>,
    percent_of: Option<String>,
    class: Option<usize>,
}

impl EventColumns {
    fn of(table: &RawTable, name: Option<usize>) -> Self {
        let heading = |wanted: &dyn Fn(&str) -> bool| table.header.iter().position(|h| wanted(h));
        let percent = heading(&|h| share_of(h).is_some());
        EventColumns {
            name,
            instance: table.column_named("I#"),
            waits: table.column_named("Waits"),
            time: heading(&is_time_heading),
            average: heading(&|h| contains_words(h, "avg")),
            percent,
            percent_of: percent.and_then(|column| share_of(&table.header[column])),
            class: table
                .column_named("Class")
                .or(table.column_named("Wait Class"))
                .filter(|column| Some(*column) != name),
        }
    }

    fn event(&self, row: &[String], table: EventTable) -> Option<WaitEvent> {
        let name = cell(row, self.name);
        if name.is_empty() {
            return None;
        }
        let class = cell(row, self.class);
        Some(WaitEvent {
            name: name.to_string(),
            waits: number(cell(row, self.waits)),
            time_s: number(cell(row, self.time)),
            avg_ms: millis(cell(row, self.average)),
            pct_time: number(cell(row, self.percent)),
            pct_of: self.percent_of.clone(),
            wait_class: (!class.is_empty()).then(|| class.to_string()),
            table,
            time_resolution_s: resolution(cell(row, self.time)),
            waits_resolution: resolution(cell(row, self.waits)),
            avg_resolution_ms: resolution(cell(row, self.average)),
        })
    }
}

/// The total wait time's column: `Time(s)`, `Total Wait Time (sec)`, or
/// 11.2 text's `Total Wait Time (sec)` cut to its column as `Tota`/`Time`.
fn is_time_heading(heading: &str) -> bool {
    let lower = heading.to_ascii_lowercase();
    if lower.contains("avg") || lower.contains('%') {
        return false;
    }
    let squeezed = lower.split_whitespace().collect::<Vec<_>>().join(" ");
    lower.contains("(s)")
        || lower.contains("(sec)")
        || matches!(squeezed.as_str(), "time" | "tota time" | "total time")
}

/// What a percent column is a share of, from its heading.
fn share_of(heading: &str) -> Option<String> {
    let squeezed: String = heading.to_ascii_lowercase().split_whitespace().collect();
    let shares = [
        ("%dbtime", "DB time"),
        ("%bgtime", "background time"),
        ("%totalcalltime", "total call time"),
        ("%total", "total wait time"),
    ];
    shares
        .iter()
        .find(|(wanted, _)| squeezed.contains(wanted))
        .map(|(_, of)| of.to_string())
}
