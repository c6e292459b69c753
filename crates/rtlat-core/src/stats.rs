//! Per-thread buffers shared between a measuring thread and its readers.
//!
//! Each measuring thread owns one [`ThreadChannel`]: its [`ThreadSlot`] of
//! running figures (from the crate's slot module, re-exported here), an
//! optional [`Histogram`], optional [`SampleRing`]s of recent samples, and the
//! interval, phase, distribution and explanation buffers it was asked to
//! keep. The run's [`SpikeLog`] and [`BreakCell`] are shared by all its
//! threads. The measuring thread is the only writer of its own buffers and
//! stores into them with plain `Relaxed` stores.

use std::sync::Arc;
use std::sync::atomic::{
    AtomicI32, AtomicI64, AtomicU8, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};

use crate::buffers::zeroed_cells;
use crate::candidates::CandidateRing;
use crate::config::RunConfig;
use crate::distribution::LatencyHistogram;
use crate::figures::{BreakReport, HistogramData, SignedHistogramData, SpikeRecord, SpikeReport};
use crate::interval::IntervalLog;
use crate::phase::PhaseLog;
use crate::units::Bytes;

pub use crate::buffers::try_collect_slice;
pub use crate::slot::{LoopEnd, SlotWriter, Tally, ThreadSlot, ThreadState};

/// A per-thread histogram of one-unit buckets with an overflow count and a
/// log of the cycle numbers of the first overflows, as cyclictest keeps.
#[derive(Debug)]
pub struct Histogram {
    buckets: Box<[AtomicU64]>,
    overflows: AtomicU64,
    overflow_log: Box<[AtomicU64]>,
}

impl Histogram {
    /// A histogram of `buckets` buckets; the overflow log holds as many
    /// entries. `None` when the memory cannot be had (it can be large:
    /// 16 bytes per bucket), rather than aborting the process.
    pub fn new(buckets: usize) -> Option<Histogram> {
        Some(Histogram {
            buckets: zeroed_cells(buckets)?,
            overflows: AtomicU64::new(0),
            overflow_log: zeroed_cells(buckets)?,
        })
    }

    /// The heap that [`Histogram::new`] takes for `buckets`, and at most as
    /// much again for its [`Histogram::snapshot`] (buckets and logged
    /// overflows).
    pub(crate) fn heap_bytes(buckets: usize) -> (Bytes, Bytes) {
        let cells = Bytes::of::<AtomicU64>(buckets).times(2);
        (cells, cells)
    }

    /// Writes every bucket once, so that its pages are mapped before the
    /// measuring loop runs (first touch from the measuring thread).
    pub(crate) fn prefault(&self) {
        for cell in self.buckets.iter().chain(self.overflow_log.iter()) {
            cell.store(0, Relaxed);
        }
    }

    /// Counts `value` (in units) taken at 0-based `cycle`. Writer only.
    #[inline(always)]
    pub fn record(&self, value: i64, cycle: u64) {
        match usize::try_from(value)
            .ok()
            .and_then(|i| self.buckets.get(i))
        {
            Some(bucket) => bucket.store(bucket.load(Relaxed) + 1, Relaxed),
            None => {
                let overflows = self.overflows.load(Relaxed);
                if let Some(entry) = usize::try_from(overflows)
                    .ok()
                    .and_then(|i| self.overflow_log.get(i))
                {
                    entry.store(cycle, Relaxed);
                }
                self.overflows.store(overflows + 1, Relaxed);
            }
        }
    }

    /// A copy of the histogram as it stands.
    pub fn snapshot(&self) -> HistogramData {
        let overflows = self.overflows.load(Relaxed);
        let logged = usize::try_from(overflows)
            .unwrap_or(usize::MAX)
            .min(self.overflow_log.len());
        HistogramData {
            buckets: self.buckets.iter().map(|b| b.load(Relaxed)).collect(),
            overflows,
            overflow_cycles: self.overflow_log[..logged]
                .iter()
                .map(|c| c.load(Relaxed))
                .collect(),
        }
    }
}

/// A histogram of signed nanosecond samples in buckets of `width` ns over a
/// range symmetric around zero (`latency`'s `-H`/`-B`): negative samples
/// keep their sign and samples outside the range are counted below or
/// above it, never folded or clamped into a bucket.
#[derive(Debug)]
pub struct SignedHistogram {
    width_ns: i64,
    /// Bucket number of `buckets[0]` (≤ 0).
    first: i64,
    buckets: Box<[AtomicU64]>,
    below: AtomicU64,
    above: AtomicU64,
}

impl SignedHistogram {
    /// `per_side` buckets of `width_ns` on each side of zero; `None` when
    /// the memory cannot be had.
    pub fn new(width_ns: i64, per_side: usize) -> Option<SignedHistogram> {
        assert!(width_ns > 0, "bucket width must be positive");
        Some(SignedHistogram {
            width_ns,
            first: -(per_side as i64),
            buckets: zeroed_cells(per_side.checked_mul(2)?)?,
            below: AtomicU64::new(0),
            above: AtomicU64::new(0),
        })
    }

