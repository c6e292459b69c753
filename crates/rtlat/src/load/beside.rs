//! The load of a measuring run (`--load`, `--load-schedule`), as the main
//! thread of every measuring tool drives it: started before the measuring
//! threads, moved on to its next phase between frames, stopped after the
//! last sample. A load that fails ends the run with exit status 1; dropped
//! on an early error, it still stops and joins every worker.

use std::time::{Duration, Instant};

use rtlat_core::load::LoadError;
use rtlat_core::load::{LoadSchedule, LoadSummary, ScheduleRun};

use crate::report::load::LoadResults;

/// A run's load, or nothing without `--load` and `--load-schedule`.
#[derive(Debug)]
pub struct LoadBeside<'s> {
    run: Option<ScheduleRun<'s>>,
    error: Option<LoadError>,
    origin: Instant,
}

/// What the load did, once stopped.
#[derive(Debug)]
pub struct LoadOutcome {
    /// What it did; `None` without a load.
    pub summary: Option<LoadSummary>,
    /// Why it failed, if it did: the run's error message.
    pub failure: Option<String>,
    /// From the start of the measurement to the stop.
    pub run_time: Duration,
}

impl<'s> LoadBeside<'s> {
    /// Starts the first phase of `schedule` (nothing without one); on an
    /// error nothing is left running.
    pub fn start(schedule: Option<&'s LoadSchedule>) -> Result<LoadBeside<'s>, LoadError> {
        Ok(LoadBeside {
            run: schedule.map(ScheduleRun::start).transpose()?,
            error: None,
            origin: Instant::now(),
        })
    }

    /// Counts the phases from `origin`, the start of the measurement.
    pub fn set_origin(&mut self, origin: Instant) {
        self.origin = origin;
        if let Some(run) = self.run.as_mut() {
            run.set_origin(origin);
        }
    }

    /// Moves the load on to its next phase when due; keeps its error.
    pub fn drive(&mut self) {
        if self.error.is_none()
            && let Some(run) = self.run.as_mut()
            && let Err(e) = run.poll()
        {
            self.error = Some(e);
        }
    }

    /// Whether the load failed: the run should end.
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Stops the load and joins every worker.
    pub fn stop(self) -> LoadOutcome {
        let run_time = self.origin.elapsed();
        let summary = self.run.map(ScheduleRun::stop);
        let failure = self.error.map(|e| e.to_string()).or_else(|| {
            let first = summary.as_ref()?.errors.first()?;
            Some(first.to_string())
        });
        LoadOutcome {
            summary,
            failure,
            run_time,
        }
    }
}

impl LoadOutcome {
    /// What the outputs show of the load of `schedule` (the run's
    /// `--load` or `--load-schedule`); `run_time` is how long the
    /// measurement ran, `None` for a synthetic run.
    pub fn results<'a>(
        &'a self,
        schedule: Option<&'a LoadSchedule>,
        run_time: Option<Duration>,
    ) -> Option<LoadResults<'a>> {
        Some(LoadResults {
            schedule: schedule?,
            summary: self.summary.as_ref()?,
            run_time,
        })
    }
}
