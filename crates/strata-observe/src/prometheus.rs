//! The Prometheus endpoint: every layer collected when a scrape comes, as
//! an exporter should (so a scrape at a window's edge reads the counters
//! of that moment), in `exposition`'s format at `/metrics`, with the
//! agent's wall clock when the request came and when it was answered, so a
//! fleet is scraped by Prometheus and graphed by Grafana, and a scraper can
//! measure the agent's clock offset as NTP does.
//!
//! The server is hyper on a private tokio runtime, hardened for an endpoint
//! anyone on the network can reach: bounded header time, request size,
//! connection lifetime, connections per peer and in all. A scrape's path is
//! kept free: a connection is always taken, and when its peer (or the
//! server) is at its bound the oldest connection that has not yet sent a
//! whole request is dropped for it, so clients that trickle their headers
//! (slowloris) never hold back one that sends its request at once.
//!
//! Not for: aggregation across hosts, which is Prometheus's job; nor TLS or
//! authentication (put a proxy in front).

use crate::exposition::clock_families;
use anyhow::Context;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a client may take to send a request's headers, counted from
/// the moment it connects: an idle or trickling client is dropped after it.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest a connection may live, whatever it is doing.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(30);
/// The most bytes of a request hyper buffers (its minimum, 8 KiB, plus
/// room): a longer request line or header block is refused, not stored.
const MAX_REQUEST_BYTES: usize = 16 * 1024;
/// Connections served at once.
const MAX_CONNECTIONS: usize = 64;
/// Connections of one peer (IP address) served at once.
const MAX_PER_PEER: usize = 16;
/// The longest queue of connections not yet accepted that is asked of
/// the kernel; it takes the lesser of this and `net.core.somaxconn`.
const LISTEN_BACKLOG: u32 = 4096;

