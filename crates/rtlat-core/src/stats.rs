//! Per-thread results shared between a measuring thread and its readers.
//!
//! Each measuring thread owns one [`ThreadChannel`]: a cache-line-aligned
//! [`ThreadSlot`] of running figures, an optional [`Histogram`] and an
//! optional [`SampleRing`] of recent samples. The measuring thread is the
//! only writer; it publishes with plain `Relaxed` stores (no `lock`-prefixed
//! read-modify-write), so readers on other threads never slow it down and
//! never block it. A reader may see fields from two neighbouring cycles, as
//! with cyclictest; every field on its own is always a value that was
//! really written.

use std::sync::Arc;
use std::sync::atomic::{
    AtomicI32, AtomicI64, AtomicU8, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};

use crate::distribution::LatencyHistogram;
use crate::interval::IntervalLog;
use crate::phase::PhaseLog;
use crate::report::{
    CompatStats, Disturbances, HistogramData, PreciseStats, SignedHistogramData, SpikeRecord,
    SpikeReport, ThreadError, ThreadStep,
};
use crate::units::Bytes;

/// Life cycle of a measuring thread, as seen by readers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    /// Created, not yet measuring.
    Starting,
    /// In its measuring loop.
    Running,
    /// Left its loop normally (loops done, duration over, or stopped).
    Ended,
    /// Failed during set-up or in its loop; see [`ThreadSlot::error`].
    Failed,
}

impl ThreadState {
    const fn to_raw(self) -> u8 {
        self as u8
    }

    const fn from_raw(raw: u8) -> ThreadState {
        match raw {
            0 => ThreadState::Starting,
            1 => ThreadState::Running,
            2 => ThreadState::Ended,
            _ => ThreadState::Failed,
        }
    }
}

/// How a measuring thread's loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopEnd {
    /// Its loop count was reached.
    Loops,
    /// Its duration elapsed.
    Duration,
    /// The run's stop flag was raised (or, in a synthetic run, another
    /// thread ended the run).
    Stopped,
    /// A sample (this many units) went over the `-b` threshold.
    Break(i64),
    /// A wait failed with this errno.
    Failed(i32),
    /// Reading the SMI counter failed with this errno.
    SmiFailed(i32),
}

/// The running figures of one measuring thread, written by it alone.
///
/// Aligned to 128 bytes so that two threads' slots never share a cache line
/// (nor an adjacent-line prefetch pair).
#[repr(align(128))]
#[derive(Debug)]
pub struct ThreadSlot {
    state: AtomicU8,
    end: AtomicU8,
    error_step: AtomicU8,
    errno: AtomicI32,
    tid: AtomicI32,
    cycles: AtomicU64,
    act: AtomicI64,
    min: AtomicI64,
    max: AtomicI64,
    sum: AtomicI64,
    min_ns: AtomicI64,
    max_ns: AtomicI64,
    sum_ns: AtomicI64,
    overruns: AtomicU64,
    smi: AtomicU64,
    /// Sum of the squared ns samples, high and low 64 bits; published when
    /// the loop ends (it only serves the final standard deviation).
    sum_sq_hi: AtomicU64,
    sum_sq_lo: AtomicU64,
    /// Whether the sum of squares was published (by a loop that keeps it).
    sum_sq_published: AtomicU8,
    /// What disturbed the thread, published once after its loop
    /// ([`ThreadSlot::publish_disturbances`]).
    disturbances: DisturbanceCells,
}

/// A thread's [`Disturbances`] as atomics; `published` is stored last
/// (Release), so a reader that sees it set sees the counts.
#[derive(Debug, Default)]
struct DisturbanceCells {
    published: AtomicU8,
    involuntary_switches: AtomicU64,
    minor_faults: AtomicU64,
    major_faults: AtomicU64,
    /// `u64::MAX` when migrations were not counted.
    migrations: AtomicU64,
}

