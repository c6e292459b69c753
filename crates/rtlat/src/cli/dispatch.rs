//! Which tool a command line asks for: `rtlat <tool> ARGS...`, or the bare
//! tool name when the binary is started through a symlink named after a C
//! tool (`cyclictest -> rtlat`), so that existing scripts run unchanged.

use std::ffi::OsString;
use std::path::Path;

use rtlat_args::UsageError;
use std::sync::LazyLock;

use rtlat_args::docs::help::Help;
use rtlat_args::getopt::{NO, REQ};
use rtlat_args::options::{Effect, Flag, Layout, Page, Part, Value, terms};

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

/// Their definitions: only an exact spelling counts, as the first word;
/// each sets which one came.
pub static TOP_FLAGS: LazyLock<Vec<Flag<Option<TopOpt>>>> = LazyLock::new(|| {
    vec![
        Flag::new(Some('h'), "help", NO, "")
            .help(rtlat_args::lines!["print this help"])
            .apply(|r: &mut Option<TopOpt>, _| {
                *r = Some(TopOpt::Help);
                Ok(())
            }),
        Flag::new(Some('V'), "version", NO, "")
            .help(rtlat_args::lines!["print the version"])
            .apply(|r: &mut Option<TopOpt>, _| {
                *r = Some(TopOpt::Version);
                Ok(())
            }),
        Flag::new_long("generate", REQ, "KIND")
            .hidden()
            .apply(|r: &mut Option<TopOpt>, _| {
                *r = Some(TopOpt::Generate);
                Ok(())
            }),
    ]
});

/// The option of [`TOP_FLAGS`] spelled exactly `word`.
fn top_option(word: &str) -> Option<TopOpt> {
    let flag = TOP_FLAGS.iter().find(|flag| {
        flag.short.is_some_and(|c| word == format!("-{c}"))
            || flag.long.is_some_and(|l| word == format!("--{l}"))
    })?;
    let mut which = None;
    if let Effect::Apply(apply) = flag.effect {
        apply(
            &mut which,
            Value {
                name: flag.name(),
                raw: None,
            },
        )
        .ok()?;
    }
    which
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
    top_page().render()
}

/// `rtlat --help` as the man page and the completions read it.
pub fn top_help_model() -> Help {
    top_page().model()
}

/// `rtlat --help`: the groups of tools and rtlat's own options.
fn top_page() -> Page<'static, Option<TopOpt>> {
    let mut parts = Vec::new();
    for group in Group::ALL {
        let tools: Vec<(&str, &str)> = REGISTRY
            .iter()
            .filter(|t| t.group() == group)
            .map(|t| (t.name(), t.summary()))
            .collect();
        parts.push(Part::Paragraph(group.heading().to_owned()));
        parts.push(terms(15, &tools));
    }
    parts.extend([
        Part::Paragraph("Run 'rtlat <TOOL> --help' for the options of a tool.".to_owned()),
        Part::Heading("Options"),
        Part::Options(TOP_FLAGS.iter().collect()),
    ]);
    Page {
        title: format!(
            "rtlat {}: real-time latency measurement for Linux",
            env!("CARGO_PKG_VERSION")
        ),
        usage: vec![
            "rtlat <TOOL> [OPTIONS]".to_owned(),
            "<TOOL> [OPTIONS]        (through a symlink named after the tool)".to_owned(),
        ],
        layout: Layout::spaced(18),
        parts,
    }
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
            // A name of 13 characters or more is followed by two spaces.
            let name = match tool.name() {
                n if n.len() >= 13 => format!("{n}  "),
                n => format!("{n:<13}"),
            };
            let listed = format!("\n  {name}{}\n", tool.summary());
            assert!(top_help().contains(&listed), "{listed}");
            assert!(
                rtlat_args::tools::help_title(tool.name(), tool.summary()).starts_with("rtlat ")
            );
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
