//! `rtlat hackbench`: groups of tasks passing messages, timed, option- and
//! output-compatible with rt-tests' hackbench 2.4.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;

use super::{Group, Tool, settled};
use crate::cli::hackbench::{MANUAL, parse};

/// `rtlat hackbench`.
pub struct Hackbench;

impl Tool for Hackbench {
    fn name(&self) -> &'static str {
        "hackbench"
    }

    fn summary(&self) -> &'static str {
        crate::cli::hackbench::SUMMARY
    }

    fn group(&self) -> Group {
        Group::Measuring
    }

    fn options(&self) -> Vec<OptSpec<()>> {
        MANUAL.table()
    }

    fn page(&self) -> rtlat_args::docs::help::Help {
        MANUAL.help_model()
    }

    fn run(&self, args: &[OsString], _cmdline: String) -> anyhow::Result<u8> {
        settled(parse(args)?, || MANUAL.help_text(), crate::hackbench::run)
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        // rt-tests' page (Debian: section 8).
        vec![("hackbench", 8)]
    }
}
