//! Per-phase figures of a measuring thread (`--load-schedule`): the run is
//! cut into consecutive phases of given lengths, and each sample counts in
//! the phase its deadline falls in, so that the phases' sample counts add
//! up to the run's.
//!
//! The measuring thread keeps the current phase's figures in a [`Tally`],
//! as it does the run's ([`PhaseWriter`]) and counts each sample in the phase's own distribution.
//! When a deadline reaches the end of the phase, the figures are stored
//! into the phase's cell with a few plain stores and the next phase
//! begins; the last phase takes every later sample. The cells are read
//! once the thread has ended ([`PhaseLog::reports`]).

use std::sync::atomic::{
    AtomicBool, AtomicI64, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};

use crate::distribution::{Distribution, DistributionPlan, LatencyHistogram};
use crate::report::sample_stddev;
use crate::stats::Tally;
use crate::units::Nanos;

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

/// The figures of one phase of one thread.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseReport {
    /// Whether the thread took part in the phase (it reached the phase
    /// before it ended).
    pub reached: bool,
    /// Samples counted in it.
    pub cycles: u64,
    /// Smallest sample in the run's unit, `None` without samples.
    pub min_units: Option<i64>,
    /// Largest sample in the run's unit, `None` without samples.
    pub max_units: Option<i64>,
    /// Sum of the samples in the run's unit.
    pub sum_units: i64,
    /// Smallest sample in ns, `None` without samples.
    pub min: Option<Nanos>,
    /// Largest sample in ns, `None` without samples.
    pub max: Option<Nanos>,
    /// Sum of the samples in ns.
    pub sum_ns: i64,
    /// Sum of the squared samples in ns².
    pub sum_sq_ns: u128,
    /// Deadlines skipped in it.
    pub overruns: u64,
    /// Its samples' distribution, when the run keeps distributions.
    pub distribution: Option<Distribution>,
}

impl PhaseReport {
    /// The mean sample in the run's unit, `None` without samples.
    pub fn avg_units(&self) -> Option<f64> {
        (self.cycles > 0).then(|| self.sum_units as f64 / self.cycles as f64)
    }

    /// The mean sample in ns, `None` without samples.
    pub fn mean_ns(&self) -> Option<f64> {
        (self.cycles > 0).then(|| self.sum_ns as f64 / self.cycles as f64)
    }

    /// The sample standard deviation in ns, `None` without samples.
    pub fn stddev_ns(&self) -> Option<f64> {
        sample_stddev(self.cycles, i128::from(self.sum_ns), self.sum_sq_ns)
    }
}

#[derive(Debug)]
struct PhaseCell {
    /// Set (Release) after the figures were stored.
    sealed: AtomicBool,
    cycles: AtomicU64,
    min_units: AtomicI64,
    max_units: AtomicI64,
    sum_units: AtomicI64,
    min_ns: AtomicI64,
    max_ns: AtomicI64,
    sum_ns: AtomicI64,
    /// The sum of squares in ns², in two halves.
    sum_sq_lo: AtomicU64,
    sum_sq_hi: AtomicU64,
    overruns: AtomicU64,
    distribution: Option<LatencyHistogram>,
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
                sealed: AtomicBool::new(false),
                cycles: AtomicU64::new(0),
                min_units: AtomicI64::new(0),
                max_units: AtomicI64::new(0),
                sum_units: AtomicI64::new(0),
                min_ns: AtomicI64::new(0),
                max_ns: AtomicI64::new(0),
                sum_ns: AtomicI64::new(0),
                sum_sq_lo: AtomicU64::new(0),
                sum_sq_hi: AtomicU64::new(0),
                overruns: AtomicU64::new(0),
                distribution: match distribution {
                    Some(d) => Some(LatencyHistogram::new(d)?),
                    None => None,
                },
            });
        }
        Some(PhaseLog {
            ends_ns: plan.ends.iter().map(|e| e.as_nanos()).collect(),
            cells: cells.into_boxed_slice(),
        })
    }

    /// Writes every counter once so that its pages are mapped before the
    /// loop.
    pub fn prefault(&self) {
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
                let cycles = if reached {
                    cell.cycles.load(Relaxed)
                } else {
                    0
                };
                let some = |v: &AtomicI64| (cycles > 0).then(|| v.load(Relaxed));
                let (min, max) = (some(&cell.min_ns).map(Nanos), some(&cell.max_ns).map(Nanos));
                PhaseReport {
                    reached,
                    cycles,
                    min_units: some(&cell.min_units),
                    max_units: some(&cell.max_units),
                    sum_units: some(&cell.sum_units).unwrap_or(0),
                    min,
                    max,
                    sum_ns: some(&cell.sum_ns).unwrap_or(0),
                    sum_sq_ns: if cycles > 0 {
                        u128::from(cell.sum_sq_hi.load(Relaxed)) << 64
                            | u128::from(cell.sum_sq_lo.load(Relaxed))
                    } else {
                        0
                    },
                    overruns: if reached {
                        cell.overruns.load(Relaxed)
                    } else {
                        0
                    },
                    distribution: cell.distribution.as_ref().map(|d| d.snapshot(min, max)),
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
        self.tally.record(units, ns);
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
        let t = &self.tally;
        cell.cycles.store(t.cycles, Relaxed);
        cell.min_units.store(t.min, Relaxed);
        cell.max_units.store(t.max, Relaxed);
        cell.sum_units.store(t.sum, Relaxed);
        cell.min_ns.store(t.min_ns, Relaxed);
        cell.max_ns.store(t.max_ns, Relaxed);
        cell.sum_ns.store(t.sum_ns, Relaxed);
        cell.sum_sq_lo.store(t.sum_sq_ns as u64, Relaxed);
        cell.sum_sq_hi.store((t.sum_sq_ns >> 64) as u64, Relaxed);
        cell.overruns
            .store(overruns.saturating_sub(self.overruns_before), Relaxed);
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
        assert_eq!(r.iter().map(|p| p.cycles).collect::<Vec<_>>(), [3, 0, 2]);
        assert!(r.iter().all(|p| p.reached));
        assert_eq!(
            (r[0].min_units, r[0].max_units, r[0].sum_units),
            (Some(3), Some(7), 15)
        );
        assert_eq!(
            (r[0].min, r[0].max),
            (Some(Nanos(3_000)), Some(Nanos(7_000)))
        );
        assert_eq!(r[0].avg_units(), Some(5.0));
        // 3, 5, 7 µs: mean 5, sample stddev 2 µs.
        assert_eq!(r[0].stddev_ns(), Some(2_000.0));
        assert_eq!(r[0].overruns, 3);
        assert_eq!((r[1].min, r[1].avg_units()), (None, None));
        assert_eq!(r[2].overruns, 1);
        assert_eq!(r[2].mean_ns(), Some(5_000.0));
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
        assert_eq!((r[0].cycles, r[1].cycles), (1, 0));
        assert!(r[0].distribution.is_none());
    }
}
