//! `/metrics` over HTTP: one thread of its own (SCHED_OTHER, on the main
//! thread's CPUs, a 256 KiB stack) that serves every client at once from
//! one `poll(2)` loop on non-blocking sockets, so that no client waits on
//! another. A scrape copies a pointer to the last update's text under a
//! lock only the main thread also takes, once a second; it never reads a
//! measuring thread's memory, let alone waits for one.
//!
//! Only what a scraper needs is served: `GET` (and `HEAD`) of `/metrics`
//! (OpenMetrics when the `Accept` header asks for
//! `application/openmetrics-text`, the Prometheus text format otherwise)
//! and of `/` (a line pointing there); anything else is 404 or 405, and
//! what `httparse` cannot read is 400. Each response closes its
//! connection.
//!
//! What a client may cost is bounded whatever it does:
//! - a deadline per request, not per read: the whole request within
//!   [`REQUEST_DEADLINE`] of the connection, the whole answer read within
//!   [`ANSWER_DEADLINE`] of the request; past it the connection is closed
//!   (a client sending one byte a second is dropped after 2 s);
//! - at most [`MAX_CONNECTIONS`] open at once, and never more than half
//!   the descriptors the process may open (so that clients cannot take
//!   those the textfile and the checkpoint need): a connection beyond
//!   them closes the oldest idle one (one answered and lingering, see
//!   below, else one still waiting for its request); a request that has
//!   already come in whole is answered at once and holds no place;
//! - a 400 or 405, whose request may not have been read whole, is
//!   followed by reading what the client still sends until it closes,
//!   within the answer's deadline: a close with bytes unread would reset
//!   the connection, and the client could lose the answer;
//! - [`Server::stop`] wakes the loop through a socket of its own and
//!   never waits on a client: the connections still open are closed.
//!
//! The request is parsed by `httparse`; the loop around it is these few
//! lines rather than a crate with a thread pool or an async runtime,
//! whose threads' default 2 MiB stacks `-m` would lock, one by one.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rtlat_sys::poll::{Watched, poll};
use rtlat_sys::thread::RawThread;

use super::metrics::{Encoded, OPENMETRICS_CONTENT_TYPE, PROMETHEUS_CONTENT_TYPE};

/// The longest request head read.
const MAX_REQUEST: usize = 8 * 1024;
/// How long a client may take to send its whole request, from the moment
/// its connection is accepted.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(2);
/// How long a client may take to read the whole answer, from the moment
/// its request is complete.
pub const ANSWER_DEADLINE: Duration = Duration::from_secs(2);
/// The most connections open at once. A scraper needs one, briefly;
/// 64 leave room for many, and keep what idle clients can make the
/// server hold (a request buffer of at most 8 KiB each, locked under
/// `-m`) to half a megabyte.
pub const MAX_CONNECTIONS: usize = 64;
/// The most connections accepted in one round of the loop, so that a
/// flood of them does not hold up the clients already in.
const ACCEPTS_PER_ROUND: usize = 64;
/// How long the server stops accepting after `accept` failed for want of
/// a descriptor with no connection to close, or for a reason of its own:
/// the listener stays readable, and a loop would spin on it.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);
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
        let Bound { listener, .. } = self;
        listener.set_nonblocking(true)?;
        let (waker, woken) = UnixStream::pair()?;
        woken.set_nonblocking(true)?;
        let half_the_descriptors = rtlat_sys::poll::descriptor_limit()
            .map_or(usize::MAX, |n| usize::try_from(n / 2).unwrap_or(usize::MAX));
        let most = MAX_CONNECTIONS.min(half_the_descriptors).max(1);
        let mut serving = Serving {
            listener,
            woken,
            published,
            connections: Vec::with_capacity(most),
            most,
            watched: Vec::with_capacity(most + 2),
            accept_paused_until: None,
        };
        let thread = rtlat_sys::thread::spawn("rtlat-http", STACK_BYTES, move || serving.run())?;
        Ok(Server {
            thread: Some(thread),
            waker,
        })
    }
}

/// The serving thread. Dropped without [`Server::stop`], it ends too (its
/// wake-up socket closes), detached.
#[derive(Debug)]
pub struct Server {
    thread: Option<RawThread>,
    waker: UnixStream,
}

