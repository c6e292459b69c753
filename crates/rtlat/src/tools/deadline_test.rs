//! `rtlat deadline_test`: whether SCHED_DEADLINE jobs that work meet their
//! deadlines, option- and output-compatible with rt-tests' deadline_test 2.4.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;
use rtlat_args::values::SystemView;

use super::{Group, Tool, measure};
use crate::cli::deadline_test::{MANUAL, parse};

/// `rtlat deadline_test`.
pub struct DeadlineTest;

impl Tool for DeadlineTest {
    fn name(&self) -> &'static str {
        "deadline_test"
    }

    fn summary(&self) -> &'static str {
        crate::cli::deadline_test::SUMMARY
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
            |s| crate::deadline_test::run::run(s),
        )
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        // rt-tests' page (Debian: section 8).
        vec![("deadline_test", 8)]
    }
}
