//! Many reports as a time series: one row per snapshot interval (ordered
//! by end snapshot time), charts of the headline figures over time, and
//! each interval's findings.
//!
//! Not for: one or two reports (see `build`, `compare`).

use crate::compare::headlines;
use crate::model::{AwrReport, Snapshot};
use strata_output::document::{
    Axis, Block, Cell, Chart, ChartKind, Column, Fact, Report, Section, Series, Table,
};

/// The reports as time series: one per database and instance, each
/// ordered by snapshot time with its gaps and overlaps named. `database`
/// (a name or DBID) keeps only that database's reports.
pub fn report(reports: &[AwrReport], database: Option<&str>) -> anyhow::Result<Report> {
    let mut groups = by_database(reports);
    if let Some(wanted) = database {
        groups.retain(|group| group.key.matches(wanted));
        if groups.is_empty() {
            anyhow::bail!(
                "--database {wanted}: no report of that database; the reports are of {}",
                database_names(&by_database(reports))
            );
        }
    }
    let count: usize = groups.iter().map(|group| group.reports.len()).sum();
    let files = groups
        .iter()
        .flat_map(|group| group.reports.iter().map(|awr| awr.name.clone()))
        .collect();
    let mut report = Report::new(
        format!("strata awr — series of {count} reports"),
        "series",
        files,
    );
    if groups.len() > 1 {
        report.about.push(Fact::new(
            "Databases",
            format!(
                "{} series, one per database and instance (never one line through two \
                 databases): {}; --database NAME keeps one",
                groups.len(),
                database_names(&groups)
            ),
        ));
    }
    for (index, group) in groups.iter().enumerate() {
        let suffix = (groups.len() > 1).then(|| format!("_{}", index + 1));
        push_series(&mut report, group, suffix.as_deref(), groups.len() > 1);
    }
    Ok(report)
}

/// One database's series: its figures, intervals, charts and findings.
fn push_series(report: &mut Report, group: &Group, suffix: Option<&str>, named: bool) {
    let ordered = &group.reports;
    for awr in ordered {
        let figures = crate::figures::named_figures(awr, Some(&awr.name));
        report.figures.extend(figures);
    }
    let id = |base: &str| format!("{base}{}", suffix.unwrap_or(""));
    let title = |base: &str| {
        if named {
            format!("{base} — {}", group.key.label)
        } else {
            base.to_string()
        }
    };
    let mut sections = vec![
        intervals(ordered),
        charts(ordered),
        findings_per_interval(
            ordered,
            &mut report.findings,
            named.then_some(&group.key.label),
        ),
    ];
    for section in &mut sections {
        section.id = id(&section.id);
        section.title = title(&section.title);
        for block in &mut section.blocks {
            if let Block::Chart(chart) = block {
                chart.id = id(&chart.id);
            }
        }
    }
    report.sections.extend(sections);
    for awr in ordered {
        let problems = awr
            .problems
            .iter()
            .map(|problem| format!("{}: {problem}", awr.name));
        report.problems.extend(problems);
    }
    report
        .problems
        .extend(continuity_problems(ordered, &group.key.label));
}

/// What tells one database's reports from another's: the DBID where the
/// report prints it, else the name; and the instance for instance reports.
#[derive(Debug, Clone, PartialEq)]
struct DatabaseKey {
    database: String,
    dbid: Option<String>,
    instance: Option<String>,
    label: String,
}

impl DatabaseKey {
    fn of(awr: &AwrReport) -> Self {
        let header = &awr.header;
        let database = header.database.clone().unwrap_or_else(|| "unnamed".into());
        let instance = match awr.format {
            crate::Format::HtmlAwrGlobal => None,
            _ => header.instances.first().cloned(),
        };
        let mut label = database.clone();
        if let Some(dbid) = &header.dbid {
            label.push_str(&format!(" (DBID {dbid})"));
        }
        match &instance {
            Some(instance) => label.push_str(&format!(", instance {instance}")),
            None if awr.format == crate::Format::HtmlAwrGlobal => label.push_str(", all instances"),
            None => {}
        }
        DatabaseKey {
            database,
            dbid: header.dbid.clone(),
            instance,
            label,
        }
    }

    fn same(&self, other: &DatabaseKey) -> bool {
        let same_database = match (&self.dbid, &other.dbid) {
            (Some(a), Some(b)) => a == b,
            _ => self.database.eq_ignore_ascii_case(&other.database),
        };
        same_database && self.instance == other.instance
    }

    fn matches(&self, wanted: &str) -> bool {
        self.database.eq_ignore_ascii_case(wanted)
            || self.dbid.as_deref() == Some(wanted)
            || self.label.eq_ignore_ascii_case(wanted)
    }
}

struct Group<'a> {
    key: DatabaseKey,
    reports: Vec<&'a AwrReport>,
}

