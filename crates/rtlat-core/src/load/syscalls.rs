//! `syscalls`: a storm of cheap system calls and context switches.
//!
//! Each worker has one partner thread (two threads per worker) and the
//! pair shares one CPU: both pin themselves to one of the CPUs the worker
//! may use (the worker's `index`-th, round-robin; the plan's CPU when it
//! pins the worker). Both loop on getppid and sched_yield, so each yield
//! hands the CPU to the other thread: a context switch. Every fourth turn
//! they also do a one-byte pipe round trip (the worker writes, the partner
//! answers on a second pipe), whose blocking reads switch through the
//! kernel's wake-up path. An operation is one turn of the worker.
//!
//! The partner ends when the worker closes its pipe, which it notices
//! within four turns: the worker stops the pair.

use std::io::{Read, Write};

use super::{WorkerCtx, WorkerResult};

pub(super) const OP: &str =
    "getppid + sched_yield to a partner thread on its CPU (every 4th op also a pipe round trip)";

/// Turns per pipe round trip.
const ROUND_TRIP_EVERY: u64 = 4;

pub(super) fn run(ctx: &WorkerCtx) -> WorkerResult {
    let allowed = rtlat_sys::affinity::allowed_cpus()
        .map_err(|e| format!("cannot read the CPU affinity: {e}"))?;
    let cpu = *allowed
        .get(ctx.index % allowed.len().max(1))
        .ok_or("no CPU to run on")?;
    let pin = |who: &str| {
        rtlat_sys::affinity::pin_current_thread(&[cpu])
            .map_err(|e| format!("cannot pin the {who} to CPU {cpu}: {e}"))
    };
    pin("worker")?;
    let (mut ping_rx, mut ping_tx) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let (mut pong_rx, mut pong_tx) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    std::thread::scope(|scope| {
        let partner = std::thread::Builder::new()
            .name(format!("load-sys-{}.p", ctx.index))
            .stack_size(64 * 1024)
            .spawn_scoped(scope, move || -> Result<(), String> {
                pin("partner")?;
                let mut b = [0u8; 1];
                let mut turn = 0u64;
                loop {
                    std::hint::black_box(std::os::unix::process::parent_id());
                    std::thread::yield_now();
                    turn += 1;
                    if turn.is_multiple_of(ROUND_TRIP_EVERY) {
                        // End of file: the worker has stopped.
                        let n = loop {
                            match ping_rx.read(&mut b) {
                                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                                r => break r.map_err(|e| format!("pipe: {e}"))?,
                            }
                        };
                        if n == 0 {
                            return Ok(());
                        }
                        pong_tx.write_all(&b).map_err(|e| format!("pipe: {e}"))?;
                    }
                }
            })
            .map_err(|e| format!("cannot start the partner thread: {e}"))?;
        let mut b = [7u8; 1];
        let mut turn = 0u64;
        let mut result = Ok(());
        while !ctx.stopping() {
            std::hint::black_box(std::os::unix::process::parent_id());
            std::thread::yield_now();
            turn += 1;
            if turn.is_multiple_of(ROUND_TRIP_EVERY)
                && let Err(e) = ping_tx
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
