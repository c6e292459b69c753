//! `rtlat oslat`: the gaps in a busy loop on each chosen CPU (OS noise),
//! option- and output-compatible with rt-tests' oslat 2.4.

use std::ffi::OsString;

use rtlat_args::getopt::OptSpec;
use rtlat_args::values::SystemView;

use super::{Group, Tool, measure};
use crate::cli::oslat::{MANUAL, parse};

/// `rtlat oslat`.
pub struct Oslat;

impl Tool for Oslat {
    fn name(&self) -> &'static str {
        "oslat"
    }

    fn summary(&self) -> &'static str {
        crate::cli::oslat::SUMMARY
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
            |s| crate::oslat::run::run(s),
        )
    }

    fn see_also(&self) -> Vec<(&'static str, u8)> {
        // rt-tests' page (Debian: section 8).
        vec![("oslat", 8)]
    }
}
