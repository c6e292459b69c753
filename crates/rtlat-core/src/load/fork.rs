//! `fork`: process creation and exit. Each operation forks a child that
//! exits at once (no exec) and waits for it, so no child outlives its
//! operation.

use super::{WorkerCtx, WorkerResult};

pub(super) const OP: &str = "one child process forked, exited at once and reaped";

pub(super) fn run(ctx: &WorkerCtx) -> WorkerResult {
    while !ctx.stopping() {
        rtlat_sys::load::fork_exit_wait().map_err(|e| format!("fork: {e}"))?;
        ctx.counter.add(1);
    }
    Ok(())
}
