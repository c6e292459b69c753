//! Load during a measurement (`--load`, `--load-schedule`): a schedule of
//! phases, each idle or a [`LoadPlan`], and the driver that runs them in
//! order beside the measuring threads and measures each one.
//!
//! The driver starts the first phase's load before the measurement starts,
//! switches to the next phase when the main thread finds its time has come
//! ([`ScheduleRun::poll`]), and stops the last load after the last sample
//! ([`ScheduleRun::stop`]). Every load is a [`Running`] set, which stops
//! and joins its workers when dropped: whichever way a run ends, no worker
//! is left behind. Each phase records its own operations per second and
//! the machine's activity from `/proc/stat`.

use std::time::{Duration, Instant};

use super::procstat::{Activity, ProcStat};
use super::{KindReport, LoadError, LoadPlan, LoadSet, Running};
use crate::phase::PhasePlan;
use crate::units::Nanos;

/// One phase of a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadPhase {
    /// The phase as written (`idle`, `cpu:1+messaging:2`).
    pub name: String,
    /// What runs; `None` when idle.
    pub plan: Option<LoadPlan>,
    /// How long it lasts; `None` for the whole run (`--load`).
    pub length: Option<Nanos>,
}

/// The load of a run: one phase for the whole run (`--load`), or phases
/// of given lengths (`--load-schedule`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadSchedule {
    /// The option's value as given.
    pub text: String,
    /// The phases, in order. Never empty.
    pub phases: Vec<LoadPhase>,
}

impl LoadSchedule {
    /// The measuring threads' phase plan: `Some` only for a schedule whose
    /// phases all have lengths.
    pub fn phase_plan(&self) -> Option<PhasePlan> {
        let lengths: Option<Vec<Nanos>> = self.phases.iter().map(|p| p.length).collect();
        lengths.map(|l| PhasePlan::from_lengths(&l))
    }

    /// Whether the phases have lengths (`--load-schedule`).
    pub fn is_staged(&self) -> bool {
        self.phases.iter().all(|p| p.length.is_some())
    }
}

/// What one kind did in a phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KindFigures {
    /// The kind and its operations.
    pub report: KindReport,
    /// How long it ran.
    pub elapsed: Duration,
}

impl KindFigures {
    /// Operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.report.ops as f64 / secs
        } else {
            0.0
        }
    }
}

/// What a phase's load did and what the machine did meanwhile.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseLoad {
    /// Its position in the schedule.
    pub index: usize,
    /// When it started, after the run's origin (zero for the first phase,
    /// whose load starts before the measurement).
    pub started: Duration,
    /// How long it ran.
    pub elapsed: Duration,
    /// Each kind that ran (none when idle).
    pub kinds: Vec<KindFigures>,
    /// The machine's activity, when `/proc/stat` could be read.
    pub activity: Option<Activity>,
}

/// What the whole schedule did.
#[derive(Debug)]
pub struct LoadSummary {
    /// The phases that ran, in order.
    pub phases: Vec<PhaseLoad>,
    /// Each kind over every phase it ran in, in first-seen order (workers:
    /// the most it had in a phase).
    pub kinds: Vec<KindFigures>,
    /// How long the load ran, first phase to stop.
    pub elapsed: Duration,
    /// The machine's activity over that time.
    pub activity: Option<Activity>,
    /// Workers that failed.
    pub errors: Vec<LoadError>,
}

/// A schedule being run.
#[derive(Debug)]
pub struct ScheduleRun<'s> {
    schedule: &'s LoadSchedule,
    /// Where each phase ends after the origin (none for a constant load).
    phase_ends: Vec<Duration>,
    current: usize,
    running: Option<Running>,
    /// Where phase ends are counted from (the measurement's start); until
    /// it is set, from the driver's start.
    origin: Instant,
    started: Instant,
    phase_started: Instant,
    first_reading: Option<ProcStat>,
    phase_reading: Option<ProcStat>,
    done: Vec<PhaseLoad>,
    errors: Vec<LoadError>,
}