    /// The heap that [`SignedHistogram::new`] takes for `per_side`, and as
    /// much again for its snapshot.
    pub(crate) fn heap_bytes(per_side: usize) -> (Bytes, Bytes) {
        let cells = Bytes::of::<AtomicU64>(per_side).times(2);
        (cells, cells)
    }

    /// Writes every bucket once so its pages are mapped before the loop.
    pub(crate) fn prefault(&self) {
        for cell in self.buckets.iter() {
            cell.store(0, Relaxed);
        }
    }

    /// Counts `ns`. Writer only.
    #[inline(always)]
    pub fn record(&self, ns: i64) {
        let number = ns.div_euclid(self.width_ns);
        let cell = match usize::try_from(number - self.first) {
            Err(_) => &self.below,
            Ok(i) => self.buckets.get(i).unwrap_or(&self.above),
        };
        cell.store(cell.load(Relaxed) + 1, Relaxed);
    }

    /// A copy as it stands.
    pub fn snapshot(&self) -> SignedHistogramData {
        SignedHistogramData {
            width_ns: self.width_ns,
            first: self.first,
            buckets: self.buckets.iter().map(|b| b.load(Relaxed)).collect(),
            below: self.below.load(Relaxed),
            above: self.above.load(Relaxed),
        }
    }
}

/// The most recent samples of one thread, for a printer that shows every
/// sample (`-v`). Sample number `n` lives at `n % len`; a reader that falls
/// more than `len` samples behind has lost the older ones.
#[derive(Debug)]
pub struct SampleRing {
    values: Box<[AtomicI64]>,
}

impl SampleRing {
    /// A ring of `len` samples (a power of two); `None` when the memory
    /// cannot be had.
    pub fn new(len: usize) -> Option<SampleRing> {
        assert!(
            len.is_power_of_two(),
            "sample ring length must be a power of two"
        );
        Some(SampleRing {
            values: zeroed_cells(len)?,
        })
    }

    /// The heap that [`SampleRing::new`] takes for `len` samples.
    pub(crate) fn heap_bytes(len: usize) -> Bytes {
        Bytes::of::<AtomicI64>(len)
    }

    /// Number of samples the ring holds.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Always false: a ring has at least one entry.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Stores sample number `cycle`. Writer only.
    #[inline(always)]
    pub fn record(&self, cycle: u64, value: i64) {
        let mask = self.values.len() - 1;
        self.values[(cycle as usize) & mask].store(value, Relaxed);
    }

    /// Sample number `cycle`, if it has not been overwritten yet, given that
    /// `published` samples exist.
    pub fn get(&self, cycle: u64, published: u64) -> Option<i64> {
        let len = self.values.len() as u64;
        (cycle < published && published - cycle <= len)
            .then(|| self.values[(cycle % len) as usize].load(Relaxed))
    }

    /// Writes every entry once so its pages are mapped before the loop.
    pub(crate) fn prefault(&self) {
        for v in self.values.iter() {
            v.store(0, Relaxed);
        }
    }
}

/// Spikes (`--spike`) of all threads in recording order, in a
/// pre-allocated table. A measuring thread claims an entry with one atomic
/// increment (only when a spike happens, never per cycle) and fills it with
/// plain stores; no lock is ever taken. The table is read after the threads
/// have been joined.
#[derive(Debug)]
pub struct SpikeLog {
    entries: Box<[SpikeCell]>,
    count: AtomicU64,
}

#[derive(Debug, Default)]
struct SpikeCell {
    thread: AtomicU64,
    value: AtomicI64,
    timestamp_us: AtomicI64,
}

impl SpikeLog {
    /// A log keeping the first `capacity` spikes; `None` when the memory
    /// cannot be had.
    pub fn new(capacity: usize) -> Option<SpikeLog> {
        Some(SpikeLog {
            entries: zeroed_cells(capacity)?,
            count: AtomicU64::new(0),
        })
    }

    /// The heap that [`SpikeLog::new`] takes for `capacity` spikes, and at
    /// most that of its [`SpikeLog::report`].
    pub(crate) fn heap_bytes(capacity: usize) -> (Bytes, Bytes) {
        (
            Bytes::of::<SpikeCell>(capacity),
            Bytes::of::<SpikeRecord>(capacity),
        )
    }

    /// Records a spike. Called by measuring threads.
    #[inline]
    pub fn record(&self, thread: usize, value: i64, timestamp_us: i64) {
        let slot = self.count.fetch_add(1, Relaxed);
        if let Some(cell) = usize::try_from(slot).ok().and_then(|i| self.entries.get(i)) {
            cell.thread.store(thread as u64, Relaxed);
            cell.value.store(value, Relaxed);
            cell.timestamp_us.store(timestamp_us, Relaxed);
        }
    }

