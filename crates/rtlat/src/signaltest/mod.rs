//! `rtlat signaltest`: the signal round-trip latency of a ring of threads,
//! option- and output-compatible with rt-tests signaltest 2.4. `settings`
//! is the validated configuration, `run` carries it out, `output` holds
//! signaltest's own formats. The ring itself is `rtlat_core::ring`.

pub mod output;
pub mod run;
pub mod settings;

use std::ffi::OsString;

use crate::cli::cyclictest::SystemView;
use crate::cli::signaltest::{Invocation, help_text, parse};

/// `rtlat signaltest ARGS...`: parse, validate, run. Returns the exit status.
pub fn main(args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
    let system = SystemView {
        allowed_cpus: rtlat_sys::affinity::allowed_cpus().unwrap_or_else(|_| vec![0]),
        configured_cpus: rtlat_sys::system::configured_cpus(),
    };
    match parse(args, cmdline, &system)? {
        Invocation::Help => {
            print!("{}", help_text());
            Ok(0)
        }
        Invocation::Run { settings, warnings } => {
            for w in &warnings {
                eprintln!("{w}");
            }
            run::run(&settings)
        }
    }
}
