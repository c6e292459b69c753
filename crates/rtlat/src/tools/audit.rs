//! `rtlat audit`: the machine's fitness for real-time work, and the
//! command line to use.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;

use super::{Group, Tool, settled};
use crate::audit;
use crate::cli::audit::{MANUAL, parse};

/// `rtlat audit`.
pub struct Audit;

impl Tool for Audit {
    fn name(&self) -> &'static str {
        "audit"
    }

    fn summary(&self) -> &'static str {
        crate::cli::audit::SUMMARY
    }

    fn group(&self) -> Group {
        Group::Machine
    }

    fn options(&self) -> Vec<OptSpec<()>> {
        MANUAL.table()
    }

    fn page(&self) -> rtlat_args::docs::help::Help {
        MANUAL.help_model()
    }

    fn run(&self, args: &[OsString], _cmdline: String) -> anyhow::Result<u8> {
        settled(
            parse(args, audit::machine_of)?,
            || MANUAL.help_text(),
            audit::run,
        )
    }
}
