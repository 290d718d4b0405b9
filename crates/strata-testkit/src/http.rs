//! A small HTTP/1.1 server whose every answer a test scripts: an exporter
//! or a Prometheus server that behaves as the test needs (counters that go
//! backwards, NaN, an error after its first answer, a slow answer), on a
//! free port of 127.0.0.1, each connection served on a thread of its own
//! until the server is dropped.
//!
//! Not for: anything but tests; it reads a request's head and nothing more.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// One scripted answer.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub body: String,
    /// How long to wait before answering.
    pub delay: Duration,
}

impl Answer {
    /// 200 with `body`, at once.
    pub fn ok(body: impl Into<String>) -> Answer {
        Answer {
            status: 200,
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// `status` with a short body, at once.
    pub fn status(status: u16) -> Answer {
        Answer {
            status,
            body: format!("scripted {status}\n"),
            delay: Duration::ZERO,
        }
    }

    pub fn after(mut self, delay: Duration) -> Answer {
        self.delay = delay;
        self
    }
}

/// A request as the script sees it.
#[derive(Clone, Debug)]
pub struct Request {
    /// Its path with its query.
    pub path: String,
    /// Its head's header lines, as sent (`Authorization: Basic …`).
    pub headers: Vec<String>,
}

/// What the script is given for each request: its number (from 0) and the
/// request.
pub type Script = dyn Fn(usize, &Request) -> Answer + Send + Sync;

/// The running server; it stops when dropped.
pub struct ScriptedServer {
    pub port: u16,
    requests: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl ScriptedServer {
    pub fn start(
        script: impl Fn(usize, &Request) -> Answer + Send + Sync + 'static,
    ) -> ScriptedServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listener.local_addr().expect("its address").port();
        listener.set_nonblocking(true).expect("non-blocking");
        let requests = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let script: Arc<Script> = Arc::new(script);
        let (counter, stopping) = (requests.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (script, counter) = (script.clone(), counter.clone());
                        std::thread::spawn(move || serve(stream, &*script, &counter));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        ScriptedServer {
            port,
            requests,
            stop,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Requests answered or being answered so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(stream: TcpStream, script: &Script, requests: &AtomicUsize) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(&stream);
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    let mut headers = Vec::new();
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|read| read > 2) {
        headers.push(line.trim_end().to_string());
        line.clear();
    }
    let request = Request {
        path: first.split_whitespace().nth(1).unwrap_or("/").to_string(),
        headers,
    };
    let answer = script(requests.fetch_add(1, Ordering::Relaxed), &request);
    std::thread::sleep(answer.delay);
    let head = format!(
        "HTTP/1.1 {} Scripted\r\nContent-Type: text/plain; version=0.0.4\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        answer.status,
        answer.body.len()
    );
    let mut stream = &stream;
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(answer.body.as_bytes());
    let _ = stream.flush();
}
