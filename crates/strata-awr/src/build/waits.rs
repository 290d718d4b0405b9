//! The waits sections: the report's top events, the I/O and commit events
//! that matter to storage, and the commit wait decomposed.

use crate::figures::{COMMIT_LABEL, LOG_WRITE_LABEL};
use crate::model::{decimals_for, decimals_supported, Average, AwrReport, WaitEvent};
use strata_output::document::{Cell, Column, Section, Table};

/// Events whose averages say something about storage or commits.
pub const KEY_EVENTS: [&str; 8] = [
    "db file sequential read",
    "cell single block physical read",
    "db file scattered read",
    "db file parallel read",
    "direct path read",
    "cell multiblock physical read",
    "log file sync",
    "log file parallel write",
];

fn waits_table(title: &str, with_oracle_average: bool) -> Table {
    let mut columns = vec![
        Column::text("Event"),
        Column::number("Waits", None),
        Column::number("Time", Some("s")),
        Column::number("Avg wait", Some("ms")),
    ];
    if with_oracle_average {
        columns.push(Column::number("Oracle's avg", Some("ms")));
    }
    columns.extend([
        Column::number("Share", Some("%")),
        Column::text("Share of"),
        Column::text("Sessions"),
        Column::text("Wait class"),
    ]);
    Table::new(Some(title), columns)
}

/// A wait event as a row of a waits table: the average is time ÷ waits
/// with the decimals the printed time and count support; Oracle's printed
/// average only where it disagrees beyond its rounding.
fn event_row(name: &str, event: &WaitEvent, with_oracle_average: bool) -> Vec<Cell> {
    let optional = |value: Option<f64>, decimals, unit: &str| {
        value.map_or_else(Cell::empty, |value| Cell::number(value, decimals, unit))
    };
    let average = event.average();
    let time_decimals = event.time_resolution_s.map_or(1, decimals_for);
    let mut row = vec![
        Cell::text(name),
        optional(event.waits, 0, "waits"),
        optional(event.time_s, time_decimals, "s"),
        average.map_or_else(Cell::empty, |average| {
            Cell::number(average.ms, average.decimals, "ms")
        }),
    ];
    if with_oracle_average {
        row.push(optional(average.and_then(|a| a.oracle_ms), 3, "ms"));
    }
    row.extend([
        optional(event.pct_time, 1, "%"),
        Cell::text(event.pct_of.as_deref().unwrap_or("")),
        Cell::text(event.table.describe()),
        Cell::text(event.wait_class.as_deref().unwrap_or("")),
    ]);
    row
}

fn events_table(title: &str, rows: &[(&str, &WaitEvent)]) -> Table {
    let disagrees = rows
        .iter()
        .any(|(_, event)| event.average().is_some_and(|a| a.oracle_ms.is_some()));
    let mut table = waits_table(title, disagrees);
    for (name, event) in rows {
        table.push(event_row(name, event, disagrees));
    }
    table
}

/// The events that say something about storage and commits: each as
/// user sessions waited it, log file parallel write as the log writer did.
pub fn key_events(awr: &AwrReport) -> Vec<(&'static str, &WaitEvent)> {
    KEY_EVENTS
        .into_iter()
        .filter_map(|name| {
            let event = if name.starts_with("log file parallel") {
                awr.background_event(name)
            } else {
                awr.foreground_event(name)
            };
            Some((name, event?))
        })
        .collect()
}

pub fn top_waits(awr: &AwrReport) -> Section {
    let kind = awr
        .top_events
        .first()
        .map_or("foreground", |event| event.table.describe());
    let top: Vec<(&str, &WaitEvent)> = awr
        .top_events
        .iter()
        .map(|event| (event.name.as_str(), event))
        .collect();
    let top = events_table(&format!("Top timed events ({kind})"), &top);
    let key = events_table("I/O and commit waits", &key_events(awr));
    Section::new("top_waits", "Top waits")
        .table(top)
        .table(key)
        .note(
            "Avg wait is time ÷ waits, with the digits the printed time and count support, \
             or Oracle's printed average where that agrees and is the more precise (Oracle \
             rounds its own to whole ms in 11g and STATSPACK; it is shown beside where it \
             disagrees beyond that rounding). Share is a share of what 'Share of' \
             names: DB time for foreground events, background time for background ones. \
             Sessions says which of Oracle's lists the row is from; log file parallel write \
             is the log writer's own I/O.",
        )
}

