//! Which tool a command line asks for: `rtlat <tool> ARGS...`, or the bare
//! tool name when the binary is started through a symlink named after a C
//! tool (`cyclictest -> rtlat`), so that existing scripts run unchanged.

use std::ffi::OsString;
use std::path::Path;

use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, OptSpec, REQ};

use crate::tools::{self, Group, REGISTRY, Tool};

/// rtlat's own options (before a tool's name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopOpt {
    /// `-h`, `--help` (and the word `help`).
    Help,
    /// `-V`, `--version`.
    Version,
    /// `--generate KIND [DIR]`: man pages and completions (hidden: for
    /// packagers, see [`super::generate`]).
    Generate,
}

/// Their table: only an exact spelling counts, as the first word.
pub const TOP_OPTIONS: [OptSpec<TopOpt>; 3] = [
    OptSpec::new(TopOpt::Help, Some('h'), "help", NO),
    OptSpec::new(TopOpt::Version, Some('V'), "version", NO),
    OptSpec::new_long(TopOpt::Generate, "generate", REQ).hidden(),
];

/// The option of [`TOP_OPTIONS`] spelled exactly `word`.
fn top_option(word: &str) -> Option<TopOpt> {
    TOP_OPTIONS
        .iter()
        .find(|row| {
            row.short.is_some_and(|c| word == format!("-{c}"))
                || row.long.is_some_and(|l| word == format!("--{l}"))
        })
        .map(|row| row.id)
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    /// `rtlat --help`.
    TopHelp,
    /// `rtlat --version`.
    Version,
    /// `rtlat --generate ARGS...`.
    Generate(Vec<OsString>),
    /// Run a tool.
    Tool {
        /// Which one.
        tool: &'static dyn Tool,
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
    if let Some(tool) = tools::find(&invoked) {
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
    let first = first.to_string_lossy();
    match top_option(&first) {
        Some(TopOpt::Help) => return Ok(Command::TopHelp),
        Some(TopOpt::Version) => return Ok(Command::Version),
        Some(TopOpt::Generate) => return Ok(Command::Generate(argv[2..].to_vec())),
        None => {}
    }
    match first.as_ref() {
        "help" => Ok(Command::TopHelp),
        name => match tools::find(name) {
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
    REGISTRY
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `rtlat --help`: the tools by [`Group`], each with its summary, in
/// [`REGISTRY`]'s order.
pub fn top_help() -> String {
    let groups: String = Group::ALL
        .iter()
        .map(|&group| {
            let list: String = REGISTRY
                .iter()
                .filter(|t| t.group() == group)
                .map(|t| format!("  {:<13}{}\n", t.name(), t.summary()))
                .collect();
            format!("{}\n{list}\n", group.heading())
        })
        .collect();
    format!(
        "rtlat {version}: real-time latency measurement for Linux

Usage: rtlat <TOOL> [OPTIONS]
       <TOOL> [OPTIONS]        (through a symlink named after the tool)

{groups}Run 'rtlat <TOOL> --help' for the options of a tool.

Options:
  -h, --help      print this help
  -V, --version   print the version
",
        version = env!("CARGO_PKG_VERSION"),
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
            matches!(&c, Command::Tool { tool, as_symlink: true, args, .. }
            if tool.name() == "cyclictest" && args == &argv(&["-q"]))
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
        for &tool in REGISTRY {
            let listed = format!("\n  {:<13}", tool.name());
            assert!(help.contains(&listed), "{} missing\n{help}", tool.name());
        }
        assert!(help.lines().all(|l| l.chars().count() <= 80), "{help}");
    }

    #[test]
    fn every_tool_has_one_summary_for_both_helps() {
        for &tool in REGISTRY {
            assert!(!tool.summary().is_empty(), "{}", tool.name());
            let listed = format!("\n  {:<13}{}\n", tool.name(), tool.summary());
            assert!(top_help().contains(&listed), "{listed}");
            assert!(tools::help_title(tool.name()).starts_with("rtlat "));
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

    #[test]
    fn every_spelling_of_the_top_options() {
        for (word, id) in [
            ("-h", TopOpt::Help),
            ("--help", TopOpt::Help),
            ("-V", TopOpt::Version),
            ("--version", TopOpt::Version),
            ("--generate", TopOpt::Generate),
        ] {
            assert_eq!(top_option(word), Some(id), "{word}");
        }
        // Exact spellings only: no abbreviation, no cluster.
        for word in ["--vers", "-hV", "--gen", "-"] {
            assert_eq!(top_option(word), None, "{word}");
        }
        assert!(matches!(
            select(&argv(&["rtlat", "help"])),
            Ok(Command::TopHelp)
        ));
        assert!(matches!(
            select(&argv(&["rtlat", "--generate", "man", "/tmp/x"])),
            Ok(Command::Generate(args)) if args == argv(&["man", "/tmp/x"])
        ));
    }
}
