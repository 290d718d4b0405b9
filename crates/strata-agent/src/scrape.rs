//! One scrape of an agent's `/metrics` (its `Endpoint`: HTTP/1.1 or
//! HTTPS, Basic auth), timed on this machine's clock, and the agent's
//! clock offset from it.
//!
//! Not for: what the series mean (`host`).

use crate::endpoint::Endpoint;
use crate::text::{parse, Series};
use anyhow::Context;
use std::time::Duration;

/// An agent's answer, with when this machine sent the request and when the
/// answer came back (Unix seconds on this machine's clock).
#[derive(Clone, Debug)]
pub struct Scrape {
    pub url: String,
    pub sent_unix_s: f64,
    pub came_back_unix_s: f64,
    pub series: Vec<Series>,
    /// The lines of the answer that did not read, said in a sentence
    /// (`text::Exposition::skipped_note`).
    pub unread: Option<String>,
}

/// The most an agent's answer may be: a host with thousands of devices
/// and processes stays far below it.
const MOST_BYTES: usize = 64 << 20;

/// `--agent` as clap parses it: `http[s]://[USER[:PASSWORD]@]HOST:PORT`,
/// with `/metrics` when it names no path.
pub fn parse_agent(text: &str) -> Result<Endpoint, String> {
    Endpoint::parse("--agent", text, "/metrics").map_err(|error| format!("{error:#}"))
}

/// Scrapes `agent` once, giving up after `timeout`.
pub async fn scrape(agent: &Endpoint, timeout: Duration) -> anyhow::Result<Scrape> {
    tokio::time::timeout(timeout, scrape_now(agent))
        .await
        .with_context(|| format!("{agent}: no answer in {timeout:?}"))?
        .with_context(|| format!("scraping {agent}"))
}

/// [`scrape`] from synchronous code (a collector's thread), on a runtime
/// of its own.
pub fn scrape_blocking(agent: &Endpoint, timeout: Duration) -> anyhow::Result<Scrape> {
    on_own_runtime(scrape(agent, timeout))?
}

/// `future` run to its end from synchronous code, on a runtime of its own.
pub fn on_own_runtime<F: std::future::Future>(future: F) -> anyhow::Result<F::Output> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(future))
}

async fn scrape_now(agent: &Endpoint) -> anyhow::Result<Scrape> {
    let answer = agent.get(MOST_BYTES).await?;
    // node_exporter sends only UTF-8 (it replaces invalid bytes with
    // U+FFFD); an exporter that does not gets the same.
    let exposition = parse(&String::from_utf8_lossy(&answer.body));
    Ok(Scrape {
        url: agent.to_string(),
        sent_unix_s: answer.sent_unix_s,
        came_back_unix_s: answer.came_back_unix_s,
        unread: exposition.skipped_note(),
        series: exposition.series,
    })
}

impl Scrape {
    /// Says on stderr which lines of the answer did not read, if any.
    pub fn note_unread(&self, option: &str) {
        if let Some(unread) = &self.unread {
            strata_core::note::note(&format!("strata: {option} {}: {unread}", self.url));
        }
    }

    /// The first series called `name`.
    pub fn value(&self, name: &str) -> Option<f64> {
        self.series
            .iter()
            .find(|series| series.name == name)
            .map(|series| series.value)
    }

    pub fn round_trip_s(&self) -> f64 {
        self.came_back_unix_s - self.sent_unix_s
    }

    /// The agent's clock less this machine's, seconds: NTP's
    /// ((received − sent) + (answered − came back)) ÷ 2 from a strata
    /// agent's two clock readings, else node_exporter's `node_time_seconds`
    /// against the middle of the round trip; `None` from an agent that
    /// gives neither.
    pub fn clock_offset_s(&self) -> Option<f64> {
        let received = self.value("strata_agent_received_seconds");
        let answered = self.value("strata_agent_answered_seconds");
        if let (Some(received), Some(answered)) = (received, answered) {
            return Some(
                ((received - self.sent_unix_s) + (answered - self.came_back_unix_s)) / 2.0,
            );
        }
        let middle = (self.sent_unix_s + self.came_back_unix_s) / 2.0;
        self.value("node_time_seconds").map(|agent| agent - middle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tracer_is_asked_beside_metrics_below_a_proxy_s_prefix() {
        let beside = |text: &str| parse_agent(text).unwrap().beside("/blocktrace").unwrap();
        assert_eq!(
            beside("http://user:pw@db1:9477").to_string(),
            "http://user:***@db1:9477/blocktrace"
        );
        assert_eq!(
            beside("https://proxy:443/agents/db1/metrics").uri().path(),
            "/agents/db1/blocktrace"
        );
    }

    #[test]
    fn a_url_without_a_path_scrapes_metrics_and_other_schemes_are_refused() {
        let parsed = |text: &str| parse_agent(text).unwrap();
        assert_eq!(
            parsed("http://10.0.0.2:9477").to_string(),
            "http://10.0.0.2:9477/metrics"
        );
        assert_eq!(parsed("http://db1:9100/other").uri().path(), "/other");
        assert_eq!(
            parsed("https://db1:9100/").to_string(),
            "https://db1:9100/metrics"
        );
        let ipv6 = parsed("http://[::1]:9100");
        assert_eq!(ipv6.host(), "::1");
        assert_eq!(ipv6.to_string(), "http://[::1]:9100/metrics");
        for bad in [
            "ftp://db1:9100",
            "db1:9100",
            "http://",
            "http://:pw@db1:9100",
        ] {
            let error = parse_agent(bad).unwrap_err();
            assert!(error.contains("--agent"), "{bad}: {error}");
        }
    }

    #[test]
    fn a_password_in_the_url_is_never_shown_and_never_in_the_path() {
        let agent = parse_agent("http://mon:s%40cret:x@db1:9100").unwrap();
        assert_eq!(agent.to_string(), "http://mon:***@db1:9100/metrics");
        assert_eq!(format!("{agent:?}"), "http://mon:***@db1:9100/metrics");
        assert_eq!(agent.uri().to_string(), "http://db1:9100/metrics");
        assert_eq!(agent.transport(), "http, Basic auth as mon");
        let error = parse_agent("gopher://mon:SECRET@db1:9100").unwrap_err();
        assert!(
            !error.contains("SECRET") && error.contains("mon:***@db1"),
            "{error}"
        );
    }

    #[test]
    fn the_offset_is_ntp_s_from_a_strata_agent_and_centred_from_node_exporter() {
        let scrape = |series: Vec<(&str, f64)>| Scrape {
            url: String::new(),
            sent_unix_s: 100.0,
            came_back_unix_s: 100.2,
            series: series
                .into_iter()
                .map(|(name, value)| Series {
                    name: name.into(),
                    labels: Default::default(),
                    value,
                })
                .collect(),
            unread: None,
        };
        let strata = scrape(vec![
            ("strata_agent_received_seconds", 105.1),
            ("strata_agent_answered_seconds", 105.15),
        ]);
        assert!((strata.clock_offset_s().unwrap() - 5.025).abs() < 1e-9);
        let node = scrape(vec![("node_time_seconds", 99.1)]);
        assert!((node.clock_offset_s().unwrap() + 1.0).abs() < 1e-9);
        assert_eq!(scrape(vec![]).clock_offset_s(), None);
    }
}
