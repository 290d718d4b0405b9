//! One figure of every compared Recording on a row, with each one's change
//! from the first (A): the table shape every compare section shares.
//!
//! Not for: deciding which figures to compare (`operations`, `points`,
//! `profile`).

use super::super::sections::number;
use strata_output::document::{Cell, Column, Table};

/// One figure of each Recording, in the order of the marks; `None` where
/// a Recording has no such figure (never a 0 that was not measured).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Compared {
    pub metric: String,
    pub layer: String,
    pub unit: String,
    pub values: Vec<Option<f64>>,
}

impl Compared {
    pub fn new(
        metric: impl Into<String>,
        layer: &str,
        unit: &str,
        values: Vec<Option<f64>>,
    ) -> Self {
        Compared {
            metric: metric.into(),
            layer: layer.to_string(),
            unit: unit.to_string(),
            values: values
                .into_iter()
                .map(|value| value.filter(|value| value.is_finite()))
                .collect(),
        }
    }

    /// Whether any Recording has the figure.
    pub fn any(&self) -> bool {
        self.values.iter().any(Option::is_some)
    }
}

/// The change from `before` to `after`, %: `None` without both or from 0.
pub(super) fn change_pct(before: Option<f64>, after: Option<f64>) -> Option<f64> {
    match (before, after) {
        (Some(a), Some(b)) if a != 0.0 => Some(100.0 * (b - a) / a.abs()),
        _ => None,
    }
}

/// "+112.0% (2.12×)", "-40.0% (0.60×)": the change and the ratio.
fn change_cell(before: Option<f64>, after: Option<f64>) -> Cell {
    let Some(pct) = change_pct(before, after) else {
        return Cell::empty();
    };
    let ratio = 1.0 + pct / 100.0;
    let text = format!("{pct:+.1}% ({ratio:.2}×)");
    Cell::number_as(pct, "%", text)
}

/// The table: metric, layer, unit, one column per mark, then each later
/// mark's change from the first (`B vs A`).
pub(super) fn table(title: &str, marks: &[String], rows: &[Compared]) -> Table {
    let mut columns = vec![
        Column::text("metric"),
        Column::text("layer"),
        Column::text("unit"),
    ];
    columns.extend(marks.iter().map(|mark| Column::number(mark.as_str(), None)));
    columns.extend(
        marks
            .iter()
            .skip(1)
            .map(|mark| Column::number(format!("{mark} vs {}", marks[0]), Some("%"))),
    );
    let mut table = Table::new(Some(title), columns);
    for row in rows.iter().filter(|row| row.any()) {
        let mut cells = vec![
            Cell::text(row.metric.as_str()),
            Cell::text(row.layer.as_str()),
            Cell::text(row.unit.as_str()),
        ];
        cells.extend(
            row.values
                .iter()
                .map(|value| value.map_or_else(Cell::empty, |value| number(value, &row.unit))),
        );
        let first = row.values.first().copied().flatten();
        cells.extend(
            row.values
                .iter()
                .skip(1)
                .map(|value| change_cell(first, *value)),
        );
        table.push(cells);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_reads_as_percent_and_ratio() {
        assert_eq!(change_cell(Some(2.0), Some(4.0)).text, "+100.0% (2.00×)");
        assert_eq!(change_cell(Some(4.0), Some(1.0)).text, "-75.0% (0.25×)");
        assert_eq!(change_cell(Some(0.0), Some(1.0)).text, "");
        let marks = vec!["A".to_string(), "B".to_string()];
        let rows = [
            Compared::new("select p99", "workload", "ms", vec![Some(1.0), Some(3.0)]),
            Compared::new("nothing", "workload", "ms", vec![None, Some(f64::NAN)]),
        ];
        let table = table("t", &marks, &rows);
        assert_eq!(table.rows.len(), 1);
        assert_eq!(table.columns[5].name, "B vs A");
    }
}
