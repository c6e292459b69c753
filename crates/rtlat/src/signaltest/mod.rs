//! `rtlat signaltest`: the signal round-trip latency of a ring of threads,
//! option- and output-compatible with rt-tests signaltest 2.4. `settings`
//! is the validated configuration, `run` carries it out, `output` holds
//! signaltest's own formats. The ring itself is `rtlat_core::ring`.

pub mod output;
pub mod run;
pub mod settings;

use std::ffi::OsString;

use crate::cli::signaltest::{Invocation, help_text, parse};
use rtlat_args::values::{SystemView, print_warnings};

/// `rtlat signaltest ARGS...`: parse, validate, run. Returns the exit status.
pub fn main(args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
    let system = SystemView::of_this_process();
    match parse(args, cmdline, &system)? {
        Invocation::Help => {
            rtlat_args::stdio::print(help_text())?;
            Ok(0)
        }
        Invocation::Run { settings, warnings } => {
            print_warnings(&warnings);
            run::run(&settings)
        }
    }
}
