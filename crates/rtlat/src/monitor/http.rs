//! `/metrics` over HTTP: one thread of its own (SCHED_OTHER, on the main
//! thread's CPUs, a 256 KiB stack), one connection at a time. A scrape
//! copies a pointer to the last update's text under a lock only the main
//! thread also takes, once a second; it never reads a measuring thread's
//! memory, let alone waits for one.
//!
//! Only what a scraper needs is served: `GET` (and `HEAD`) of `/metrics`
//! (OpenMetrics when the `Accept` header asks for
//! `application/openmetrics-text`, the Prometheus text format otherwise)
//! and of `/` (a line pointing there); anything else is 404 or 405. Each
//! response closes its connection. A client that sends nothing for 2 s is
//! dropped, so a stuck client delays the next scrape at most that long.
//! The request is parsed by `httparse`; the server around it is these
//! few lines rather than a crate with a thread pool, whose threads'
//! default 2 MiB stacks `-m` would lock, one by one.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rtlat_sys::thread::RawThread;

use super::metrics::{Encoded, OPENMETRICS_CONTENT_TYPE, PROMETHEUS_CONTENT_TYPE};

/// The longest request head read.
const MAX_REQUEST: usize = 8 * 1024;
/// How long a client may take to send its request or read the answer.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(2);
/// The server thread's stack.
const STACK_BYTES: usize = 256 * 1024;

/// The last update's text, shared by the main thread (which replaces it)
/// and the server (which copies the pointer).
#[derive(Debug, Default)]
pub struct Published(Mutex<Arc<Encoded>>);

