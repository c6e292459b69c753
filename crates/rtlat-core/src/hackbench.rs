//! hackbench: groups of senders and receivers passing messages, timed from
//! the moment every task is ready to the moment the last one is reaped, as
//! rt-tests' hackbench 2.4 does (the tool, `rtlat hackbench`, and the
//! `hackbench` load kind, which runs it in rounds).
//!
//! A group is `fds` receivers, each on its own connection (a UNIX socket
//! pair, a pipe or a TCP loopback connection), and `fds` senders, each
//! writing `loops` times one message of `datasize` bytes to every
//! receiver of its group; a receiver reads `fds * loops` messages. Every
//! task says it is ready on a shared pipe and waits for the start byte on
//! another; the clock starts when the last one is ready.
//!
//! In process mode each task is a forked copy of this process
//! ([`rtlat_sys::workers::fork_worker`]): in a process group of the run's
//! own, killed with the thread that forked it (parent death signal), so
//! that nothing outlives the run, even a SIGKILL of it. A stop (the flag
//! the caller raises) sends SIGTERM to the group, as C does, and reaps
//! every task. In thread mode the senders look at the flag before each
//! round of messages; once they are gone, their connections close and the
//! receivers read to the end.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rtlat_sys::signals::{SIGKILL, SIGTERM};
use rtlat_sys::workers::{WorkerEnd, fork_worker, wait_group_member, wait_readable};

/// How the tasks are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Forked processes (`-P`, the default).
    Process,
    /// Threads of this process (`-T`).
    Threads,
}

impl Mode {
    /// The word of C's first line: `process` or `threaded`.
    pub const fn word(self) -> &'static str {
        match self {
            Mode::Process => "process",
            Mode::Threads => "threaded",
        }
    }
}

/// What carries the messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `socketpair(AF_UNIX, SOCK_STREAM)` (the default).
    Socket,
    /// `pipe()` (`-p`).
    Pipe,
    /// A TCP connection over 127.0.0.1 (`-i`).
    Inet,
}

/// One hackbench run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HackbenchConfig {
    /// Processes or threads.
    pub mode: Mode,
    /// Sockets, pipes or TCP.
    pub transport: Transport,
    /// Groups (`-g`).
    pub groups: u32,
    /// Receivers, and senders, per group (`-f`).
    pub fds: u32,
    /// Messages each sender sends to each receiver (`-l`).
    pub loops: u32,
    /// Bytes per message (`-s`).
    pub datasize: u32,
    /// Whether the main thread turns SCHED_FIFO 1 once the tasks exist
    /// (`-F`).
    pub fifo: bool,
}

impl HackbenchConfig {
    /// Tasks in all: `groups * fds * 2`.
    pub fn tasks(&self) -> u64 {
        u64::from(self.groups) * u64::from(self.fds) * 2
    }

    /// Messages a whole run passes: `groups * fds * fds * loops`.
    pub fn messages(&self) -> u64 {
        u64::from(self.groups) * u64::from(self.fds) * u64::from(self.fds) * u64::from(self.loops)
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// From the start byte to the last task reaped; `None` when the run
    /// was stopped before every task was ready.
    pub elapsed: Option<Duration>,
    /// Whether the stop flag ended it.
    pub stopped: bool,
    /// Tasks started.
    pub tasks: u64,
    /// Tasks that failed (an error, or a signal not of ours).
    pub failed: u64,
}

/// Why a run could not be done.
#[derive(Debug, thiserror::Error)]
pub enum HackbenchError {
    /// A connection could not be made.
    #[error("cannot create a {what}: {cause}")]
    Connection {
        /// Socket pair, pipe, TCP connection.
        what: &'static str,
        /// Why.
        cause: std::io::Error,
    },
    /// A task could not be started.
    #[error("cannot start task {index} of {tasks}: {cause}")]
    Start {
        /// Its index, from 0.
        index: u64,
        /// Tasks in all.
        tasks: u64,
        /// Why.
        cause: std::io::Error,
    },
    /// The main thread could not become SCHED_FIFO (`-F`).
    #[error("cannot make the main thread SCHED_FIFO 1: {0}")]
    Fifo(rtlat_sys::Errno),
    /// The start failed: readiness, the start byte, the reaping.
    #[error("{what}: {cause}")]
    Run {
        /// What was being done.
        what: &'static str,
        /// Why.
        cause: std::io::Error,
    },
}

fn run_error(what: &'static str) -> impl Fn(std::io::Error) -> HackbenchError {
    move |cause| HackbenchError::Run { what, cause }
}

fn errno_io(e: rtlat_sys::Errno) -> std::io::Error {
    std::io::Error::from_raw_os_error(e.raw_os_error())
}

/// A connection: the receiver's end, the senders' end.
fn connection(transport: Transport) -> Result<(File, File), HackbenchError> {
    let (what, made): (&'static str, std::io::Result<(OwnedFd, OwnedFd)>) = match transport {
        Transport::Socket => (
            "socket pair",
            UnixStream::pair().map(|(a, b)| (a.into(), b.into())),
        ),
        Transport::Pipe => ("pipe", std::io::pipe().map(|(r, w)| (r.into(), w.into()))),
        Transport::Inet => ("TCP loopback connection", tcp_pair()),
    };
    let (rx, tx) = made.map_err(|cause| HackbenchError::Connection { what, cause })?;
    Ok((File::from(rx), File::from(tx)))
}

/// A TCP connection over 127.0.0.1: the accepted end and the connecting one.
fn tcp_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    let tx = TcpStream::connect(listener.local_addr()?)?;
    let (rx, _) = listener.accept()?;
    Ok((rx.into(), tx.into()))
}

