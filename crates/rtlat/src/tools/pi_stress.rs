//! `rtlat pi_stress`: priority-inheritance stress with inversion groups,
//! option- and output-compatible with rt-tests' pi_stress 2.4.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;
use rtlat_args::values::SystemView;

use super::{Group, Tool, measure};
use crate::cli::pi_stress::{MANUAL, parse};

/// `rtlat pi_stress`.
pub struct PiStress;

impl Tool for PiStress {
    fn name(&self) -> &'static str {
        "pi_stress"
    }

    fn summary(&self) -> &'static str {
        crate::cli::pi_stress::SUMMARY
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
        let invocation = parse(args, cmdline, &SystemView::of_this_process())?;
        measure(
            invocation,
            || MANUAL.help_text(),
            |s| crate::pi_stress::run::run(s),
        )
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        vec![("pi_stress", 8)]
    }
}
