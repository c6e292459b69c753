//! `memory`: streaming copies through a buffer far larger than the
//! last-level cache, so every copy goes to DRAM.
//!
//! Each worker owns one buffer of four times the largest cache size the
//! kernel lists for CPU 0 (`/sys/devices/system/cpu/cpu0/cache/index*/size`;
//! 32 MiB assumed when it lists none, at least 16 MiB), touched before the
//! worker says it is ready. The loop copies its first half to its second
//! half and back, 1 MiB at a time.

use super::{WorkerCtx, WorkerResult};

pub(super) const OP: &str =
    "1 MiB copied (read and written) within a buffer of 4x the largest cache";

const CHUNK: usize = 1 << 20;

/// A worker's buffer.
pub(super) struct Buffer(Vec<u8>);

impl Buffer {
    /// Allocates and touches `bytes` (a multiple of 2 MiB).
    pub(super) fn new(bytes: usize) -> Result<Buffer, String> {
        let mut v = Vec::new();
        v.try_reserve_exact(bytes)
            .map_err(|_| format!("cannot allocate a {} MiB buffer", bytes >> 20))?;
        v.resize(bytes, 0x5a);
        Ok(Buffer(v))
    }
}

/// The buffer size: 4x the largest cache of CPU 0, rounded up to 2 MiB.
pub(super) fn buffer_bytes() -> usize {
    let largest = largest_cache_bytes().unwrap_or(32 << 20);
    (largest.saturating_mul(4))
        .max(16 << 20)
        .div_ceil(2 * CHUNK)
        * (2 * CHUNK)
}

/// The largest cache size CPU 0's cache directory lists.
pub(super) fn largest_cache_bytes() -> Option<usize> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("index"))
        .filter_map(|e| std::fs::read_to_string(e.path().join("size")).ok())
        .filter_map(|s| parse_size(s.trim()))
        .max()
}

/// `32768K`, `512K`, `8M`, `1G` or a byte count.
fn parse_size(text: &str) -> Option<usize> {
    let (digits, scale) = match text.as_bytes().last()? {
        b'K' | b'k' => (&text[..text.len() - 1], 1 << 10),
        b'M' | b'm' => (&text[..text.len() - 1], 1 << 20),
        b'G' | b'g' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits.parse::<usize>().ok()?.checked_mul(scale)
}

pub(super) fn run(ctx: &WorkerCtx, mut buffer: Buffer) -> WorkerResult {
    let half = buffer.0.len() / 2;
    let mut forward = true;
    while !ctx.stopping() {
        let (a, b) = buffer.0.split_at_mut(half);
        let (src, dst): (&[u8], &mut [u8]) = if forward { (a, b) } else { (b, a) };
        for (s, d) in src.chunks(CHUNK).zip(dst.chunks_mut(CHUNK)) {
            d.copy_from_slice(s);
            ctx.counter.add(1);
            if ctx.stopping() {
                break;
            }
        }
        std::hint::black_box(&buffer.0);
        forward = !forward;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_are_read() {
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("8M"), Some(8 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
        let b = buffer_bytes();
        assert!(b >= 16 << 20 && b.is_multiple_of(2 << 20));
        if let Some(l) = largest_cache_bytes() {
            assert!(b >= 4 * l);
        }
    }
}
