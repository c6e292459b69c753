//! `rtlat --generate KIND [DIR]`: the man pages and the shell completions,
//! made from the option definitions that the parsers use and that each
//! tool prints its `--help` from (its table and its help in parts, with
//! [`rtlat_args::docs`]), so that they cannot drift from the command
//! lines; no help text is read back. Hidden from `rtlat --help`: it is for
//! packagers.
//!
//! KIND is `man`, `bash`, `zsh`, `fish` or `all`. With DIR, the files go
//! where a package installs them under its prefix (`DIR` = `debian/rtlat/usr`):
//!
//! - `share/man/man1/rtlat.1`, `rtlat-TOOL.1` for every tool;
//! - `share/bash-completion/completions/rtlat`, and `rtlat-plot` and each
//!   C tool's name as symbolic links to it (bash-completion loads the file
//!   named after the command);
//! - `share/zsh/vendor-completions/_rtlat` (its `#compdef` names every
//!   command);
//! - `share/fish/vendor_completions.d/rtlat.fish`, `rtlat-plot.fish` and
//!   one per C tool's name.
//!
//! Without DIR, `bash`, `zsh` and `fish` print rtlat's script on standard
//! output (`source <(rtlat --generate bash)`).
//!
//! Why in the binary rather than an `xtask` or a build script: the tables
//! and help texts live in this binary's `cli` modules, the pages and
//! scripts always match the binary they come with (a user can make them
//! again from the rtlat they have), and nothing generated is committed
//! that could go stale. `rtlat plot`'s definitions are in the
//! `rtlat_plot` library (the command line of the `rtlat-plot` binary,
//! which does its work), linked into this binary without the drawing code,
//! so `rtlat-plot` need not be beside `rtlat` for them.
//!
//! Every tool of [`REGISTRY`] gets its page and its completions, from
//! what its [`Tool`] says.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::Context;
use rtlat_args::UsageError;
use rtlat_args::docs::complete::{self, Program};
use rtlat_args::docs::help::Help;
use rtlat_args::docs::man::{self, Inherited, Page};
use rtlat_args::getopt::OptSpec;
use rtlat_args::options::Flag;
use rtlat_args::output_file::write_whole;

use super::dispatch::{TOP_FLAGS, top_help_model};
use crate::tools::{REGISTRY, Tool};

/// What `--generate` makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Man,
    Bash,
    Zsh,
    Fish,
    All,
}

const USAGE: &str = "--generate KIND [DIR]: KIND is man, bash, zsh, fish or all; \
                     DIR the prefix to write share/... under (needed for man and all)";

/// Runs `rtlat --generate ARGS`.
pub fn run(args: &[OsString]) -> anyhow::Result<u8> {
    let (kind, dir) = parse(args)?;
    let Some(dir) = dir else {
        let text = match kind {
            Kind::Bash => complete::bash(&program()),
            Kind::Zsh => complete::zsh(&program()),
            Kind::Fish => complete::fish(&program()).remove(0).1,
            Kind::Man | Kind::All => unreachable!("parse asks for DIR"),
        };
        rtlat_args::stdio::print(&text)?;
        return Ok(0);
    };
    if matches!(kind, Kind::Man | Kind::All) {
        let man1 = dir.join("share/man/man1");
        for (name, roff) in man_pages() {
            write_file(&man1, &name, &roff)?;
        }
    }
    if matches!(kind, Kind::Bash | Kind::All) {
        let p = program();
        let to = dir.join("share/bash-completion/completions");
        write_file(&to, &p.name, &complete::bash(&p))?;
        for command in p.commands().iter().skip(1) {
            link(&to, command, &p.name)?;
        }
    }
    if matches!(kind, Kind::Zsh | Kind::All) {
        let p = program();
        let to = dir.join("share/zsh/vendor-completions");
        write_file(&to, &format!("_{}", p.name), &complete::zsh(&p))?;
    }
    if matches!(kind, Kind::Fish | Kind::All) {
        let to = dir.join("share/fish/vendor_completions.d");
        for (name, text) in complete::fish(&program()) {
            write_file(&to, &name, &text)?;
        }
    }
    Ok(0)
}