/// The reports by database and instance (in order of first appearance),
/// each group ordered by end snapshot time.
fn by_database(reports: &[AwrReport]) -> Vec<Group<'_>> {
    let mut groups: Vec<Group> = Vec::new();
    for awr in reports {
        let key = DatabaseKey::of(awr);
        match groups.iter_mut().find(|group| group.key.same(&key)) {
            Some(group) => group.reports.push(awr),
            None => groups.push(Group {
                key,
                reports: vec![awr],
            }),
        }
    }
    for group in &mut groups {
        group
            .reports
            .sort_by(|a, b| end_time(a).total_cmp(&end_time(b)));
    }
    groups
}

fn database_names(groups: &[Group]) -> String {
    groups
        .iter()
        .map(|group| group.key.label.clone())
        .collect::<Vec<_>>()
        .join("; ")
}

fn end_time(awr: &AwrReport) -> f64 {
    awr.header
        .end_snap
        .as_ref()
        .and_then(|snap| snap.epoch_s)
        .unwrap_or(f64::MAX)
}

fn interval_label(awr: &AwrReport) -> String {
    awr.header
        .end_snap
        .as_ref()
        .map(|snap| snap.time.clone())
        .filter(|time| !time.is_empty())
        .unwrap_or_else(|| awr.name.clone())
}

fn intervals(reports: &[&AwrReport]) -> Section {
    let Some(first) = reports.first() else {
        return Section::new("time_series", "Per interval");
    };
    let mut columns = vec![
        Column::text("Interval end"),
        Column::number("Elapsed", Some("s")),
    ];
    columns.extend(
        headlines(first)
            .iter()
            .map(|line| Column::number(line.label, Some(line.unit))),
    );
    columns.push(Column::text("Top wait"));
    columns.push(Column::text("Since the previous report"));
    let mut table = Table::new(None, columns);
    let mut previous: Option<&AwrReport> = None;
    for awr in reports {
        let mut row = interval_row(awr);
        row.push(Cell::text(
            previous.map_or(String::new(), |before| continuity(before, awr)),
        ));
        table.push(row);
        previous = Some(awr);
    }
    Section::new("time_series", "Per interval").table(table)
}

/// How a report's interval follows the one before: "follows", a gap or an
/// overlap, by snapshot time where both reports print it (snapshot ids
/// start again when a database is recreated or upgraded into a new
/// repository), else by snapshot id.
fn continuity(before: &AwrReport, after: &AwrReport) -> String {
    let (begin, end) = (&before.header.begin_snap, &before.header.end_snap);
    let same = |a: &Option<Snapshot>, b: &Option<Snapshot>| {
        a.as_ref().map(|snap| (snap.id, &snap.time)) == b.as_ref().map(|snap| (snap.id, &snap.time))
    };
    if begin.is_some() && same(begin, &after.header.begin_snap) && same(end, &after.header.end_snap)
    {
        return "the same snapshots as the report before (a copy?)".to_string();
    }
    let end = end.as_ref();
    let begin = after.header.begin_snap.as_ref();
    let ids = end
        .and_then(|end| end.id)
        .zip(begin.and_then(|begin| begin.id));
    let times = end
        .and_then(|end| end.epoch_s)
        .zip(begin.and_then(|begin| begin.epoch_s));
    let snapshots = |(end, begin): (u64, u64)| match begin.cmp(&end) {
        std::cmp::Ordering::Equal => String::new(),
        std::cmp::Ordering::Greater => format!(": snapshots {end} to {begin} not covered"),
        std::cmp::Ordering::Less => format!(": snapshot ids start again ({end}, then {begin})"),
    };
    match (times, ids) {
        (Some((end, begin)), ids) if (begin - end).abs() < 1.0 => {
            format!("follows{}", ids.map_or(String::new(), snapshots))
        }
        (Some((end, begin)), ids) => {
            let kind = if begin > end { "gap" } else { "overlap" };
            let said = ids.map_or(String::new(), snapshots);
            format!("{kind}{said}{}", duration(Some((end, begin))))
        }
        (None, Some((end, begin))) if end == begin => "follows".to_string(),
        (None, Some((end, begin))) if begin > end => {
            format!("gap{}", snapshots((end, begin)))
        }
        (None, Some((end, begin))) => {
            format!("overlap: begins at snapshot {begin}, before {end}")
        }
        (None, None) => "unknown (no snapshot ids or times)".to_string(),
    }
}

fn duration(times: Option<(f64, f64)>) -> String {
    use strata_output::document::format_number;
    times.map_or(String::new(), |(end, begin)| {
        let minutes = (begin - end).abs() / 60.0;
        match minutes {
            m if m < 120.0 => format!(" ({} min)", format_number(m, 1)),
            m if m < 48.0 * 60.0 => format!(" ({} h)", format_number(m / 60.0, 1)),
            m => format!(" ({} days)", format_number(m / 1440.0, 1)),
        }
    })
}

