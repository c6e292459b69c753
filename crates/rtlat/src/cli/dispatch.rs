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
    /// `rtlat monitor`: cyclictest until stopped, with metrics and
    /// checkpoints.
    Monitor,
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
    const ALL: [Tool; 12] = [
        Tool::Cyclictest,
        Tool::Svsematest,
        Tool::Pmqtest,
        Tool::Ptsematest,
        Tool::Sigwaittest,
        Tool::Signaltest,
        Tool::Latency,
        Tool::Monitor,
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
            Tool::Monitor => "monitor",
            Tool::Plot => "plot",
            Tool::Compare => "compare",
            Tool::Load => "load",
            Tool::Audit => "audit",
        }
    }

    /// What the tool is for, in one line: `rtlat --help` lists it and the
    /// tool's own help starts with it ([`rtlat_args::tools`]).
    pub fn summary(self) -> &'static str {
        rtlat_args::tools::summary(self.name())
    }

    /// The first line of the tool's `--help`: `rtlat NAME: SUMMARY`.
    pub fn help_title(self) -> String {
        format!("rtlat {}: {}", self.name(), self.summary())
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

/// `rtlat --help`: the tools by group ([`Tool::ALL`]'s order), each with
/// its summary.
pub fn top_help() -> String {
    let list = |tools: &[Tool]| -> String {
        tools
            .iter()
            .map(|t| format!("  {:<13}{}\n", t.name(), t.summary()))
            .collect()
    };
    format!(
        "rtlat {version}: real-time latency measurement for Linux

Usage: rtlat <TOOL> [OPTIONS]
       <TOOL> [OPTIONS]        (through a symlink named after the tool)

Measuring tools (each with the options and output of the tool of its name,
from rt-tests or, for latency, Xenomai):
{measuring}
Long runs and fleets:
{monitoring}
Result tools:
{results}
Load:
{load}
The machine:
{machine}
Run 'rtlat <TOOL> --help' for the options of a tool.

Options:
  -h, --help      print this help
  -V, --version   print the version
",
        version = env!("CARGO_PKG_VERSION"),
        measuring = list(&Tool::ALL[..7]),
        monitoring = list(&Tool::ALL[7..8]),
        results = list(&Tool::ALL[8..10]),
        load = list(&Tool::ALL[10..11]),
        machine = list(&Tool::ALL[11..]),
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
    fn every_tool_has_one_summary_for_both_helps() {
        for tool in Tool::ALL {
            assert!(!tool.summary().is_empty(), "{}", tool.name());
            let listed = format!("\n  {:<13}{}\n", tool.name(), tool.summary());
            assert!(top_help().contains(&listed), "{listed}");
            assert!(tool.help_title().starts_with("rtlat "));
        }
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