/// Says "ready" on `ready`, then waits for the start byte on `wake`.
fn ready_then_wait(ready: &File, wake: &File) -> bool {
    let mut ready = ready;
    ready.write_all(b"*").is_ok() && matches!(wait_readable(wake.as_fd(), -1), Ok(true))
}

/// A receiver: `count` messages of `buf.len()` bytes, or up to the end of
/// the connection.
fn receive(mut from: &File, buf: &mut [u8], count: u64) -> bool {
    for _ in 0..count {
        match from.read_exact(buf) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return true,
            Err(_) => return false,
        }
    }
    true
}

/// A sender: `loops` times one message to each of `to`, looking at `stop`
/// (if any) before each round.
fn send(to: &[File], data: &[u8], loops: u32, stop: Option<&AtomicBool>) -> bool {
    for _ in 0..loops {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return true;
        }
        for mut out in to {
            if out.write_all(data).is_err() {
                return false;
            }
        }
    }
    true
}

/// Runs `config` once; `stop` raised ends it early (the tasks ended and
/// reaped, every one).
pub fn run(config: &HackbenchConfig, stop: &Arc<AtomicBool>) -> Result<Outcome, HackbenchError> {
    let (ready_rx, ready_tx) = std::io::pipe().map_err(run_error("ready pipe"))?;
    let (wake_rx, wake_tx) = std::io::pipe().map_err(run_error("start pipe"))?;
    let ready = Ready {
        rx: File::from(OwnedFd::from(ready_rx)),
        tx: Some(File::from(OwnedFd::from(ready_tx))),
        wake_rx: File::from(OwnedFd::from(wake_rx)),
        wake_tx: File::from(OwnedFd::from(wake_tx)),
    };
    match config.mode {
        Mode::Process => run_processes(config, stop, ready),
        Mode::Threads => run_threads(config, stop, ready),
    }
}

struct Ready {
    rx: File,
    tx: Option<File>,
    wake_rx: File,
    wake_tx: File,
}

impl Ready {
    /// Reads one byte per task; false when the stop flag was raised or
    /// the tasks are gone first.
    fn wait_for(&self, tasks: u64, stop: &AtomicBool) -> Result<bool, HackbenchError> {
        let mut seen = 0u64;
        let mut buf = [0u8; 4096];
        while seen < tasks {
            if stop.load(Ordering::Relaxed) {
                return Ok(false);
            }
            let readable = wait_readable(self.rx.as_fd(), 20).map_err(|e| HackbenchError::Run {
                what: "waiting for the tasks to be ready",
                cause: errno_io(e),
            })?;
            if !readable {
                continue;
            }
            let want = usize::try_from(tasks - seen)
                .unwrap_or(buf.len())
                .min(buf.len());
            match (&self.rx).read(&mut buf[..want]) {
                Ok(0) => return Ok(false),
                Ok(n) => seen += n as u64,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(cause) => {
                    return Err(HackbenchError::Run {
                        what: "reading the ready pipe",
                        cause,
                    });
                }
            }
        }
        Ok(true)
    }

    fn go(&self) -> Result<(), HackbenchError> {
        (&self.wake_tx)
            .write_all(b"G")
            .map_err(run_error("writing the start byte"))
    }
}

/// The process group of a run's tasks: on drop (an error on the way),
/// every task still there is killed and reaped.
struct Tasks {
    pgid: Option<i32>,
    left: u64,
}

