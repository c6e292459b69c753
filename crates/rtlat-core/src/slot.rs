//! A measuring thread's running figures and their one writer.
//!
//! Each measuring thread owns one [`ThreadSlot`]. The thread is its only
//! writer: it keeps its figures in a [`Tally`] and publishes them through a
//! [`SlotWriter`] with plain `Relaxed` stores (no `lock`-prefixed
//! read-modify-write), so readers on other threads never slow it down and
//! never block it. A reader may see fields from two neighbouring cycles, as
//! with cyclictest; every field on its own is always a value that was
//! really written. A phase's figures are kept in a slot of their own.

use std::sync::atomic::{
    AtomicI32, AtomicI64, AtomicU8, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};

use crate::figures::{CompatStats, Disturbances, PreciseStats, ThreadError, ThreadStep};
use crate::units::{ClockInstant, Nanos};

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
    /// When the sample of `max_ns` was taken, ns on the run's clock.
    max_at_ns: AtomicI64,
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
            max_at_ns: AtomicI64::new(0),
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
    /// When the sample of `max_ns` was taken, ns on the run's clock: the
    /// first of equal largest samples (a later equal one does not move
    /// it). What "when" means is the recording loop's: the sample's
    /// deadline in cyclic runs, its reception in the signal ring and the
    /// IPC pairs.
    pub max_at_ns: i64,
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
            max_at_ns: 0,
            sum_ns: 0,
            overruns: 0,
            smi: 0,
            sum_sq_ns: 0,
        }
    }
}

