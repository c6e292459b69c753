//! Shell completions for bash, zsh and fish from the option tables (and,
//! for what each option is and which take a file, the help's entries).
//!
//! Written here rather than with `clap_complete`, which needs a clap
//! `Command`: what they complete is small (the tool after `rtlat`, then
//! the tool's option names; a value that is a file is left to the shell's
//! file completion), and each script is a plain table per tool.
//!
//! The C tools' names (`cyclictest` through a symlink to `rtlat`) are
//! completed as the tool, but only when the name found in `PATH` runs
//! rtlat: Debian's own `cyclictest` knows none of rtlat's newer options.

use std::fmt::Write as _;

use super::help::{Entry, Help};
use crate::getopt::{OptSpec, ValueKind};

/// One option as the completions offer it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completed {
    /// `-t`, if it has a letter.
    pub short: Option<char>,
    /// `threads`, if it has a long name.
    pub long: Option<String>,
    /// Whether it takes a value.
    pub value: ValueKind,
    /// Its value is a file or a directory (`FILE`, `PATH`, `DIR`).
    pub file: bool,
    /// What it does, in a few words (the help text's first clause).
    pub about: String,
}

/// A tool and its options.
#[derive(Clone, Debug)]
pub struct Tool {
    /// The subcommand: `cyclictest`.
    pub name: String,
    /// Its one-line summary.
    pub summary: String,
    /// Also completed under its own name (a C tool's), when that name
    /// runs rtlat.
    pub own_name: bool,
    /// A program of its own that is this tool (`rtlat-plot`), if any.
    pub program: Option<String>,
    /// Its options.
    pub options: Vec<Completed>,
}

/// What the completions cover.
#[derive(Clone, Debug)]
pub struct Program {
    /// `rtlat`.
    pub name: String,
    /// Its own options (`--help`, `--version`).
    pub options: Vec<Completed>,
    /// Its tools.
    pub tools: Vec<Tool>,
}

/// The visible rows of `table`, each with what its help entry says.
pub fn from_table(table: &[OptSpec<()>], help: &Help) -> Vec<Completed> {
    table
        .iter()
        .filter(|row| !row.hidden)
        .map(|row| {
            let names = [
                row.short.map(|s| format!("-{s}")),
                row.long.map(|l| format!("--{l}")),
            ];
            let entry = help.entries().find(|e| {
                e.spellings()
                    .iter()
                    .any(|s| names.iter().flatten().any(|n| *n == s.name))
            });
            Completed {
                short: row.short,
                long: row.long.map(str::to_string),
                value: row.value,
                file: entry.is_some_and(takes_file),
                about: entry.map(about).unwrap_or_default(),
            }
        })
        .collect()
}

fn takes_file(entry: &Entry) -> bool {
    entry
        .value()
        .is_some_and(|(name, _)| ["FILE", "PATH", "DIR"].iter().any(|f| name.contains(f)))
}

/// The text up to its first `;` or `(`, or its first sentence, at most
/// about 60 characters.
fn about(entry: &Entry) -> String {
    let text = entry.joined();
    let end = text
        .find(['(', ';'])
        .into_iter()
        .chain(text.find(". "))
        .min()
        .unwrap_or(text.len());
    let mut short = text[..end].trim();
    // A default at the end (`how often [60s]`) is no part of what it does.
    if let Some(open) = short.rfind(" [").filter(|_| short.ends_with(']')) {
        short = &short[..open];
    }
    let mut short = short.trim_end_matches([',', ':', '.']).to_string();
    if short.chars().count() > 60 {
        let cut: String = short.chars().take(60).collect();
        short = match cut.rfind(' ') {
            Some(at) => format!("{}...", &cut[..at]),
            None => cut,
        };
    }
    short
}

impl Completed {
    /// Its spellings: `-t`, `--threads`.
    fn names(&self) -> Vec<String> {
        self.short
            .map(|s| format!("-{s}"))
            .into_iter()
            .chain(self.long.as_ref().map(|l| format!("--{l}")))
            .collect()
    }

    /// Whether the next word is its value.
    fn takes_next_word(&self) -> bool {
        self.value == ValueKind::Required
    }
}

impl Program {
    fn own_names(&self) -> Vec<&str> {
        self.tools
            .iter()
            .filter(|t| t.own_name)
            .map(|t| t.name.as_str())
            .collect()
    }

