//! `rtlat evaluate`: qualify a machine in one command.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;
use rtlat_args::values::SystemView;

use super::{Group, Tool, settled};
use crate::cli::evaluate::{MANUAL, parse};

/// `rtlat evaluate`.
pub struct Evaluate;

impl Tool for Evaluate {
    fn name(&self) -> &'static str {
        "evaluate"
    }

    fn summary(&self) -> &'static str {
        crate::cli::evaluate::SUMMARY
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
        let invocation = parse(args, &SystemView::of_this_process())?;
        settled(invocation, || MANUAL.help_text(), crate::evaluate::run)
    }
}