/// `HOST:PORT` (`[::1]:9100` for IPv6, `0.0.0.0:9100` for every address)
/// as an address to listen on, or an error naming the option and what it
/// takes: a port of 0 to 65535, an IP address.
pub fn parse_listen_address(address: &str) -> anyhow::Result<SocketAddr> {
    let accepted = "give HOST:PORT with an IP address and a port of 0 to 65535 (127.0.0.1:9464, \
                    [::1]:9464, 0.0.0.0:9464)";
    let Some((host, port)) = address.rsplit_once(':') else {
        anyhow::bail!("--prometheus {address}: no port: {accepted}");
    };
    let Ok(port) = port.parse::<u16>() else {
        anyhow::bail!("--prometheus {address}: {port:?} is not a port: {accepted}");
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    let resolved = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .ok()
        .and_then(|mut addresses| addresses.next());
    resolved.ok_or_else(|| {
        anyhow::anyhow!(
            "--prometheus {address}: {host:?} is neither an IP address nor a name this host \
             resolves: {accepted}"
        )
    })
}

/// What a scrape gets, made when it comes (on a blocking thread: it may
/// query a database).
pub type Metrics = Arc<dyn Fn() -> String + Send + Sync>;

/// What the endpoint serves: `/metrics`, and where the host traces its
/// block requests, `/blocktrace` (JSON, for a run on another host:
/// `strata_probe::blocktrace::served`).
#[derive(Clone)]
pub struct Pages {
    pub metrics: Metrics,
    pub block_trace: Option<BlockTrace>,
}

/// `/blocktrace`'s answer to a request that came at the given
/// CLOCK_MONOTONIC nanoseconds.
pub type BlockTrace = Arc<dyn Fn(u64) -> String + Send + Sync>;

/// Serves `pages` on `address` in a background thread,
/// with its own single-threaded tokio runtime (observe's loop is
/// synchronous). Every connection is served concurrently and bounded in
/// time and memory, so a slow or hostile client cannot stall the others.
pub fn serve(address: &str, pages: Pages, host: &str) -> anyhow::Result<SocketAddr> {
    let parsed = parse_listen_address(address)?;
    // Collections take the collectors' lock one at a time anyway: one
    // blocking thread, kept, so that scrapes do not make threads (and their
    // malloc arenas) again and again.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(1)
        .thread_keep_alive(Duration::from_secs(3600))
        .build()
        .context("--prometheus: cannot start the server's runtime")?;
    let listener = {
        let _context = runtime.enter();
        listen(parsed).with_context(|| {
            format!(
                "--prometheus {address}: cannot listen there (is the port taken by another \
                 program?)"
            )
        })?
    };
    let bound = listener.local_addr()?;
    std::thread::Builder::new()
        .name("strata-prometheus".into())
        .spawn({
            let host: Arc<str> = host.into();
            move || runtime.block_on(accept_loop(listener, pages, host))
        })?;
    Ok(bound)
}

/// A listening socket on `address` whose queue of connections not yet
/// accepted is as long as the kernel allows (`net.core.somaxconn`, as Go's
/// listeners and so node_exporter's take), not std's 128: under a burst of
/// reconnecting clients a full queue drops a scrape's SYN, and the
/// scraper's kernel sends it again only a second later.
fn listen(address: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = match address {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

/// An open connection, as the accept loop keeps it.
struct Open {
    peer: IpAddr,
    opened: Instant,
    /// Set once its request's head has come whole: it is being answered.
    asked: Arc<AtomicBool>,
    task: tokio::task::AbortHandle,
}

/// The open connections, by an id of the accept loop's.
#[derive(Default)]
struct Connections {
    open: HashMap<u64, Open>,
}

impl Connections {
    /// Room for one more connection of `peer`: where the peer, or the
    /// server, is at its bound, the oldest connection (of the peer, or of
    /// all) still sending its request is dropped; `false` when every one
    /// is being answered.
    fn make_room(&mut self, peer: IpAddr) -> bool {
        let of_peer = self.open.values().filter(|open| open.peer == peer).count();
        let within: fn(&Open, IpAddr) -> bool =
            match (of_peer >= MAX_PER_PEER, self.open.len() >= MAX_CONNECTIONS) {
                (false, false) => return true,
                (true, _) => |open, peer| open.peer == peer,
                (false, true) => |_, _| true,
            };
        let oldest = self
            .open
            .iter()
            .filter(|(_, open)| within(open, peer) && !open.asked.load(Ordering::Relaxed))
            .min_by_key(|(_, open)| open.opened)
            .map(|(id, _)| *id);
        match oldest.and_then(|id| self.open.remove(&id)) {
            Some(dropped) => {
                dropped.task.abort();
                true
            }
            None => false,
        }
    }
}

/// Accepts every connection, making room for it (`Connections::make_room`);
/// each runs as its own task, cut off after `CONNECTION_LIFETIME`.
async fn accept_loop(listener: tokio::net::TcpListener, pages: Pages, host: Arc<str>) {
    let connections = Arc::new(Mutex::new(Connections::default()));
    for id in 0u64.. {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(_) => {
                // Out of descriptors, or a connection reset before accept:
                // wait rather than spin, then go on.
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let served = Served {
            pages: pages.clone(),
            host: host.clone(),
            connections: connections.clone(),
        };
        if served.admit(id, stream, peer.ip()) {
            // The new connection reads what it was sent before the next
            // one is taken: a request sent whole is marked asked, and never
            // dropped for a connection that came after it.
            tokio::task::yield_now().await;
        }
    }
}

/// What a connection is served with, and the open connections.
struct Served {
    pages: Pages,
    host: Arc<str>,
    connections: Arc<Mutex<Connections>>,
}

impl Served {
    /// Serves `stream` of `peer` as connection `id` where there is room,
    /// or makes it; `false` (the stream closed) where none can be made.
    fn admit(self, id: u64, stream: tokio::net::TcpStream, peer: IpAddr) -> bool {
        let mut open = self
            .connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !open.make_room(peer) {
            return false;
        }
        let asked = Arc::new(AtomicBool::new(false));
        let (pages, host, flag) = (self.pages, self.host, asked.clone());
        let registry = self.connections.clone();
        let task = tokio::spawn(async move {
            let served = connection(stream, pages, host, flag);
            let _ = tokio::time::timeout(CONNECTION_LIFETIME, served).await;
            let mut open = registry.lock().unwrap_or_else(PoisonError::into_inner);
            open.open.remove(&id);
        });
        let opened = Instant::now();
        let task = task.abort_handle();
        open.open.insert(
            id,
            Open {
                peer,
                opened,
                asked,
                task,
            },
        );
        true
    }
}

/// One HTTP/1.1 exchange; `Connection: close` after the answer, as a
/// scrape needs no more. `asked` is set when the request's head has come.
async fn connection(
    stream: tokio::net::TcpStream,
    pages: Pages,
    host: Arc<str>,
    asked: Arc<AtomicBool>,
) {
    let service = service_fn(move |request| {
        asked.store(true, Ordering::Relaxed);
        let (pages, host) = (pages.clone(), host.clone());
        async move { Ok::<_, Infallible>(answer(request, pages, &host).await) }
    });
    let _ = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_buf_size(MAX_REQUEST_BYTES)
        .keep_alive(false)
        // A client that shuts its side after the request (`nc -N`, scripts)
        // still gets its answer, as it did from the hand-written server.
        .half_close(true)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// GET (or HEAD) `/metrics` gets the layers collected now and the clock,
/// `/blocktrace` the tracer's snapshot where it is served; anything else
/// 404.
async fn answer<B>(request: Request<B>, pages: Pages, host: &str) -> Response<Full<Bytes>> {
    let readable = matches!(*request.method(), Method::GET | Method::HEAD);
    let path = request.uri().path();
    let (status, body, content_type) = match (&pages.block_trace, path) {
        _ if !readable => not_found(),
        (_, "/metrics") => {
            let received_s = strata_core::time::unix_now_s();
            let metrics = pages.metrics.clone();
            let mut text = tokio::task::spawn_blocking(move || metrics())
                .await
                .unwrap_or_default();
            text += &clock_families(host, received_s, strata_core::time::unix_now_s());
            (StatusCode::OK, text, EXPOSITION)
        }
        (Some(block_trace), strata_probe::blocktrace::served::PATH) => {
            let received_ns = strata_probe::blocktrace::monotonic_ns();
            let block_trace = block_trace.clone();
            let json = tokio::task::spawn_blocking(move || block_trace(received_ns))
                .await
                .unwrap_or_default();
            (StatusCode::OK, json, "application/json")
        }
        _ => not_found(),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

const EXPOSITION: &str = "text/plain; version=0.0.4; charset=utf-8";

fn not_found() -> (StatusCode, String, &'static str) {
    (
        StatusCode::NOT_FOUND,
        "strata serves /metrics\n".to_string(),
        EXPOSITION,
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_listen_address_is_refused_by_its_part_that_is_wrong() {
        let error =
            |address: &str| format!("{:#}", super::parse_listen_address(address).unwrap_err());
        let port = error("127.0.0.1:99999");
        assert!(port.contains("\"99999\" is not a port"), "{port}");
        assert!(port.contains("0 to 65535"), "{port}");
        assert!(error("127.0.0.1").contains("no port"));
        assert!(error("no.such.host.invalid:9100").contains("neither an IP address"));
        let ipv6 = super::parse_listen_address("[::1]:9464").unwrap();
        assert_eq!(ipv6.to_string(), "[::1]:9464");
    }

    use super::*;

    fn exchange(address: SocketAddr, request: &[u8]) -> String {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        // The server may close before all of an oversized request is sent.
        let _ = stream.write_all(request);
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        String::from_utf8_lossy(&response).into_owned()
    }

    #[test]
    fn metrics_is_served_and_everything_else_is_not() {
        let metrics: Metrics = Arc::new(|| "# TYPE strata_x gauge\nstrata_x 1\n".to_string());
        let pages = Pages {
            metrics,
            block_trace: None,
        };
        let address = serve("127.0.0.1:0", pages, "db1").unwrap();
        let scrape = exchange(address, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(scrape.starts_with("HTTP/1.1 200"), "{scrape}");
        assert!(
            scrape.contains("content-type: text/plain; version=0.0.4; charset=utf-8"),
            "{scrape}"
        );
        assert!(scrape.contains("connection: close"), "{scrape}");
        assert!(scrape.contains("\nstrata_x 1\n"), "{scrape}");
        let clock: f64 = scrape
            .lines()
            .find_map(|line| line.strip_prefix("strata_agent_answered_seconds{host=\"db1\"} "))
            .expect("the agent's clock")
            .parse()
            .unwrap();
        assert!(
            (clock - strata_core::time::unix_now_s()).abs() < 5.0,
            "{clock}"
        );
        let head = exchange(address, b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(
            head.starts_with("HTTP/1.1 200") && head.ends_with("\r\n\r\n"),
            "{head}"
        );
        let elsewhere = exchange(address, b"GET /other HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(elsewhere.starts_with("HTTP/1.1 404"), "{elsewhere}");
        let post = exchange(address, b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(post.starts_with("HTTP/1.1 404"), "{post}");
    }

    #[test]
    fn an_oversized_request_is_refused_without_being_read() {
        let pages = Pages {
            metrics: Arc::new(String::new),
            block_trace: None,
        };
        let address = serve("127.0.0.1:0", pages, "db1").unwrap();
        let mut request = b"GET /".to_vec();
        request.resize(1 << 20, b'a');
        let refused = exchange(address, &request);
        assert!(!refused.starts_with("HTTP/1.1 200"), "{refused}");
        let garbage = exchange(address, b"\x00\xff\r\n\r\nnot http at all\r\n\r\n");
        assert!(!garbage.starts_with("HTTP/1.1 200"), "{garbage}");
        let scrape = exchange(address, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(scrape.starts_with("HTTP/1.1 200"), "{scrape}");
    }
}
