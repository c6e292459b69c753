//! Per-interval figures (`latency`'s one line per second, cyclictest's
//! `--stats-interval`) handed from a measuring thread to a reader without a
//! lock and without keeping anything per interval.
//!
//! The measuring thread keeps the figures of its current interval in
//! registers ([`IntervalWriter`]). When a sample's deadline reaches the end
//! of the interval, it seals the interval into a small fixed ring
//! ([`IntervalLog`]) with a sequence-lock protocol: the cell's sequence is
//! cleared, the fields are stored, the sequence is set to the interval's
//! ordinal + 1 (Release). A reader ([`IntervalReader`]) copies a cell and
//! checks that the sequence did not move while it copied; a reader that
//! falls more than the ring's length behind counts the intervals it lost.
//! A run of days uses the same few cache lines as a run of seconds.

use std::sync::atomic::{
    AtomicI64, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
    fence,
};

use crate::units::{Bytes, Nanos};

/// One sealed interval, as a reader gets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntervalRecord {
    /// 0-based number of the interval since the origin (gaps are intervals
    /// in which the thread took no sample).
    pub index: u64,
    /// Samples taken in it.
    pub cycles: u64,
    /// Smallest sample (meaningless when `cycles` is 0).
    pub min: Nanos,
    /// Largest sample (meaningless when `cycles` is 0).
    pub max: Nanos,
    /// Sum of the samples in ns.
    pub sum_ns: i64,
    /// Deadlines skipped in it.
    pub overruns: u64,
    /// Whether the loop ended before the interval did (the last one of a
    /// run).
    pub partial: bool,
    /// Where it ends, ns on the run's clock: its end, or for a partial
    /// interval its last sample's deadline.
    pub end_ns: i64,
}

impl IntervalRecord {
    /// The mean sample in ns, if there was any.
    pub fn mean_ns(&self) -> Option<f64> {
        (self.cycles > 0).then(|| self.sum_ns as f64 / self.cycles as f64)
    }
}

#[derive(Debug, Default)]
#[repr(align(64))]
struct IntervalCell {
    sequence: AtomicU64,
    index: AtomicU64,
    cycles: AtomicU64,
    min: AtomicI64,
    max: AtomicI64,
    sum: AtomicI64,
    overruns: AtomicU64,
    partial: AtomicU64,
    end: AtomicI64,
}

/// The ring of the most recently sealed intervals of one thread.
#[derive(Debug)]
pub struct IntervalLog {
    cells: Box<[IntervalCell]>,
    /// How many intervals have been sealed (published after the cell).
    sealed: AtomicU64,
    /// Where interval 0 starts, ns on the run's clock (`i64::MIN` until
    /// the writer starts).
    origin: AtomicI64,
}

impl IntervalLog {
    /// A log keeping the last `len` intervals; `None` if the memory cannot
    /// be had.
    pub fn new(len: usize) -> Option<IntervalLog> {
        let mut cells = Vec::new();
        cells.try_reserve_exact(len.max(1)).ok()?;
        cells.resize_with(len.max(1), IntervalCell::default);
        Some(IntervalLog {
            cells: cells.into_boxed_slice(),
            sealed: AtomicU64::new(0),
            origin: AtomicI64::new(i64::MIN),
        })
    }

    /// The heap that [`IntervalLog::new`] takes for `len` intervals.
    pub(crate) fn heap_bytes(len: usize) -> Bytes {
        Bytes::of::<IntervalCell>(len.max(1))
    }

    /// Where interval 0 starts, ns on the run's clock; known once the
    /// first interval has been read (the writer sets it before sealing).
    pub fn origin_ns(&self) -> Option<i64> {
        Some(self.origin.load(Relaxed)).filter(|&o| o != i64::MIN)
    }

    /// Writes every cell once so its page is mapped before the loop.
    pub(crate) fn prefault(&self) {
        for cell in self.cells.iter() {
            cell.sequence.store(0, Relaxed);
        }
    }

