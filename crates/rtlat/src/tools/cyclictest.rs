//! `rtlat cyclictest`: timer wake-up latency, option- and
//! output-compatible with rt-tests' cyclictest 2.4.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;
use rtlat_args::values::SystemView;

use super::{Group, Tool, measure};
use crate::cli::cyclictest::{Flavour, help_text, parse, table};

/// `rtlat cyclictest`.
pub struct Cyclictest;

impl Tool for Cyclictest {
    fn name(&self) -> &'static str {
        "cyclictest"
    }

    fn summary(&self) -> &'static str {
        crate::cli::cyclictest::SUMMARY
    }

    fn group(&self) -> Group {
        Group::Measuring
    }

    fn options(&self) -> Vec<OptSpec<()>> {
        table(Flavour::Cyclictest)
    }

    fn page(&self) -> rtlat_args::docs::help::Help {
        crate::cli::cyclictest::help_model()
    }

    fn run(&self, args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
        let invocation = parse(args, cmdline, &SystemView::of_this_process())?;
        measure(invocation, help_text, crate::cyclictest::run::run)
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        // rt-tests' page (Debian: section 8).
        vec![("cyclictest", 8)]
    }
}
