//! `rtlat plot`: latency plots from results. Its work is in the
//! `rtlat-plot` binary built beside this one (the plotting code is kept
//! out of this binary, which `-m` locks in RAM): `rtlat plot ARGS`, `--help`
//! included, runs `rtlat-plot ARGS` in place of this process. Its options
//! and help are defined in the `rtlat_plot` library (rtlat-plot's command
//! line, without the drawing), which this binary links for rtlat plot's
//! man page and completions.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use rtlat_args::getopt::OptSpec;

use super::{Group, Tool};

/// `rtlat plot`.
pub struct Plot;

/// The binary that holds the plotting code.
const PROGRAM: &str = "rtlat-plot";

/// `rtlat-plot`'s path: beside this binary.
fn plotter() -> anyhow::Result<PathBuf> {
    let own = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot find rtlat's own path: {e}"))?;
    Ok(own.with_file_name(PROGRAM))
}

impl Tool for Plot {
    fn name(&self) -> &'static str {
        "plot"
    }

    fn summary(&self) -> &'static str {
        rtlat_args::tools::PLOT_SUMMARY
    }

    fn group(&self) -> Group {
        Group::Results
    }

    fn options(&self) -> Vec<OptSpec<()>> {
        rtlat_plot::cli::table()
    }

    fn page(&self) -> rtlat_args::docs::help::Help {
        rtlat_plot::cli::help_model()
    }

    fn run(&self, args: &[OsString], _cmdline: String) -> anyhow::Result<u8> {
        let plotter = plotter()?;
        let error = std::process::Command::new(&plotter).args(args).exec();
        anyhow::bail!(
            "cannot run '{}', the plotting half of rtlat plot (cargo build makes it beside rtlat): {error}",
            plotter.display()
        )
    }

    fn program(&self) -> Option<&'static str> {
        Some(PROGRAM)
    }
}