impl Default for ThreadSlot {
    fn default() -> Self {
        ThreadSlot {
            state: AtomicU8::new(ThreadState::Starting.to_raw()),
            end: AtomicU8::new(0),
            error_step: AtomicU8::new(0),
            errno: AtomicI32::new(0),
            tid: AtomicI32::new(0),
            cycles: AtomicU64::new(0),
            act: AtomicI64::new(0),
            min: AtomicI64::new(i64::MAX),
            max: AtomicI64::new(i64::MIN),
            sum: AtomicI64::new(0),
            min_ns: AtomicI64::new(i64::MAX),
            max_ns: AtomicI64::new(i64::MIN),
            sum_ns: AtomicI64::new(0),
            overruns: AtomicU64::new(0),
            smi: AtomicU64::new(0),
            sum_sq_hi: AtomicU64::new(0),
            sum_sq_lo: AtomicU64::new(0),
            sum_sq_published: AtomicU8::new(0),
            disturbances: DisturbanceCells::default(),
        }
    }
}

/// The writer's private copy of the running figures; published to a
/// [`ThreadSlot`] with plain stores after every sample.
#[derive(Clone, Copy, Debug)]
pub struct Tally {
    /// Samples taken.
    pub cycles: u64,
    /// Last sample, in C-compatible units.
    pub act: i64,
    /// Smallest sample, in C-compatible units.
    pub min: i64,
    /// Largest sample, in C-compatible units.
    pub max: i64,
    /// Sum of samples, in C-compatible units.
    pub sum: i64,
    /// Smallest sample in ns.
    pub min_ns: i64,
    /// Largest sample in ns.
    pub max_ns: i64,
    /// Sum of samples in ns.
    pub sum_ns: i64,
    /// Deadlines skipped because a wake-up came after the next one.
    pub overruns: u64,
    /// System Management Interrupts counted so far (`--smi`).
    pub smi: u64,
    /// Sum of the squared samples in ns² (128 bits: a 1 ms sample squared
    /// is 10^12, so 64 bits would overflow within hours).
    pub sum_sq_ns: u128,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            cycles: 0,
            act: 0,
            min: i64::MAX,
            max: i64::MIN,
            sum: 0,
            min_ns: i64::MAX,
            max_ns: i64::MIN,
            sum_ns: 0,
            overruns: 0,
            smi: 0,
            sum_sq_ns: 0,
        }
    }
}

impl Tally {
    /// Adds one sample: `units` in C-compatible units, `ns` in nanoseconds.
    #[inline(always)]
    pub fn record(&mut self, units: i64, ns: i64) {
        self.act = units;
        self.min = self.min.min(units);
        self.max = self.max.max(units);
        self.sum = self.sum.wrapping_add(units);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns = self.sum_ns.wrapping_add(ns);
        self.sum_sq_ns = self.sum_sq_ns.wrapping_add(square(ns));
        self.cycles += 1;
    }
}

/// `ns` squared, exactly.
#[inline(always)]
fn square(ns: i64) -> u128 {
    let magnitude = u128::from(ns.unsigned_abs());
    magnitude * magnitude
}

/// The measuring thread's side of its [`ThreadSlot`]: keeps the running
/// figures in [`Tally`] and publishes each field when it changes. A sample
/// costs four plain stores (last value, the two sums, the count); minimum
/// and maximum are stored only when they move, overruns and SMIs only when
/// they happen. The sum of squares (one multiplication and a 128-bit add
/// per sample, in registers) is published once, by [`SlotWriter::finish`].
#[derive(Debug)]
pub struct SlotWriter<'a> {
    slot: &'a ThreadSlot,
    tally: Tally,
}

impl<'a> SlotWriter<'a> {
    /// A writer for `slot`, starting from no samples.
    pub fn new(slot: &'a ThreadSlot) -> Self {
        SlotWriter {
            slot,
            tally: Tally::default(),
        }
    }

    /// Samples recorded so far.
    #[inline(always)]
    pub fn cycles(&self) -> u64 {
        self.tally.cycles
    }