    /// The spikes, once the threads have stopped.
    pub fn report(&self) -> SpikeReport {
        let total = self.count.load(Relaxed);
        let kept = usize::try_from(total)
            .unwrap_or(usize::MAX)
            .min(self.entries.len());
        SpikeReport {
            recorded: self.entries[..kept]
                .iter()
                .map(|c| SpikeRecord {
                    thread: c.thread.load(Relaxed) as usize,
                    value: c.value.load(Relaxed),
                    timestamp_us: c.timestamp_us.load(Relaxed),
                })
                .collect(),
            total,
        }
    }
}

/// The first `-b` break of a run: which thread, which value. Claimed once,
/// on the exit path of the breaking thread.
#[derive(Debug, Default)]
pub struct BreakCell {
    claimed: AtomicU8,
    thread: AtomicU64,
    tid: AtomicI32,
    value: AtomicI64,
}

impl BreakCell {
    /// Records the break if no thread did before; returns whether this
    /// call was the first.
    pub(crate) fn claim(&self, thread: usize, tid: i32, value: i64) -> bool {
        if self
            .claimed
            .compare_exchange(0, 1, Acquire, Relaxed)
            .is_err()
        {
            return false;
        }
        self.thread.store(thread as u64, Relaxed);
        self.tid.store(tid, Relaxed);
        self.value.store(value, Relaxed);
        self.claimed.store(2, Release);
        true
    }

    /// The break, once recorded.
    pub fn get(&self) -> Option<BreakReport> {
        (self.claimed.load(Acquire) == 2).then(|| BreakReport {
            thread: self.thread.load(Relaxed) as usize,
            tid: self.tid.load(Relaxed),
            value: self.value.load(Relaxed),
        })
    }
}

/// Everything one measuring thread publishes.
#[derive(Debug, Default)]
pub struct ThreadChannel {
    /// Running figures.
    pub slot: ThreadSlot,
    /// Histogram, when requested.
    pub histogram: Option<Histogram>,
    /// Recent samples, when requested.
    pub samples: Option<SampleRing>,
    /// The SMI count of each recent sample (`-v` with `--smi`).
    pub smi_samples: Option<SampleRing>,
    /// Signed nanosecond histogram (`latency`), when requested.
    pub signed_histogram: Option<SignedHistogram>,
    /// Sealed per-interval figures, when requested.
    pub intervals: Option<IntervalLog>,
    /// The full distribution, when kept; shared with the run's report,
    /// which reads it in place once the thread has ended.
    pub distribution: Option<Arc<LatencyHistogram>>,
    /// Per-phase figures, when requested.
    pub phases: Option<PhaseLog>,
    /// Samples offered for explanation (`--explain`), when requested.
    pub candidates: Option<CandidateRing>,
}

impl ThreadChannel {
    /// A channel with a histogram of `buckets` (if any) and the full
    /// distribution and phase log `run` asks for, the rest empty: what
    /// every engine's measuring thread keeps alike. `None` when memory
    /// runs out.
    pub fn for_run(buckets: Option<usize>, run: &RunConfig) -> Option<ThreadChannel> {
        Some(ThreadChannel {
            histogram: match buckets {
                Some(n) => Some(Histogram::new(n)?),
                None => None,
            },
            distribution: match run.distribution {
                Some(plan) => Some(Arc::new(LatencyHistogram::new(plan)?)),
                None => None,
            },
            phases: match &run.phases {
                Some(plan) => Some(PhaseLog::new(plan, run.distribution)?),
                None => None,
            },
            ..ThreadChannel::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_counts_buckets_and_logs_overflows() {
        let h = Histogram::new(3).unwrap();
        for (cycle, v) in [0, 2, 2, 3, -1, 7, 9, 1].into_iter().enumerate() {
            h.record(v, cycle as u64);
        }
        let s = h.snapshot();
        assert_eq!(s.buckets, vec![1, 1, 2]);
        assert_eq!(s.overflows, 4);
        assert_eq!(s.overflow_cycles, vec![3, 4, 5]);
        assert_eq!(s.total() + s.overflows, 8);
    }

    #[test]
    fn signed_histogram_keeps_signs_and_counts_what_is_outside() {
        let h = SignedHistogram::new(1000, 3).unwrap();
        for ns in [-3001, -3000, -1, 0, 999, 1000, 2999, 3000, 50_000] {
            h.record(ns);
        }
        let s = h.snapshot();
        assert_eq!(s.first, -3);
        assert_eq!(s.buckets, vec![1, 0, 1, 2, 1, 1]);
        assert_eq!((s.below, s.above), (1, 2));
        let numbered: Vec<(i64, u64)> = s.numbered().filter(|&(_, c)| c > 0).collect();
        assert_eq!(numbered, vec![(-3, 1), (-1, 1), (0, 2), (1, 1), (2, 1)]);
    }

    #[test]
    fn ring_forgets_what_was_overwritten() {
        let r = SampleRing::new(4).unwrap();
        for c in 0..6 {
            r.record(c, c as i64 * 10);
        }
        assert_eq!(r.get(1, 6), None);
        assert_eq!(r.get(2, 6), Some(20));
        assert_eq!(r.get(5, 6), Some(50));
        assert_eq!(r.get(6, 6), None);
    }
}
