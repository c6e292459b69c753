//! `rtlat monitor`: cyclictest until stopped, with Prometheus metrics and
//! checkpoints; it reads every option of cyclictest as well.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;
use rtlat_args::values::SystemView;

use super::{Group, Inherits, Tool, measure};
use crate::cli::cyclictest::{Flavour, parse_monitor, table};
use crate::cli::monitor::help_text;

/// `rtlat monitor`.
pub struct Monitor;

impl Tool for Monitor {
    fn name(&self) -> &'static str {
        "monitor"
    }

    fn summary(&self) -> &'static str {
        crate::cli::monitor::SUMMARY
    }

    fn group(&self) -> Group {
        Group::LongRuns
    }

    fn options(&self) -> Vec<OptSpec<()>> {
        table(Flavour::Monitor)
    }

    fn page(&self) -> rtlat_args::docs::help::Help {
        crate::cli::monitor::help_page().model()
    }

    fn run(&self, args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
        let invocation = parse_monitor(args, cmdline, &SystemView::of_this_process())?;
        measure(invocation, help_text, crate::cyclictest::run::run)
    }

    fn inherits(&self) -> Option<Inherits> {
        Some(Inherits {
            from: &super::cyclictest::Cyclictest,
            title: "CYCLICTEST OPTIONS",
            intro: "rtlat monitor reads every option of rtlat cyclictest as well, \
                    with the defaults and the exceptions above:",
        })
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        vec![("rtlat-cyclictest", 1)]
    }
}
