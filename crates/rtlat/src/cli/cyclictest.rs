//! The `rtlat cyclictest` command line: cyclictest 2.4's options, read the
//! way its getopt reads them, turned into validated [`Settings`].
//!
//! Scanning is [`getopt`](rtlat_args::getopt)'s job; the options are
//! defined once each in [`flags`] (spellings, help, what each keeps in
//! [`Raw`], the last of a repeated option winning), `--help` is made from
//! them in [`help`], and only then [`build`] validates and combines the
//! values in the order C does, so warnings come out as C prints them, one
//! concern per module (`timing`, `threads`, `scheduling`, `breaks`,
//! `power`, `outputs`; `monitor_mode` for rtlat monitor), all of them over
//! `raw`, which holds [`Raw`] and the bounds they share and uses none of
//! them, so the imports run one way: this file down to its modules, each
//! module down to its lower siblings. Unlike C, every value is checked
//! and a bad one is a one-line [`UsageError`] naming the option, the value
//! and what is accepted.

use std::ffi::OsString;

use super::monitor;
use super::shared::Measure;
use crate::cyclictest::settings::Settings;
pub use rtlat_args::UsageError;
use rtlat_args::options::{self, Read};
use rtlat_args::values::OptionName;
pub use rtlat_args::values::SystemView;

mod breaks;
mod build;
mod flags;
mod help;
mod monitor_mode;
mod outputs;
mod power;
mod raw;
mod scheduling;
#[cfg(test)]
mod tests;
mod threads;
mod timing;

use build::build;
use flags::FLAGS;
pub use help::{SUMMARY, help_model, help_text, table};
use monitor_mode::{monitor_defaults, monitor_settings};
pub use raw::Flavour;
pub(crate) use raw::MAX_INTERVAL_US;
use raw::Raw;

/// What the command line asks for: [`help_text`], or to measure.
pub type Invocation = rtlat_args::Invocation<Measure<Settings>>;

/// Reads the `rtlat cyclictest` command line.
///
/// `args` excludes the program name (and the subcommand); `cmdline` is
/// stored as given for the JSON output.
pub fn parse(
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    parse_as(Flavour::Cyclictest, args, cmdline, system)
}

/// Reads a command line of `flavour`.
fn parse_as(
    flavour: Flavour,
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse(&FLAGS, args, &mut raw)? == Read::Help {
        return Ok(Invocation::Help);
    }
    match flavour {
        Flavour::Cyclictest => {
            if let Some(which) = raw.monitor.first_given() {
                return Err(UsageError(format!(
                    "{}: an option of rtlat monitor, not of cyclictest (rtlat monitor --help)",
                    monitor::name(which).spelling()
                )));
            }
        }
        Flavour::Monitor => monitor_defaults(&mut raw)?,
    }
    let monitor = match flavour {
        Flavour::Monitor => Some(raw.monitor.validate(monitor::name)?),
        Flavour::Cyclictest => None,
    };
    let (mut settings, warnings) = build(raw, cmdline, system)?;
    if let Some(plan) = monitor {
        monitor_settings(&mut settings, plan)?;
    }
    Ok(Invocation::Run(Measure { settings, warnings }))
}

/// Reads the `rtlat monitor` command line: cyclictest's options with the
/// monitor's defaults, and the monitor's own.
pub fn parse_monitor(
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    parse_as(Flavour::Monitor, args, cmdline, system)
}
