//! `rtlat pip_stress`: priority inheritance between processes,
//! option- and output-compatible with rt-tests' pip_stress 2.4.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;
use rtlat_args::values::SystemView;

use super::{Group, Tool, measure};
use crate::cli::pip_stress::{MANUAL, parse};

/// `rtlat pip_stress`.
pub struct PipStress;

impl Tool for PipStress {
    fn name(&self) -> &'static str {
        "pip_stress"
    }

    fn summary(&self) -> &'static str {
        crate::cli::pip_stress::SUMMARY
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
        let _ = cmdline;
        let invocation = parse(args, &SystemView::of_this_process())?;
        measure(invocation, || MANUAL.help_text(), crate::pip_stress::run)
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        vec![("pip_stress", 8)]
    }
}