    /// Seals `record` as interval number `ordinal` (0, 1, 2, ... in
    /// sealing order). Writer only.
    #[inline]
    fn seal(&self, ordinal: u64, record: &IntervalRecord) {
        let cell = &self.cells[(ordinal % self.cells.len() as u64) as usize];
        cell.sequence.store(0, Relaxed);
        // The cleared sequence is visible before any field changes.
        fence(Release);
        cell.index.store(record.index, Relaxed);
        cell.cycles.store(record.cycles, Relaxed);
        cell.min.store(record.min.as_nanos(), Relaxed);
        cell.max.store(record.max.as_nanos(), Relaxed);
        cell.sum.store(record.sum_ns, Relaxed);
        cell.overruns.store(record.overruns, Relaxed);
        cell.partial.store(u64::from(record.partial), Relaxed);
        cell.end.store(record.end_ns, Relaxed);
        cell.sequence.store(ordinal + 1, Release);
        self.sealed.store(ordinal + 1, Release);
    }

    /// A copy of interval `ordinal`, or `None` if it was overwritten (or
    /// is being overwritten) by a later one.
    fn read(&self, ordinal: u64) -> Option<IntervalRecord> {
        let cell = &self.cells[(ordinal % self.cells.len() as u64) as usize];
        if cell.sequence.load(Acquire) != ordinal + 1 {
            return None;
        }
        let record = IntervalRecord {
            index: cell.index.load(Relaxed),
            cycles: cell.cycles.load(Relaxed),
            min: Nanos(cell.min.load(Relaxed)),
            max: Nanos(cell.max.load(Relaxed)),
            sum_ns: cell.sum.load(Relaxed),
            overruns: cell.overruns.load(Relaxed),
            partial: cell.partial.load(Relaxed) != 0,
            end_ns: cell.end.load(Relaxed),
        };
        // The fields were read before the sequence is checked again.
        fence(Acquire);
        (cell.sequence.load(Relaxed) == ordinal + 1).then_some(record)
    }
}

/// The measuring thread's side: the figures of the interval in progress.
#[derive(Debug)]
pub struct IntervalWriter<'a> {
    log: &'a IntervalLog,
    length_ns: i64,
    /// Deadline (ns on the run's clock) where interval 0 starts.
    origin_ns: i64,
    /// End of the current interval, ns on the run's clock.
    end_ns: i64,
    /// Deadline of the latest sample.
    last_deadline_ns: i64,
    current: IntervalRecord,
    overruns_at_start: u64,
    sealed: u64,
}

impl<'a> IntervalWriter<'a> {
    /// A writer whose interval 0 starts at `origin_ns` (ns on the run's
    /// clock) and lasts `length_ns`.
    pub fn new(log: &'a IntervalLog, origin_ns: i64, length_ns: i64) -> Self {
        log.origin.store(origin_ns, Relaxed);
        IntervalWriter {
            log,
            length_ns,
            origin_ns,
            end_ns: origin_ns.saturating_add(length_ns),
            last_deadline_ns: origin_ns,
            current: empty(0),
            overruns_at_start: 0,
            sealed: 0,
        }
    }

    /// Adds the sample `ns` of the deadline `deadline_ns`; `overruns` is
    /// the thread's total so far. Seals the current interval first when the
    /// deadline is past its end.
    #[inline(always)]
    pub fn add(&mut self, deadline_ns: i64, ns: i64, overruns: u64) {
        if deadline_ns >= self.end_ns {
            self.roll_over(deadline_ns, overruns);
        }
        self.last_deadline_ns = deadline_ns;
        let c = &mut self.current;
        c.cycles += 1;
        c.min = Nanos(c.min.as_nanos().min(ns));
        c.max = Nanos(c.max.as_nanos().max(ns));
        c.sum_ns = c.sum_ns.wrapping_add(ns);
    }

    /// Seals the interval in progress and moves to the one holding
    /// `deadline_ns` (once per interval, so kept out of line).
    #[inline(never)]
    fn roll_over(&mut self, deadline_ns: i64, overruns: u64) {
        self.seal_current(overruns, false);
        let index = u64::try_from((deadline_ns - self.origin_ns) / self.length_ns).unwrap_or(0);
        self.current = empty(index);
        self.end_ns = self
            .origin_ns
            .saturating_add(self.length_ns.saturating_mul(index as i64 + 1));
    }

