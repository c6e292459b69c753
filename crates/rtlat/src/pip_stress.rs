//! `rtlat pip_stress`: three processes around a shared priority-
//! inheritance mutex (`rtlat_core::pip`), and pip_stress 2.4's one line
//! of output.

use std::io::Write;
use std::time::Duration;

use rtlat_core::SchedPolicy;
use rtlat_core::pip::{self, PipError, PipOutcome};

use crate::output::{Stdout, end_run};
use crate::rtsetup::check_realtime_privilege;

/// The validated settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The CPU of the three processes (the first this process may use;
    /// C uses CPU 0 whether or not it may).
    pub cpu: usize,
    /// How long the low process holds the mutex (C: 500 µs).
    pub hold_us: u64,
}

/// Runs pip_stress; returns the exit status: 0 when the inversion
/// happened and was resolved, 1 otherwise (C's parent exits 0 either
/// way: its high child prints the line and its status is lost).
pub fn run(settings: &Settings) -> anyhow::Result<u8> {
    check_realtime_privilege(SchedPolicy::Fifo, 3, Some(&[settings.cpu]), "")
        .map_err(crate::pi_stress::run::no_realtime_mode)?;
    let mut out = Stdout::new(true);
    let outcome = pip::run(settings.cpu, Duration::from_micros(settings.hold_us));
    let (line, status) = match outcome {
        Ok(PipOutcome::Resolved) => (
            "Successfully used priority inheritance to handle an inversion",
            0,
        ),
        Ok(PipOutcome::NoInversion) => ("No inversion incurred", 1),
        Err(e @ (PipError::System(..) | PipError::Child(_))) => {
            return end_run(&mut out, Ok(()), Some(format!("pip_stress: {e}")), 1);
        }
    };
    out.emit(|w| writeln!(w, "{line}"));
    end_run(&mut out, Ok(()), None, status)
}