    /// Records and publishes one sample: `units` in C-compatible units,
    /// `ns` in nanoseconds. The count is stored last.
    #[inline(always)]
    pub fn record(&mut self, units: i64, ns: i64) {
        let t = &mut self.tally;
        let s = self.slot;
        publish_if(units < t.min, &mut t.min, units, &s.min);
        publish_if(units > t.max, &mut t.max, units, &s.max);
        publish_if(ns < t.min_ns, &mut t.min_ns, ns, &s.min_ns);
        publish_if(ns > t.max_ns, &mut t.max_ns, ns, &s.max_ns);
        t.act = units;
        t.sum = t.sum.wrapping_add(units);
        t.sum_ns = t.sum_ns.wrapping_add(ns);
        t.sum_sq_ns = t.sum_sq_ns.wrapping_add(square(ns));
        t.cycles += 1;
        s.act.store(units, Relaxed);
        s.sum.store(t.sum, Relaxed);
        s.sum_ns.store(t.sum_ns, Relaxed);
        s.cycles.store(t.cycles, Relaxed);
    }

    /// Deadlines skipped so far.
    #[inline(always)]
    pub fn overruns(&self) -> u64 {
        self.tally.overruns
    }

    /// Publishes what is published only at the end of the loop (the sum of
    /// squares).
    pub fn finish(&self) {
        publish_sum_sq(self.slot, self.tally.sum_sq_ns);
    }

    /// Counts `n` skipped deadlines.
    #[inline(always)]
    pub fn add_overruns(&mut self, n: u64) {
        self.tally.overruns += n;
        self.slot.overruns.store(self.tally.overruns, Relaxed);
    }

    /// Counts `n` System Management Interrupts.
    #[inline(always)]
    pub fn add_smis(&mut self, n: u64) {
        if n != 0 {
            self.tally.smi += n;
            self.slot.smi.store(self.tally.smi, Relaxed);
        }
    }
}

fn publish_sum_sq(slot: &ThreadSlot, sum_sq: u128) {
    slot.sum_sq_hi.store((sum_sq >> 64) as u64, Relaxed);
    slot.sum_sq_lo.store(sum_sq as u64, Relaxed);
    slot.sum_sq_published.store(1, Relaxed);
}

/// Keeps and publishes `value` when `better` (a new minimum or maximum).
#[inline(always)]
fn publish_if(better: bool, kept: &mut i64, value: i64, cell: &AtomicI64) {
    if better {
        *kept = value;
        cell.store(value, Relaxed);
    }
}

impl ThreadSlot {
    /// Publishes a whole set of figures at once (for set-up and tests; the
    /// measuring loop publishes through a [`SlotWriter`]).
    #[inline(always)]
    pub fn publish(&self, t: &Tally) {
        self.act.store(t.act, Relaxed);
        self.min.store(t.min, Relaxed);
        self.max.store(t.max, Relaxed);
        self.sum.store(t.sum, Relaxed);
        self.min_ns.store(t.min_ns, Relaxed);
        self.max_ns.store(t.max_ns, Relaxed);
        self.sum_ns.store(t.sum_ns, Relaxed);
        self.overruns.store(t.overruns, Relaxed);
        self.smi.store(t.smi, Relaxed);
        publish_sum_sq(self, t.sum_sq_ns);
        self.cycles.store(t.cycles, Relaxed);
    }

    /// Records the kernel thread id of the writer.
    pub fn set_tid(&self, tid: i32) {
        self.tid.store(tid, Relaxed);
    }

    /// Moves the thread to `state`.
    /// Release ordering: a reader that sees the new state (Acquire) also
    /// sees every figure published before it.
    pub fn set_state(&self, state: ThreadState) {
        self.state.store(state.to_raw(), Release);
    }

    /// Records how the loop ended and marks the thread ended or failed.
    pub fn set_end(&self, end: LoopEnd) {
        let raw = match end {
            LoopEnd::Loops => 1,
            LoopEnd::Duration => 2,
            LoopEnd::Stopped => 3,
            LoopEnd::Break(_) => 4,
            LoopEnd::Failed(errno) => {
                self.fail(ThreadStep::Wait, errno);
                return;
            }
            LoopEnd::SmiFailed(errno) => {
                self.fail(ThreadStep::SmiCounter, errno);
                return;
            }
        };
        self.end.store(raw, Relaxed);
        self.set_state(ThreadState::Ended);
    }