    fn programs(&self) -> Vec<(&str, &Tool)> {
        self.tools
            .iter()
            .filter_map(|t| t.program.as_deref().map(|p| (p, t)))
            .collect()
    }

    /// Every command name the completions are for: `rtlat`, the tools'
    /// programs, the C tools' names.
    pub fn commands(&self) -> Vec<String> {
        let mut names = vec![self.name.clone()];
        names.extend(self.programs().iter().map(|(p, _)| p.to_string()));
        names.extend(self.own_names().iter().map(|n| n.to_string()));
        names
    }
}

fn words(options: &[Completed], pick: impl Fn(&Completed) -> bool) -> String {
    options
        .iter()
        .filter(|o| pick(o))
        .flat_map(Completed::names)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The bash script: `_rtlat`, registered for every command name with
/// `complete -o default` (a value or an operand the script does not
/// complete gets bash's file names).
pub fn bash(program: &Program) -> String {
    let name = &program.name;
    let func = format!("_{}", name.replace('-', "_"));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# bash completion for {name}, generated by '{name} --generate bash': do not edit.\n\
         # The names of the C tools complete as the tool when that name runs {name}.\n"
    );
    let _ = writeln!(
        s,
        "{func}_runs_{name}() {{\n    local path\n    path=$(type -P -- \"$1\") || return 1\n    \
         [[ $(readlink -f -- \"$path\") == */{name} ]]\n}}\n"
    );
    let tool_names: Vec<&str> = program.tools.iter().map(|t| t.name.as_str()).collect();
    let _ = writeln!(
        s,
        "{func}() {{\n    local cur=${{COMP_WORDS[COMP_CWORD]}} prev= tool\n    \
         (( COMP_CWORD > 0 )) && prev=${{COMP_WORDS[COMP_CWORD-1]}}\n    \
         case ${{COMP_WORDS[0]##*/}} in\n    {name})\n        \
         if (( COMP_CWORD == 1 )); then\n            \
         COMPREPLY=($(compgen -W '{tools} {top}' -- \"$cur\"))\n            \
         return 0\n        fi\n        tool=${{COMP_WORDS[1]}} ;;",
        tools = tool_names.join(" "),
        top = words(&program.options, |_| true),
    );
    for (command, tool) in program.programs() {
        let _ = writeln!(s, "    {command}) tool={} ;;", tool.name);
    }
    let _ = writeln!(
        s,
        "    *)\n        {func}_runs_{name} \"${{COMP_WORDS[0]}}\" || return 0\n        \
         tool=${{COMP_WORDS[0]##*/}} ;;\n    esac\n    local options values\n    case $tool in"
    );
    for tool in &program.tools {
        let _ = writeln!(
            s,
            "    {})\n        options='{}'\n        values=' {} ' ;;",
            tool.name,
            words(&tool.options, |_| true),
            words(&tool.options, Completed::takes_next_word),
        );
    }
    let _ = writeln!(
        s,
        "    *) return 0 ;;\n    esac\n    \
         # The word after an option that takes a value is the value.\n    \
         [[ $values == *\" $prev \"* ]] && return 0\n    \
         [[ $cur == -* ]] && COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n    \
         return 0\n}}\n"
    );
    let _ = writeln!(
        s,
        "complete -o default -F {func} {}",
        program.commands().join(" ")
    );
    s
}

