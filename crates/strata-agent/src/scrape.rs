//! One scrape of an agent's `/metrics` over HTTP/1.1 (hyper's client on
//! the caller's tokio), timed on this machine's clock, and the agent's
//! clock offset from it.
//!
//! Not for: what the series mean (`host`).

use crate::text::{parse, Series};
use anyhow::{bail, Context};
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::{Request, Uri};
use hyper_util::rt::TokioIo;
use std::time::Duration;

/// An agent's answer, with when this machine sent the request and when the
/// answer came back (Unix seconds on this machine's clock).
#[derive(Clone, Debug)]
pub struct Scrape {
    pub url: String,
    pub sent_unix_s: f64,
    pub came_back_unix_s: f64,
    pub series: Vec<Series>,
}

/// The most an agent's answer may be: a host with thousands of devices
/// and processes stays far below it.
const MOST_BYTES: usize = 64 << 20;

/// `URL` as given, with `/metrics` when it names no path.
pub fn metrics_uri(url: &str) -> anyhow::Result<Uri> {
    let uri: Uri = url
        .parse()
        .with_context(|| format!("--agent {url}: not a URL (http://HOST:PORT)"))?;
    if uri.scheme_str() != Some("http") || uri.host().is_none() {
        bail!("--agent {url}: give an http://HOST:PORT URL (a strata agent or node_exporter)");
    }
    match uri.path() {
        "" | "/" => format!("{}/metrics", url.trim_end_matches('/'))
            .parse()
            .context("the URL with /metrics"),
        _ => Ok(uri),
    }
}

/// `--agent` as clap parses it: the URL [`metrics_uri`] makes of it.
pub fn parse_agent(text: &str) -> Result<String, String> {
    metrics_uri(text)
        .map(|uri| uri.to_string())
        .map_err(|error| format!("{error:#}"))
}

/// Scrapes `uri` once, giving up after `timeout`.
pub async fn scrape(uri: &Uri, timeout: Duration) -> anyhow::Result<Scrape> {
    tokio::time::timeout(timeout, scrape_now(uri))
        .await
        .with_context(|| format!("{uri}: no answer in {timeout:?}"))?
        .with_context(|| format!("scraping {uri}"))
}

/// [`scrape`] from synchronous code (a collector's thread), on a runtime
/// of its own.
pub fn scrape_blocking(uri: &Uri, timeout: Duration) -> anyhow::Result<Scrape> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(scrape(uri, timeout))
}

async fn scrape_now(uri: &Uri) -> anyhow::Result<Scrape> {
    let answer = get(uri).await?;
    let text = std::str::from_utf8(&answer.body).context("the answer is not UTF-8")?;
    Ok(Scrape {
        url: uri.to_string(),
        sent_unix_s: answer.sent_unix_s,
        came_back_unix_s: answer.came_back_unix_s,
        series: parse(text)?,
    })
}

/// An HTTP answer's body, with when the request went and when the answer's
/// head came back (Unix seconds on this machine's clock).
pub(crate) struct Answer {
    pub sent_unix_s: f64,
    pub came_back_unix_s: f64,
    pub body: Bytes,
}

/// `GET uri` over HTTP/1.1; an answer that is not 2xx is an error that
/// quotes the start of its body.
pub(crate) async fn get(uri: &Uri) -> anyhow::Result<Answer> {
    let host = uri.host().context("no host")?;
    let port = uri.port_u16().unwrap_or(80);
    let stream = tokio::net::TcpStream::connect((host, port)).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let authority = uri.authority().context("no authority")?.as_str();
    let path = uri
        .path_and_query()
        .map_or("/metrics", |path| path.as_str());
    let request = Request::get(path)
        .header(hyper::header::HOST, authority)
        .body(Empty::<Bytes>::new())?;
    let sent_unix_s = unix_now_s();
    let response = sender.send_request(request).await?;
    let came_back_unix_s = unix_now_s();
    let status = response.status();
    let body = http_body_util::Limited::new(response.into_body(), MOST_BYTES)
        .collect()
        .await
        .map_err(|error| anyhow::anyhow!("reading the answer: {error}"))?
        .to_bytes();
    if !status.is_success() {
        let start = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        bail!("the server answered {status}: {}", start.trim());
    }
    Ok(Answer {
        sent_unix_s,
        came_back_unix_s,
        body,
    })
}

fn unix_now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |elapsed| elapsed.as_secs_f64())
}

impl Scrape {
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
    fn a_url_without_a_path_scrapes_metrics_and_other_schemes_are_refused() {
        assert_eq!(
            metrics_uri("http://10.0.0.2:9477").unwrap().to_string(),
            "http://10.0.0.2:9477/metrics"
        );
        assert_eq!(
            metrics_uri("http://db1:9100/other").unwrap().path(),
            "/other"
        );
        for bad in ["https://db1:9100", "db1:9100", "http://"] {
            let error = format!("{:#}", metrics_uri(bad).unwrap_err());
            assert!(error.contains("--agent"), "{bad}: {error}");
        }
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
