//! `rtlat monitor`'s `/metrics` beside hostile clients: a slowloris client
//! (a request one byte a second, back whenever it is closed), 500 idle
//! connections, a storm of scrapes beside both, and a SIGTERM with a
//! slowloris client attached. Scrapes are answered within a second
//! whatever the others do, and a stop waits on no client. Real runs
//! (root), each a few seconds, one measuring thread on a leased CPU.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::support::cpus::CpuLease;
use crate::support::*;

/// How long a test waits for one answer before it calls the server stuck
/// (a safety net: each scrape is to take less than a second).
const STUCK: Duration = Duration::from_secs(3);

/// How many connections the server keeps at most (docs/monitor.md, "Slow,
/// idle and hostile clients"): beyond them, the oldest still waiting for its request goes.
const CONNECTION_CAP: usize = 64;

/// `rtlat monitor --listen 127.0.0.1:0 -a CPU -t 1 ARGS`, once it says
/// where it serves: the run and the address (the fleet tests' monitor
/// too).
pub(crate) fn serve(lease: &CpuLease, args: &[&str]) -> (Running, SocketAddr) {
    serve_with(rtlat(), lease, args)
}

/// [`serve`] with `command` (`rtlat`, or a command that runs it with the
/// arguments that follow).
fn serve_with(mut command: Command, lease: &CpuLease, args: &[&str]) -> (Running, SocketAddr) {
    let run = spawn(
        command
            .args(["monitor", "--listen", "127.0.0.1:0", "-a", &lease.list()])
            .args(["-t", "1"])
            .args(args),
    );
    run.wait_for_stderr(Duration::from_secs(10), "the address served", |e| {
        e.contains("/metrics\n")
    });
    let said = run.stderr_so_far();
    let address = said
        .split("http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no address in {said:?}"));
    (run, address)
}

/// `GET /metrics`, connection to last byte: how long it took, or what went
/// wrong (nothing within [`STUCK`], or not a 200).
fn scrape(address: SocketAddr) -> Result<Duration, String> {
    let began = Instant::now();
    let mut s = TcpStream::connect_timeout(&address, STUCK).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(STUCK)).unwrap();
    s.set_write_timeout(Some(STUCK)).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
        .map_err(|e| format!("send: {e}"))?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)
        .map_err(|e| format!("after {:?}, read: {e}", began.elapsed()))?;
    if !answer.starts_with(b"HTTP/1.1 200 OK\r\n") {
        return Err(format!("not a 200: {}", String::from_utf8_lossy(&answer)));
    }
    Ok(began.elapsed())
}

/// `count` scrapes one after the other, each answered within a second.
fn scrapes_answered_within_a_second(address: SocketAddr, count: usize, beside: &str) {
    for i in 0..count {
        let took = scrape(address).unwrap_or_else(|e| panic!("scrape {i} beside {beside}: {e}"));
        assert_faster_than!(
            took,
            Duration::from_secs(1),
            "scrape {i} beside {beside} took {took:?}"
        );
    }
}

/// A slowloris client on its own thread: sends a request head one byte a
/// second, as long as the server lets it, and connects again whenever the
/// server closes it. Ended when dropped (or after 30 s at most).
struct Slowloris {
    stop: Arc<AtomicBool>,
    /// Connections that have sent their first line.
    connected: Arc<AtomicUsize>,
    /// How long each connection the server closed had lasted.
    thread: Option<JoinHandle<Vec<Duration>>>,
}

impl Slowloris {
    fn start(address: SocketAddr) -> Slowloris {
        let stop = Arc::new(AtomicBool::new(false));
        let connected = Arc::new(AtomicUsize::new(0));
        let (stopping, counting) = (Arc::clone(&stop), Arc::clone(&connected));
        let thread = std::thread::spawn(move || {
            let began = Instant::now();
            let mut lifetimes = Vec::new();
            while !stopping.load(Ordering::Relaxed) && began.elapsed() < Duration::from_secs(30) {
                let Ok(mut s) = TcpStream::connect_timeout(&address, STUCK) else {
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                };
                let since = Instant::now();
                if s.write_all(b"GET /metrics HTTP/1.1\r\n").is_err() {
                    continue;
                }
                counting.fetch_add(1, Ordering::Relaxed);
                // Waiting on the socket between bytes sees the server's
                // close at once.
                s.set_read_timeout(Some(Duration::from_millis(100)))
                    .unwrap();
                let mut next_byte = since + Duration::from_secs(1);
                let closed = loop {
                    if stopping.load(Ordering::Relaxed) {
                        return lifetimes;
                    }
                    match s.read(&mut [0u8; 256]) {
                        Ok(0) => break true,
                        Ok(_) => {}
                        Err(e)
                            if matches!(
                                e.kind(),
                                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                            ) => {}
                        Err(_) => break true,
                    }
                    // One byte a second: the pace is the point.
                    if Instant::now() >= next_byte {
                        next_byte += Duration::from_secs(1);
                        if s.write_all(b"X").is_err() {
                            break true;
                        }
                    }
                };
                if closed {
                    lifetimes.push(since.elapsed());
                }
            }
            lifetimes
        });
        Slowloris {
            stop,
            connected,
            thread: Some(thread),
        }
    }