/// zsh's single-quoted string of `text`.
fn zsh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The zsh script (`_rtlat`, for the `vendor-completions` directory):
/// `#compdef` names every command.
pub fn zsh(program: &Program) -> String {
    let name = &program.name;
    let func = format!("_{}", name.replace('-', "_"));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "#compdef {}\n\
         # zsh completion for {name}, generated by '{name} --generate zsh': do not edit.\n\
         # The names of the C tools complete as the tool when that name runs {name}.\n",
        program.commands().join(" ")
    );
    let describe = |o: &Completed| -> Vec<String> {
        o.names()
            .into_iter()
            .map(|n| zsh_quote(&format!("{n}:{}", o.about)))
            .collect()
    };
    let _ = writeln!(
        s,
        "{func}() {{\n  local tool exe\n  local -a options values\n  \
         case ${{words[1]:t}} in\n  ({name})\n    if (( CURRENT == 2 )); then\n      \
         local -a tools=("
    );
    for tool in &program.tools {
        let _ = writeln!(
            s,
            "        {}",
            zsh_quote(&format!("{}:{}", tool.name, tool.summary))
        );
    }
    let _ = writeln!(
        s,
        "      )\n      options=(\n        {}\n      )\n      \
         _describe -t tools tool tools\n      _describe -t options option options\n      \
         return\n    fi\n    tool=${{words[2]}} ;;",
        program
            .options
            .iter()
            .flat_map(describe)
            .collect::<Vec<_>>()
            .join("\n        ")
    );
    for (command, tool) in program.programs() {
        let _ = writeln!(s, "  ({command}) tool={} ;;", tool.name);
    }
    let _ = writeln!(
        s,
        "  (*)\n    exe=${{words[1]}}\n    [[ $exe == */* ]] || exe=${{commands[$exe]}}\n    \
         if [[ ${{exe:A:t}} != {name} ]]; then\n      _default\n      return\n    fi\n    \
         tool=${{words[1]:t}} ;;\n  esac\n  case $tool in"
    );
    for tool in &program.tools {
        let _ = writeln!(
            s,
            "  ({})\n    options=(\n      {}\n    )\n    values=({}) ;;",
            tool.name,
            tool.options
                .iter()
                .flat_map(describe)
                .collect::<Vec<_>>()
                .join("\n      "),
            words(&tool.options, Completed::takes_next_word),
        );
    }
    let _ = writeln!(
        s,
        "  (*)\n    _default\n    return ;;\n  esac\n  \
         # The word after an option that takes a value is the value.\n  \
         if (( ${{values[(Ie)${{words[CURRENT-1]}}]}} )); then\n    _files\n  \
         elif [[ $PREFIX == -* ]]; then\n    _describe -t options option options\n  \
         else\n    _files\n  fi\n}}\n\n{func} \"$@\""
    );
    s
}

