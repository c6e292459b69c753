//! `rtlat-plot`: the drawing half of `rtlat plot`, a binary of its own.
//!
//! `rtlat plot ARGS` runs this program (found beside `rtlat`) with the same
//! arguments. The plotting libraries and the built-in font live here, not
//! in `rtlat`, because `rtlat cyclictest -m` locks the whole `rtlat`
//! binary in RAM (`mlockall`): what a measuring run never runs should not
//! be locked with it. It shares the plot code and the command-line helpers
//! with `rtlat` by path.
#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

#[path = "../cli/for_plot.rs"]
mod cli;

#[path = "../output_file.rs"]
#[allow(
    dead_code,
    reason = "shared with rtlat; the plot writes one whole file and streams none"
)]
mod output_file;

#[path = "../plot/mod.rs"]
mod plot;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match plot::main(&args) {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            let status = if e.downcast_ref::<cli::UsageError>().is_some() {
                2
            } else {
                1
            };
            let _ = std::io::stdout().flush();
            eprintln!("rtlat plot: {e:#}");
            ExitCode::from(status)
        }
    }
}
