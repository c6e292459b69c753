//! `rtlat ssdd`: many tracers single-stepping their tracees at once,
//! option- and output-compatible with rt-tests' ssdd 2.4.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;

use super::{Group, Tool, measure};
use crate::cli::ssdd::{MANUAL, parse};

/// `rtlat ssdd`.
pub struct Ssdd;

impl Tool for Ssdd {
    fn name(&self) -> &'static str {
        "ssdd"
    }

    fn summary(&self) -> &'static str {
        crate::cli::ssdd::SUMMARY
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

    fn run(&self, args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
        let invocation = parse(args, cmdline)?;
        measure(invocation, || MANUAL.help_text(), crate::ssdd::run)
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        vec![("ssdd", 8)]
    }
}
