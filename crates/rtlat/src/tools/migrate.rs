//! `rtlat rt-migrate-test`: whether real-time tasks run by priority as
//! they migrate across the CPUs, option- and output-compatible with
//! rt-tests' rt-migrate-test 2.4.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;
use rtlat_args::values::SystemView;

use super::{Group, Tool, measure};
use crate::cli::migrate::{MANUAL, parse};

/// `rtlat rt-migrate-test`.
pub struct MigrateTest;

impl Tool for MigrateTest {
    fn name(&self) -> &'static str {
        "rt-migrate-test"
    }

    fn summary(&self) -> &'static str {
        crate::cli::migrate::SUMMARY
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
            |s| crate::migrate::run::run(s),
        )
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        vec![("rt-migrate-test", 8)]
    }
}