impl Tally {
    /// Adds one sample: `units` in C-compatible units, `ns` in nanoseconds,
    /// taken at `at_ns` on the run's clock.
    #[inline(always)]
    pub fn record(&mut self, units: i64, ns: i64, at_ns: i64) {
        self.act = units;
        self.min = self.min.min(units);
        self.max = self.max.max(units);
        self.sum = self.sum.wrapping_add(units);
        self.min_ns = self.min_ns.min(ns);
        if ns > self.max_ns {
            self.max_ns = ns;
            self.max_at_ns = at_ns;
        }
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
/// and maximum are stored only when they move (the ns maximum with the
/// time of its sample: one more store), overruns and SMIs only when they
/// happen. The sum of squares (one multiplication and a 128-bit add
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
    /// `ns` in nanoseconds, taken at `at_ns()` on the run's clock. `at_ns`
    /// is called only when `ns` is a new maximum (the first of equal maxima
    /// keeps its time), so that other samples cost nothing for it. The
    /// count is stored last.
    #[inline(always)]
    pub fn record(&mut self, units: i64, ns: i64, at_ns: impl FnOnce() -> i64) {
        let t = &mut self.tally;
        let s = self.slot;
        publish_if(units < t.min, &mut t.min, units, &s.min);
        publish_if(units > t.max, &mut t.max, units, &s.max);
        publish_if(ns < t.min_ns, &mut t.min_ns, ns, &s.min_ns);
        if ns > t.max_ns {
            let at_ns = at_ns();
            t.max_ns = ns;
            t.max_at_ns = at_ns;
            s.max_ns.store(ns, Relaxed);
            s.max_at_ns.store(at_ns, Relaxed);
        }
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
    pub(crate) fn add_overruns(&mut self, n: u64) {
        self.tally.overruns += n;
        self.slot.overruns.store(self.tally.overruns, Relaxed);
    }

    /// Counts `n` System Management Interrupts.
    #[inline(always)]
    pub(crate) fn add_smis(&mut self, n: u64) {
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
        self.max_at_ns.store(t.max_at_ns, Relaxed);
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
    pub(crate) fn set_state(&self, state: ThreadState) {
        self.state.store(state.to_raw(), Release);
    }

    /// Records how the loop ended and marks the thread ended or failed.
    pub(crate) fn set_end(&self, end: LoopEnd) {
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
    pub(crate) fn loop_end(&self) -> Option<LoopEnd> {
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

    /// When the largest sample (in ns, [`PreciseStats::max`]) was taken,
    /// on the run's clock; `None` before the first sample.
    pub fn max_at(&self) -> Option<ClockInstant> {
        (self.cycles.load(Relaxed) > 0).then(|| ClockInstant(self.max_at_ns.load(Relaxed)))
    }

    /// System Management Interrupts counted so far (`--smi`).
    pub fn smi_count(&self) -> u64 {
        self.smi.load(Relaxed)
    }

    /// Publishes what disturbed the thread between its first and last
    /// sample (once, after its loop).
    pub(crate) fn publish_disturbances(&self, d: Disturbances) {
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
            min: any.then(|| Nanos(self.min_ns.load(Relaxed))),
            max: any.then(|| Nanos(self.max_ns.load(Relaxed))),
            sum_ns: i128::from(self.sum_ns.load(Relaxed)),
            sum_sq_ns: (self.sum_sq_published.load(Relaxed) != 0).then(|| {
                (u128::from(self.sum_sq_hi.load(Relaxed)) << 64)
                    | u128::from(self.sum_sq_lo.load(Relaxed))
            }),
            overruns: self.overruns.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn slot_is_cache_line_aligned() {
        assert_eq!(std::mem::align_of::<ThreadSlot>(), 128);
    }

    #[test]
    fn tally_tracks_min_max_sum() {
        let mut t = Tally::default();
        for v in [5, -2, 9] {
            t.record(v, v * 1000, 0);
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
        for (at, v) in samples.into_iter().enumerate() {
            writer.record(v, v * 1000 + 7, || at as i64 * 10);
            tally.record(v, v * 1000 + 7, at as i64 * 10);
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
        assert_eq!(by_writer.max_at(), by_tally.max_at());
        assert_eq!(by_writer.smi_count(), 3);
        assert_eq!(writer.cycles(), samples.len() as u64);
    }

    #[test]
    fn sum_of_squares_is_published_by_finish() {
        let slot = ThreadSlot::default();
        let mut writer = SlotWriter::new(&slot);
        for ns in [3_000_000_000i64, -4, 5] {
            writer.record(ns / 1000, ns, || 0);
        }
        assert_eq!(slot.precise().sum_sq_ns, None, "not before the end");
        writer.finish();
        assert_eq!(
            slot.precise().sum_sq_ns,
            Some(9_000_000_000_000_000_000 + 16 + 25)
        );
    }

    #[test]
    fn the_time_of_the_maximum_is_that_of_its_first_sample() {
        // (units, ns, at): the ns maximum 9_400 comes twice, at 30 and 50;
        // the first keeps its time. The units maximum (10, at 40) is
        // another sample: the time follows the ns maximum.
        let samples = [
            (5, 5_000, 10),
            (9, 9_400, 30),
            (10, 9_300, 40),
            (9, 9_400, 50),
            (-1, -1_000, 60),
        ];
        let slot = ThreadSlot::default();
        assert_eq!(slot.max_at(), None, "no sample, no time");
        let mut writer = SlotWriter::new(&slot);
        let mut tally = Tally::default();
        for (units, ns, at) in samples {
            writer.record(units, ns, || at);
            tally.record(units, ns, at);
        }
        assert_eq!(slot.max_at(), Some(ClockInstant(30)));
        assert_eq!(slot.precise().max, Some(Nanos(9_400)));
        assert_eq!(slot.compat().max, 10);
        assert_eq!((tally.max_ns, tally.max_at_ns), (9_400, 30));
    }

    #[test]
    fn a_first_sample_below_zero_has_its_time_kept() {
        let slot = ThreadSlot::default();
        let mut writer = SlotWriter::new(&slot);
        writer.record(-3, -3_000, || -77);
        assert_eq!(slot.max_at(), Some(ClockInstant(-77)));
    }
}
