//! `rtlat cyclictest`: the cyclictest-compatible front end. `settings` is
//! the validated configuration, `run` carries it out, `host` supplies the
//! machine facts that appear in the output.

pub mod host;
pub mod resolution;
pub mod run;
pub mod settings;

use std::ffi::OsString;

use crate::cli::cyclictest::{Invocation, SystemView, help_text, parse};

/// `rtlat cyclictest ARGS...`: parse, validate, run. Returns the exit status.
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
