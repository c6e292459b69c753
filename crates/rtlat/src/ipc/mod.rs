//! `rtlat svsematest`, `pmqtest`, `ptsematest`, `sigwaittest`: the IPC
//! hand-off latency tools, option- and output-compatible with the rt-tests
//! 2.4 tools of the same names. `cli::ipc` reads the command line into
//! [`settings::IpcSettings`], `threads` carries them out in threads mode,
//! `fork` in fork mode (`-f`), both through what `run` holds for either
//! (live display, final outputs); `output` writes frames, JSON and
//! histogram.

pub mod fork;
pub mod output;
pub mod run;
pub mod settings;
pub mod threads;

use rtlat_core::ipc::Mechanism;

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