    /// Seals the interval in progress (at the end of the loop, at
    /// `ended_ns` on the run's clock), if it holds a sample: whole when the
    /// run got through it (its last deadline was sampled: the next one,
    /// `period_ns` after the latest, is at or past its end; or the run
    /// ended at or after its end, as a run ended by its duration on a late
    /// last wake-up does), else as the last, partial one.
    pub fn finish(&mut self, overruns: u64, period_ns: i64, ended_ns: i64) {
        if self.current.cycles > 0 {
            let whole = self.last_deadline_ns.saturating_add(period_ns) >= self.end_ns
                || ended_ns >= self.end_ns;
            self.seal_current(overruns, !whole);
        }
    }

    fn seal_current(&mut self, overruns: u64, partial: bool) {
        self.current.overruns = overruns - self.overruns_at_start;
        self.current.partial = partial;
        self.current.end_ns = if partial {
            self.last_deadline_ns
        } else {
            self.end_ns
        };
        self.overruns_at_start = overruns;
        self.log.seal(self.sealed, &self.current);
        self.sealed += 1;
    }
}

fn empty(index: u64) -> IntervalRecord {
    IntervalRecord {
        index,
        cycles: 0,
        min: Nanos(i64::MAX),
        max: Nanos(i64::MIN),
        sum_ns: 0,
        overruns: 0,
        partial: false,
        end_ns: 0,
    }
}

/// A reader's position in one thread's [`IntervalLog`].
#[derive(Debug, Default)]
pub struct IntervalReader {
    next: u64,
    lost: u64,
}

impl IntervalReader {
    /// A reader at the first interval.
    pub fn new() -> Self {
        IntervalReader::default()
    }

    /// Hands every interval sealed since the last call to `each`, oldest
    /// first. Intervals already overwritten are counted as lost.
    pub fn drain(&mut self, log: &IntervalLog, mut each: impl FnMut(IntervalRecord)) {
        let len = log.cells.len() as u64;
        loop {
            let sealed = log.sealed.load(Acquire);
            if self.next >= sealed {
                return;
            }
            if sealed - self.next > len {
                let oldest_kept = sealed - len;
                self.lost += oldest_kept - self.next;
                self.next = oldest_kept;
            }
            match log.read(self.next) {
                Some(record) => each(record),
                None => self.lost += 1,
            }
            self.next += 1;
        }
    }

    /// Intervals that were overwritten before this reader got to them.
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(reader: &mut IntervalReader, log: &IntervalLog) -> Vec<IntervalRecord> {
        let mut out = Vec::new();
        reader.drain(log, |r| out.push(r));
        out
    }

    #[test]
    fn intervals_are_sealed_when_a_deadline_reaches_their_end() {
        let log = IntervalLog::new(8).unwrap();
        let mut w = IntervalWriter::new(&log, 1_000, 100);
        let mut reader = IntervalReader::new();
        // Deadlines every 30 ns from 1000: 1000, 1030, 1060, 1090 | 1120...
        for (k, ns) in [5, -3, 9, 4, 7, 8].into_iter().enumerate() {
            w.add(1_000 + 30 * k as i64, ns, k as u64 / 5);
        }
        let sealed = collect(&mut reader, &log);
        assert_eq!(sealed.len(), 1);
        let first = sealed[0];
        assert_eq!((first.index, first.cycles), (0, 4));
        assert_eq!(
            (first.min, first.max, first.sum_ns),
            (Nanos(-3), Nanos(9), 15)
        );
        assert_eq!(
            (first.overruns, first.partial, first.end_ns),
            (0, false, 1_100)
        );
        assert_eq!(log.origin_ns(), Some(1_000));
        w.finish(1, 30, 1_160);
        let last = collect(&mut reader, &log);
        assert_eq!(last.len(), 1);
        assert_eq!((last[0].index, last[0].cycles, last[0].sum_ns), (1, 2, 15));
        assert_eq!((last[0].overruns, last[0].partial), (1, true));
        assert_eq!(last[0].end_ns, 1_150, "the last deadline");
        assert_eq!(reader.lost(), 0);
    }

