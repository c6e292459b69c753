//! `rtlat plot INPUT... -o OUT.svg|OUT.png`: latency plots from cyclictest
//! results (rtlat's or rt-tests' JSON, or the `-h` histogram block), and
//! timelines from `--stats-file` lines or monitor checkpoints; an
//! evaluation's `report.json` stands for its phases' files. `input`
//! reads the inputs, `timeline` makes the timeline's figure, `render`
//! draws, `settings` is the validated command line. The picture is made whole in memory and then
//! written with [`rtlat_args::output_file::write_whole`]: a temporary file beside
//! the output renamed over it, so a failure never leaves a partial picture
//! behind.

use std::ffi::OsString;

use crate::{input, render, timeline};
use rtlat_args::UsageError;
use rtlat_args::stdio::tell;
use rtlat_plot::cli::{Invocation, help_text, parse};
use rtlat_plot::settings::{Kind, Settings};
use rtlat_results::file::{InputError, StdinOr};

/// `rtlat plot ARGS...`: parse, read, draw, write. Returns the exit status.
pub fn main(args: &[OsString]) -> anyhow::Result<u8> {
    match parse(args)? {
        Invocation::Help => {
            rtlat_args::stdio::print(&help_text())?;
            Ok(0)
        }
        Invocation::Version => {
            rtlat_args::stdio::print(&rtlat_args::version::line("rtlat-plot"))?;
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
    let bytes = match settings.kind {
        Kind::Timeline => {
            let inputs = read_all(settings, input::read_timeline)?;
            for i in &inputs {
                if let Some(n) = i.cut_last_line {
                    tell!(
                        "{}: line {n} is cut short (the file is being written?): not drawn",
                        i.name
                    );
                }
            }
            let tz = jiff::tz::TimeZone::system();
            let figure = timeline::figure(&inputs, settings.title.as_deref(), settings.size.0, &tz);
            render::picture(&figure, settings)?
        }
        Kind::Latency | Kind::Percentile => {
            render::render(&read_all(settings, input::read)?, settings)?
        }
    };
    rtlat_args::output_file::write_whole(&settings.output, |w| w.write_all(&bytes)).map_err(|e| {
        anyhow::anyhow!(
            "cannot write '{}': {}",
            settings.output.display(),
            rtlat_base::io_strerror(&e)
        )
    })
}

/// Every input read by `read`, in order (an evaluation report is its
/// phases); the first bad one is a usage error naming it.
fn read_all<T>(
    settings: &Settings,
    read: fn(&StdinOr) -> Result<Vec<T>, InputError>,
) -> Result<Vec<T>, UsageError> {
    let mut all = Vec::new();
    for input in &settings.inputs {
        all.extend(read(input).map_err(|e| UsageError(e.to_string()))?);
    }
    Ok(all)
}
