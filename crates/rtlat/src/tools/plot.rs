//! `rtlat plot`: latency plots from results. Its work, its options and
//! its help are in the `rtlat-plot` binary built beside this one (the
//! plotting code is kept out of this binary, which `-m` locks in RAM):
//! `rtlat plot ARGS` runs `rtlat-plot ARGS` in place of this process.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use anyhow::Context;
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

    /// Its table is in rtlat-plot; the man page and the completions read
    /// rtlat-plot's help, whose entries rtlat-plot's own test checks
    /// against that table.
    fn options(&self) -> Option<Vec<OptSpec<()>>> {
        None
    }

    /// `rtlat-plot --help`, run from beside this binary.
    fn help(&self) -> anyhow::Result<String> {
        let plotter = plotter()?;
        let out = std::process::Command::new(&plotter)
            .arg("--help")
            .output()
            .with_context(|| {
                format!(
                    "cannot run '{} --help' for rtlat plot's page and completions \
                     (cargo build makes it beside rtlat)",
                    plotter.display()
                )
            })?;
        anyhow::ensure!(
            out.status.success(),
            "'{} --help' failed: {}",
            plotter.display(),
            out.status
        );
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Read back from `rtlat-plot --help`, which rtlat-plot makes from its
    /// definitions: the plotting binary's code is not linked into this
    /// one, which `-m` locks (rtlat-plot's test `the_help_lists_exactly_the_table`
    /// holds the two together).
    fn page(&self, help_text: &str) -> rtlat_args::docs::help::Help {
        rtlat_args::docs::help::parse(help_text)
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
