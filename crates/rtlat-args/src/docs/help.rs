//! A tool's help in parts ([`Help`]: the title, the usage lines, and
//! blocks of prose, option entries, lists and verbatim lines), built from
//! option definitions ([`crate::options::Page::model`]). [`parse`] reads
//! a `--help` text back into parts: the tests use it to check that what a
//! tool prints is what its man page and completions are made from; the
//! pages themselves never read a help text.
//!
//! The help texts are written by hand for an 80-column terminal, in one
//! layout every tool keeps:
//!
//! - the first line is the title, then `Usage:` lines;
//! - prose starts in column 0; a line of its own ending in `:` right above
//!   option entries is the heading of a group of options;
//! - an option entry starts within the first 8 columns with the option
//!   (`  -t, --threads[=N]`, `      --json=FILE`, `  -p US`), then two
//!   spaces or more and its text; lines indented further continue it;
//! - other indented lines are a bullet list (`  - ...`), a list of terms
//!   (`  ok       as a real-time ...`: a word, two spaces or more, its
//!   text) or, failing both, lines shown as they are (examples, output
//!   formats).
//!
//! The man pages and completions are made from this and from the option
//! tables, so that neither is written a second time.

/// A help text in parts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Help {
    /// The first line.
    pub title: String,
    /// The `Usage:` lines without that word, each trimmed.
    pub usage: Vec<String>,
    /// Everything after, in order.
    pub blocks: Vec<Block>,
}

/// One part of a help text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// The heading of a group of options, without its colon.
    Heading(String),
    /// Prose: its lines, trimmed.
    Paragraph(Vec<String>),
    /// Option entries.
    Options(Vec<Entry>),
    /// A bullet list: each item's lines, trimmed, the dash removed.
    Bullets(Vec<Vec<String>>),
    /// Terms and what they mean.
    Terms(Vec<Term>),
    /// Lines shown as they are, less their common indentation.
    Verbatim(Vec<String>),
    /// Indented prose (lines of text as long as a paragraph's), with
    /// lines indented further shown as they are: paragraphs and verbatim
    /// blocks.
    Indented(Vec<Block>),
}

/// One option entry: `-t, --threads[=N]` and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The spellings and the value as written: `-t, --threads[=N]`.
    pub spec: String,
    /// The text's lines, trimmed (the spaces in a line collapsed).
    pub text: Vec<String>,
}

/// One term of a list of terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// The word.
    pub term: String,
    /// The text's lines, trimmed; `true` where a line starts a new line
    /// of its own in the help (`op: ...` under a kind of load) rather than
    /// carrying on the sentence.
    pub lines: Vec<(bool, String)>,
}

/// An option's spelling in an entry: `-t` or `--threads`, and what follows
/// it (`[=N]`, `=FILE`, ` US`, or nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spelling {
    /// With its dashes.
    pub name: String,
    /// The value part as written.
    pub value: String,
}

impl Entry {
    /// Each spelling of the entry, in order (`-t`, `--threads`).
    pub fn spellings(&self) -> Vec<Spelling> {
        self.spec
            .split(", ")
            .map(|token| {
                let dashes = if token.starts_with("--") { 2 } else { 1 };
                let body = &token[dashes..];
                let end = if dashes == 2 {
                    body.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                        .unwrap_or(body.len())
                } else {
                    body.chars().next().map_or(0, char::len_utf8)
                };
                Spelling {
                    name: token[..dashes + end].to_string(),
                    value: body[end..].to_string(),
                }
            })
            .collect()
    }

    /// The value's name (`N`, `FILE`) and whether it is optional (`[=N]`),
    /// from the last spelling that shows one.
    pub fn value(&self) -> Option<(String, bool)> {
        let value = self
            .spellings()
            .into_iter()
            .map(|s| s.value)
            .rfind(|v| !v.trim().is_empty())?;
        let optional = value.starts_with('[');
        let name = value
            .trim_matches(|c: char| c == '[' || c == ']' || c == '=' || c == ' ')
            .to_string();
        Some((name, optional))
    }

    /// The text as one line.
    pub fn joined(&self) -> String {
        self.text.join(" ")
    }
}

