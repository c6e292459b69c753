//! Samples a measuring thread offers for explanation (`--explain`): the
//! thread's deadline, wake-up and latency of each sample above its
//! explain trigger, handed to the non-real-time reader of kernel events.
//!
//! [`CandidateRing`] has one writer (the measuring thread, which offers
//! only when a sample passes its trigger: a new maximum, or a threshold)
//! and one reader ([`CandidateCursor`]). Each entry is guarded by its own
//! sequence number, seqlock style: the writer marks the entry odd, stores
//! the figures and marks it even with the entry's number; a reader that
//! finds the sequence changed under it knows the entry was overwritten.
//! The writer never waits and takes no lock; a reader that falls more than
//! the ring's length behind counts what it missed.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering, fence};

use crate::units::Bytes;

/// Entries per thread: a reader polling every few milliseconds misses
/// none unless more than this many samples pass the trigger in between.
pub const CANDIDATE_RING_LEN: usize = 256;

/// When a sample is offered for explanation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExplainTrigger {
    /// Each sample above every earlier one of its thread.
    NewMaximum,
    /// Each sample above this many ns.
    Above(i64),
}

/// One offered sample: CLOCK_MONOTONIC times in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The programmed expiry the thread waited for.
    pub deadline_ns: i64,
    /// The thread's clock read after its wait returned.
    pub wake_ns: i64,
    /// `wake_ns − deadline_ns`.
    pub latency_ns: i64,
}

#[derive(Debug, Default)]
struct Entry {
    /// `2·n + 1` while entry number `n` is written, `2·n + 2` once done.
    sequence: AtomicU64,
    deadline_ns: AtomicI64,
    wake_ns: AtomicI64,
    latency_ns: AtomicI64,
}

/// A thread's offered samples; see the module documentation.
#[derive(Debug)]
pub struct CandidateRing {
    entries: Box<[Entry]>,
    /// Entries offered so far; written by the writer only.
    offered: AtomicU64,
}

impl CandidateRing {
    /// A ring of [`CANDIDATE_RING_LEN`] entries; `None` when the memory
    /// cannot be had.
    pub fn new() -> Option<CandidateRing> {
        Some(CandidateRing {
            entries: crate::buffers::zeroed_cells(CANDIDATE_RING_LEN)?,
            offered: AtomicU64::new(0),
        })
    }

    /// The heap that [`CandidateRing::new`] takes.
    pub fn heap_bytes() -> Bytes {
        Bytes::of::<Entry>(CANDIDATE_RING_LEN)
    }

    /// Writes every entry once so its pages are mapped before the loop.
    pub fn prefault(&self) {
        for e in self.entries.iter() {
            e.sequence.store(0, Ordering::Relaxed);
        }
    }

    /// Offers a sample. Writer only; a few plain stores and two fences
    /// that cost nothing on x86 (they only keep the compiler's order).
    #[inline]
    pub fn offer(&self, candidate: Candidate) {
        let number = self.offered.load(Ordering::Relaxed);
        let entry = &self.entries[(number as usize) % CANDIDATE_RING_LEN];
        entry.sequence.store(2 * number + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        entry
            .deadline_ns
            .store(candidate.deadline_ns, Ordering::Relaxed);
        entry.wake_ns.store(candidate.wake_ns, Ordering::Relaxed);
        entry
            .latency_ns
            .store(candidate.latency_ns, Ordering::Relaxed);
        entry.sequence.store(2 * number + 2, Ordering::Release);
        self.offered.store(number + 1, Ordering::Release);
    }

    /// How many samples were offered so far.
    pub fn offered(&self) -> u64 {
        self.offered.load(Ordering::Acquire)
    }

    /// Entry number `number`, if it is still there whole.
    fn read(&self, number: u64) -> Option<Candidate> {
        let entry = &self.entries[(number as usize) % CANDIDATE_RING_LEN];
        let done = 2 * number + 2;
        if entry.sequence.load(Ordering::Acquire) != done {
            return None;
        }
        let candidate = Candidate {
            deadline_ns: entry.deadline_ns.load(Ordering::Relaxed),
            wake_ns: entry.wake_ns.load(Ordering::Relaxed),
            latency_ns: entry.latency_ns.load(Ordering::Relaxed),
        };
        fence(Ordering::Acquire);
        (entry.sequence.load(Ordering::Relaxed) == done).then_some(candidate)
    }
}

/// The reader's place in one [`CandidateRing`].
#[derive(Debug, Default, Clone)]
pub struct CandidateCursor {
    next: u64,
    missed: u64,
}

impl CandidateCursor {
    /// Hands every entry offered since the last call to `take`, oldest
    /// first; entries overwritten before they could be read are counted
    /// in [`CandidateCursor::missed`].
    pub fn drain(&mut self, ring: &CandidateRing, mut take: impl FnMut(Candidate)) {
        let offered = ring.offered();
        let len = CANDIDATE_RING_LEN as u64;
        if offered.saturating_sub(self.next) > len {
            self.missed += offered - len - self.next;
            self.next = offered - len;
        }
        while self.next < offered {
            match ring.read(self.next) {
                Some(candidate) => take(candidate),
                None => self.missed += 1,
            }
            self.next += 1;
        }
    }

    /// Entries lost to the writer before they were read.
    pub fn missed(&self) -> u64 {
        self.missed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(n: i64) -> Candidate {
        Candidate {
            deadline_ns: n * 1000,
            wake_ns: n * 1000 + n,
            latency_ns: n,
        }
    }

    #[test]
    fn a_reader_gets_each_offer_once_in_order() {
        let ring = CandidateRing::new().unwrap();
        let mut cursor = CandidateCursor::default();
        let mut seen = Vec::new();
        for n in 1..=3 {
            ring.offer(candidate(n));
        }
        cursor.drain(&ring, |c| seen.push(c.latency_ns));
        ring.offer(candidate(4));
        cursor.drain(&ring, |c| seen.push(c.latency_ns));
        cursor.drain(&ring, |c| seen.push(c.latency_ns));
        assert_eq!(seen, vec![1, 2, 3, 4]);
        assert_eq!(cursor.missed(), 0);
        assert_eq!(ring.read(3), Some(candidate(4)));
    }

    #[test]
    fn a_reader_left_behind_counts_what_was_overwritten() {
        let ring = CandidateRing::new().unwrap();
        let mut cursor = CandidateCursor::default();
        let total = CANDIDATE_RING_LEN as i64 + 10;
        for n in 0..total {
            ring.offer(candidate(n));
        }
        let mut seen = Vec::new();
        cursor.drain(&ring, |c| seen.push(c.latency_ns));
        assert_eq!(cursor.missed(), 10);
        assert_eq!(seen.first(), Some(&10));
        assert_eq!(seen.last(), Some(&(total - 1)));
        assert_eq!(seen.len(), CANDIDATE_RING_LEN);
    }

    #[test]
    fn an_entry_being_rewritten_is_not_read() {
        let ring = CandidateRing::new().unwrap();
        ring.offer(candidate(7));
        // The writer has begun entry number CANDIDATE_RING_LEN, which
        // reuses entry 0's place: its sequence is odd.
        ring.entries[0]
            .sequence
            .store(2 * CANDIDATE_RING_LEN as u64 + 1, Ordering::Relaxed);
        assert_eq!(ring.read(0), None);
        let mut cursor = CandidateCursor::default();
        cursor.drain(&ring, |_| panic!("a torn entry was handed out"));
        assert_eq!(cursor.missed(), 1);
    }
}