    /// Marks the thread failed at `step` with `errno`.
    pub fn fail(&self, step: ThreadStep, errno: i32) {
        self.error_step.store(step.code(), Relaxed);
        self.errno.store(errno, Relaxed);
        self.set_state(ThreadState::Failed);
    }

    /// The thread's current state.
    pub fn state(&self) -> ThreadState {
        ThreadState::from_raw(self.state.load(Acquire))
    }

    /// How the loop ended, once the thread has [`ThreadState::Ended`].
    pub fn loop_end(&self) -> Option<LoopEnd> {
        match self.end.load(Relaxed) {
            1 => Some(LoopEnd::Loops),
            2 => Some(LoopEnd::Duration),
            3 => Some(LoopEnd::Stopped),
            4 => Some(LoopEnd::Break(0)),
            _ => None,
        }
    }

    /// The error, once the thread has [`ThreadState::Failed`].
    pub fn error(&self) -> Option<ThreadError> {
        let step = ThreadStep::from_code(u64::from(self.error_step.load(Relaxed)))?;
        Some(ThreadError {
            step,
            errno: self.errno.load(Relaxed),
        })
    }

    /// Kernel thread id (0 before the thread started).
    pub fn tid(&self) -> i32 {
        self.tid.load(Relaxed)
    }

    /// Samples taken so far.
    pub fn cycles(&self) -> u64 {
        self.cycles.load(Relaxed)
    }

    /// The C-compatible figures as they stand.
    pub fn compat(&self) -> CompatStats {
        let cycles = self.cycles.load(Relaxed);
        CompatStats {
            cycles,
            min: self.min.load(Relaxed),
            max: self.max.load(Relaxed),
            act: self.act.load(Relaxed),
            sum: self.sum.load(Relaxed),
        }
    }

    /// System Management Interrupts counted so far (`--smi`).
    pub fn smi_count(&self) -> u64 {
        self.smi.load(Relaxed)
    }

    /// Publishes what disturbed the thread between its first and last
    /// sample (once, after its loop).
    pub fn publish_disturbances(&self, d: Disturbances) {
        let cells = &self.disturbances;
        cells
            .involuntary_switches
            .store(d.involuntary_switches, Relaxed);
        cells.minor_faults.store(d.minor_faults, Relaxed);
        cells.major_faults.store(d.major_faults, Relaxed);
        cells
            .migrations
            .store(d.migrations.unwrap_or(u64::MAX), Relaxed);
        cells.published.store(1, Release);
    }

    /// What disturbed the thread, once it has published it; `None` before,
    /// or when it counted nothing (synthetic runs, a thread that never
    /// measured).
    pub fn disturbances(&self) -> Option<Disturbances> {
        let cells = &self.disturbances;
        (cells.published.load(Acquire) != 0).then(|| Disturbances {
            involuntary_switches: cells.involuntary_switches.load(Relaxed),
            minor_faults: cells.minor_faults.load(Relaxed),
            major_faults: cells.major_faults.load(Relaxed),
            migrations: Some(cells.migrations.load(Relaxed)).filter(|&m| m != u64::MAX),
        })
    }

