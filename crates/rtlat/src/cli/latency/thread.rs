//! The measuring thread and how long it measures: `-p`, `-P`, `-c`, and
//! `-T` with the load schedule that may end the run sooner.

use rtlat_args::UsageError;
use rtlat_args::values::{SystemView, duration_option, int, int_in, int_in_or, invalid};
use rtlat_core::Nanos;
use rtlat_core::load::LoadSchedule;

use super::flags::{name, short};
use super::{DEFAULT_PERIOD_US, DEFAULT_PRIORITY, MAX_PERIOD_US, Raw};
use crate::cli::load_options::run_duration;

/// The thread's period, priority and CPU.
pub(super) struct Thread {
    /// `-p`.
    pub period: Nanos,
    /// `-P`.
    pub priority: u8,
    /// `-c`.
    pub cpu: Option<usize>,
}

/// `-p`, `-P` and `-c`, in that order.
pub(super) fn thread(raw: &Raw, system: &SystemView) -> Result<Thread, UsageError> {
    let period_us = int_in_or(
        short('p'),
        raw.period.as_deref(),
        1..=MAX_PERIOD_US,
        "a sampling period in microseconds",
        DEFAULT_PERIOD_US,
    )?;
    let period = Nanos::from_micros(period_us);
    let priority = match &raw.priority {
        Some(text) => int_in(short('P'), text, 1..=99, "a SCHED_FIFO priority")? as u8,
        None => DEFAULT_PRIORITY,
    };
    let cpu = match &raw.cpu {
        Some(text) => {
            let cpu = int::<usize>(text).filter(|c| system.allowed_cpus.contains(c));
            Some(cpu.ok_or_else(|| {
                invalid(
                    short('c'),
                    text,
                    format_args!(
                        "expected a CPU this process may run on: {}",
                        list_cpus(&system.allowed_cpus)
                    ),
                )
            })?)
        }
        None => None,
    };
    Ok(Thread {
        period,
        priority,
        cpu,
    })
}

/// The load and the whole seconds to measure: `-T`, or the load
/// schedule's length when it ends first.
pub(super) fn load_and_duration(
    raw: &Raw,
    system: &SystemView,
) -> Result<(Option<LoadSchedule>, Option<u64>), UsageError> {
    let duration = match &raw.duration {
        Some(text) => duration_option(short('T'), text)?,
        None => None,
    };
    let load = raw.shared.load(name, system)?;
    // A schedule (whole seconds) ends the run when it ends, unless -T
    // comes first.
    let duration_secs =
        run_duration(duration, load.as_ref()).map(|d| (d.as_nanos() / 1_000_000_000) as u64);
    Ok((load, duration_secs))
}

fn list_cpus(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