/// Gaps and overlaps as problems of the series, naming both reports.
fn continuity_problems(reports: &[&AwrReport], label: &str) -> Vec<String> {
    reports
        .windows(2)
        .filter_map(|pair| {
            let said = continuity(pair[0], pair[1]);
            (said != "follows")
                .then(|| format!("{label}: {} then {}: {said}", pair[0].name, pair[1].name))
        })
        .collect()
}

fn interval_row(awr: &AwrReport) -> Vec<Cell> {
    let mut row = vec![Cell::text(interval_label(awr))];
    row.push(
        awr.header
            .elapsed_s
            .map_or_else(Cell::empty, |s| Cell::number(s, 0, "s")),
    );
    for line in headlines(awr) {
        row.push(
            line.value
                .map_or_else(Cell::empty, |v| Cell::number(v, 3, line.unit)),
        );
    }
    let top = awr
        .top_events
        .iter()
        .find(|event| event.waits.is_some())
        .map(|event| event.name.clone())
        .unwrap_or_default();
    row.push(Cell::text(top));
    row
}

/// One chart per unit, x = hours since the first interval's end.
fn charts(reports: &[&AwrReport]) -> Section {
    let mut section = Section::new("time_series_charts", "Over time");
    let start = reports.first().map(|awr| end_time(awr)).unwrap_or(0.0);
    let groups = [
        ("requests_over_time", "I/O requests", "requests/s"),
        ("throughput_over_time", "Throughput", "MB/s"),
        ("wait_averages_over_time", "Wait averages", "ms"),
    ];
    for (id, title, unit) in groups {
        section = section.chart(chart(reports, start, id, title, unit));
    }
    section
}

fn chart(reports: &[&AwrReport], start: f64, id: &str, title: &str, unit: &str) -> Chart {
    let mut series: Vec<Series> = Vec::new();
    for awr in reports {
        let x = (end_time(awr) - start) / 3600.0;
        if !x.is_finite() || x.abs() > 1e9 {
            continue;
        }
        for line in headlines(awr).into_iter().filter(|line| line.unit == unit) {
            let Some(y) = line.value else { continue };
            match series
                .iter_mut()
                .find(|existing| existing.name == line.label)
            {
                Some(existing) => existing.points.push([x, y]),
                None => series.push(Series {
                    name: line.label.to_string(),
                    points: vec![[x, y]],
                }),
            }
        }
    }
    Chart {
        id: id.to_string(),
        title: title.to_string(),
        kind: ChartKind::Line,
        x: Axis {
            label: "snapshot end, hours after the first".to_string(),
            unit: "h".to_string(),
            log: false,
        },
        y: Axis {
            label: title.to_string(),
            unit: unit.to_string(),
            log: false,
        },
        series,
        marks: Vec::new(),
    }
}

fn findings_per_interval(
    reports: &[&AwrReport],
    all: &mut Vec<strata_output::document::Finding>,
    database: Option<&String>,
) -> Section {
    let mut table = Table::new(
        None,
        vec![Column::text("Interval end"), Column::text("Findings")],
    );
    for awr in reports {
        let label = interval_label(awr);
        let found = crate::build::findings(awr);
        let ids: Vec<&str> = found.iter().map(|finding| finding.id.as_str()).collect();
        table.push(vec![Cell::text(&label), Cell::text(ids.join(", "))]);
        for mut finding in found {
            finding.title = match database {
                Some(database) => format!("{database}, {label}: {}", finding.title),
                None => format!("{label}: {}", finding.title),
            };
            all.push(finding);
        }
    }
    Section::new("findings_per_interval", "Findings per interval").table(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Format;

    fn interval(begin: (u64, f64), end: (u64, f64)) -> AwrReport {
        let snapshot = |(id, epoch_s): (u64, f64)| Snapshot {
            id: Some(id),
            time: format!("{epoch_s}"),
            epoch_s: Some(epoch_s),
        };
        let mut report = AwrReport::new("r.html", Format::HtmlAwr);
        report.header.begin_snap = Some(snapshot(begin));
        report.header.end_snap = Some(snapshot(end));
        report
    }

    #[test]
    fn intervals_follow_by_time_and_name_ids_that_start_again() {
        let first = interval((10, 0.0), (11, 3600.0));
        let next = interval((11, 3600.0), (12, 7200.0));
        assert_eq!(continuity(&first, &next), "follows");
        let later = interval((13, 10800.0), (14, 14400.0));
        assert_eq!(
            continuity(&next, &later),
            "gap: snapshots 12 to 13 not covered (60.0 min)"
        );
        let recreated = interval((2, 8.0 * 86400.0), (3, 8.0 * 86400.0 + 3600.0));
        assert_eq!(
            continuity(&next, &recreated),
            "gap: snapshot ids start again (12, then 2) (7.9 days)"
        );
        let early = interval((11, 1800.0), (12, 5400.0));
        assert!(continuity(&first, &early).starts_with("overlap"));
        assert_eq!(
            continuity(&first, &interval((10, 0.0), (11, 3600.0))),
            "the same snapshots as the report before (a copy?)"
        );
    }
}