impl Server {
    /// Ends the thread: one byte on its wake-up socket ends its loop in
    /// the round under way, which waits on no client (every socket is
    /// non-blocking); the connections still open are closed.
    pub fn stop(mut self) {
        // An empty socket's buffer takes a byte at once.
        let _ = self.waker.write(&[1]);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The server's loop and what it holds.
struct Serving {
    listener: TcpListener,
    /// Readable when the server is to stop: a byte from [`Server::stop`],
    /// or the end of the stream when the [`Server`] is dropped.
    woken: UnixStream,
    published: Arc<Published>,
    connections: Vec<Connection>,
    /// The most connections open at once.
    most: usize,
    /// What one round waits on: `woken`, the listener (unless accepting
    /// is paused), then each connection in order.
    watched: Vec<Watched>,
    accept_paused_until: Option<Instant>,
}

impl Serving {
    fn run(&mut self) {
        loop {
            let now = Instant::now();
            if self.accept_paused_until.is_some_and(|until| now >= until) {
                self.accept_paused_until = None;
            }
            let accepting = self.accept_paused_until.is_none();
            self.watched.clear();
            self.watched.push(Watched::readable(&self.woken));
            if accepting {
                self.watched.push(Watched::readable(&self.listener));
            }
            self.watched
                .extend(self.connections.iter().map(Connection::watched));
            let next_event = self
                .connections
                .iter()
                .map(|c| c.deadline)
                .chain(self.accept_paused_until)
                .min();
            let timeout = next_event.map(|at| at.saturating_duration_since(now));
            if poll(&mut self.watched, timeout).is_err() {
                // Out of kernel memory, say: nothing to do but try again
                // a little later, unless asked to stop.
                if self.stop_asked() {
                    return;
                }
                std::thread::sleep(ACCEPT_PAUSE);
                continue;
            }
            if self.watched[0].ready() {
                return;
            }
            let now = Instant::now();
            let first_connection = if accepting { 2 } else { 1 };
            let ready = &self.watched[first_connection..];
            let published = &self.published;
            let mut index = 0;
            self.connections.retain_mut(|connection| {
                let is_ready = ready[index].ready();
                index += 1;
                if is_ready && connection.progress(published, now) == Progress::Done {
                    return false;
                }
                now < connection.deadline
            });
            if accepting && self.watched[1].ready() {
                self.accept_some();
            }
        }
    }

    /// Whether [`Server::stop`] has written its byte or the [`Server`] is
    /// gone, looked at without waiting.
    fn stop_asked(&self) -> bool {
        // A byte or the end of the stream: either way, stop.
        match (&self.woken).read(&mut [0u8; 1]) {
            Ok(_read) => true,
            Err(e) => e.kind() != io::ErrorKind::WouldBlock,
        }
    }

    /// Accepts the connections waiting, up to [`ACCEPTS_PER_ROUND`].
    fn accept_some(&mut self) {
        for _ in 0..ACCEPTS_PER_ROUND {
            match self.listener.accept() {
                Ok((stream, _)) => self.admit(stream),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                // A client that left before it was accepted.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted
                    ) => {}
                // Out of descriptors or memory: what an open connection
                // holds is what can be given back.
                Err(e) if rtlat_sys::poll::out_of_descriptors(&e) && self.make_room() => return,
                Err(_) => {
                    self.accept_paused_until = Some(Instant::now() + ACCEPT_PAUSE);
                    return;
                }
            }
        }
    }

    /// Serves `stream` as far as it can at once (a request that came in
    /// with the connection is answered now), and keeps it if more is to
    /// come, closing the oldest connection still waiting for its request
    /// when the most are open.
    fn admit(&mut self, stream: TcpStream) {
        if stream.set_nonblocking(true).is_err() {
            return;
        }
        let now = Instant::now();
        let mut connection = Connection {
            stream,
            since: now,
            deadline: now + REQUEST_DEADLINE,
            state: State::Reading(Vec::new()),
        };
        if connection.progress(&self.published, now) == Progress::Done {
            return;
        }
        if self.connections.len() >= self.most {
            if matches!(connection.state, State::Lingering) {
                // Answered already: not worth another's place.
                return;
            }
            self.make_room();
        }
        self.connections.push(connection);
    }

    /// Closes the connection accepted first among those answered and
    /// lingering, else among those still waiting for their request, else
    /// among those being answered; false when there is none.
    fn make_room(&mut self) -> bool {
        let oldest = self
            .connections
            .iter()
            .enumerate()
            .min_by_key(|(_, c)| (c.eviction_rank(), c.since))
            .map(|(i, _)| i);
        match oldest {
            Some(i) => {
                self.connections.remove(i);
                true
            }
            None => false,
        }
    }
}

/// One client's connection.
struct Connection {
    stream: TcpStream,
    /// When it was accepted: the oldest waiting one makes room.
    since: Instant,
    /// When it is closed, whatever state it is in.
    deadline: Instant,
    state: State,
}

enum State {
    /// Reading the request: what has come of it so far.
    Reading(Vec<u8>),
    /// Writing the answer: its head, its body, how much of both is sent,
    /// whether to linger after it.
    Writing {
        head: Vec<u8>,
        body: Body,
        sent: usize,
        linger: bool,
    },
    /// Answered, its sending side shut: reading and dropping what the
    /// client still sends until it closes. Closing a socket with bytes
    /// unread resets the connection, and a client may then lose an answer
    /// it has not read yet: the 400 to a request too long to read whole,
    /// the 405 to a `POST` with a body.
    Lingering,
}

/// An answer's body, not copied: a scrape's is the published text.
enum Body {
    Static(&'static [u8]),
    Metrics {
        encoded: Arc<Encoded>,
        openmetrics: bool,
    },
}

impl Body {
    fn bytes(&self) -> &[u8] {
        match self {
            Body::Static(bytes) => bytes,
            Body::Metrics {
                encoded,
                openmetrics: true,
            } => encoded.openmetrics.as_bytes(),
            Body::Metrics { encoded, .. } => encoded.prometheus.as_bytes(),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Progress {
    /// More is to come: wait for the socket again.
    Pending,
    /// Answered, gone or failed: close it.
    Done,
}

impl Connection {
    fn watched(&self) -> Watched {
        match self.state {
            State::Reading(_) | State::Lingering => Watched::readable(&self.stream),
            State::Writing { .. } => Watched::writable(&self.stream),
        }
    }

    /// Which connections make room first: those answered, then those
    /// still waiting for their request, then those being answered.
    fn eviction_rank(&self) -> u8 {
        match self.state {
            State::Lingering => 0,
            State::Reading(_) => 1,
            State::Writing { .. } => 2,
        }
    }

    /// Reads what has come of the request and, once it is whole, writes
    /// what the socket takes of the answer; never blocks.
    fn progress(&mut self, published: &Published, now: Instant) -> Progress {
        if let State::Reading(request) = &mut self.state {
            match read_request(&mut self.stream, request) {
                Ok(Some(what)) => {
                    self.state = answer(what, published);
                    self.deadline = now + ANSWER_DEADLINE;
                }
                Ok(None) => return Progress::Pending,
                Err(_) => return Progress::Done,
            }
        }
        if let State::Writing {
            head,
            body,
            sent,
            linger,
        } = &mut self.state
        {
            loop {
                let body = body.bytes();
                let rest = match head.get(*sent..) {
                    Some(rest) if !rest.is_empty() => rest,
                    _ => &body[*sent - head.len()..],
                };
                if rest.is_empty() {
                    break;
                }
                // TcpStream's write is send(MSG_NOSIGNAL): a client gone
                // is EPIPE, never SIGPIPE.
                match self.stream.write(rest) {
                    Ok(0) => return Progress::Done,
                    Ok(n) => *sent += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Progress::Pending,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return Progress::Done,
                }
            }
            if !*linger || self.stream.shutdown(Shutdown::Write).is_err() {
                return Progress::Done;
            }
            // Within the answer's deadline still.
            self.state = State::Lingering;
        }
        let mut dropped = [0u8; 1024];
        loop {
            match self.stream.read(&mut dropped) {
                Ok(0) => return Progress::Done,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Progress::Pending,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Progress::Done,
            }
        }
    }
}

/// Reads what `stream` has of a request onto `request`: what it asks for
/// once the head is whole (or too long, or unreadable), `None` while more
/// is to come, an error when the client has gone.
fn read_request(stream: &mut TcpStream, request: &mut Vec<u8>) -> io::Result<Option<Answer>> {
    let mut chunk = [0u8; 1024];
    loop {
        let n = match stream.read(&mut chunk) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        request.extend_from_slice(&chunk[..n]);
        match classify(request) {
            Some(answer) => return Ok(Some(answer)),
            None if request.len() >= MAX_REQUEST => return Ok(Some(Answer::BadRequest)),
            None => {}
        }
    }
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

/// The answer to `what`, to be written.
fn answer(what: Answer, published: &Published) -> State {
    const PLAIN: &str = "text/plain; charset=utf-8";
    // Whatever the client sent past the head, unread, is read before the
    // connection is closed.
    let linger = matches!(what, Answer::BadRequest | Answer::MethodNotAllowed);
    let (status, content_type, body, head_only) = match what {
        Answer::Metrics { openmetrics, head } => {
            let encoded = published.get();
            let content_type = if openmetrics {
                OPENMETRICS_CONTENT_TYPE
            } else {
                PROMETHEUS_CONTENT_TYPE
            };
            (
                "200 OK",
                content_type,
                Body::Metrics {
                    encoded,
                    openmetrics,
                },
                head,
            )
        }
        Answer::Index { head } => (
            "200 OK",
            PLAIN,
            Body::Static(b"rtlat monitor: the metrics are at /metrics\n"),
            head,
        ),
        Answer::NotFound => (
            "404 Not Found",
            PLAIN,
            Body::Static(b"not found: the metrics are at /metrics\n"),
            false,
        ),
        Answer::MethodNotAllowed => (
            "405 Method Not Allowed",
            PLAIN,
            Body::Static(b"only GET and HEAD\n"),
            false,
        ),
        Answer::BadRequest => (
            "400 Bad Request",
            PLAIN,
            Body::Static(b"bad request\n"),
            false,
        ),
    };
    let mut head = Vec::with_capacity(200);
    // Writing to a Vec cannot fail.
    let _ = write!(
        head,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n",
        body.bytes().len()
    );
    if status.starts_with("405") {
        head.extend_from_slice(b"Allow: GET, HEAD\r\n");
    }
    head.extend_from_slice(b"\r\n");
    State::Writing {
        head,
        body: if head_only { Body::Static(b"") } else { body },
        sent: 0,
        linger,
    }
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
    use std::time::Instant;

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
        let post = fetch("POST /metrics HTTP/1.1\r\n\r\n");
        assert!(post.starts_with("HTTP/1.1 405") && post.contains("\r\nAllow: GET, HEAD\r\n"));
        assert!(fetch("\x01\x02 nonsense\r\n\r\n").starts_with("HTTP/1.1 400"));
        let long = format!("GET /metrics HTTP/1.1\r\nX: {}", "y".repeat(MAX_REQUEST));
        assert!(fetch(&long).starts_with("HTTP/1.1 400"));
        server.stop();
    }

    /// A server of a short text; its address.
    fn serving() -> (Server, SocketAddr) {
        let published = Arc::new(Published::default());
        published.set(Encoded {
            prometheus: "a 1\n".into(),
            openmetrics: "a 1\n# EOF\n".into(),
        });
        let bound = Bound::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let address = bound.address();
        (bound.serve(published).unwrap(), address)
    }

    /// `GET /metrics`: the answer and how long it took.
    fn scrape(address: SocketAddr) -> (String, Duration) {
        let began = Instant::now();
        let mut s = TcpStream::connect(address).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        (answer, began.elapsed())
    }

    /// Whether the server has closed `s`: its end of file (or a reset)
    /// within `wait`.
    fn closed_within(s: &mut TcpStream, wait: Duration) -> bool {
        s.set_read_timeout(Some(wait)).unwrap();
        match s.read(&mut [0u8; 64]) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => !matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
        }
    }

    #[test]
    fn a_slow_client_holds_no_one_up_and_goes_at_its_deadline() {
        let (server, address) = serving();
        let mut slow = TcpStream::connect(address).unwrap();
        slow.write_all(b"GET /metrics HTTP/1.1\r\n").unwrap();
        let began = Instant::now();
        // A byte of a header every 100 ms: each read the server makes
        // finds something, and only a deadline per request ends it.
        let closed = loop {
            assert!(
                began.elapsed() < REQUEST_DEADLINE * 3,
                "the slow client was not closed"
            );
            let (answer, took) = scrape(address);
            assert!(answer.ends_with("\r\n\r\na 1\n"), "{answer}");
            assert!(took < Duration::from_secs(1), "a scrape took {took:?}");
            if slow.write_all(b"X").is_err() || closed_within(&mut slow, Duration::from_millis(100))
            {
                break began.elapsed();
            }
        };
        assert!(
            closed >= REQUEST_DEADLINE - Duration::from_millis(100),
            "closed after {closed:?}"
        );
        server.stop();
    }

    #[test]
    fn a_connection_too_many_closes_the_oldest_waiting_one() {
        let (server, address) = serving();
        let mut idle: Vec<TcpStream> = (0..=MAX_CONNECTIONS)
            .map(|_| TcpStream::connect(address).unwrap())
            .collect();
        // Accepted in the order they connected: the first is the oldest.
        assert!(closed_within(&mut idle[0], Duration::from_secs(1)));
        assert!(!closed_within(&mut idle[1], Duration::from_millis(100)));
        assert!(!closed_within(
            &mut idle[MAX_CONNECTIONS],
            Duration::from_millis(10)
        ));
        // A scrape is answered, and one more idle connection closes the
        // next oldest.
        let (answer, _) = scrape(address);
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        let _one_more = TcpStream::connect(address).unwrap();
        assert!(closed_within(&mut idle[1], Duration::from_secs(1)));
        server.stop();
    }

    #[test]
    fn a_stop_waits_on_no_client() {
        let (server, address) = serving();
        let mut slow = TcpStream::connect(address).unwrap();
        slow.write_all(b"GET /metrics HTTP/1.1\r\nX").unwrap();
        let _idle = TcpStream::connect(address).unwrap();
        // The server has both (a scrape after them is answered).
        assert!(scrape(address).0.starts_with("HTTP/1.1 200 OK"));
        let began = Instant::now();
        server.stop();
        let took = began.elapsed();
        assert!(took < Duration::from_millis(500), "the stop took {took:?}");
        assert!(closed_within(&mut slow, Duration::from_millis(500)));
    }
}