/// log file sync vs log file parallel write vs redo write time per write
/// and per commit, and the rest of the commit wait, all from time ÷ count.
pub fn commit_waits(awr: &AwrReport) -> Section {
    let section = Section::new("commit_waits", "Commit waits decomposed");
    let Some(sync) = awr
        .foreground_event("log file sync")
        .and_then(WaitEvent::average)
    else {
        return section.note("The report has no log file sync wait: no commit wait to decompose.");
    };
    let log_write = awr
        .background_event("log file parallel write")
        .and_then(WaitEvent::average);
    let mut table = Table::new(
        None,
        vec![
            Column::text("Part"),
            Column::number("Average", Some("ms")),
            Column::text("From"),
        ],
    );
    let mut push = |label: &str, value: Option<(f64, usize)>, from: &str| {
        let cell = value.map_or_else(Cell::empty, |(ms, decimals)| {
            Cell::number(ms, decimals, "ms")
        });
        table.push(vec![Cell::text(label), cell, Cell::text(from)]);
    };
    let shown = |average: Average| (average.ms, average.decimals);
    push(
        COMMIT_LABEL,
        Some(shown(sync)),
        "what a committing session waited",
    );
    push(
        LOG_WRITE_LABEL,
        log_write.map(shown),
        "the log writer's I/O, as storage served it",
    );
    push(
        "redo write time per redo write",
        redo_write_ms(awr, "redo writes"),
        "'redo write time' (centiseconds) ÷ 'redo writes'",
    );
    push(
        "redo write time per commit",
        redo_write_ms(awr, "user commits"),
        "'redo write time' ÷ 'user commits'",
    );
    let rest = log_write.and_then(|log_write| rest_of_commit(sync, log_write));
    push(
        "rest of the commit wait",
        rest,
        "log file sync − log file parallel write: LGWR work, posting, CPU scheduling",
    );
    let note = match log_write {
        Some(log_write) if rest.is_none() => group_commit_note(sync.ms, log_write.ms),
        _ => cpu_note(awr, rest.map(|(ms, _)| ms)),
    };
    section.table(table).note(note)
}

/// The commit wait outside the log write, with the decimals both averages
/// support; none when the log write is the longer of the two.
fn rest_of_commit(sync: Average, log_write: Average) -> Option<(f64, usize)> {
    let rest = sync.ms - log_write.ms;
    (rest >= 0.0).then(|| {
        let uncertainty = sync.uncertainty_ms + log_write.uncertainty_ms;
        (rest, decimals_supported(rest, uncertainty / rest.max(1e-9)))
    })
}

/// Why no share of the commit is given when the log writer's average write
/// is longer than the average commit wait.
pub fn group_commit_note(sync_ms: f64, log_write_ms: f64) -> String {
    format!(
        "The log writer's average write ({log_write_ms:.3} ms) is longer than the average \
         commit wait ({sync_ms:.3} ms): one write carries the redo of many commits (group \
         commit), and a commit that arrives while a write is under way waits for only part of \
         it. The averages cannot split a commit into log I/O and the rest; compare log file \
         parallel write with the log device's service time instead."
    )
}

/// 'redo write time' (centiseconds) in ms per one of `per`, with the
/// decimals a count of centiseconds supports.
fn redo_write_ms(awr: &AwrReport, per: &str) -> Option<(f64, usize)> {
    let count = awr.stat_total(per).filter(|count| *count > 0.0)?;
    let centiseconds = awr.stat_total("redo write time")?;
    let ms = centiseconds * 10.0 / count;
    Some((ms, decimals_supported(ms, 0.5 / centiseconds.max(0.5))))
}

fn cpu_note(awr: &AwrReport, rest: Option<f64>) -> String {
    let idle = awr.host_cpu.as_ref().and_then(|cpu| cpu.idle_pct);
    match (rest, idle) {
        (Some(rest), Some(idle)) if idle < 20.0 => format!(
            "The host was only {idle:.1}% idle: most of the {rest:.2} ms not spent in the log \
             write is likely sessions and the log writer waiting for a CPU, not storage."
        ),
        (Some(rest), Some(idle)) => format!(
            "The host was {idle:.1}% idle, so CPU queueing explains little of the {rest:.2} ms \
             outside the log write; look at the log writer's own work and posting."
        ),
        _ => {
            "Without host CPU figures the rest of the commit wait cannot be attributed.".to_string()
        }
    }
}
