//! Per-phase figures of a measuring thread (`--load-schedule`): the run is
//! cut into consecutive phases of given lengths, and each sample counts in
//! the phase its deadline falls in, so that the phases' sample counts add
//! up to the run's.
//!
//! The measuring thread keeps the current phase's figures in a [`Tally`],
//! as it does the run's ([`PhaseWriter`]), and counts each sample in the
//! phase's own distribution. When a deadline reaches the end of the phase,
//! the figures are published into the phase's cell, a [`ThreadSlot`] like
//! the thread's own, and the next phase begins; the last phase takes every
//! later sample. The cells are read once the thread has ended
//! ([`PhaseLog::reports`]), in the thread report's types.

use std::sync::Arc;
use std::sync::atomic::{
    AtomicBool,
    Ordering::{Acquire, Relaxed, Release},
};

use crate::distribution::{Distribution, DistributionPlan, LatencyHistogram};
use crate::figures::{CompatStats, PreciseStats};
use crate::slot::{Tally, ThreadSlot};
use crate::units::{Bytes, Nanos};

/// The phases of a run: where each one ends, counted from the start of
/// the measurement (after any warm-up).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhasePlan {
    /// End of each phase, strictly increasing; the last one is the end of
    /// the schedule.
    pub ends: Vec<Nanos>,
}

impl PhasePlan {
    /// A plan from the phases' lengths (each above zero).
    pub fn from_lengths(lengths: &[Nanos]) -> PhasePlan {
        let mut end = 0i64;
        PhasePlan {
            ends: lengths
                .iter()
                .map(|l| {
                    end = end.saturating_add(l.as_nanos());
                    Nanos(end)
                })
                .collect(),
        }
    }

    /// Where the schedule ends.
    pub fn total(&self) -> Nanos {
        self.ends.last().copied().unwrap_or(Nanos::ZERO)
    }
}

/// The figures of one phase of one thread, in the thread report's own
/// types.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseReport {
    /// Whether the thread took part in the phase (it reached the phase
    /// before it ended).
    pub reached: bool,
    /// Its samples in the run's unit (`cycles` is the phase's count).
    pub compat: CompatStats,
    /// Its samples in ns, with the sum of squares and its overruns.
    pub precise: PreciseStats,
    /// Its samples' distribution, when the run keeps distributions.
    pub distribution: Option<Distribution>,
}

/// A phase's figures, stored as a thread's running figures are.
#[derive(Debug, Default)]
struct PhaseCell {
    /// Set (Release) after the figures were published.
    sealed: AtomicBool,
    slot: ThreadSlot,
    /// Shared with the phase's report, which reads it in place.
    distribution: Option<Arc<LatencyHistogram>>,
}

/// One thread's phase cells: where each phase ends, its sealed figures and
/// its distribution.
#[derive(Debug)]
pub struct PhaseLog {
    ends_ns: Box<[i64]>,
    cells: Box<[PhaseCell]>,
}

impl PhaseLog {
    /// Cells for `plan`, each with a distribution of `distribution` if
    /// given; `None` if the memory cannot be had.
    pub fn new(plan: &PhasePlan, distribution: Option<DistributionPlan>) -> Option<PhaseLog> {
        let mut cells = Vec::new();
        cells.try_reserve_exact(plan.ends.len()).ok()?;
        for _ in &plan.ends {
            cells.push(PhaseCell {
                distribution: match distribution {
                    Some(d) => Some(Arc::new(LatencyHistogram::new(d)?)),
                    None => None,
                },
                ..PhaseCell::default()
            });
        }
        Some(PhaseLog {
            ends_ns: plan.ends.iter().map(|e| e.as_nanos()).collect(),
            cells: cells.into_boxed_slice(),
        })
    }

    /// The heap that [`PhaseLog::new`] takes for `phases` phases, and that
    /// of its [`PhaseLog::reports`] (which read the distributions in place).
    pub(crate) fn heap_bytes(
        phases: usize,
        distribution: Option<DistributionPlan>,
    ) -> (Bytes, Bytes) {
        let counters = distribution.map_or(Bytes(0), |d| LatencyHistogram::heap_bytes(d).0);
        let per_phase = Bytes::of::<i64>(1)
            .plus(Bytes::of::<PhaseCell>(1))
            .plus(counters);
        let per_report = Bytes::of::<PhaseReport>(1);
        (
            per_phase.times(phases as u64),
            per_report.times(phases as u64),
        )
    }

    /// Writes every counter once so that its pages are mapped before the
    /// loop.
    pub(crate) fn prefault(&self) {
        for cell in self.cells.iter() {
            cell.sealed.store(false, Relaxed);
            if let Some(d) = &cell.distribution {
                d.prefault();
            }
        }
    }

    /// Every phase's figures, in order. Read after the writer has ended.
    pub fn reports(&self) -> Vec<PhaseReport> {
        self.cells
            .iter()
            .map(|cell| {
                let reached = cell.sealed.load(Acquire);
                let precise = cell.slot.precise();
                PhaseReport {
                    reached,
                    compat: cell.slot.compat(),
                    distribution: cell
                        .distribution
                        .as_ref()
                        .map(|d| d.read_in_place(precise.min, precise.max)),
                    precise,
                }
            })
            .collect()
    }
}

