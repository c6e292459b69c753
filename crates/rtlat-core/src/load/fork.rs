//! `fork`: process creation and exit. Each operation forks a child that
//! exits at once (no exec) and waits for it, so no child outlives its
//! operation.
//!
//! A fork write-protects every page of the forking process until it is
//! written again: done in the measuring process, each fork would make the
//! measuring threads take page faults that a separate load process never
//! causes them. So when the plan names a helper program (the rtlat binary
//! itself, [`LoadPlan::fork_helper`](super::LoadPlan::fork_helper)), each
//! worker starts it as a small process of its own, `rtlat-fork-helper`
//! ([`HelperRole::ForkLoad`]), which does the forking ([`helper_main`]) and
//! reports its count over a pipe. It ends when the worker closes its
//! input, or with the worker's thread (parent death signal, set before
//! anything else, then the parent checked). It starts with the stop
//! signals blocked: a Ctrl-C to the process group stops the run, whose
//! worker then ends the helper, instead of killing the helper under the
//! worker. Without a helper the worker forks itself (`rtlat-core`'s own
//! tests).

use std::io::Write;
use std::time::{Duration, Instant};

use super::{WorkerCtx, WorkerResult, run_helper};
use crate::helper::HelperRole;

pub(super) const OP: &str = "one child process forked, exited at once and reaped";

/// How often the helper reports its count and looks at its input.
const REPORT_EVERY: Duration = Duration::from_millis(10);

pub(super) fn run(ctx: &WorkerCtx) -> WorkerResult {
    match &ctx.shared.fork_helper {
        Some(program) => run_helper(ctx, program, HelperRole::ForkLoad, "fork"),
        None => {
            while !ctx.stopping() {
                rtlat_sys::load::fork_exit_wait().map_err(|e| format!("fork: {e}"))?;
                ctx.counter.add(1);
            }
            Ok(())
        }
    }
}

/// The fork helper process: forks, lets the child exit, reaps it, over and
/// over; every 10 ms writes the forks since the last report to stdout (8
/// bytes, little-endian) and ends once stdin is closed. `parent` is the
/// pid of the process that started it: if that is no longer the parent,
/// it exits at once. Returns the exit status.
pub(crate) fn helper_main(parent: i32) -> u8 {
    if rtlat_sys::process::die_with_parent(parent).is_err() {
        return 1;
    }
    let stdin = std::io::stdin();
    let Ok(input) = rtlat_sys::load::InputEnd::watch(stdin.lock()) else {
        return 1;
    };
    let mut out = std::io::stdout().lock();
    let mut forks = 0u64;
    let mut last = Instant::now();
    loop {
        if rtlat_sys::load::fork_exit_wait().is_err() {
            return 1;
        }
        forks += 1;
        if last.elapsed() >= REPORT_EVERY {
            last = Instant::now();
            let ended = input.reached();
            if out
                .write_all(&forks.to_le_bytes())
                .and_then(|()| out.flush())
                .is_err()
            {
                return 1;
            }
            forks = 0;
            if ended {
                return 0;
            }
        }
    }
}
