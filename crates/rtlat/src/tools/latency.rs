//! `rtlat latency`: Xenomai's `latency` test on Linux, with its options
//! and its RTT/RTD/RTS/HSH/HSS output.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;
use rtlat_args::values::SystemView;

use super::{Group, Tool, measure};
use crate::cli::latency::{help_text, parse, table};

/// `rtlat latency`.
pub struct Latency;

impl Tool for Latency {
    fn name(&self) -> &'static str {
        "latency"
    }

    fn summary(&self) -> &'static str {
        crate::cli::latency::SUMMARY
    }

    fn group(&self) -> Group {
        Group::Measuring
    }

    fn options(&self) -> Vec<OptSpec<()>> {
        table()
    }

    fn page(&self) -> rtlat_args::docs::help::Help {
        crate::cli::latency::help_model()
    }

    fn run(&self, args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
        let invocation = parse(args, cmdline, &SystemView::of_this_process())?;
        measure(invocation, help_text, |s| crate::latency::run::run(s))
    }
}