fn parse(args: &[OsString]) -> Result<(Kind, Option<PathBuf>), UsageError> {
    let bad = || UsageError(USAGE.to_string());
    let kind = match args.first().and_then(|a| a.to_str()) {
        Some("man") => Kind::Man,
        Some("bash") => Kind::Bash,
        Some("zsh") => Kind::Zsh,
        Some("fish") => Kind::Fish,
        Some("all") => Kind::All,
        _ => return Err(bad()),
    };
    let dir = match args {
        [_] => None,
        [_, dir] => Some(PathBuf::from(dir)),
        _ => return Err(bad()),
    };
    if dir.is_none() && matches!(kind, Kind::Man | Kind::All) {
        return Err(bad());
    }
    Ok((kind, dir))
}

fn write_file(dir: &Path, name: &str, text: &str) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(name);
    write_whole(&path, |w| w.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// `dir/name` a symbolic link to `target` (a name in the same directory).
fn link(dir: &Path, name: &str, target: &str) -> anyhow::Result<()> {
    let path = dir.join(name);
    match std::fs::symlink_metadata(&path) {
        Ok(_) => std::fs::remove_file(&path)
            .with_context(|| format!("cannot replace {}", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot replace {}", path.display())),
    }
    std::os::unix::fs::symlink(target, &path)
        .with_context(|| format!("cannot link {} to {target}", path.display()))
}

/// Every option entry a tool's options are documented by: its help's,
/// and those of the tool it inherits options from (rtlat monitor:
/// cyclictest's; its help sends the reader there for them; its page
/// repeats them).
fn option_help(tool: &dyn Tool) -> Help {
    let mut help = tool.page();
    if let Some(inherits) = tool.inherits() {
        help.blocks.extend(inherits.from.page().blocks);
    }
    help
}

fn top_table() -> Vec<OptSpec<()>> {
    TOP_FLAGS.iter().map(Flag::row).collect()
}

/// The man page's name of `tool`: `rtlat-cyclictest`.
fn page_name(tool: &dyn Tool) -> String {
    format!("rtlat-{}", tool.name())
}

/// What every measuring tool exits with (the help of the others says it).
const MEASURING_EXIT_STATUS: &str = "\
0 the run ended normally (its loops or duration done, a signal such as
SIGINT, SIGTERM or SIGHUP, a -b break); 1 the machine refused something
at run time (a privilege, locking memory, a thread's wait, an output file
that cannot be written); 2 a usage error (a bad option, value or
combination), before anything is measured; 3 a --fail-if limit was
broken (after every output is written).";

/// What `rtlat` itself exits with.
const TOP_EXIT_STATUS: &str = "\
That of the tool run (see its page); 2 when no tool or an unknown one is
given.";

/// The synopsis lines of `tool` under another command name: `cyclictest
/// [OPTIONS]` for `rtlat cyclictest [OPTIONS]`.
fn usage_as(help: &Help, tool: &dyn Tool, command: &str) -> Vec<String> {
    let prefix = format!("rtlat {}", tool.name());
    help.usage
        .iter()
        .filter_map(|u| {
            u.strip_prefix(&prefix)
                .map(|rest| format!("{command}{rest}"))
        })
        .collect()
}

/// Every man page: `(file name, roff)`, `rtlat.1` first.
pub fn man_pages() -> Vec<(String, String)> {
    let source = format!("rtlat {}", env!("CARGO_PKG_VERSION"));
    let mut pages = Vec::new();

    let top = top_help_model();
    let see_all: Vec<(String, u8)> = REGISTRY.iter().map(|&t| (page_name(t), 1)).collect();
    pages.push((
        "rtlat.1".to_string(),
        man::render(&Page {
            name: "rtlat",
            summary: "real-time latency measurement for Linux",
            help: &top,
            source: &source,
            more_usage: Vec::new(),
            inherited: None,
            exit_status: TOP_EXIT_STATUS,
            see_also: see_all,
        }),
    ));

    for &tool in REGISTRY {
        let help = tool.page();
        let name = page_name(tool);
        let mut see_also = vec![("rtlat".to_string(), 1)];
        see_also.extend(tool.see_also().into_iter().map(|(n, s)| (n.to_string(), s)));
        let mut more_usage = Vec::new();
        if tool.has_c_name() {
            more_usage = usage_as(&help, tool, tool.name());
        }
        if let Some(program) = tool.program() {
            more_usage = usage_as(&help, tool, program);
        }
        let inherits = tool.inherits();
        let inherited_help = inherits.as_ref().map(|i| i.from.page());
        let inherited = inherits
            .as_ref()
            .zip(inherited_help.as_ref())
            .map(|(i, help)| Inherited {
                title: i.title,
                intro: i.intro,
                help,
            });
        let exit_status = if tool.has_c_name() {
            MEASURING_EXIT_STATUS
        } else {
            TOP_EXIT_STATUS
        };
        pages.push((
            format!("{name}.1"),
            man::render(&Page {
                name: &name,
                summary: tool.summary(),
                help: &help,
                source: &source,
                more_usage,
                inherited,
                exit_status,
                see_also,
            }),
        ));
    }
    pages
}

/// What the completions cover: rtlat's options and tools, each tool's
/// visible options (from its table), `rtlat-plot` as rtlat plot, and the
/// C tools' names.
pub fn program() -> Program {
    let tools = REGISTRY
        .iter()
        .map(|&tool| {
            let options = complete::from_table(&tool.options(), &option_help(tool));
            complete::Tool {
                name: tool.name().to_string(),
                summary: tool.summary().to_string(),
                own_name: tool.has_c_name(),
                program: tool.program().map(str::to_string),
                options,
            }
        })
        .collect();
    Program {
        name: "rtlat".to_string(),
        options: complete::from_table(&top_table(), &top_help_model()),
        tools,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_args::docs::undocumented;

    /// The `.TP` tags of a page: each spelled option they name.
    fn tagged(roff: &str) -> Vec<String> {
        let lines: Vec<&str> = roff.lines().collect();
        let mut names = Vec::new();
        for pair in lines.windows(2) {
            if pair[0] == ".TP" {
                for part in pair[1].split("\\fB").skip(1) {
                    let name = part.split("\\fR").next().unwrap_or_default();
                    names.push(name.replace("\\-", "-"));
                }
            }
        }
        names
    }

    #[test]
    fn every_help_lists_exactly_its_table() {
        for &tool in REGISTRY {
            assert_eq!(
                undocumented(&tool.options(), &option_help(tool)),
                (vec![], vec![]),
                "{}",
                tool.name()
            );
        }
        let top = top_help_model();
        assert_eq!(undocumented(&top_table(), &top), (vec![], vec![]));
    }

    #[test]
    fn every_option_of_every_table_has_its_entry_in_its_page() {
        let pages = man_pages();
        let page = |name: &str| -> &str {
            &pages
                .iter()
                .find(|(file, _)| *file == format!("{name}.1"))
                .unwrap_or_else(|| panic!("{name}.1"))
                .1
        };
        let check = |name: &str, rows: &[OptSpec<()>]| {
            let tags = tagged(page(name));
            for row in rows {
                let spelled = [
                    row.short.map(|c| format!("-{c}")),
                    row.long.map(|l| format!("--{l}")),
                ];
                for s in spelled.into_iter().flatten() {
                    assert_eq!(
                        tags.contains(&s),
                        !row.hidden,
                        "{name}: {s} (hidden: {})",
                        row.hidden
                    );
                }
            }
        };
        for &tool in REGISTRY {
            check(&page_name(tool), &tool.options());
        }
        check("rtlat", &top_table());
        assert_eq!(pages.len(), 1 + REGISTRY.len());
    }

    #[test]
    fn pages_have_their_sections() {
        for (file, roff) in man_pages() {
            for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS"] {
                assert!(
                    roff.contains(&format!("\n.SH {section}\n")),
                    "{file}: {section}"
                );
            }
            assert!(
                !roff.contains("\n.SH NOTES\n.SH"),
                "{file}: an empty section"
            );
        }
        let pages = man_pages();
        let cyclictest = &pages
            .iter()
            .find(|(f, _)| f == "rtlat-cyclictest.1")
            .unwrap()
            .1;
        assert!(cyclictest.contains(
            ".SH NAME\nrtlat\\-cyclictest \\- measure how late a periodic timer wakes a thread up\n"
        ));
        assert!(cyclictest.contains(
            ".SH SYNOPSIS\n\\fBrtlat cyclictest\\fR [\\fIOPTIONS\\fR]\n.br\n\\fBcyclictest\\fR [\\fIOPTIONS\\fR]\n"
        ));
        assert!(cyclictest.contains(".SS Threads and timing\n"));
        assert!(cyclictest.contains(".SH EXAMPLES\n"));
        assert!(cyclictest.contains(".BR cyclictest (8)\n"));
        let monitor = &pages
            .iter()
            .find(|(f, _)| f == "rtlat-monitor.1")
            .unwrap()
            .1;
        assert!(monitor.contains("\n.SH CYCLICTEST OPTIONS\n"));
        let plot = &pages.iter().find(|(f, _)| f == "rtlat-plot.1").unwrap().1;
        assert!(
            plot.contains(".br\n\\fBrtlat\\-plot\\fR \\fIINPUT...\\fR"),
            "{plot}"
        );
    }

    #[test]
    fn completions_cover_every_visible_row() {
        let p = program();
        // rtlat, rtlat plot's program, the measuring tools' C names.
        let mut commands = vec!["rtlat", "rtlat-plot"];
        let measuring = REGISTRY
            .iter()
            .take_while(|t| t.group() == crate::tools::Group::Measuring)
            .count();
        commands.extend(REGISTRY[..measuring].iter().map(|t| t.name()));
        assert_eq!(p.commands(), commands);
        assert!(REGISTRY[..measuring].iter().all(|t| t.has_c_name()));
        assert!(!REGISTRY[measuring..].iter().any(|t| t.has_c_name()));
        for tool in &p.tools {
            let rows = crate::tools::find(&tool.name).unwrap().options();
            let visible = rows.iter().filter(|r| !r.hidden).count();
            assert_eq!(tool.options.len(), visible, "{}", tool.name);
            assert!(
                tool.options.iter().all(|o| !o.about.is_empty()),
                "{}: an option without its help's words",
                tool.name
            );
        }
        let cyclictest = &p.tools[0];
        let json = cyclictest
            .options
            .iter()
            .find(|o| o.long.as_deref() == Some("json"))
            .unwrap();
        assert!(json.file);
        assert!(
            !cyclictest
                .options
                .iter()
                .any(|o| o.long.as_deref() == Some("synthetic"))
        );
    }

    #[test]
    fn usage_errors() {
        let words = |w: &[&str]| w.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(parse(&words(&[])).is_err());
        assert!(parse(&words(&["man"])).is_err(), "man needs DIR");
        assert!(parse(&words(&["all"])).is_err(), "all needs DIR");
        assert!(parse(&words(&["pdf", "/tmp"])).is_err());
        assert!(parse(&words(&["bash", "a", "b"])).is_err());
        assert_eq!(parse(&words(&["bash"])).unwrap(), (Kind::Bash, None));
        assert_eq!(
            parse(&words(&["all", "/x"])).unwrap(),
            (Kind::All, Some(PathBuf::from("/x")))
        );
    }
}
