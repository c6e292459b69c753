//! `messaging`: hackbench-like traffic. Each worker is a group of three
//! threads: the worker sends 100-byte messages alternately to a receiver
//! on a pipe and to a receiver on a UNIX stream socket pair; the receivers
//! read them until the worker closes its ends at stop.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use super::{WorkerCtx, WorkerResult};

pub(super) const OP: &str =
    "one 100-byte message written to a pipe or UNIX socket and read by another thread";

const MESSAGE: usize = 100;

fn receive(mut from: impl Read) -> Result<(), String> {
    let mut buf = [0u8; MESSAGE];
    loop {
        match from.read_exact(&mut buf) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(format!("receiving: {e}")),
        }
    }
}

pub(super) fn run(ctx: &WorkerCtx) -> WorkerResult {
    let (pipe_rx, mut pipe_tx) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let (mut sock_tx, sock_rx) = UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    std::thread::scope(|scope| {
        let spawn = |name: &str, job: Box<dyn FnOnce() -> Result<(), String> + Send>| {
            std::thread::Builder::new()
                .name(format!("load-msg-{}.{name}", ctx.index))
                .stack_size(64 * 1024)
                .spawn_scoped(scope, job)
                .map_err(|e| format!("cannot start a receiver thread: {e}"))
        };
        let r1 = spawn("p", Box::new(move || receive(pipe_rx)))?;
        let r2 = spawn("s", Box::new(move || receive(sock_rx)))?;
        let message = [0x42u8; MESSAGE];
        let mut sent = Ok(());
        while !ctx.stopping() {
            let result = pipe_tx
                .write_all(&message)
                .and_then(|()| sock_tx.write_all(&message));
            if let Err(e) = result {
                sent = Err(format!("sending: {e}"));
                break;
            }
            ctx.counter.add(2);
        }
        // Closing the sending ends lets the receivers see end of file.
        drop(pipe_tx);
        drop(sock_tx);
        let joined = |h: std::thread::ScopedJoinHandle<'_, Result<(), String>>| {
            h.join()
                .unwrap_or_else(|_| Err("a receiver panicked".into()))
        };
        let (a, b) = (joined(r1), joined(r2));
        sent.and(a).and(b)
    })
}
