//! `cache`: cache-line ping-pong between cores. Every `cache` worker of a
//! set writes the same 16 cache lines with atomic read-modify-writes, so
//! on different CPUs each write takes the line away from the others.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{WorkerCtx, WorkerResult};

pub(super) const OP: &str = "one atomic add to a cache line all cache workers share";

const LINES: usize = 16;
const BATCH: u64 = 1024;

#[derive(Debug, Default)]
#[repr(align(128))]
struct Line(AtomicU64);

/// The shared lines.
#[derive(Debug)]
pub(crate) struct Lines(Box<[Line; LINES]>);

impl Lines {
    pub(crate) fn new() -> Lines {
        Lines(Box::default())
    }
}

pub(super) fn run(ctx: &WorkerCtx) -> WorkerResult {
    let lines = &ctx.shared.cache_lines.0;
    let mut i = ctx.index;
    while !ctx.stopping() {
        for _ in 0..BATCH {
            lines[i % LINES].0.fetch_add(1, Ordering::Relaxed);
            i = i.wrapping_add(1);
        }
        ctx.counter.add(BATCH);
    }
    Ok(())
}
