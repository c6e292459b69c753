//! The background load of a run (`--load`, `--load-schedule`) as text:
//! after the other outputs, one `# load` line per kind and one for the
//! machine's activity, then with a schedule a block per phase: its time,
//! the machine's activity, each thread's figures and each kind's work.
//! Every line starts with `#`, so scripts that read the `T:` lines are
//! not disturbed.
//!
//! [`LoadResults`] is the view both this format and the JSON use: which
//! phases the run reached, when each started and how long it lasted.

use std::io::{self, Write};
use std::time::Duration;

use rtlat_core::ThreadReport;
use rtlat_core::load::Activity;
use rtlat_core::load::{LoadSchedule, LoadSummary, PhaseLoad, kind_line};

/// A run's load and what it did.
#[derive(Clone, Copy, Debug)]
pub struct LoadResults<'a> {
    /// The load as given.
    pub schedule: &'a LoadSchedule,
    /// What it did.
    pub summary: &'a LoadSummary,
    /// How long the measurement ran; `None` for a synthetic run, whose
    /// phases last as planned.
    pub run_time: Option<Duration>,
}

/// One phase of a schedule as reported.
#[derive(Clone, Copy, Debug)]
pub struct PhaseView<'a> {
    /// Its position, 0-based.
    pub index: usize,
    /// Its LOAD text.
    pub name: &'a str,
    /// Where it starts after the start of the measurement.
    pub start: Duration,
    /// How long it lasted (its planned length, or less for the phase the
    /// run ended in).
    pub duration: Duration,
    /// Its planned length.
    pub planned: Duration,
    /// What its load did, if its load ran.
    pub load: Option<&'a PhaseLoad>,
}

impl<'a> LoadResults<'a> {
    /// The phases the run reached (a thread took part in it or its load
    /// ran), in order; none without a schedule.
    pub fn phases(&self, threads: &[ThreadReport]) -> Vec<PhaseView<'a>> {
        let Some(plan) = self.schedule.phase_plan() else {
            return Vec::new();
        };
        let mut start = Duration::ZERO;
        let mut out = Vec::new();
        for (index, (phase, end)) in self.schedule.phases.iter().zip(&plan.ends).enumerate() {
            let end = end.to_duration().unwrap_or_default();
            let planned = end.saturating_sub(start);
            let load = self.summary.phases.iter().find(|p| p.index == index);
            let measured = threads
                .iter()
                .any(|t| t.phases.get(index).is_some_and(|p| p.reached));
            if !measured && load.is_none() {
                break;
            }
            let duration = match self.run_time {
                Some(t) => planned.min(t.saturating_sub(start)),
                None => planned,
            };
            out.push(PhaseView {
                index,
                name: &phase.name,
                start,
                duration,
                planned,
                load,
            });
            start = end;
        }
        out
    }
}

/// Writes the load lines of a run.
pub fn write_load(
    w: &mut impl Write,
    results: &LoadResults<'_>,
    threads: &[ThreadReport],
) -> io::Result<()> {
    for line in results.summary.kind_lines() {
        writeln!(w, "# load {line}")?;
    }
    if let Some(a) = &results.summary.activity {
        writeln!(w, "# load machine: {}", activity_text(a))?;
    }
    for phase in results.phases(threads) {
        writeln!(
            w,
            "# phase {} '{}' from {:.3} s for {:.3} s: {}",
            phase.index + 1,
            phase.name,
            phase.start.as_secs_f64(),
            phase.duration.as_secs_f64(),
            phase.load.and_then(|l| l.activity.as_ref()).map_or_else(
                || "no load figures (its load did not run)".to_string(),
                activity_text
            )
        )?;
        for t in threads {
            let Some(p) = t.phases.get(phase.index) else {
                continue;
            };
            let p99 = p.distribution.as_ref().and_then(|d| d.value_at(0.99));
            writeln!(
                w,
                "#   T:{:2} Cycles: {} Min: {} Avg: {} Max: {} p99: {} (us)",
                t.index,
                p.compat.cycles,
                micros(p.precise.min.map(|n| n.as_nanos() as f64)),
                micros(p.precise.mean(p.compat.cycles)),
                micros(p.precise.max.map(|n| n.as_nanos() as f64)),
                micros(p99.map(|n| n.as_nanos() as f64)),
            )?;
        }
        for k in phase.load.iter().flat_map(|l| &l.kinds) {
            writeln!(w, "#   {}", kind_line(k))?;
        }
    }
    Ok(())
}

/// ns as µs with three decimals, `-` for none.
fn micros(ns: Option<f64>) -> String {
    ns.map_or_else(|| "-".to_string(), |ns| format!("{:.3}", ns / 1000.0))
}

/// `12.3 % CPU busy, 10230 context switches/s, 5386 interrupts/s`.
fn activity_text(a: &Activity) -> String {
    format!(
        "{:.1} % CPU busy, {:.0} context switches/s, {:.0} interrupts/s",
        a.cpu_busy_percent, a.context_switches_per_sec, a.interrupts_per_sec
    )
}
