//! `rtlat queuelat`: rt-tests' packet queue simulation, option- and
//! output-compatible with queuelat 2.4 (and so with determine_maximum_mpps).

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;

use super::{Group, Tool, measure};
use crate::cli::queuelat::{MANUAL, parse};

/// `rtlat queuelat`.
pub struct Queuelat;

impl Tool for Queuelat {
    fn name(&self) -> &'static str {
        "queuelat"
    }

    fn summary(&self) -> &'static str {
        crate::cli::queuelat::SUMMARY
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
        measure(invocation, || MANUAL.help_text(), crate::queuelat::run)
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        vec![("queuelat", 8)]
    }
}