impl Tasks {
    fn reap_one(&mut self) -> Result<WorkerEnd, HackbenchError> {
        let pgid = self.pgid.unwrap_or(0);
        let (_, end) = wait_group_member(pgid).map_err(|e| HackbenchError::Run {
            what: "waiting for the tasks",
            cause: errno_io(e),
        })?;
        self.left -= 1;
        Ok(end)
    }

    fn signal(&self, signal: i32) {
        if let Some(pgid) = self.pgid {
            let _ = rtlat_sys::signals::signal_process_group(pgid, signal);
        }
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        if self.left > 0 {
            self.signal(SIGKILL);
            while self.left > 0 && self.reap_one().is_ok() {}
        }
    }
}

fn run_processes(
    config: &HackbenchConfig,
    stop: &Arc<AtomicBool>,
    mut ready: Ready,
) -> Result<Outcome, HackbenchError> {
    let total = config.tasks();
    let size = config.datasize as usize;
    let fds = config.fds as usize;
    let data = vec![b'-'; size];
    let mut buf = vec![0u8; size];
    let mut tasks = Tasks {
        pgid: None,
        left: 0,
    };
    let count = u64::from(config.fds) * u64::from(config.loops);
    let ready_tx = ready.tx.take().expect("the ready pipe's end");
    for _ in 0..config.groups {
        if stop.load(Ordering::Relaxed) {
            drop(tasks);
            return Ok(stopped_early(total));
        }
        let mut readers = Vec::with_capacity(fds);
        let mut writers = Vec::with_capacity(fds);
        for _ in 0..fds {
            let (rx, tx) = connection(config.transport)?;
            readers.push(rx);
            writers.push(tx);
        }
        for rx in &readers {
            let job =
                &mut || ready_then_wait(&ready_tx, &ready.wake_rx) && receive(rx, &mut buf, count);
            start(&mut tasks, job, total)?;
        }
        for _ in 0..fds {
            let job = &mut || {
                ready_then_wait(&ready_tx, &ready.wake_rx)
                    && send(&writers, &data, config.loops, None)
            };
            start(&mut tasks, job, total)?;
        }
    }
    // Only the tasks hold the ready pipe now: if they all die, it ends.
    drop(ready_tx);
    let done = AtomicBool::new(false);
    let killed = AtomicBool::new(false);
    let group = Tasks {
        pgid: tasks.pgid,
        left: 0,
    };
    std::thread::scope(|scope| {
        let watcher = std::thread::Builder::new()
            .name("hackbench-stop".into())
            .stack_size(64 * 1024)
            .spawn_scoped(scope, || {
                while !done.load(Ordering::Relaxed) {
                    if stop.load(Ordering::Relaxed) {
                        killed.store(true, Ordering::Relaxed);
                        group.signal(SIGTERM);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
            .map_err(run_error("starting the stop watcher"));
        let result = (|| {
            watcher?;
            if config.fifo {
                rtlat_sys::sched::set_current_thread(rtlat_sys::sched::Policy::Fifo, 1)
                    .map_err(HackbenchError::Fifo)?;
            }
            let all_ready = ready.wait_for(total, stop)?;
            let start = all_ready.then(Instant::now);
            if all_ready {
                ready.go()?;
            }
            Ok(start)
        })();
        let outcome = result.and_then(|start| {
            let mut failed = 0u64;
            while tasks.left > 0 {
                match tasks.reap_one()? {
                    WorkerEnd::Exited(0) => {}
                    WorkerEnd::Signaled(_) if killed.load(Ordering::Relaxed) => {}
                    _ => failed += 1,
                }
            }
            let elapsed = start.map(|s| s.elapsed());
            Ok(Outcome {
                elapsed,
                stopped: killed.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed),
                tasks: total,
                failed,
            })
        });
        done.store(true, Ordering::Relaxed);
        if outcome.is_err() {
            // The scope's end joins the watcher; kill what is left first.
            tasks.signal(SIGKILL);
        }
        outcome
    })
}

fn stopped_early(tasks: u64) -> Outcome {
    Outcome {
        elapsed: None,
        stopped: true,
        tasks,
        failed: 0,
    }
}

/// Forks one task into the run's group.
fn start(
    tasks: &mut Tasks,
    job: &mut dyn FnMut() -> bool,
    total: u64,
) -> Result<(), HackbenchError> {
    let pid = fork_worker(tasks.pgid, job).map_err(|e| HackbenchError::Start {
        index: tasks.left,
        tasks: total,
        cause: errno_io(e),
    })?;
    tasks.pgid.get_or_insert(pid);
    tasks.left += 1;
    Ok(())
}

fn run_threads(
    config: &HackbenchConfig,
    stop: &Arc<AtomicBool>,
    ready: Ready,
) -> Result<Outcome, HackbenchError> {
    let total = config.tasks();
    let fds = config.fds as usize;
    let size = config.datasize as usize;
    let count = u64::from(config.fds) * u64::from(config.loops);
    let ready = Arc::new(ready);
    let data: Arc<[u8]> = vec![b'-'; size].into();
    let mut handles = Vec::new();
    let mut failure = None;
    'groups: for _ in 0..config.groups {
        let mut readers = Vec::with_capacity(fds);
        let mut writers = Vec::with_capacity(fds);
        for _ in 0..fds {
            match connection(config.transport) {
                Ok((rx, tx)) => {
                    readers.push(rx);
                    writers.push(tx);
                }
                Err(e) => {
                    failure = Some(e);
                    break 'groups;
                }
            }
        }
        let writers: Arc<[File]> = writers.into();
        let mut spawn = |job: Box<dyn FnOnce() -> bool + Send>| {
            let index = handles.len() as u64;
            std::thread::Builder::new()
                .name("hackbench".into())
                .stack_size(64 * 1024)
                .spawn(job)
                .map(|h| handles.push(h))
                .map_err(|cause| HackbenchError::Start {
                    index,
                    tasks: total,
                    cause,
                })
        };
        for rx in readers {
            let ready = Arc::clone(&ready);
            let started = spawn(Box::new(move || {
                let mut buf = vec![0u8; size];
                let tx = ready.tx.as_ref().expect("the ready pipe's end");
                ready_then_wait(tx, &ready.wake_rx) && receive(&rx, &mut buf, count)
            }));
            if let Err(e) = started {
                failure = Some(e);
                break 'groups;
            }
        }
        for _ in 0..fds {
            let ready = Arc::clone(&ready);
            let writers = Arc::clone(&writers);
            let data = Arc::clone(&data);
            let stop = Arc::clone(stop);
            let loops = config.loops;
            let started = spawn(Box::new(move || {
                let tx = ready.tx.as_ref().expect("the ready pipe's end");
                ready_then_wait(tx, &ready.wake_rx) && send(&writers, &data, loops, Some(&stop))
            }));
            if let Err(e) = started {
                failure = Some(e);
                break 'groups;
            }
        }
    }
    let mut start = None;
    if failure.is_none()
        && config.fifo
        && let Err(e) = rtlat_sys::sched::set_current_thread(rtlat_sys::sched::Policy::Fifo, 1)
    {
        failure = Some(HackbenchError::Fifo(e));
    }
    if failure.is_none() {
        match ready.wait_for(handles.len() as u64, stop) {
            Ok(true) => start = Some(Instant::now()),
            Ok(false) => {}
            Err(e) => failure = Some(e),
        }
    }
    if failure.is_some() || start.is_none() {
        // Whoever waits for the start byte ends at once.
        stop.store(true, Ordering::Relaxed);
    }
    if let Err(e) = ready.go() {
        failure.get_or_insert(e);
    }
    let mut failed = 0u64;
    for h in handles {
        if !h.join().unwrap_or(false) {
            failed += 1;
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(Outcome {
        elapsed: start.map(|s| s.elapsed()),
        stopped: stop.load(Ordering::Relaxed),
        tasks: total,
        failed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(mode: Mode, transport: Transport) -> HackbenchConfig {
        HackbenchConfig {
            mode,
            transport,
            groups: 2,
            fds: 3,
            loops: 20,
            datasize: 100,
            fifo: false,
        }
    }

    #[test]
    fn every_mode_and_transport_runs_to_its_end() {
        for mode in [Mode::Process, Mode::Threads] {
            for transport in [Transport::Socket, Transport::Pipe, Transport::Inet] {
                let stop = Arc::new(AtomicBool::new(false));
                let out = run(&config(mode, transport), &stop).unwrap();
                assert_eq!(out.tasks, 12, "{mode:?} {transport:?}");
                assert_eq!(out.failed, 0, "{mode:?} {transport:?}");
                assert!(!out.stopped);
                assert!(out.elapsed.is_some());
            }
        }
    }

    #[test]
    fn a_stop_ends_a_long_run_and_reaps_every_task() {
        for mode in [Mode::Process, Mode::Threads] {
            let stop = Arc::new(AtomicBool::new(false));
            let raise = Arc::clone(&stop);
            let t = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                raise.store(true, Ordering::Relaxed);
            });
            let long = HackbenchConfig {
                loops: 100_000_000,
                ..config(mode, Transport::Socket)
            };
            let out = run(&long, &stop).unwrap();
            t.join().unwrap();
            assert!(out.stopped, "{mode:?}");
            assert_eq!(out.failed, 0, "{mode:?}");
        }
    }
}