impl Published {
    /// Makes `encoded` what the next scrape gets.
    pub fn set(&self, encoded: Encoded) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Arc::new(encoded);
    }

    /// What a scrape gets now.
    pub fn get(&self) -> Arc<Encoded> {
        Arc::clone(&self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A listening socket, bound before the first sample (so that an address
/// in use stops the run before it starts), not served yet.
#[derive(Debug)]
pub struct Bound {
    listener: TcpListener,
    address: SocketAddr,
}

impl Bound {
    /// Binds `address`; the error says why it cannot be.
    pub fn bind(address: SocketAddr) -> io::Result<Bound> {
        let listener = TcpListener::bind(address)?;
        let address = listener.local_addr()?;
        Ok(Bound { listener, address })
    }

    /// The address bound (the port chosen, for port 0).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Serves `published` on a thread of its own until [`Server::stop`].
    pub fn serve(self, published: Arc<Published>) -> io::Result<Server> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let Bound { listener, address } = self;
        let thread = rtlat_sys::thread::spawn("rtlat-http", STACK_BYTES, move || {
            for stream in listener.incoming() {
                if stopping.load(Relaxed) {
                    break;
                }
                if let Ok(stream) = stream {
                    // A client that goes away early is its own problem.
                    let _ = answer(stream, &published);
                }
            }
        })?;
        Ok(Server {
            thread: Some(thread),
            stop,
            address,
        })
    }
}

/// The serving thread.
#[derive(Debug)]
pub struct Server {
    thread: Option<RawThread>,
    stop: Arc<AtomicBool>,
    address: SocketAddr,
}

impl Server {
    /// Ends the thread: raises the flag, then wakes its `accept` with a
    /// connection of our own.
    pub fn stop(mut self) {
        self.stop.store(true, Relaxed);
        let _ = TcpStream::connect_timeout(&reachable(self.address), CLIENT_TIMEOUT);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Where this host reaches a socket bound to `address` (the loopback
/// address for the unspecified one).
fn reachable(address: SocketAddr) -> SocketAddr {
    let ip = match address.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, address.port())
}

/// What a request asks for.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    Metrics { openmetrics: bool, head: bool },
    Index { head: bool },
    NotFound,
    MethodNotAllowed,
    BadRequest,
}

/// Reads one request from `stream` and answers it.
fn answer(mut stream: TcpStream, published: &Published) -> io::Result<()> {
    stream.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    stream.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let mut request = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let what = loop {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        request.extend_from_slice(&chunk[..n]);
        match classify(&request) {
            Some(answer) => break answer,
            None if request.len() >= MAX_REQUEST => break Answer::BadRequest,
            None => {}
        }
    };
    const PLAIN: &str = "text/plain; charset=utf-8";
    let now: Arc<Encoded>;
    let (status, content_type, body, head): (&str, &str, &[u8], bool) = match what {
        Answer::Metrics { openmetrics, head } => {
            now = published.get();
            if openmetrics {
                (
                    "200 OK",
                    OPENMETRICS_CONTENT_TYPE,
                    now.openmetrics.as_bytes(),
                    head,
                )
            } else {
                (
                    "200 OK",
                    PROMETHEUS_CONTENT_TYPE,
                    now.prometheus.as_bytes(),
                    head,
                )
            }
        }
        Answer::Index { head } => (
            "200 OK",
            PLAIN,
            b"rtlat monitor: the metrics are at /metrics\n",
            head,
        ),
        Answer::NotFound => (
            "404 Not Found",
            PLAIN,
            b"not found: the metrics are at /metrics\n",
            false,
        ),
        Answer::MethodNotAllowed => (
            "405 Method Not Allowed",
            PLAIN,
            b"only GET and HEAD\n",
            false,
        ),
        Answer::BadRequest => ("400 Bad Request", PLAIN, b"bad request\n", false),
    };
    respond(&mut stream, status, content_type, body, head)
}

fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &[u8],
    head_only: bool,
) -> io::Result<()> {
    let mut out = Vec::with_capacity(body.len() + 200);
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n",
        body.len()
    )?;
    if status.starts_with("405") {
        out.extend_from_slice(b"Allow: GET, HEAD\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if !head_only {
        out.extend_from_slice(body);
    }
    stream.write_all(&out)?;
    stream.flush()
}

/// What the request head in `bytes` asks for; `None` while it is not
/// complete.
fn classify(bytes: &[u8]) -> Option<Answer> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(bytes) {
        Ok(httparse::Status::Partial) => None,
        Err(_) => Some(Answer::BadRequest),
        Ok(httparse::Status::Complete(_)) => {
            let head = match request.method {
                Some("GET") => false,
                Some("HEAD") => true,
                _ => return Some(Answer::MethodNotAllowed),
            };
            let path = request.path.unwrap_or("/");
            let path = path.split('?').next().unwrap_or(path);
            Some(match path {
                "/metrics" => Answer::Metrics {
                    openmetrics: request
                        .headers
                        .iter()
                        .filter(|h| h.name.eq_ignore_ascii_case("accept"))
                        .any(|h| asks_for_openmetrics(h.value)),
                    head,
                },
                "/" => Answer::Index { head },
                _ => Answer::NotFound,
            })
        }
    }
}

/// Whether an `Accept` value lists OpenMetrics text with a weight above 0.
fn asks_for_openmetrics(accept: &[u8]) -> bool {
    String::from_utf8_lossy(accept).split(',').any(|item| {
        let mut parts = item.split(';').map(str::trim);
        let kind = parts.next().unwrap_or("");
        let weight = parts
            .find_map(|p| p.strip_prefix("q="))
            .and_then(|q| q.parse::<f64>().ok())
            .unwrap_or(1.0);
        kind.eq_ignore_ascii_case("application/openmetrics-text") && weight > 0.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_classified() {
        let get = |path: &str, accept: &str| {
            classify(
                format!("GET {path} HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\n\r\n").as_bytes(),
            )
        };
        assert_eq!(
            get("/metrics", "*/*"),
            Some(Answer::Metrics {
                openmetrics: false,
                head: false
            })
        );
        // What Prometheus sends.
        let prometheus = "application/openmetrics-text;version=1.0.0;q=0.5,\
             application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,\
             */*;q=0.2";
        assert_eq!(
            get("/metrics?x=1", prometheus),
            Some(Answer::Metrics {
                openmetrics: true,
                head: false
            })
        );
        assert_eq!(
            get("/metrics", "application/openmetrics-text;q=0"),
            Some(Answer::Metrics {
                openmetrics: false,
                head: false
            })
        );
        assert_eq!(get("/", "*/*"), Some(Answer::Index { head: false }));
        assert_eq!(get("/other", "*/*"), Some(Answer::NotFound));
        assert_eq!(classify(b"GET /metrics HTTP/1.1\r\nHost"), None);
        assert_eq!(
            classify(b"POST /metrics HTTP/1.1\r\n\r\n"),
            Some(Answer::MethodNotAllowed)
        );
        assert_eq!(
            classify(b"\x01\x02 nonsense\r\n\r\n"),
            Some(Answer::BadRequest)
        );
    }

    #[test]
    fn a_scrape_gets_the_last_update() {
        let published = Arc::new(Published::default());
        published.set(Encoded {
            prometheus: "a 1\n".into(),
            openmetrics: "a 1\n# EOF\n".into(),
        });
        let bound = Bound::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let address = bound.address();
        let server = bound.serve(Arc::clone(&published)).unwrap();
        let fetch = |request: &str| {
            let mut s = TcpStream::connect(address).unwrap();
            s.write_all(request.as_bytes()).unwrap();
            let mut answer = String::new();
            s.read_to_string(&mut answer).unwrap();
            answer
        };
        let plain = fetch("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(plain.starts_with("HTTP/1.1 200 OK\r\n"), "{plain}");
        assert!(plain.contains("version=0.0.4") && plain.ends_with("\r\n\r\na 1\n"));
        published.set(Encoded {
            prometheus: "a 2\n".into(),
            openmetrics: "a 2\n# EOF\n".into(),
        });
        let om = fetch(
            "GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text; version=1.0.0\r\n\r\n",
        );
        assert!(om.contains("application/openmetrics-text") && om.ends_with("a 2\n# EOF\n"));
        let head = fetch("HEAD /metrics HTTP/1.1\r\n\r\n");
        assert!(head.contains("Content-Length: 4\r\n") && head.ends_with("\r\n\r\n"));
        assert!(fetch("GET /x HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        server.stop();
    }
}
