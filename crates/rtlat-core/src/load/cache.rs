//! `cache`: cache-line ping-pong between cores, and a sweep through a
//! buffer the size of the last-level cache that evicts other programs'
//! lines.
//!
//! Every `cache` worker of a set writes the same 16 cache lines with atomic
//! read-modify-writes, so on different CPUs each write takes the line away
//! from the others. Between two such writes a worker reads and writes one
//! line of a buffer all `cache` workers share, as large as the largest
//! cache CPU 0 lists (`/sys/devices/system/cpu/cpu0/cache/index*/size`,
//! rounded up to a power of two; 32 MiB when it lists none, at least
//! 1 MiB): it steps through the buffer 4099 lines at a time (a new page
//! every step, out of reach of the prefetchers), visiting every line once
//! per pass, so its dirty lines take the place of everything else the
//! cache held. The first worker to get ready allocates and touches the
//! buffer, the others wait for it, all before they say they are ready: the
//! rate counts the sweeps only, however long a large buffer takes to touch
//! (a 260 MiB last-level cache gives a 512 MiB buffer, about a second).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{WorkerCtx, WorkerResult};

pub(super) const OP: &str =
    "one atomic add to a shared cache line, then one line of a cache-sized shared buffer written";

const LINES: usize = 16;
const BATCH: u64 = 1024;
/// Words (u64) per 64-byte cache line.
const LINE_WORDS: usize = 8;
/// Lines per step through the buffer: odd, so a pass visits every line of
/// a power-of-two buffer.
const STRIDE: usize = 4099;

#[derive(Debug, Default)]
#[repr(align(128))]
struct Line(AtomicU64);

/// The shared lines, and the shared buffer once a worker has made it.
pub(crate) struct Lines {
    lines: Box<[Line; LINES]>,
    buffer: OnceLock<Result<Box<[AtomicU64]>, String>>,
}

impl std::fmt::Debug for Lines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lines")
            .field("lines", &self.lines)
            .field(
                "buffer_bytes",
                &self.buffer.get().map(|b| b.as_ref().map(|b| b.len() * 8)),
            )
            .finish()
    }
}

impl Lines {
    pub(crate) fn new() -> Lines {
        Lines {
            lines: Box::default(),
            buffer: OnceLock::new(),
        }
    }

    /// The shared buffer, allocated and touched by the first caller.
    pub(super) fn buffer(&self) -> Result<&[AtomicU64], String> {
        self.buffer
            .get_or_init(|| allocate(buffer_bytes()))
            .as_deref()
            .map_err(Clone::clone)
    }
}

/// The buffer size: the largest cache of CPU 0, rounded up to a power of
/// two, 1 MiB at least.
fn buffer_bytes() -> usize {
    super::memory::largest_cache_bytes()
        .unwrap_or(32 << 20)
        .max(1 << 20)
        .checked_next_power_of_two()
        .unwrap_or(32 << 20)
}

/// `bytes` of zeroed words, every page written.
fn allocate(bytes: usize) -> Result<Box<[AtomicU64]>, String> {
    let words = bytes / 8;
    let mut v: Vec<AtomicU64> = Vec::new();
    v.try_reserve_exact(words)
        .map_err(|_| format!("cannot allocate a {} MiB buffer", bytes >> 20))?;
    v.extend((0..words).map(|_| AtomicU64::new(0)));
    Ok(v.into_boxed_slice())
}

pub(super) fn run(ctx: &WorkerCtx) -> WorkerResult {
    let lines = &ctx.shared.cache_lines.lines;
    let buffer = ctx.shared.cache_lines.buffer()?;
    let mask = buffer.len() / LINE_WORDS - 1;
    let mut i = ctx.index;
    // Workers start a fraction of the buffer apart.
    let mut line = ctx.index.wrapping_mul(0x9e37_79b9) & mask;
    while !ctx.stopping() {
        for _ in 0..BATCH {
            lines[i % LINES].0.fetch_add(1, Ordering::Relaxed);
            i = i.wrapping_add(1);
            // A plain load and store (no lock prefix): workers may lose
            // each other's increments here, which is of no matter.
            let word = &buffer[line * LINE_WORDS];
            word.store(
                word.load(Ordering::Relaxed).wrapping_add(1),
                Ordering::Relaxed,
            );
            line = (line + STRIDE) & mask;
        }
        ctx.counter.add(BATCH);
    }
    Ok(())
}
