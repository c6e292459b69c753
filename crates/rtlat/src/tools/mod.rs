//! The tools of the `rtlat` binary: one [`Tool`] per tool, one file each,
//! and [`REGISTRY`], the one list of them that everything else reads:
//! dispatch (`rtlat TOOL`, a symlink named after a C tool), `rtlat --help`,
//! the man pages and the completions (`rtlat --generate`).
//!
//! A tool's file is where its command line meets its run: it parses the
//! arguments with the tool's `cli` module into validated settings and
//! hands them to the tool's folder, so the dependencies point one way
//! (`cli` knows the tools' settings, the tool folders never know `cli`).
//!
//! Adding a tool: a file here with a type that implements [`Tool`], and
//! one line in [`REGISTRY`].

mod audit;
mod compare;
mod cyclicdeadline;
mod cyclictest;
mod deadline_test;
mod evaluate;
mod hackbench;
mod hwlatdetect;
mod latency;
mod load;
mod migrate;
mod monitor;
mod oslat;
mod pair;
mod pi_stress;
mod pip_stress;
mod plot;
mod queuelat;
mod signaltest;
mod ssdd;

use std::ffi::OsString;
use std::fmt;

use rtlat_args::docs::help::Help;
use rtlat_args::getopt::OptSpec;
use rtlat_args::values::print_warnings;
use rtlat_args::{Invocation, stdio};

use crate::cli::shared::Measure;
use crate::ipc::PairTool;

/// Every tool, in the order `rtlat --help` lists them within their
/// [`Group`] (the measuring tools first). Its only list.
pub static REGISTRY: &[&dyn Tool] = &[
    &cyclictest::Cyclictest,
    &pair::Pair(PairTool::Svsematest),
    &pair::Pair(PairTool::Pmqtest),
    &pair::Pair(PairTool::Ptsematest),
    &pair::Pair(PairTool::Sigwaittest),
    &signaltest::Signaltest,
    &hackbench::Hackbench,
    &migrate::MigrateTest,
    &ssdd::Ssdd,
    &hwlatdetect::Hwlatdetect,
    &pi_stress::PiStress,
    &pip_stress::PipStress,
    &cyclicdeadline::Cyclicdeadline,
    &deadline_test::DeadlineTest,
    &oslat::Oslat,
    &queuelat::Queuelat,
    &latency::Latency,
    &monitor::Monitor,
    &plot::Plot,
    &compare::Compare,
    &load::Load,
    &audit::Audit,
    &evaluate::Evaluate,
];

/// One of rtlat's tools: what `rtlat --help`, its man page and its
/// completions say about it, and how it runs.
pub trait Tool: Sync {
    /// The subcommand name (and, for a measuring tool, the C tool's).
    fn name(&self) -> &'static str;

    /// What the tool is for, in one line: `rtlat --help` lists it and the
    /// tool's own help starts with it (at most 65 characters, to fit the
    /// top help's column).
    fn summary(&self) -> &'static str;

    /// Where `rtlat --help` lists it.
    fn group(&self) -> Group;

    /// Its option table, for the man page and the completions.
    fn options(&self) -> Vec<OptSpec<()>>;

    /// Its help in parts, for the man page and the completions: built
    /// from the option definitions its `--help` is printed from.
    fn page(&self) -> Help;

    /// Parses `args` (the words after the tool's name) and runs the tool;
    /// returns the exit status. `cmdline` is the whole command line as
    /// given, for JSON's `cmdline:`.
    fn run(&self, args: &[OsString], cmdline: String) -> anyhow::Result<u8>;

    /// The binary that does the tool's work in place of rtlat, if any
    /// (`rtlat plot` runs `rtlat-plot`): its completions and synopsis
    /// name it too.
    fn program(&self) -> Option<&'static str> {
        None
    }

    /// Another tool whose options this one reads as well, which its man
    /// page repeats after its own.
    fn inherits(&self) -> Option<Inherits> {
        None
    }

    /// The man pages its page refers to besides `rtlat(1)`: (name,
    /// section).
    fn see_also(&self) -> Vec<(&'static str, u8)> {
        Vec::new()
    }

    /// Whether a symlink of its name to rtlat runs it, as the C tool of
    /// that name would run (the measuring tools).
    fn has_c_name(&self) -> bool {
        self.group() == Group::Measuring
    }
}

