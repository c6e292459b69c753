//! `rtlat hwlatdetect`: hardware and firmware latency through the
//! kernel's hwlat tracer, option- and output-compatible with rt-tests
//! 2.4's hwlatdetect script.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;
use rtlat_args::values::SystemView;

use super::{Group, Tool, measure};
use crate::cli::hwlatdetect::{MANUAL, parse};

/// `rtlat hwlatdetect`.
pub struct Hwlatdetect;

impl Tool for Hwlatdetect {
    fn name(&self) -> &'static str {
        "hwlatdetect"
    }

    fn summary(&self) -> &'static str {
        crate::cli::hwlatdetect::SUMMARY
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
            |s| crate::hwlatdetect::run::run(s),
        )
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        // rt-tests' page (Debian: section 8).
        vec![("hwlatdetect", 8)]
    }
}