    /// The full-precision figures as they stand.
    pub fn precise(&self) -> PreciseStats {
        let any = self.cycles.load(Relaxed) > 0;
        PreciseStats {
            min: any.then(|| crate::units::Nanos(self.min_ns.load(Relaxed))),
            max: any.then(|| crate::units::Nanos(self.max_ns.load(Relaxed))),
            sum_ns: i128::from(self.sum_ns.load(Relaxed)),
            sum_sq_ns: (self.sum_sq_published.load(Relaxed) != 0).then(|| {
                (u128::from(self.sum_sq_hi.load(Relaxed)) << 64)
                    | u128::from(self.sum_sq_lo.load(Relaxed))
            }),
            overruns: self.overruns.load(Relaxed),
        }
    }
}

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
    pub fn heap_bytes(buckets: usize) -> (Bytes, Bytes) {
        let cells = Bytes::of::<AtomicU64>(buckets).times(2);
        (cells, cells)
    }

    /// Writes every bucket once, so that its pages are mapped before the
    /// measuring loop runs (first touch from the measuring thread).
    pub fn prefault(&self) {
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
    pub fn heap_bytes(per_side: usize) -> (Bytes, Bytes) {
        let cells = Bytes::of::<AtomicU64>(per_side).times(2);
        (cells, cells)
    }

    /// Writes every bucket once so its pages are mapped before the loop.
    pub fn prefault(&self) {
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
    pub fn heap_bytes(len: usize) -> Bytes {
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
    pub fn prefault(&self) {
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
    pub fn heap_bytes(capacity: usize) -> (Bytes, Bytes) {
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
    pub fn claim(&self, thread: usize, tid: i32, value: i64) -> bool {
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
    pub fn get(&self) -> Option<crate::report::BreakReport> {
        (self.claimed.load(Acquire) == 2).then(|| crate::report::BreakReport {
            thread: self.thread.load(Relaxed) as usize,
            tid: self.tid.load(Relaxed),
            value: self.value.load(Relaxed),
        })
    }
}

/// Collects `items` into a slice whose memory is reserved first, so that
/// an allocation that cannot succeed (thousands of threads' channels) is
/// `out_of_memory()` rather than an abort.
pub fn try_collect_slice<T, E>(
    items: impl ExactSizeIterator<Item = Result<T, E>>,
    out_of_memory: impl FnOnce() -> E,
) -> Result<Box<[T]>, E> {
    let mut collected = Vec::new();
    if collected.try_reserve_exact(items.len()).is_err() {
        return Err(out_of_memory());
    }
    for item in items {
        collected.push(item?);
    }
    Ok(collected.into_boxed_slice())
}

/// `len` zeroed atomic cells, or `None` if the allocation fails.
pub(crate) fn zeroed_cells<T: Default>(len: usize) -> Option<Box<[T]>> {
    let mut cells = Vec::new();
    cells.try_reserve_exact(len).ok()?;
    cells.resize_with(len, T::default);
    Some(cells.into_boxed_slice())
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
    pub candidates: Option<crate::candidates::CandidateRing>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_is_cache_line_aligned() {
        assert_eq!(std::mem::align_of::<ThreadSlot>(), 128);
    }

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
    fn tally_tracks_min_max_sum() {
        let mut t = Tally::default();
        for v in [5, -2, 9] {
            t.record(v, v * 1000);
        }
        assert_eq!((t.min, t.max, t.sum, t.act, t.cycles), (-2, 9, 12, 9, 3));
        let slot = ThreadSlot::default();
        slot.publish(&t);
        assert_eq!(slot.compat().avg_truncated(), 4);
        assert_eq!(slot.precise().max, Some(crate::units::Nanos(9000)));
    }

    #[test]
    fn slot_writer_publishes_what_a_tally_would() {
        let samples = [5, -2, 9, 9, 3, 12, -7];
        let by_writer = ThreadSlot::default();
        let mut writer = SlotWriter::new(&by_writer);
        let mut tally = Tally::default();
        for v in samples {
            writer.record(v, v * 1000 + 7);
            tally.record(v, v * 1000 + 7);
        }
        writer.add_overruns(2);
        writer.add_smis(0);
        writer.add_smis(3);
        writer.finish();
        tally.overruns = 2;
        tally.smi = 3;
        let by_tally = ThreadSlot::default();
        by_tally.publish(&tally);
        assert_eq!(by_writer.compat(), by_tally.compat());
        assert_eq!(by_writer.precise(), by_tally.precise());
        assert_eq!(by_writer.smi_count(), 3);
        assert_eq!(writer.cycles(), samples.len() as u64);
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
    fn sum_of_squares_is_published_by_finish() {
        let slot = ThreadSlot::default();
        let mut writer = SlotWriter::new(&slot);
        for ns in [3_000_000_000i64, -4, 5] {
            writer.record(ns / 1000, ns);
        }
        assert_eq!(slot.precise().sum_sq_ns, None, "not before the end");
        writer.finish();
        assert_eq!(
            slot.precise().sum_sq_ns,
            Some(9_000_000_000_000_000_000 + 16 + 25)
        );
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
