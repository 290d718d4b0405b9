//! Wait events: the top timed events, the foreground and background event
//! lists and the wait classes. Column headings differ by release
//! (`Time(s)`, `Total Wait Time (sec)`, `Total(s)`; `Avg wait (ms)`,
//! `Avg Wait` with units in the cells); RAC tables keep the cluster-wide
//! (`*`) rows.

use crate::model::{AwrReport, WaitEvent};
use crate::number::{millis, number};
use crate::table::{cell, contains_words, RawTable};

pub fn read(tables: &[RawTable], report: &mut AwrReport) {
    let event_tables: Vec<&RawTable> = tables
        .iter()
        .filter(|table| is_event_table(table))
        .collect();
    report.top_events = top_events(&event_tables);
    report.foreground_events = first_list(&event_tables, |table| {
        table.titled("foreground wait event") && !table.titled("top")
    });
    report.background_events = first_list(&event_tables, |table| {
        table.titled("background wait event") && !table.titled("top")
    });
    if report.background_events.is_empty() {
        report.background_events = first_list(&event_tables, |table| {
            table.titled("Top Timed Background Events")
        });
    }
    report.other_events = event_tables
        .iter()
        .filter(|table| !table.titled("foreground") && !table.titled("background wait event"))
        .flat_map(|table| events(table, table.column_named("Event")))
        .collect();
    report.wait_classes = tables
        .iter()
        .find(|table| is_wait_class_table(table))
        .map(|table| events(table, table.column("Wait Class")))
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

/// The top timed foreground events; a RAC report's cluster-wide ones.
fn top_events(tables: &[&RawTable]) -> Vec<WaitEvent> {
    let top: Vec<&&RawTable> = tables
        .iter()
        .filter(|table| table.titled("top") && !table.titled("background"))
        .collect();
    top.iter()
        .find(|table| table.titled("foreground"))
        .or(top.first())
        .map(|table| events(table, table.column_named("Event")))
        .unwrap_or_default()
}

fn first_list(tables: &[&RawTable], wanted: impl Fn(&RawTable) -> bool) -> Vec<WaitEvent> {
    tables
        .iter()
        .filter(|table| wanted(table))
        .map(|table| events(table, table.column_named("Event")))
        .find(|events| !events.is_empty())
        .unwrap_or_default()
}

fn events(table: &RawTable, name_column: Option<usize>) -> Vec<WaitEvent> {
    let columns = EventColumns::of(table, name_column);
    table
        .rows
        .iter()
        .filter(|row| columns.instance.is_none() || cell(row, columns.instance) == "*")
        .filter_map(|row| columns.event(row))
        .collect()
}

struct EventColumns {
    name: Option<usize>,
    instance: Option<usize>,
    waits: Option<usize>,
    time: Option<usize>,
    average: Option<usize>,
    percent: Option<usize>,
    class: Option<usize>,
}

impl EventColumns {
    fn of(table: &RawTable, name: Option<usize>) -> Self {
        let heading = |wanted: &dyn Fn(&str) -> bool| table.header.iter().position(|h| wanted(h));
        EventColumns {
            name,
            instance: table.column_named("I#"),
            waits: table.column_named("Waits"),
            time: heading(&is_time_heading),
            average: heading(&|h| contains_words(h, "avg")),
            percent: heading(&is_percent_heading),
            class: table
                .column_named("Class")
                .or(table.column_named("Wait Class"))
                .filter(|column| Some(*column) != name),
        }
    }

    fn event(&self, row: &[String]) -> Option<WaitEvent> {
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
            wait_class: (!class.is_empty()).then(|| class.to_string()),
        })
    }
}

fn is_time_heading(heading: &str) -> bool {
    let lower = heading.to_ascii_lowercase();
    (lower.contains("(s)") || lower.contains("(sec)"))
        && !lower.contains("avg")
        && !lower.contains('%')
}

fn is_percent_heading(heading: &str) -> bool {
    let squeezed: String = heading.to_ascii_lowercase().split_whitespace().collect();
    ["%dbtime", "%bgtime", "%totalcalltime", "%total"]
        .iter()
        .any(|wanted| squeezed.contains(wanted))
}