    /// Waits until it has sent the first line of `count` connections.
    fn wait_for_connections(&self, count: usize) {
        assert!(
            wait_until(Duration::from_secs(10), || self
                .connected
                .load(Ordering::Relaxed)
                >= count),
            "the slowloris client did not connect"
        );
    }

    /// Ends it: how long each connection the server closed had lasted.
    fn finish(mut self) -> Vec<Duration> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for Slowloris {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Makes sure this test process may open `needed` descriptors more than
/// it has (the soft RLIMIT_NOFILE raised up to the hard one if need be);
/// false, with a SKIPPED line, when the hard limit does not allow it.
fn room_for_descriptors(needed: u64, test: &str) -> bool {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let open = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count()) as u64;
    // Tests run side by side in this process: room for theirs too.
    let wanted = open + needed + 512;
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current.is_some_and(|soft| soft < wanted) {
        if limit.maximum.is_some_and(|hard| hard < wanted) {
            skip_note!(
                "SKIPPED (RLIMIT_NOFILE: a hard limit of {:?} descriptors, {wanted} needed): \
                 {test}",
                limit.maximum
            );
            return false;
        }
        limit.current = Some(wanted);
        setrlimit(Resource::Nofile, limit).expect("raising RLIMIT_NOFILE");
    }
    true
}

/// Up to `count` connections to `address` that send nothing: those the
/// server's host took (a server that accepts too slowly has its backlog
/// fill, and the rest are refused).
fn idle_connections(address: SocketAddr, count: usize) -> Vec<TcpStream> {
    (0..count)
        .filter_map(|_| TcpStream::connect_timeout(&address, STUCK).ok())
        .collect()
}

/// How many of `connections` the server has closed (end of file or a
/// reset, looked at without waiting).
fn closed(connections: &[TcpStream]) -> usize {
    connections
        .iter()
        .filter(|s| {
            s.set_nonblocking(true).unwrap();
            let mut s: &TcpStream = s;
            match s.read(&mut [0u8; 16]) {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
            }
        })
        .count()
}

#[test]
fn a_slowloris_client_holds_no_scrape_up_and_goes_at_its_deadline() {
    require_root!();
    let lease = CpuLease::one();
    let (run, address) = serve(&lease, &["-D", "8"]);
    let slowloris = Slowloris::start(address);
    slowloris.wait_for_connections(1);
    // Scrapes for 3.5 s: beside the first connection, past its deadline
    // (2 s) and beside the second.
    let began = Instant::now();
    let mut scrapes = 0;
    while began.elapsed() < Duration::from_millis(3500) {
        scrapes_answered_within_a_second(address, 1, "a slowloris client");
        scrapes += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    let lifetimes = slowloris.finish();
    assert!(scrapes >= 10, "{scrapes} scrapes in 3.5 s");
    // A byte every second keeps every read busy: only a deadline per
    // request (2 s) ends it.
    assert!(
        !lifetimes.is_empty() && lifetimes.iter().all(|l| *l < Duration::from_secs(3)),
        "the slowloris connections lasted {lifetimes:?}"
    );
    run.signal("INT");
    let r = run.wait(Duration::from_secs(10));
    r.expect_code(0);
}

#[test]
fn five_hundred_idle_connections_hold_no_scrape_up() {
    require_root!();
    if !room_for_descriptors(500, function_name!()) {
        return;
    }
    let lease = CpuLease::one();
    let (run, address) = serve(&lease, &["-D", "8"]);
    let idle = idle_connections(address, 500);
    scrapes_answered_within_a_second(address, 5, "500 idle connections");
    assert_eq!(idle.len(), 500, "idle connections refused");
    // The cap: all but the newest are closed, oldest first.
    assert!(
        wait_until(Duration::from_secs(1), || closed(&idle)
            >= 500 - CONNECTION_CAP),
        "{} of 500 idle connections closed",
        closed(&idle)
    );
    assert!(closed(&idle[idle.len() - 10..]) < 10, "the newest are kept");
    // The deadline: the rest go within 2 s of their connection.
    assert!(
        wait_until(Duration::from_secs(4), || closed(&idle) == 500),
        "{} of 500 idle connections closed after their deadline",
        closed(&idle)
    );
    drop(idle);
    run.signal("INT");
    let r = run.wait(Duration::from_secs(10));
    r.expect_code(0);
}

#[test]
fn a_scrape_storm_beside_hostile_clients_is_answered_within_a_second_each() {
    require_root!();
    if !room_for_descriptors(500, function_name!()) {
        return;
    }
    let lease = CpuLease::one();
    let (run, address) = serve(&lease, &["-D", "8"]);
    let slowloris = Slowloris::start(address);
    slowloris.wait_for_connections(1);
    let idle = idle_connections(address, 500);
    // Four scrapers, each as fast as it is answered, for 2 s.
    let storm: Vec<JoinHandle<Result<(usize, Duration), String>>> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                let began = Instant::now();
                let (mut count, mut slowest) = (0, Duration::ZERO);
                while began.elapsed() < Duration::from_secs(2) {
                    slowest = slowest.max(scrape(address)?);
                    count += 1;
                }
                Ok((count, slowest))
            })
        })
        .collect();
    let mut total = 0;
    for scraper in storm {
        let (count, slowest) = scraper.join().unwrap().unwrap_or_else(|e| panic!("{e}"));
        total += count;
        assert_faster_than!(
            slowest,
            Duration::from_secs(1),
            "the slowest scrape of a storm took {slowest:?}"
        );
    }
    assert!(total >= 100, "{total} scrapes in 2 s");
    assert_eq!(idle.len(), 500, "idle connections refused");
    drop(slowloris);
    run.signal("INT");
    let r = run.wait(Duration::from_secs(10));
    r.expect_code(0);
}