    #[test]
    fn an_interval_whose_last_deadline_was_sampled_is_whole() {
        // Deadlines every 30 ns from 0 in intervals of 90: the run ends
        // (its duration reached on a late wake-up) after the sample of the
        // deadline 60, the last of interval 0.
        let log = IntervalLog::new(8).unwrap();
        let mut w = IntervalWriter::new(&log, 0, 90);
        for deadline in [0, 30, 60] {
            w.add(deadline, 1, 0);
        }
        w.finish(0, 30, 70);
        let mut reader = IntervalReader::new();
        let got = collect(&mut reader, &log);
        assert_eq!(got.len(), 1);
        assert_eq!(
            (got[0].cycles, got[0].partial, got[0].end_ns),
            (3, false, 90)
        );
        // One deadline short of the end, but the run ended past it (the
        // wake-up for the deadline 30 came at 95): whole.
        let log = IntervalLog::new(8).unwrap();
        let mut w = IntervalWriter::new(&log, 0, 90);
        for deadline in [0, 30] {
            w.add(deadline, 1, 0);
        }
        w.finish(0, 30, 95);
        let got = collect(&mut IntervalReader::new(), &log);
        assert_eq!(
            (got[0].cycles, got[0].partial, got[0].end_ns),
            (2, false, 90)
        );
        // One deadline short of the end, ended before it: partial.
        let log = IntervalLog::new(8).unwrap();
        let mut w = IntervalWriter::new(&log, 0, 90);
        for deadline in [0, 30] {
            w.add(deadline, 1, 0);
        }
        w.finish(0, 30, 45);
        let got = collect(&mut IntervalReader::new(), &log);
        assert_eq!(
            (got[0].cycles, got[0].partial, got[0].end_ns),
            (2, true, 30)
        );
    }

    #[test]
    fn a_late_deadline_skips_the_empty_intervals() {
        let log = IntervalLog::new(8).unwrap();
        let mut w = IntervalWriter::new(&log, 0, 10);
        w.add(0, 1, 0);
        w.add(35, 2, 0);
        w.finish(0, 1, 36);
        let mut reader = IntervalReader::new();
        let got = collect(&mut reader, &log);
        let indices: Vec<u64> = got.iter().map(|r| r.index).collect();
        assert_eq!(indices, vec![0, 3]);
    }

    #[test]
    fn a_slow_reader_counts_what_it_lost() {
        let log = IntervalLog::new(4).unwrap();
        let mut w = IntervalWriter::new(&log, 0, 10);
        for k in 0..11 {
            w.add(k * 10, k, 0);
        }
        // Ten intervals sealed, the ring keeps the last four (6..=9).
        let mut reader = IntervalReader::new();
        let got = collect(&mut reader, &log);
        assert_eq!(
            got.iter().map(|r| r.index).collect::<Vec<_>>(),
            vec![6, 7, 8, 9]
        );
        assert_eq!(reader.lost(), 6);
    }

    #[test]
    fn a_reader_on_another_thread_sees_whole_intervals() {
        // Every interval holds samples all equal to its index: a torn copy
        // would show a min, max or sum that does not match its index.
        let log = std::sync::Arc::new(IntervalLog::new(4).unwrap());
        let writer_log = std::sync::Arc::clone(&log);
        let writer = std::thread::spawn(move || {
            let mut w = IntervalWriter::new(&writer_log, 0, 3);
            for k in 0..300_000i64 {
                w.add(k, k / 3, 0);
            }
            w.finish(0, 1, 300_000);
        });
        let mut reader = IntervalReader::new();
        let mut seen = 0u64;
        let check = |r: IntervalRecord| {
            let v = r.index as i64;
            assert_eq!(
                (r.min, r.max, r.sum_ns, r.cycles),
                (Nanos(v), Nanos(v), 3 * v, 3)
            );
        };
        while !writer.is_finished() {
            reader.drain(&log, |r| {
                check(r);
                seen += 1;
            });
        }
        writer.join().unwrap();
        reader.drain(&log, |r| {
            check(r);
            seen += 1;
        });
        assert_eq!(seen + reader.lost(), 100_000);
    }
}
