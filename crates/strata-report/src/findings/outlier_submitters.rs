//! `slow_requests_not_the_workloads`: a run's slow block requests (its
//! listed outliers) by who submitted them. Where many were not the
//! sessions' own, the slow requests of the window are not only the
//! workload's, and the query `pg_stat_activity` named for the commonest
//! other submitter says what else the disk was serving.
//!
//! Not for: the outliers' count and the device's slow seconds
//! (`slow_ios`).

use super::{finding, WindowFigures};
use strata_output::document::{Evidence, Finding, Severity};

/// A run's listed block request outliers, by who submitted them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutlierSubmitters {
    pub listed: u64,
    /// By a session's own server process.
    pub by_sessions: u64,
    /// By another process for which a query was named.
    pub in_named_queries: u64,
    /// The query named most often, and how often.
    pub commonest_query: Option<(String, u64)>,
}

/// Fewer listed outliers than this say nothing of who submits them.
const LISTED_AT_LEAST: u64 = 10;
/// The finding speaks when at least this share was not the sessions'.
const NOT_THE_SESSIONS_PCT: f64 = 10.0;
/// A query is shown in the title cut to this many characters.
const QUERY_SHOWN_CHARS: usize = 80;

pub(super) fn slow_requests_not_the_workloads(figures: &WindowFigures) -> Option<Finding> {
    let submitters = figures.outlier_submitters.as_ref()?;
    let others = submitters.listed.saturating_sub(submitters.by_sessions);
    let others_pct = 100.0 * others as f64 / submitters.listed.max(1) as f64;
    if submitters.listed < LISTED_AT_LEAST || others_pct < NOT_THE_SESSIONS_PCT {
        return None;
    }
    let mut evidence = vec![
        Evidence::new(
            "slow block requests listed",
            submitters.listed as f64,
            0,
            "requests",
        ),
        Evidence::new(
            "by the sessions' own server processes",
            submitters.by_sessions as f64,
            0,
            "requests",
        ),
        Evidence::new("by other processes", others as f64, 0, "requests"),
        Evidence::new(
            "by other processes, in a named query",
            submitters.in_named_queries as f64,
            0,
            "requests",
        ),
    ];
    let mut title = format!(
        "{others} of {} slow block requests ({others_pct:.0}%) were not the sessions'",
        submitters.listed
    );
    if let Some((query, count)) = &submitters.commonest_query {
        evidence.push(Evidence::new(
            "in the commonest named query",
            *count as f64,
            0,
            "requests",
        ));
        let shown: String = query.chars().take(QUERY_SHOWN_CHARS).collect();
        let cut = if query.chars().count() > QUERY_SHOWN_CHARS {
            "…"
        } else {
            ""
        };
        title += &format!("; {count} in the query {shown}{cut}");
    }
    Some(finding(
        "slow_requests_not_the_workloads",
        Severity::Warning,
        title,
        evidence,
        "The disk served other processes' requests slowly in the same window: the run's \
         device figures and its tail are shared with them, and the named query says what else \
         the disk was serving.",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(listed: u64, by_sessions: u64, query: Option<(&str, u64)>) -> WindowFigures {
        WindowFigures {
            outlier_submitters: Some(OutlierSubmitters {
                listed,
                by_sessions,
                in_named_queries: query.map_or(0, |(_, count)| count),
                commonest_query: query.map(|(text, count)| (text.to_string(), count)),
            }),
            ..WindowFigures::default()
        }
    }

    #[test]
    fn other_processes_slow_requests_name_the_commonest_query() {
        let found = slow_requests_not_the_workloads(&figures(
            453,
            64,
            Some(("SELECT count(s.n) FROM t", 389)),
        ))
        .unwrap();
        assert_eq!(found.id, "slow_requests_not_the_workloads");
        assert!(
            found
                .title
                .starts_with("389 of 453 slow block requests (86%)"),
            "{}",
            found.title
        );
        assert!(
            found
                .title
                .ends_with("389 in the query SELECT count(s.n) FROM t"),
            "{}",
            found.title
        );
    }

    #[test]
    fn the_sessions_own_or_too_few_say_nothing() {
        assert!(slow_requests_not_the_workloads(&figures(100, 95, None)).is_none());
        assert!(slow_requests_not_the_workloads(&figures(9, 0, None)).is_none());
        assert!(slow_requests_not_the_workloads(&figures(100, 80, None)).is_some());
        assert!(slow_requests_not_the_workloads(&WindowFigures::default()).is_none());
    }
}