#[test]
fn sigterm_with_a_slowloris_client_attached_ends_within_a_second_with_every_output() {
    require_root!();
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let (checkpoint, textfile, json) = (path("state.json"), path("m.prom"), path("run.json"));
    let (run, address) = serve(
        &lease,
        &[
            "-D",
            "20",
            "--checkpoint",
            &checkpoint,
            "--textfile",
            &textfile,
            "--json",
            &json,
        ],
    );
    // The first update (a textfile) before the stop.
    assert!(
        wait_until(Duration::from_secs(10), || Path::new(&textfile).exists()),
        "no textfile"
    );
    let slowloris = Slowloris::start(address);
    slowloris.wait_for_connections(1);
    // A scrape after it is answered once the server has read its line.
    // (A server that serves one client at a time does not answer it:
    // what this test is about is the stop below.)
    let _ = scrape(address);
    let began = Instant::now();
    run.signal("TERM");
    let r = run.wait(Duration::from_secs(15));
    let took = began.elapsed();
    drop(slowloris);
    r.expect_code(0);
    assert_faster_than!(
        took,
        Duration::from_secs(1),
        "the stop took {took:?}\n{}",
        r.describe()
    );
    assert_eq!(parse_status_lines(&r.stdout).len(), 1, "{}", r.describe());
    let last = read_json(Path::new(&checkpoint));
    assert_eq!(
        last,
        read_json(Path::new(&json)),
        "the last checkpoint is the final --json"
    );
    assert!(last["monitor"]["threads"][0]["cycles"].as_u64() > Some(0));
    let metrics = std::fs::read_to_string(&textfile).unwrap();
    assert!(metrics.contains("rtlat_samples_total{"), "{metrics}");
}

#[test]
fn with_few_descriptors_idle_connections_hold_up_neither_scrapes_nor_outputs() {
    require_root!();
    let mut prlimit = Command::new("prlimit");
    if prlimit.arg("--version").output_checked().is_err() {
        skip_note!("SKIPPED (prlimit(1) not installed): {}", function_name!());
        return;
    }
    let lease = CpuLease::one();
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let (checkpoint, textfile) = (path("state.json"), path("m.prom"));
    // 40 descriptors: some 12 the monitor holds itself, and fewer than
    // the cap of 64 connections. The connections are to take at most
    // half, and leave the textfile and the checkpoint theirs.
    let mut command = Command::new("prlimit");
    command
        .args(["--nofile=40:40", "--"])
        .arg(rtlat_path())
        .stdin(Stdio::null());
    let (run, address) = serve_with(
        command,
        &lease,
        &[
            "-D",
            "8",
            "--textfile",
            &textfile,
            "--checkpoint",
            &checkpoint,
            "--checkpoint-interval",
            "1",
        ],
    );
    assert!(
        wait_until(Duration::from_secs(10), || Path::new(&checkpoint).exists()),
        "no checkpoint"
    );
    let idle = idle_connections(address, 100);
    scrapes_answered_within_a_second(address, 5, "100 idle connections, 40 descriptors");
    assert_eq!(idle.len(), 100, "idle connections refused");
    // A checkpoint and a textfile written beside them (every second).
    let written = |p: &str| std::fs::metadata(p).unwrap().modified().unwrap();
    let before = (written(&checkpoint), written(&textfile));
    assert!(
        wait_until(Duration::from_secs(3), || written(&checkpoint) > before.0
            && written(&textfile) > before.1),
        "no checkpoint or textfile written beside 100 idle connections: {}",
        run.stderr_so_far()
    );
    drop(idle);
    run.signal("INT");
    let r = run.wait(Duration::from_secs(10));
    r.expect_code(0);
    assert!(!r.stderr.contains("WARN"), "{}", r.stderr);
}
