//! `rtlat compare`: two runs' latencies side by side.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;

use super::{Group, Tool, settled};
use crate::cli::compare::{MANUAL, parse};

/// `rtlat compare`.
pub struct Compare;

impl Tool for Compare {
    fn name(&self) -> &'static str {
        "compare"
    }

    fn summary(&self) -> &'static str {
        crate::cli::compare::SUMMARY
    }

    fn group(&self) -> Group {
        Group::Results
    }

    fn options(&self) -> Vec<OptSpec<()>> {
        MANUAL.table()
    }

    fn page(&self) -> rtlat_args::docs::help::Help {
        MANUAL.help_model()
    }

    fn run(&self, args: &[OsString], _cmdline: String) -> anyhow::Result<u8> {
        settled(parse(args)?, || MANUAL.help_text(), crate::compare::run)
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        vec![("rtlat-cyclictest", 1)]
    }
}
