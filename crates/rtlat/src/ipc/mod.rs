//! `rtlat svsematest`, `pmqtest`, `ptsematest`, `sigwaittest`: the IPC
//! hand-off latency tools, option- and output-compatible with the rt-tests
//! 2.4 tools of the same names. `cli::ipc` reads the command line into
//! [`settings::IpcSettings`], `run` carries them out in threads mode,
//! `fork` in fork mode (`-f`), `output` writes frames, JSON and histogram.

pub mod fork;
pub mod output;
pub mod run;
pub mod settings;

use std::ffi::OsString;

use rtlat_core::ipc::Mechanism;

use crate::cli::ipc::{Invocation, help_text, parse};
use rtlat_args::values::{SystemView, print_warnings};

/// The four pair tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairTool {
    /// svsematest.
    Svsematest,
    /// pmqtest.
    Pmqtest,
    /// ptsematest.
    Ptsematest,
    /// sigwaittest.
    Sigwaittest,
}

impl PairTool {
    /// The tool's (and the C tool's) name.
    pub const fn name(self) -> &'static str {
        match self {
            PairTool::Svsematest => "svsematest",
            PairTool::Pmqtest => "pmqtest",
            PairTool::Ptsematest => "ptsematest",
            PairTool::Sigwaittest => "sigwaittest",
        }
    }

    /// How its pairs hand off.
    pub const fn mechanism(self) -> Mechanism {
        match self {
            PairTool::Svsematest => Mechanism::SysvSemaphore,
            PairTool::Pmqtest => Mechanism::MessageQueue,
            PairTool::Ptsematest => Mechanism::Futex,
            PairTool::Sigwaittest => Mechanism::Signal,
        }
    }
}

/// Runs one of the pair tools; returns the exit status.
pub fn main(tool: PairTool, args: &[OsString], cmdline: String) -> anyhow::Result<u8> {
    let system = SystemView::of_this_process();
    match parse(tool, args, cmdline, &system)? {
        Invocation::Help => {
            rtlat_args::stdio::print(&help_text(tool))?;
            Ok(0)
        }
        Invocation::ForkChild { side, pair } => fork::child(tool, side, pair),
        Invocation::Run { settings, warnings } => {
            print_warnings(&warnings);
            run::run(&settings)
        }
    }
}
