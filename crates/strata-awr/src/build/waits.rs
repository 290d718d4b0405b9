//! The waits sections: the report's top events, the I/O and commit events
//! that matter to storage, and the commit wait decomposed.

use super::event_row;
use crate::figures::{COMMIT_LABEL, LOG_WRITE_LABEL};
use crate::model::AwrReport;
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

fn waits_table(title: &str) -> Table {
    Table::new(
        Some(title),
        vec![
            Column::text("Event"),
            Column::number("Waits", None),
            Column::number("Time", Some("s")),
            Column::number("Avg wait", Some("ms")),
            Column::number("% time", Some("%")),
            Column::text("Wait class"),
        ],
    )
}

pub fn top_waits(awr: &AwrReport) -> Section {
    let mut top = waits_table("Top timed events (foreground)");
    for event in &awr.top_events {
        top.push(event_row(event));
    }
    let mut key = waits_table("I/O and commit waits");
    for name in KEY_EVENTS {
        let event = if name.starts_with("log file parallel") {
            awr.background_event(name)
        } else {
            awr.foreground_event(name)
        };
        if let Some(event) = event {
            let mut row = event_row(event);
            row[0] = Cell::text(name);
            key.push(row);
        }
    }
    Section::new("top_waits", "Top waits")
        .table(top)
        .table(key)
        .note(
            "Averages are as Oracle printed them (us/ms converted to ms). log file parallel \
         write is the log writer's own I/O, from the background events.",
        )
}

/// log file sync vs log file parallel write vs redo write time per write
/// and per commit, and the rest of the commit wait.
pub fn commit_waits(awr: &AwrReport) -> Section {
    let section = Section::new("commit_waits", "Commit waits decomposed");
    let Some(sync_ms) = awr
        .foreground_event("log file sync")
        .and_then(|e| e.average_ms())
    else {
        return section.note("The report has no log file sync wait: no commit wait to decompose.");
    };
    let log_write_ms = awr
        .background_event("log file parallel write")
        .and_then(|event| event.average_ms());
    let per_write_ms = redo_write_ms(awr, "redo writes");
    let per_commit_ms = redo_write_ms(awr, "user commits");
    let mut table = Table::new(
        None,
        vec![
            Column::text("Part"),
            Column::number("Average", Some("ms")),
            Column::text("From"),
        ],
    );
    let mut push = |label: &str, value: Option<f64>, from: &str| {
        let cell = value.map_or_else(Cell::empty, |value| Cell::number(value, 3, "ms"));
        table.push(vec![Cell::text(label), cell, Cell::text(from)]);
    };
    push(
        COMMIT_LABEL,
        Some(sync_ms),
        "what a committing session waited",
    );
    push(
        LOG_WRITE_LABEL,
        log_write_ms,
        "the log writer's I/O, as storage served it",
    );
    push(
        "redo write time per redo write",
        per_write_ms,
        "'redo write time' (centiseconds) ÷ 'redo writes'",
    );
    push(
        "redo write time per commit",
        per_commit_ms,
        "'redo write time' ÷ 'user commits'",
    );
    let rest = log_write_ms.map(|log_write| (sync_ms - log_write).max(0.0));
    push(
        "rest of the commit wait",
        rest,
        "log file sync − log file parallel write: LGWR work, posting, CPU scheduling",
    );
    section.table(table).note(cpu_note(awr, rest))
}

/// 'redo write time' (centiseconds) in ms per one of `per`.
fn redo_write_ms(awr: &AwrReport, per: &str) -> Option<f64> {
    let count = awr.stat_total(per).filter(|count| *count > 0.0)?;
    Some(awr.stat_total("redo write time")? * 10.0 / count)
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
