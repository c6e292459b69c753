//! `syscalls`: a storm of cheap system calls and context switches. Each
//! operation calls getppid and sched_yield, then sends one byte to a
//! partner thread over a pipe and waits for its one-byte answer on another.

use std::io::{Read, Write};

use super::{WorkerCtx, WorkerResult};

pub(super) const OP: &str =
    "getppid + sched_yield + a one-byte pipe round trip with a partner thread";

pub(super) fn run(ctx: &WorkerCtx) -> WorkerResult {
    let (mut ping_rx, mut ping_tx) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let (mut pong_rx, mut pong_tx) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    std::thread::scope(|scope| {
        let partner = std::thread::Builder::new()
            .name(format!("load-sys-{}.p", ctx.index))
            .stack_size(64 * 1024)
            .spawn_scoped(scope, move || -> Result<(), String> {
                let mut b = [0u8; 1];
                loop {
                    match ping_rx.read(&mut b) {
                        Ok(0) => return Ok(()),
                        Ok(_) => pong_tx.write_all(&b).map_err(|e| format!("pipe: {e}"))?,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(format!("pipe: {e}")),
                    }
                }
            })
            .map_err(|e| format!("cannot start the partner thread: {e}"))?;
        let mut b = [7u8; 1];
        let mut result = Ok(());
        while !ctx.stopping() {
            std::hint::black_box(std::os::unix::process::parent_id());
            std::thread::yield_now();
            if let Err(e) = ping_tx
                .write_all(&b)
                .and_then(|()| pong_rx.read_exact(&mut b))
            {
                result = Err(format!("pipe: {e}"));
                break;
            }
            ctx.counter.add(1);
        }
        // End of file tells the partner to stop.
        drop(ping_tx);
        let p = partner
            .join()
            .unwrap_or_else(|_| Err("the partner thread panicked".into()));
        result.and(p)
    })
}
