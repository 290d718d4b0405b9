//! Finding representative workloads in transaction data (DOMAIN lesson 14):
//! each transaction is a point of demands per resource; agglomerative
//! clustering merges the two clusters with the nearest centroids (Euclidean)
//! until the asked-for number remain.
//!
//! Not for: large data sets (each merge scans all pairs: O(n³) overall, fine
//! for a few thousand transactions) or choosing the number of clusters.

use crate::{invalid, ModelError};
use serde::Serialize;

/// Transactions read from CSV: a header naming the resources, then one row
/// of demands per transaction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demands {
    pub resources: Vec<String>,
    pub rows: Vec<Vec<f64>>,
}

/// Parses comma-separated demands; blank lines are skipped.
pub fn parse_csv(text: &str) -> Result<Demands, ModelError> {
    let mut lines = text.lines().filter(|line| !line.trim().is_empty());
    let header = lines
        .next()
        .ok_or_else(|| invalid("csv", "the file is empty"))?;
    let resources: Vec<String> = header
        .split(',')
        .map(|name| name.trim().to_string())
        .collect();
    let mut rows = Vec::new();
    for (index, line) in lines.enumerate() {
        let row: Vec<f64> = line
            .split(',')
            .map(|cell| cell.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| {
                invalid(
                    "csv",
                    format!("row {} has a value that is not a number", index + 1),
                )
            })?;
        if row.len() != resources.len() {
            return Err(invalid(
                "csv",
                format!(
                    "row {} has {} values for {} resources",
                    index + 1,
                    row.len(),
                    resources.len()
                ),
            ));
        }
        if row.iter().any(|value| !value.is_finite() || *value < 0.0) {
            return Err(invalid(
                "csv",
                format!("row {} has a negative demand", index + 1),
            ));
        }
        rows.push(row);
    }
    Ok(Demands { resources, rows })
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Scaling {
    /// Cluster on ln(1 + demand), so small and large transactions both count.
    pub log: bool,
    /// Divide each resource by its range (max − min) so no unit dominates.
    pub normalize: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Cluster {
    /// Row numbers (0-based, after the header) of the member transactions.
    pub members: Vec<usize>,
    /// Mean demand per resource, in the input's units.
    pub centroid: Vec<f64>,
    pub size: usize,
    /// This cluster's share of the total demand over all resources.
    pub demand_share: f64,
}

fn scaled_points(demands: &Demands, scaling: Scaling) -> Vec<Vec<f64>> {
    let mut points: Vec<Vec<f64>> = demands
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| if scaling.log { v.ln_1p() } else { *v })
                .collect()
        })
        .collect();
    if scaling.normalize {
        for column in 0..demands.resources.len() {
            let (low, high) = points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
                (lo.min(p[column]), hi.max(p[column]))
            });
            let range = if high > low { high - low } else { 1.0 };
            points
                .iter_mut()
                .for_each(|p| p[column] = (p[column] - low) / range);
        }
    }
    points
}

fn mean_of(points: &[Vec<f64>], members: &[usize]) -> Vec<f64> {
    let width = points[members[0]].len();
    (0..width)
        .map(|c| members.iter().map(|&m| points[m][c]).sum::<f64>() / members.len() as f64)
        .collect()
}

fn squared_distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

fn nearest_pair(centroids: &[Vec<f64>]) -> (usize, usize) {
    let mut best = (0, 1, f64::MAX);
    for i in 0..centroids.len() {
        for j in i + 1..centroids.len() {
            let distance = squared_distance(&centroids[i], &centroids[j]);
            if distance < best.2 {
                best = (i, j, distance);
            }
        }
    }
    (best.0, best.1)
}

/// Merges the nearest centroids until `clusters` remain.
pub fn agglomerate(
    demands: &Demands,
    clusters: usize,
    scaling: Scaling,
) -> Result<Vec<Cluster>, ModelError> {
    let count = demands.rows.len();
    if clusters == 0 {
        return Err(invalid("clusters", "must be at least 1"));
    }
    if clusters > count {
        return Err(invalid(
            "clusters",
            format!("{clusters} clusters asked of only {count} points: there cannot be more clusters than points"),
        ));
    }
    let points = scaled_points(demands, scaling);
    let mut groups: Vec<Vec<usize>> = (0..count).map(|i| vec![i]).collect();
    let mut centroids: Vec<Vec<f64>> = points.clone();
    while groups.len() > clusters {
        let (keep, absorbed) = nearest_pair(&centroids);
        let moved = groups.swap_remove(absorbed);
        centroids.swap_remove(absorbed);
        groups[keep].extend(moved);
        centroids[keep] = mean_of(&points, &groups[keep]);
    }
    let total: f64 = demands.rows.iter().flatten().sum();
    let mut result: Vec<Cluster> = groups
        .into_iter()
        .map(|mut members| {
            members.sort_unstable();
            let demand: f64 = members.iter().flat_map(|&m| &demands.rows[m]).sum();
            Cluster {
                centroid: mean_of(&demands.rows, &members),
                size: members.len(),
                demand_share: if total > 0.0 { demand / total } else { 0.0 },
                members,
            }
        })
        .collect();
    result.sort_by_key(|cluster| cluster.members[0]);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_GROUPS: &str =
        "cpu,disk\n0.010,0.020\n0.011,0.021\n0.500,0.900\n0.012,0.019\n0.510,0.880\n";

    #[test]
    fn two_obvious_groups() {
        let demands = parse_csv(TWO_GROUPS).unwrap();
        assert_eq!(demands.resources, ["cpu", "disk"]);
        let clusters = agglomerate(&demands, 2, Scaling::default()).unwrap();
        assert_eq!(clusters[0].members, [0, 1, 3]);
        assert_eq!(clusters[1].members, [2, 4]);
        assert!((clusters[1].centroid[0] - 0.505).abs() < 1e-12);
        let share_sum: f64 = clusters.iter().map(|c| c.demand_share).sum();
        assert!((share_sum - 1.0).abs() < 1e-12);
        let scaled = agglomerate(
            &demands,
            2,
            Scaling {
                log: true,
                normalize: true,
            },
        )
        .unwrap();
        assert_eq!(scaled[1].members, [2, 4]);
    }

    #[test]
    fn more_clusters_than_points_is_refused() {
        let demands = parse_csv(TWO_GROUPS).unwrap();
        let error = agglomerate(&demands, 6, Scaling::default()).unwrap_err();
        assert!(error.to_string().contains("--clusters"));
        assert!(parse_csv("cpu,disk\n1,x\n").is_err());
        assert!(parse_csv("cpu,disk\n1\n").is_err());
    }
}