impl<'s> ScheduleRun<'s> {
    /// Starts the first phase's load; on an error nothing is left running.
    pub fn start(schedule: &'s LoadSchedule) -> Result<ScheduleRun<'s>, LoadError> {
        let reading = ProcStat::read().ok();
        let running = start_phase(&schedule.phases[0])?;
        let now = Instant::now();
        let phase_ends = schedule.phase_plan().map_or_else(Vec::new, |plan| {
            plan.ends
                .iter()
                .map(|e| e.to_duration().unwrap_or_default())
                .collect()
        });
        Ok(ScheduleRun {
            schedule,
            phase_ends,
            current: 0,
            running,
            origin: now,
            started: now,
            phase_started: now,
            first_reading: reading,
            phase_reading: reading,
            done: Vec::new(),
            errors: Vec::new(),
        })
    }

    /// Counts the phases' ends from `origin` (the measurement's start).
    pub fn set_origin(&mut self, origin: Instant) {
        self.origin = origin;
    }

    /// Moves to the next phase(s) whose time has come. A load that cannot
    /// start, or a worker that failed, is an error: the run should end.
    pub fn poll(&mut self) -> Result<(), LoadError> {
        if let Some(e) = self.errors.pop() {
            return Err(e);
        }
        if self.running.as_ref().is_some_and(Running::any_worker_ended) {
            self.close_phase();
            if let Some(e) = self.errors.pop() {
                return Err(e);
            }
        }
        let since_origin = self.origin.elapsed();
        while self.current + 1 < self.schedule.phases.len()
            && self
                .phase_ends
                .get(self.current)
                .is_some_and(|&end| since_origin >= end)
        {
            self.close_phase();
            self.current += 1;
            self.phase_started = Instant::now();
            self.running = start_phase(&self.schedule.phases[self.current])?;
            if let Some(e) = self.errors.pop() {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Stops the current load and records the phase (once). Its closing
    /// `/proc/stat` reading opens the next phase.
    fn close_phase(&mut self) {
        if self.done.iter().any(|p| p.index == self.current) {
            return;
        }
        let report = self.running.take().map(Running::stop);
        let elapsed = self.phase_started.elapsed();
        let reading = ProcStat::read().ok();
        let activity = since(self.phase_reading, reading, elapsed);
        self.phase_reading = reading;
        let kinds = match report {
            Some(report) => {
                self.errors.extend(report.errors);
                report
                    .kinds
                    .iter()
                    .map(|&k| KindFigures {
                        report: k,
                        elapsed: report.elapsed,
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        let started = self.phase_started.saturating_duration_since(self.origin);
        self.done.push(PhaseLoad {
            index: self.current,
            started: if self.current == 0 {
                Duration::ZERO
            } else {
                started
            },
            elapsed,
            kinds,
            activity,
        });
    }

    /// Stops the load (after the last sample) and reports every phase that
    /// ran.
    pub fn stop(mut self) -> LoadSummary {
        self.close_phase();
        let elapsed = self.started.elapsed();
        let activity = since(self.first_reading, self.phase_reading, elapsed);
        let mut kinds: Vec<KindFigures> = Vec::new();
        for k in self.done.iter().flat_map(|p| &p.kinds) {
            match kinds.iter_mut().find(|t| t.report.kind == k.report.kind) {
                Some(total) => {
                    total.report.ops += k.report.ops;
                    total.report.workers = total.report.workers.max(k.report.workers);
                    total.elapsed += k.elapsed;
                }
                None => kinds.push(*k),
            }
        }
        LoadSummary {
            phases: std::mem::take(&mut self.done),
            kinds,
            elapsed,
            activity,
            errors: std::mem::take(&mut self.errors),
        }
    }
}

/// The activity between two readings, when both were taken.
fn since(before: Option<ProcStat>, after: Option<ProcStat>, elapsed: Duration) -> Option<Activity> {
    Some(after?.since(&before?, elapsed))
}

fn start_phase(phase: &LoadPhase) -> Result<Option<Running>, LoadError> {
    phase.plan.as_ref().map(LoadSet::start).transpose()
}

impl LoadSummary {
    /// One line per kind over the whole run: `KIND: N ops/s (W workers)`.
    pub fn kind_lines(&self) -> Vec<String> {
        self.kinds.iter().map(kind_line).collect()
    }
}

/// `KIND: N ops/s (W workers)`.
pub fn kind_line(k: &KindFigures) -> String {
    let workers = k.report.workers;
    format!(
        "{}: {} ops/s ({} worker{})",
        k.report.kind,
        super::format_rate(k.ops_per_sec()),
        workers,
        if workers == 1 { "" } else { "s" }
    )
}
