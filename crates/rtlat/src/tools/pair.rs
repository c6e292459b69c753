//! The IPC hand-off tools (`rtlat svsematest`, `pmqtest`, `ptsematest`,
//! `sigwaittest`): one pair of threads per pair, option- and
//! output-compatible with the rt-tests tools of the same names. One type
//! for the four, registered once per [`PairTool`].

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;
use rtlat_args::values::SystemView;

use super::{Group, Tool, help, measured};
use crate::cli::ipc::{Invocation, help_text, parse, table};
use crate::ipc::{self, PairTool};

/// One IPC tool.
pub struct Pair(pub PairTool);

impl Tool for Pair {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn summary(&self) -> &'static str {
        crate::cli::ipc::summary(self.0)
    }

    fn group(&self) -> Group {
        Group::Measuring
    }

    fn options(&self) -> Vec<OptSpec<()>> {
        table(self.0)
    }

    fn page(&self) -> rtlat_args::docs::help::Help {
        crate::cli::ipc::help_model(self.0)
    }

    fn run(&self, args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
        let tool = self.0;
        match parse(tool, args, cmdline, &SystemView::of_this_process())? {
            Invocation::Help => help(&help_text(tool)),
            Invocation::ForkChild { side, pair } => ipc::fork::child(tool, side, pair),
            Invocation::Run(run) => measured(run, ipc::threads::run),
        }
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        // rt-tests' page (Debian: section 8).
        vec![(self.0.name(), 8)]
    }
}