impl fmt::Debug for dyn Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tool({})", self.name())
    }
}

/// The options a tool reads from another one ([`Tool::inherits`]).
pub struct Inherits {
    /// The tool they are from.
    pub from: &'static dyn Tool,
    /// The title of their section in the man page.
    pub title: &'static str,
    /// The sentence that opens that section.
    pub intro: &'static str,
}

/// The groups of `rtlat --help`, in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// The tools measuring latency, each with the options and output of
    /// the C tool of its name.
    Measuring,
    /// Continuous measurement.
    LongRuns,
    /// The tools that read results.
    Results,
    /// Background load.
    Load,
    /// The machine itself.
    Machine,
}

impl Group {
    /// Every group, in the order `rtlat --help` shows them.
    pub const ALL: [Group; 5] = [
        Group::Measuring,
        Group::LongRuns,
        Group::Results,
        Group::Load,
        Group::Machine,
    ];

    /// Its heading in `rtlat --help`.
    pub const fn heading(self) -> &'static str {
        match self {
            Group::Measuring => {
                "Measuring tools (each with the options and output of the tool of its name,\n\
                 from rt-tests or, for latency, Xenomai):"
            }
            Group::LongRuns => "Long runs and fleets:",
            Group::Results => "Result tools:",
            Group::Load => "Load:",
            Group::Machine => "The machine:",
        }
    }
}

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static dyn Tool> {
    REGISTRY.iter().copied().find(|t| t.name() == name)
}

/// A tool that does not measure: its help, or `run` with its settings.
fn settled<S>(
    invocation: Invocation<S>,
    help_text: fn() -> String,
    run: fn(&S) -> anyhow::Result<u8>,
) -> anyhow::Result<u8> {
    match invocation {
        Invocation::Help => help(&help_text()),
        Invocation::Run(settings) => run(&settings),
    }
}

/// A measuring tool: its help, or its warnings and then `run`.
fn measure<S>(
    invocation: Invocation<Measure<S>>,
    help_text: fn() -> String,
    run: impl FnOnce(&S) -> anyhow::Result<u8>,
) -> anyhow::Result<u8> {
    match invocation {
        Invocation::Help => help(&help_text()),
        Invocation::Run(measure) => measured(measure, run),
    }
}

/// Prints the warnings, then runs.
fn measured<S>(
    measure: Measure<S>,
    run: impl FnOnce(&S) -> anyhow::Result<u8>,
) -> anyhow::Result<u8> {
    print_warnings(&measure.warnings);
    run(&measure.settings)
}

/// `--help`: the text on stdout, exit 0.
fn help(text: &str) -> anyhow::Result<u8> {
    stdio::print(text)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_summaries_fit_the_top_help() {
        for (i, tool) in REGISTRY.iter().enumerate() {
            assert!(
                REGISTRY[..i].iter().all(|t| t.name() != tool.name()),
                "{} twice",
                tool.name()
            );
            let summary = tool.summary();
            assert!(!summary.is_empty(), "{}", tool.name());
            assert!(summary.chars().count() <= 65, "{}: {summary}", tool.name());
            assert!(std::ptr::eq(
                find(tool.name()).unwrap() as *const dyn Tool as *const (),
                *tool as *const dyn Tool as *const ()
            ));
        }
        assert!(find("bogus").is_none());
    }

    #[test]
    fn each_group_is_listed_together() {
        let order: Vec<usize> = REGISTRY
            .iter()
            .map(|t| Group::ALL.iter().position(|&g| g == t.group()).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] <= w[1]), "{order:?}");
    }

    #[test]
    fn every_help_starts_with_its_title() {
        for tool in REGISTRY {
            let title = rtlat_args::tools::help_title(tool.name(), tool.summary());
            assert_eq!(tool.page().title, title);
        }
    }

    #[test]
    fn the_plot_binary_prints_the_same_summary() {
        assert_eq!(
            find("plot").unwrap().summary(),
            rtlat_args::tools::PLOT_SUMMARY
        );
    }
}
