//! `rtlat cyclictest`: the cyclictest-compatible front end. `settings` is
//! the validated configuration, `run` carries it out, `host` supplies the
//! machine facts that appear in the output.

pub mod host;
pub mod idle_states;
pub mod resolution;
pub mod run;
pub mod settings;
pub mod stats_file;

use std::ffi::OsString;

use crate::cli::cyclictest::{Invocation, help_text, parse};
use rtlat_args::values::{SystemView, print_warnings};

/// `rtlat cyclictest ARGS...`: parse, validate, run. Returns the exit status.
pub fn main(args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
    let system = SystemView::of_this_process();
    match parse(args, cmdline, &system)? {
        Invocation::Help => {
            rtlat_args::stdio::print(&help_text())?;
            Ok(0)
        }
        Invocation::Run { settings, warnings } => {
            print_warnings(&warnings);
            run::run(&settings)
        }
    }
}