/// The measuring thread's side of a [`PhaseLog`].
#[derive(Debug)]
pub struct PhaseWriter<'a> {
    log: &'a PhaseLog,
    origin_ns: i64,
    current: usize,
    /// Where the current phase ends on the run's clock; `i64::MAX` for the
    /// last phase, which takes every later sample.
    current_end: i64,
    /// The current phase's figures.
    tally: Tally,
    /// The thread's overruns when the current phase began.
    overruns_before: u64,
}

impl<'a> PhaseWriter<'a> {
    /// A writer whose phase 0 starts at `origin_ns` on the run's clock.
    pub fn new(log: &'a PhaseLog, origin_ns: i64) -> PhaseWriter<'a> {
        let mut writer = PhaseWriter {
            log,
            origin_ns,
            current: 0,
            current_end: i64::MAX,
            tally: Tally::default(),
            overruns_before: 0,
        };
        writer.current_end = writer.end_of(0);
        writer
    }

    fn end_of(&self, phase: usize) -> i64 {
        if phase + 1 >= self.log.cells.len() {
            i64::MAX
        } else {
            self.origin_ns.saturating_add(self.log.ends_ns[phase])
        }
    }

    /// Counts a sample whose deadline is `deadline_ns` on the run's clock:
    /// `units` in the run's unit, `ns` in ns; `overruns` is the thread's
    /// total so far. A compare and a few register updates, and the
    /// phase's distribution.
    #[inline(always)]
    pub fn add(&mut self, deadline_ns: i64, units: i64, ns: i64, overruns: u64) {
        if deadline_ns >= self.current_end {
            self.advance(deadline_ns, overruns);
        }
        self.tally.record(units, ns, deadline_ns);
        if let Some(d) = &self.log.cells[self.current].distribution {
            d.record(ns);
        }
    }

    /// Seals the current phase and moves to the one `deadline_ns` falls in
    /// (phases without a sample are sealed empty on the way).
    #[cold]
    #[inline(never)]
    fn advance(&mut self, deadline_ns: i64, overruns: u64) {
        while deadline_ns >= self.current_end {
            self.seal(overruns);
            self.current += 1;
            self.current_end = self.end_of(self.current);
            self.tally = Tally::default();
            self.overruns_before = overruns;
        }
    }

    fn seal(&self, overruns: u64) {
        let cell = &self.log.cells[self.current];
        cell.slot.publish(&Tally {
            overruns: overruns.saturating_sub(self.overruns_before),
            ..self.tally
        });
        cell.sealed.store(true, Release);
    }

    /// Seals the phase the loop ended in; `overruns` is the thread's total.
    pub fn finish(&mut self, overruns: u64) {
        self.seal(overruns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lengths(ns: &[i64]) -> PhasePlan {
        PhasePlan::from_lengths(&ns.iter().map(|&n| Nanos(n)).collect::<Vec<_>>())
    }

    #[test]
    fn plan_ends_are_cumulative() {
        let p = lengths(&[30, 60, 60]);
        assert_eq!(p.ends, vec![Nanos(30), Nanos(90), Nanos(150)]);
        assert_eq!(p.total(), Nanos(150));
    }

    #[test]
    fn samples_go_to_the_phase_of_their_deadline_and_add_up() {
        let plan = lengths(&[100, 100, 100]);
        let dplan = DistributionPlan::new(1, Nanos(2_000)).unwrap();
        let log = PhaseLog::new(&plan, Some(dplan)).unwrap();
        let mut w = PhaseWriter::new(&log, 1_000);
        // Phase 0: deadlines 1000..1099; phase 1 is skipped; phase 2 takes
        // 1200 and everything after the schedule's end.
        w.add(1_000, 5, 5_000, 0);
        w.add(1_050, 7, 7_000, 0);
        w.add(1_099, 3, 3_000, 2);
        w.add(1_200, 9, 9_000, 3);
        w.add(5_000, 1, 1_000, 3);
        w.finish(4);
        let r = log.reports();
        let cycles = |p: &PhaseReport| p.compat.cycles;
        assert_eq!(r.iter().map(cycles).collect::<Vec<_>>(), [3, 0, 2]);
        assert!(r.iter().all(|p| p.reached));
        assert_eq!(
            (r[0].compat.min, r[0].compat.max, r[0].compat.sum),
            (3, 7, 15)
        );
        assert_eq!(
            (r[0].precise.min, r[0].precise.max),
            (Some(Nanos(3_000)), Some(Nanos(7_000)))
        );
        assert_eq!(r[0].compat.avg(), Some(5.0));
        // 3, 5, 7 µs: mean 5, sample stddev 2 µs.
        assert_eq!(r[0].precise.stddev(3), Some(2_000.0));
        assert_eq!(r[0].precise.overruns, 3);
        assert_eq!((r[1].precise.min, r[1].compat.avg()), (None, None));
        assert_eq!(r[2].precise.overruns, 1);
        assert_eq!(r[2].precise.mean(2), Some(5_000.0));
        let counts: Vec<u64> = r
            .iter()
            .map(|p| p.distribution.as_ref().unwrap().count())
            .collect();
        assert_eq!(counts, [3, 0, 2]);
    }

    #[test]
    fn phases_not_reached_are_reported_as_such() {
        let plan = lengths(&[100, 100]);
        let log = PhaseLog::new(&plan, None).unwrap();
        let mut w = PhaseWriter::new(&log, 0);
        w.add(10, 1, 1, 0);
        w.finish(0);
        let r = log.reports();
        assert!(r[0].reached && !r[1].reached);
        assert_eq!((r[0].compat.cycles, r[1].compat.cycles), (1, 0));
        assert!(r[0].distribution.is_none());
    }
}
