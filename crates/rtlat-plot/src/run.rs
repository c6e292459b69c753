//! `rtlat plot INPUT... -o OUT.svg|OUT.png`: latency plots from cyclictest
//! results (rtlat's or rt-tests' JSON, or the `-h` histogram block).
//! `input` reads the results, `render` draws them, `settings` is the
//! validated command line. The picture is made whole in memory and then
//! written with [`rtlat_args::output_file::write_whole`]: a temporary file beside
//! the output renamed over it, so a failure never leaves a partial picture
//! behind.

use std::ffi::OsString;

use crate::cli::{Invocation, help_text, parse};
use crate::settings::Settings;
use crate::{input, render};
use rtlat_args::UsageError;

/// `rtlat plot ARGS...`: parse, read, draw, write. Returns the exit status.
pub fn main(args: &[OsString]) -> anyhow::Result<u8> {
    match parse(args)? {
        Invocation::Help => {
            rtlat_args::stdio::print(&help_text())?;
            Ok(0)
        }
        Invocation::Run(settings) => {
            run(&settings)?;
            Ok(0)
        }
    }
}

/// Reads every input (a bad one is a usage error naming it), draws, writes
/// the picture whole or not at all.
pub fn run(settings: &Settings) -> anyhow::Result<()> {
    let inputs = settings
        .inputs
        .iter()
        .map(|i| input::read(i).map_err(|e| UsageError(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let bytes = render::render(&inputs, settings)?;
    rtlat_args::output_file::write_whole(&settings.output, |w| w.write_all(&bytes)).map_err(|e| {
        anyhow::anyhow!(
            "cannot write '{}': {}",
            settings.output.display(),
            rtlat_sys::io_strerror(&e)
        )
    })
}
