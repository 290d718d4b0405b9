//! `strata model cluster`: representative workloads — transactions, given
//! as CSV demands per resource, merged into a few clusters, each with its
//! size, its share of the total demand and its centroid.
//!
//! Not for: the clustering itself ([`crate::cluster`]) or reading the file
//! (the caller hands over its text).

use super::{number, Page};
use crate::cluster::{self, Cluster, Demands};
use strata_output::document::{Cell, Column};
use strata_output::Output;

/// What `strata model cluster` was asked.
#[derive(Debug, Clone)]
pub struct ClusterRequest {
    /// The CSV file's name, for the report.
    pub name: String,
    /// The CSV file's text: a header naming the resources, one row of
    /// demands per transaction.
    pub csv: String,
    /// Clusters to keep.
    pub clusters: usize,
    /// Cluster on ln(1 + demand).
    pub log: bool,
    /// Scale each resource to 0..1 by its range first.
    pub normalize: bool,
    pub explain: bool,
}

/// Runs `strata model cluster`.
pub fn run(request: &ClusterRequest) -> anyhow::Result<Output> {
    let demands = cluster::parse_csv(&request.csv)?;
    let scaling = cluster::Scaling {
        log: request.log,
        normalize: request.normalize,
    };
    let clusters = cluster::agglomerate(&demands, request.clusters, scaling)?;
    let mut page = Page::new("Workload clusters", columns(&demands));
    page.file(&request.name);
    page.note(format!(
        "{} transactions in {} clusters (centroids in the CSV's units)",
        demands.rows.len(),
        clusters.len()
    ));
    for (index, found) in clusters.iter().enumerate() {
        print_cluster(&mut page, &demands, index, found);
        if request.explain {
            page.note(format!(
                "    centroid = mean of rows {:?}; share = Σ their demands ÷ Σ all demands",
                found.members
            ));
        }
    }
    page.finish(&serde_json::json!({ "resources": demands.resources, "clusters": clusters }))
}

fn columns(demands: &Demands) -> Vec<Column> {
    let mut columns = vec![
        Column::number("cluster", None),
        Column::number("transactions", None),
        number("share of demand", "%"),
    ];
    columns.extend(
        demands
            .resources
            .iter()
            .map(|name| Column::number(name.as_str(), None)),
    );
    columns
}

fn print_cluster(page: &mut Page, demands: &Demands, index: usize, found: &Cluster) {
    let centroid: Vec<String> = demands
        .resources
        .iter()
        .zip(&found.centroid)
        .map(|(name, value)| format!("{name}={value:.6}"))
        .collect();
    page.line(format!(
        "  cluster {}: {} transactions, {:.1}% of total demand, centroid {}",
        index + 1,
        found.size,
        found.demand_share * 100.0,
        centroid.join(" ")
    ));
    let mut cells = vec![
        Cell::number((index + 1) as f64, 0, ""),
        Cell::number(found.size as f64, 0, "transactions"),
        Cell::number(found.demand_share * 100.0, 1, "%"),
    ];
    cells.extend(
        found
            .centroid
            .iter()
            .map(|&value| Cell::number(value, 6, "")),
    );
    page.row(cells);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_groups() {
        let request = ClusterRequest {
            name: "demands.csv".into(),
            csv: "cpu,disk\n0.010,0.020\n0.011,0.021\n0.500,0.900\n0.012,0.019\n0.510,0.880\n"
                .into(),
            clusters: 2,
            log: false,
            normalize: false,
            explain: true,
        };
        let output = run(&request).unwrap();
        let text = output.text.unwrap();
        assert!(text.starts_with("5 transactions in 2 clusters"), "{text}");
        assert!(
            text.contains("    centroid = mean of rows [0, 1, 3]"),
            "{text}"
        );
        let report = output.document.unwrap();
        assert_eq!(report.source.files, vec!["demands.csv".to_string()]);
        let table = report.sections[0].tables().next().unwrap();
        assert_eq!(table.columns.len(), 5);
        assert_eq!(table.rows.len(), 2);
    }
}
