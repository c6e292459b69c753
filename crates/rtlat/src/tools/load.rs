//! `rtlat load`: background load until stopped, measured.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;
use rtlat_args::values::SystemView;

use super::{Group, Tool, settled};
use crate::cli::load::{MANUAL, parse};

/// `rtlat load`.
pub struct Load;

impl Tool for Load {
    fn name(&self) -> &'static str {
        "load"
    }

    fn summary(&self) -> &'static str {
        crate::cli::load::SUMMARY
    }

    fn group(&self) -> Group {
        Group::Load
    }

    fn options(&self) -> Vec<OptSpec<()>> {
        MANUAL.table()
    }

    fn page(&self) -> rtlat_args::docs::help::Help {
        MANUAL.help_model()
    }

    fn run(&self, args: &[OsString], _cmdline: String) -> anyhow::Result<u8> {
        let invocation = parse(args, &SystemView::of_this_process(), std::env::temp_dir())?;
        settled(invocation, || MANUAL.help_text(), crate::load::run)
    }
}
