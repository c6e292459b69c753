//! Which tool a command line asks for: `rtlat <tool> ARGS...`, or the bare
//! tool name when the binary is started through a symlink named after a C
//! tool (`cyclictest -> rtlat`), so that existing scripts run unchanged.

use std::ffi::OsString;
use std::path::Path;

use rtlat_args::UsageError;

/// The tools rtlat provides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// `rtlat cyclictest`.
    Cyclictest,
    /// `rtlat svsematest`: SysV semaphore hand-off latency.
    Svsematest,
    /// `rtlat pmqtest`: POSIX message queue hand-off latency.
    Pmqtest,
    /// `rtlat ptsematest`: mutex hand-off latency.
    Ptsematest,
    /// `rtlat sigwaittest`: signal + sigwait hand-off latency.
    Sigwaittest,
    /// `rtlat signaltest`: signal round trip through a ring of threads.
    Signaltest,
    /// `rtlat latency`: Xenomai's `latency` test.
    Latency,
    /// `rtlat plot`: latency plots (SVG, PNG) from cyclictest results.
    Plot,
    /// `rtlat compare`: two runs' JSON results side by side.
    Compare,
    /// `rtlat load`: background load, measured.
    Load,
    /// `rtlat audit`: the machine's fitness for real-time work.
    Audit,
}

impl Tool {
    const ALL: [Tool; 11] = [
        Tool::Cyclictest,
        Tool::Svsematest,
        Tool::Pmqtest,
        Tool::Ptsematest,
        Tool::Sigwaittest,
        Tool::Signaltest,
        Tool::Latency,
        Tool::Plot,
        Tool::Compare,
        Tool::Load,
        Tool::Audit,
    ];

    /// The subcommand (and C tool) name.
    pub const fn name(self) -> &'static str {
        match self {
            Tool::Cyclictest => "cyclictest",
            Tool::Svsematest => "svsematest",
            Tool::Pmqtest => "pmqtest",
            Tool::Ptsematest => "ptsematest",
            Tool::Sigwaittest => "sigwaittest",
            Tool::Signaltest => "signaltest",
            Tool::Latency => "latency",
            Tool::Plot => "plot",
            Tool::Compare => "compare",
            Tool::Load => "load",
            Tool::Audit => "audit",
        }
    }

    fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    /// `rtlat --help`.
    TopHelp,
    /// `rtlat --version`.
    Version,
    /// Run a tool.
    Tool {
        /// Which one.
        tool: Tool,
        /// Started under the tool's own name (symlink), not as `rtlat TOOL`.
        as_symlink: bool,
        /// Its arguments (after the tool name).
        args: Vec<OsString>,
        /// The whole command line as given, for JSON's `cmdline:`.
        cmdline: String,
    },
}

impl Command {
    /// How messages name the program: `cyclictest` under a symlink,
    /// `rtlat cyclictest` otherwise.
    pub fn program_name(&self) -> String {
        match self {
            Command::Tool {
                tool,
                as_symlink: true,
                ..
            } => tool.name().to_string(),
            Command::Tool { tool, .. } => format!("rtlat {}", tool.name()),
            _ => "rtlat".to_string(),
        }
    }
}

/// Picks the command from `argv` (program name included).
pub fn select(argv: &[OsString]) -> Result<Command, UsageError> {
    let cmdline = argv
        .iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    let invoked = argv
        .first()
        .map(|a| {
            Path::new(a)
                .file_name()
                .unwrap_or(a)
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_default();
    if let Some(tool) = Tool::from_name(&invoked) {
        return Ok(Command::Tool {
            tool,
            as_symlink: true,
            args: argv[1..].to_vec(),
            cmdline,
        });
    }
    let Some(first) = argv.get(1) else {
        return Err(UsageError(format!(
            "no tool given; try 'rtlat cyclictest --help' (tools: {})",
            tool_names()
        )));
    };
    match first.to_string_lossy().as_ref() {
        "-h" | "--help" | "help" => Ok(Command::TopHelp),
        "-V" | "--version" => Ok(Command::Version),
        name => match Tool::from_name(name) {
            Some(tool) => Ok(Command::Tool {
                tool,
                as_symlink: false,
                args: argv[2..].to_vec(),
                cmdline,
            }),
            None => Err(UsageError(format!(
                "unknown tool '{name}'; the tools are: {}",
                tool_names()
            ))),
        },
    }
}

fn tool_names() -> String {
    Tool::ALL.map(Tool::name).join(", ")
}

/// `rtlat --help`.
pub fn top_help() -> String {
    format!(
        "rtlat {version}: real-time latency measurement for Linux

Usage: rtlat <TOOL> [OPTIONS]
       <TOOL> [OPTIONS]        (through a symlink named after the tool)

Measuring tools (each with the options and output of the tool of its name,
from rt-tests or, for latency, Xenomai):
  cyclictest   timer wake-up latency
  svsematest   hand-off latency through SysV semaphores
  pmqtest      hand-off latency through POSIX message queues
  ptsematest   hand-off latency through mutexes
  sigwaittest  hand-off latency through a signal and sigwait
  signaltest   round-trip latency of a signal through a ring of threads
  latency      timer wake-up latency with Xenomai `latency`'s options and
               per-second output

Result tools:
  plot         latency plots (SVG or PNG) from cyclictest results
  compare      compare two runs' JSON results (rtlat cyclictest --json)

Load:
  load         background load (cpu, memory, cache, io, messaging, syscalls,
               timers, fork) until stopped, with the work it did per second

The machine:
  audit        how fit this machine is for real-time work (kernel, isolation,
               frequency, idle states, interrupts, ...), and the cyclictest
               command line to use on it

Run 'rtlat <TOOL> --help' for the options of a tool.
Options:
  -h, --help      print this help
  -V, --version   print the version
",
        version = env!("CARGO_PKG_VERSION")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn symlink_name_selects_the_tool() {
        let c = select(&argv(&["/usr/local/bin/cyclictest", "-q"])).unwrap();
        assert!(
            matches!(&c, Command::Tool { tool: Tool::Cyclictest, as_symlink: true, args, .. } if args == &argv(&["-q"]))
        );
        assert_eq!(c.program_name(), "cyclictest");
    }

    #[test]
    fn subcommand_selects_the_tool() {
        let c = select(&argv(&["rtlat", "cyclictest", "-l", "5"])).unwrap();
        assert!(
            matches!(&c, Command::Tool { as_symlink: false, args, cmdline, .. }
            if args == &argv(&["-l", "5"]) && cmdline == "rtlat cyclictest -l 5")
        );
        assert_eq!(c.program_name(), "rtlat cyclictest");
    }

    #[test]
    fn the_top_help_lists_every_tool() {
        let help = top_help();
        for tool in Tool::ALL {
            let listed = format!("\n  {:<13}", tool.name());
            assert!(help.contains(&listed), "{} missing\n{help}", tool.name());
        }
        assert!(help.lines().all(|l| l.chars().count() <= 80), "{help}");
    }

    #[test]
    fn unknown_or_missing_tool_is_a_usage_error() {
        assert!(
            select(&argv(&["rtlat", "frobnicate"]))
                .unwrap_err()
                .0
                .contains("unknown tool 'frobnicate'")
        );
        assert!(select(&argv(&["rtlat"])).is_err());
        assert!(matches!(
            select(&argv(&["rtlat", "--help"])),
            Ok(Command::TopHelp)
        ));
        assert!(matches!(
            select(&argv(&["rtlat", "-V"])),
            Ok(Command::Version)
        ));
    }
}
