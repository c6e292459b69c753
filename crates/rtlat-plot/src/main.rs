//! `rtlat-plot`: the drawing half of `rtlat plot`, a binary of its own.
//!
//! `rtlat plot ARGS` runs this program (found beside `rtlat`) with the same
//! arguments. The plotting libraries and the built-in font live in this
//! package, not in `rtlat`, because `rtlat cyclictest -m` locks the whole
//! `rtlat` binary in RAM (`mlockall`): what a measuring run never runs
//! should not be locked with it. The results are read by `rtlat-results`,
//! the command line by `rtlat-args`, as in `rtlat`.
//!
//! The command line itself (options, help, settings) is this package's
//! library, [`rtlat_plot`], which `rtlat` also reads for rtlat plot's man
//! page and completions; the binary adds the reading of the inputs and the
//! drawing.
#![forbid(unsafe_code)]

mod glyphs;
mod input;
mod render;
mod run;
mod timeline;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use rtlat_args::stdio::{self, tell};

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    stdio::set_program_name("rtlat plot".to_string());
    let status = match run::main(&args) {
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