/// fish's single-quoted string of `text`.
fn fish_quote(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// fish's `complete` arguments for `option`: its spellings, whether it
/// takes a value (`-r`; `-x` when the value is no file) and its about.
fn fish_option(option: &Completed) -> String {
    let mut s = String::new();
    if let Some(c) = option.short {
        let _ = write!(s, " -s {}", fish_quote(&c.to_string()));
    }
    if let Some(l) = &option.long {
        let _ = write!(s, " -l {l}");
    }
    match (option.takes_next_word(), option.file) {
        (true, true) => s.push_str(" -r"),
        (true, false) => s.push_str(" -x"),
        (false, _) => {}
    }
    if !option.about.is_empty() {
        let _ = write!(s, " -d {}", fish_quote(&option.about));
    }
    s
}

/// The fish scripts: `(file name, text)`: `rtlat.fish`, one for each
/// tool's program (`rtlat-plot.fish`), and one for each C tool's name,
/// whose completions are only given when that name runs rtlat.
pub fn fish(program: &Program) -> Vec<(String, String)> {
    let name = &program.name;
    let head = |what: &str| {
        format!(
            "# fish completion for {what}, generated by '{name} --generate fish': do not edit.\n"
        )
    };
    let mut files = Vec::new();

    let mut main = head(name);
    let tool_names: Vec<&str> = program.tools.iter().map(|t| t.name.as_str()).collect();
    let _ = writeln!(main, "set -l {name}_tools {}\n", tool_names.join(" "));
    for tool in &program.tools {
        let _ = writeln!(
            main,
            "complete -c {name} -f -n \"not __fish_seen_subcommand_from ${name}_tools\" -a {} -d {}",
            tool.name,
            fish_quote(&tool.summary)
        );
    }
    for option in &program.options {
        let _ = writeln!(
            main,
            "complete -c {name} -n \"not __fish_seen_subcommand_from ${name}_tools\"{}",
            fish_option(option)
        );
    }
    for tool in &program.tools {
        main.push('\n');
        for option in &tool.options {
            let _ = writeln!(
                main,
                "complete -c {name} -n \"__fish_seen_subcommand_from {}\"{}",
                tool.name,
                fish_option(option)
            );
        }
    }
    files.push((format!("{name}.fish"), main));

    for (command, tool) in program.programs() {
        let mut text = head(command);
        for option in &tool.options {
            let _ = writeln!(text, "complete -c {command}{}", fish_option(option));
        }
        files.push((format!("{command}.fish"), text));
    }
    for tool in program.tools.iter().filter(|t| t.own_name) {
        let command = &tool.name;
        let mut text = head(&format!("{command} when that name runs {name}"));
        let _ = writeln!(
            text,
            "if string match -q -- '*/{name}' (realpath (command -s {command}) 2>/dev/null)"
        );
        for option in &tool.options {
            let _ = writeln!(text, "    complete -c {command}{}", fish_option(option));
        }
        text.push_str("end\n");
        files.push((format!("{command}.fish"), text));
    }
    files
}

#[cfg(test)]
mod tests {
    use super::super::help::parse;
    use super::*;
    use crate::getopt::{NO, OPT_NUM, REQ};

    fn demo() -> Program {
        let help = parse(
            "rtlat demo: demo\n\nUsage: rtlat demo [OPTIONS]\n\nOptions:\n  \
             -t, --threads[=N]   number of threads; -t alone: one per CPU\n      \
             --json=FILE     write the results as JSON to FILE (- for stdout)\n  \
             -p, --priority=N    the priority, which is a number from 0 to 99 that the \
             threads are run at\n      --every=T   how often [60s]\n",
        );
        let table = [
            OptSpec::c((), Some('t'), "threads", OPT_NUM),
            OptSpec::c((), None, "json", REQ),
            OptSpec::c((), Some('p'), "priority", REQ),
            OptSpec::new_long((), "seam", REQ).hidden(),
            OptSpec::c((), Some('?'), "help", NO),
            OptSpec::new_long((), "every", REQ),
        ];
        Program {
            name: "rtlat".into(),
            options: vec![],
            tools: vec![Tool {
                name: "demo".into(),
                summary: "a demo's summary".into(),
                own_name: true,
                program: Some("rtlat-demo".into()),
                options: from_table(&table, &help),
            }],
        }
    }

    #[test]
    fn options_from_the_table_with_the_help_s_words() {
        let p = demo();
        let options = &p.tools[0].options;
        assert_eq!(options.len(), 5, "the hidden row is left out");
        assert_eq!(options[4].about, "how often", "without its default");
        assert_eq!(options[0].about, "number of threads");
        assert!(options[1].file);
        assert_eq!(options[1].about, "write the results as JSON to FILE");
        assert_eq!(
            options[2].about,
            "the priority, which is a number from 0 to 99 that the..."
        );
        assert!(!options[2].file);
        assert_eq!(options[3].about, "", "no entry: nothing to say");
    }

    #[test]
    fn scripts_name_every_command() {
        let p = demo();
        assert_eq!(p.commands(), ["rtlat", "rtlat-demo", "demo"]);
        let b = bash(&p);
        assert!(b.contains("\n    demo)\n        options='-t --threads --json -p --priority -? --help --every'\n        values=' --json -p --priority --every ' ;;\n"), "{b}");
        assert!(b.ends_with("complete -o default -F _rtlat rtlat rtlat-demo demo\n"));
        assert!(!b.contains("seam"));
        let z = zsh(&p);
        assert!(z.starts_with("#compdef rtlat rtlat-demo demo\n"));
        assert!(z.contains("'--json:write the results as JSON to FILE'"));
        let f = fish(&p);
        let names: Vec<&str> = f.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["rtlat.fish", "rtlat-demo.fish", "demo.fish"]);
        assert!(f[0].1.contains(
            "complete -c rtlat -n \"__fish_seen_subcommand_from demo\" -s 'p' -l priority -x -d"
        ));
        assert!(
            f[1].1.contains(
                "complete -c rtlat-demo -l json -r -d 'write the results as JSON to FILE'"
            )
        );
        assert!(f[2].1.contains("if string match -q -- '*/rtlat' (realpath (command -s demo) 2>/dev/null)\n    complete -c demo -s 't' -l threads -d"));
    }

    #[test]
    fn quoting() {
        assert_eq!(zsh_quote("it's"), "'it'\\''s'");
        assert_eq!(fish_quote("it's a \\"), "'it\\'s a \\\\'");
    }
}
