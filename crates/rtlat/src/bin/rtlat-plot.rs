//! `rtlat-plot`: the drawing half of `rtlat plot`, a binary of its own.
//!
//! `rtlat plot ARGS` runs this program (found beside `rtlat`) with the same
//! arguments. The plotting libraries and the built-in font live here, not
//! in `rtlat`, because `rtlat cyclictest -m` locks the whole `rtlat`
//! binary in RAM (`mlockall`): what a measuring run never runs should not
//! be locked with it. It shares the plot code, the command-line helpers and
//! the results-file reader with `rtlat` by path.
#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

#[path = "../cli/for_plot.rs"]
mod cli;

#[path = "../plot/mod.rs"]
mod plot;

#[path = "../results_file.rs"]
mod results_file;

use rtlat_args::stdio::{self, tell};

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    stdio::set_program_name("rtlat plot".to_string());
    let status = match plot::main(&args) {
        Ok(status) => status,
        Err(e) => {
            let _ = std::io::stdout().flush();
            tell!("{e:#}");
            if e.downcast_ref::<rtlat_args::UsageError>().is_some() {
                2
            } else {
                1
            }
        }
    };
    ExitCode::from(stdio::exit_status(status))
}