impl Help {
    /// Every option entry, in order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.blocks.iter().flat_map(|b| match b {
            Block::Options(entries) => entries.as_slice(),
            _ => &[],
        })
    }

    /// Every spelled option name (`-t`, `--threads`) of the entries.
    pub fn option_names(&self) -> Vec<String> {
        self.entries()
            .flat_map(Entry::spellings)
            .map(|s| s.name)
            .collect()
    }
}

/// Columns within which an option entry starts (its continuation lines are
/// indented further: 12 columns or more in every help).
const ENTRY_INDENT: usize = 8;

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Whether `line` starts an option entry.
fn is_entry(line: &str) -> bool {
    let n = indent(line);
    if n == 0 || n > ENTRY_INDENT {
        return false;
    }
    let t = &line[n..];
    let bytes = t.as_bytes();
    match bytes {
        [b'-', b'-', c, ..] => c.is_ascii_alphabetic(),
        [b'-', c, rest @ ..] => {
            (c.is_ascii_alphanumeric() || *c == b'?')
                && rest
                    .first()
                    .is_none_or(|r| matches!(r, b',' | b' ' | b'[' | b'='))
        }
        _ => false,
    }
}

/// The text of a line with its runs of spaces made one.
pub(crate) fn collapsed(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads a help text (see the module documentation for its layout).
pub fn parse(text: &str) -> Help {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let mut help = Help {
        title: lines.first().map(|l| l.to_string()).unwrap_or_default(),
        ..Help::default()
    };
    let mut i = 1;
    while i < lines.len() && lines[i].is_empty() {
        i += 1;
    }
    if let Some(first) = lines.get(i).and_then(|l| l.strip_prefix("Usage:")) {
        help.usage.push(collapsed(first));
        i += 1;
        while i < lines.len() && indent(lines[i]) > 0 {
            help.usage.push(collapsed(lines[i]));
            i += 1;
        }
    }
    while i < lines.len() {
        let line = lines[i];
        if line.is_empty() {
            i += 1;
        } else if indent(line) == 0 {
            let start = i;
            while i < lines.len() && !lines[i].is_empty() && indent(lines[i]) == 0 {
                i += 1;
            }
            let prose: Vec<String> = lines[start..i].iter().map(|l| l.to_string()).collect();
            let heads_options = prose.len() == 1
                && prose[0].ends_with(':')
                && lines.get(i).is_some_and(|l| is_entry(l));
            help.blocks.push(if heads_options {
                Block::Heading(prose[0].trim_end_matches(':').to_string())
            } else {
                Block::Paragraph(prose)
            });
        } else if is_entry(line) {
            let mut entries = Vec::new();
            while i < lines.len() && is_entry(lines[i]) {
                let at = indent(lines[i]);
                let body = &lines[i][at..];
                let (spec, first) = match body.find("  ") {
                    Some(gap) => (&body[..gap], body[gap..].trim()),
                    None => (body, ""),
                };
                let mut text: Vec<String> = Vec::new();
                if !first.is_empty() {
                    text.push(collapsed(first));
                }
                i += 1;
                while i < lines.len()
                    && !lines[i].is_empty()
                    && indent(lines[i]) > at
                    && !is_entry(lines[i])
                {
                    text.push(collapsed(lines[i]));
                    i += 1;
                }
                entries.push(Entry {
                    spec: spec.to_string(),
                    text,
                });
            }
            help.blocks.push(Block::Options(entries));
        } else {
            let start = i;
            while i < lines.len()
                && !lines[i].is_empty()
                && indent(lines[i]) > 0
                && !is_entry(lines[i])
            {
                i += 1;
            }
            help.blocks.push(indented_block(&lines[start..i]));
        }
    }
    help
}

/// An indented block that holds no option entry: bullets, terms, or lines
/// as they are.
fn indented_block(lines: &[&str]) -> Block {
    let base = lines.iter().map(|l| indent(l)).min().unwrap_or(0);
    let starts = |l: &str| indent(l) == base;
    if lines[0].trim_start().starts_with("- ") {
        let mut items: Vec<Vec<String>> = Vec::new();
        for line in lines {
            let t = line.trim();
            match t.strip_prefix("- ") {
                Some(rest) if starts(line) => items.push(vec![collapsed(rest)]),
                _ => items
                    .last_mut()
                    .expect("the first line is an item")
                    .push(collapsed(t)),
            }
        }
        return Block::Bullets(items);
    }
    let term_of = |line: &str| -> Option<(String, usize, String)> {
        let t = &line[base..];
        let word_end = t.find(' ')?;
        let gap = t[word_end..].len() - t[word_end..].trim_start().len();
        (gap >= 2).then(|| {
            (
                t[..word_end].to_string(),
                base + word_end + gap,
                t[word_end + gap..].to_string(),
            )
        })
    };
    if lines
        .iter()
        .filter(|l| starts(l))
        .all(|l| term_of(l).is_some())
    {
        let mut terms: Vec<(Term, usize)> = Vec::new();
        for line in lines {
            if starts(line) {
                let (term, column, text) = term_of(line).expect("checked above");
                terms.push((
                    Term {
                        term,
                        lines: vec![(false, collapsed(&text))],
                    },
                    column,
                ));
            } else {
                let (term, column) = terms.last_mut().expect("the first line is a term");
                let t = line.trim();
                // A line in the text's own column that opens with a label
                // (`op:`) starts a line of its own.
                let own_line = indent(line) == *column
                    && t.split(' ').next().is_some_and(|w| w.ends_with(':'));
                term.lines.push((own_line, collapsed(t)));
            }
        }
        return Block::Terms(terms.into_iter().map(|(t, _)| t).collect());
    }
    let base_lines: Vec<&&str> = lines.iter().filter(|l| starts(l)).collect();
    let prose = base_lines.len() >= 2 && base_lines.iter().any(|l| l.len() - base >= PROSE);
    if !prose {
        return Block::Verbatim(lines.iter().map(|l| l[base..].to_string()).collect());
    }
    let mut parts: Vec<Block> = Vec::new();
    for line in lines {
        match (parts.last_mut(), starts(line)) {
            (Some(Block::Paragraph(p)), true) => p.push(line.trim().to_string()),
            (Some(Block::Verbatim(v)), false) => v.push(line[base..].to_string()),
            (_, true) => parts.push(Block::Paragraph(vec![line.trim().to_string()])),
            (_, false) => parts.push(Block::Verbatim(vec![line[base..].to_string()])),
        }
    }
    // What is shown as it is, less the indentation its block shares.
    for part in &mut parts {
        if let Block::Verbatim(v) = part {
            let shared = v.iter().map(|l| indent(l)).min().unwrap_or(0);
            for l in v.iter_mut() {
                *l = l[shared..].to_string();
            }
        }
    }
    Block::Indented(parts)
}

/// The length from which an indented line is taken for prose rather than
/// an example or an output format shown as it is.
const PROSE: usize = 60;

#[cfg(test)]
mod tests {
    use super::*;

    const HELP: &str = "\
rtlat demo: a demonstration

Usage: rtlat demo [OPTIONS]
       demo [OPTIONS]

Each thread does a thing. Figures are in
microseconds.

Threads:
  -t, --threads[=N]      number of threads; -t alone: one per CPU
                         (or per CPU of -a's list)               [1]
      --json=FILE        write JSON to FILE
      --load-schedule=SCHEDULE
                         load in phases, ending the run (or -l,
                         -D sooner)
  -p US     period in microseconds

Kinds:
  cpu        arithmetic
             op: 256 steps plus
                 more
  io         writes

The inputs, each one of:
  - a file,
    of some kind;
  - another.
and more.

Example: one thread:
  rtlat demo -t 1

Exit status: 0 fine.
";

    #[test]
    fn every_part_is_read() {
        let h = parse(HELP);
        assert_eq!(h.title, "rtlat demo: a demonstration");
        assert_eq!(h.usage, ["rtlat demo [OPTIONS]", "demo [OPTIONS]"]);
        let entry = |spec: &str, text: &[&str]| Entry {
            spec: spec.into(),
            text: text.iter().map(|t| t.to_string()).collect(),
        };
        assert_eq!(
            h.blocks,
            [
                Block::Paragraph(vec![
                    "Each thread does a thing. Figures are in".into(),
                    "microseconds.".into()
                ]),
                Block::Heading("Threads".into()),
                Block::Options(vec![
                    entry(
                        "-t, --threads[=N]",
                        &[
                            "number of threads; -t alone: one per CPU",
                            "(or per CPU of -a's list) [1]"
                        ]
                    ),
                    entry("--json=FILE", &["write JSON to FILE"]),
                    entry(
                        "--load-schedule=SCHEDULE",
                        &["load in phases, ending the run (or -l,", "-D sooner)"]
                    ),
                    entry("-p US", &["period in microseconds"]),
                ]),
                Block::Paragraph(vec!["Kinds:".into()]),
                Block::Terms(vec![
                    Term {
                        term: "cpu".into(),
                        lines: vec![
                            (false, "arithmetic".into()),
                            (true, "op: 256 steps plus".into()),
                            (false, "more".into())
                        ]
                    },
                    Term {
                        term: "io".into(),
                        lines: vec![(false, "writes".into())]
                    },
                ]),
                Block::Paragraph(vec!["The inputs, each one of:".into()]),
                Block::Bullets(vec![
                    vec!["a file,".into(), "of some kind;".into()],
                    vec!["another.".into()]
                ]),
                Block::Paragraph(vec!["and more.".into()]),
                Block::Paragraph(vec!["Example: one thread:".into()]),
                Block::Verbatim(vec!["rtlat demo -t 1".into()]),
                Block::Paragraph(vec!["Exit status: 0 fine.".into()]),
            ]
        );
        assert_eq!(
            h.option_names(),
            ["-t", "--threads", "--json", "--load-schedule", "-p"]
        );
    }

    #[test]
    fn indented_prose_is_prose() {
        let h = parse(
            "t\n\nA rule:\n  A change is within noise when it is smaller than the margin of noise\n      \
             |NEW - BASE| <= margin\n  where the margin is that of the run, at the value it has\n  \
             and no more.\n",
        );
        assert_eq!(
            h.blocks[1],
            Block::Indented(vec![
                Block::Paragraph(vec![
                    "A change is within noise when it is smaller than the margin of noise".into()
                ]),
                Block::Verbatim(vec!["|NEW - BASE| <= margin".into()]),
                Block::Paragraph(vec![
                    "where the margin is that of the run, at the value it has".into(),
                    "and no more.".into()
                ]),
            ])
        );
        // Short lines (an output format) stay as they are.
        let h = parse(
            "t\n\nOutput:\n  #0: ID<tid>, P<prio>\n      #1: ID<tid>\n  #1 -> #0, Min <us>\n",
        );
        assert_eq!(
            h.blocks[1],
            Block::Verbatim(vec![
                "#0: ID<tid>, P<prio>".into(),
                "    #1: ID<tid>".into(),
                "#1 -> #0, Min <us>".into()
            ])
        );
    }

    #[test]
    fn spellings_and_values() {
        let e = |spec: &str| Entry {
            spec: spec.into(),
            text: vec![],
        };
        assert_eq!(
            e("-t, --threads[=N]").spellings(),
            [
                Spelling {
                    name: "-t".into(),
                    value: String::new()
                },
                Spelling {
                    name: "--threads".into(),
                    value: "[=N]".into()
                }
            ]
        );
        assert_eq!(e("-t, --threads[=N]").value(), Some(("N".into(), true)));
        assert_eq!(e("--json=FILE").value(), Some(("FILE".into(), false)));
        assert_eq!(e("-o, --output FILE").value(), Some(("FILE".into(), false)));
        assert_eq!(e("-p US").value(), Some(("US".into(), false)));
        assert_eq!(e("-?, --help").value(), None);
        assert_eq!(e("-?, --help").spellings()[0].name, "-?");
        assert_eq!(
            e("--refresh_on_max").spellings()[0].name,
            "--refresh_on_max"
        );
    }

    #[test]
    fn an_option_inside_a_text_line_is_no_entry() {
        // Continuation lines may start with an option (`-D sooner`): they
        // are indented beyond the entry columns.
        assert!(!is_entry("                         -N) at the end"));
        assert!(is_entry("  -N, --nsecs   ns"));
        assert!(is_entry("      --nsecs"));
        assert!(!is_entry("  - a bullet"));
        assert!(!is_entry("-q at column 0 is prose"));
    }
}
