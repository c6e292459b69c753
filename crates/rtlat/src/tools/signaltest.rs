//! `rtlat signaltest`: how long a signal takes to go round a ring of
//! threads, option- and output-compatible with rt-tests' signaltest 2.4.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;
use rtlat_args::values::SystemView;

use super::{Group, Tool, measure};
use crate::cli::signaltest::{MANUAL, parse};

/// `rtlat signaltest`.
pub struct Signaltest;

impl Tool for Signaltest {
    fn name(&self) -> &'static str {
        "signaltest"
    }

    fn summary(&self) -> &'static str {
        crate::cli::signaltest::SUMMARY
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
            |s| crate::signaltest::run::run(s),
        )
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        // rt-tests' page (Debian: section 8).
        vec![("signaltest", 8)]
    }
}
