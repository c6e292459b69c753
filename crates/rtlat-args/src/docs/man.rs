//! A man page in roff (the `man` macros) from a help text read by
//! [`help`](super::help): NAME, SYNOPSIS, DESCRIPTION, OPTIONS (one `.TP`
//! per option entry, the groups' headings as `.SS`), and after them EXAMPLES,
//! NOTES, EXIT STATUS and SEE ALSO.
//!
//! Written here rather than with a crate: `clap_mangen` needs a clap
//! `Command`, which rtlat does not have (its parser is getopt's), and the
//! `roff` crate only spares the escaping of text, which the help's layout
//! decides anyway. What the pages use is small: `.TH .SH .SS .PP .TP .IP
//! .B .BR .nf .fi .br .RS .RE` and the escapes `\fB \fI \fR \- \e \& \(dq
//! \[uXXXX]`, which both groff and mandoc render.

use std::fmt::Write as _;

use super::help::{Block, Entry, Help, Term};

/// What a page is made of besides its help text.
#[derive(Clone, Debug)]
pub struct Page<'a> {
    /// The page's name: `rtlat-cyclictest`.
    pub name: &'a str,
    /// What it is, in one line (the tool's summary).
    pub summary: &'a str,
    /// The help text, read.
    pub help: &'a Help,
    /// The program and its version, in the footer: `rtlat 0.1.0`.
    pub source: &'a str,
    /// More synopsis lines, after the help's (`cyclictest [OPTIONS]` for a
    /// tool also installed under the C tool's name).
    pub more_usage: Vec<String>,
    /// Options of another help repeated here, under a section of this
    /// title, after a paragraph that says why (rtlat monitor takes every
    /// option of rtlat cyclictest).
    pub inherited: Option<Inherited<'a>>,
    /// The EXIT STATUS section when the help has no `Exit status:`
    /// paragraph.
    pub exit_status: &'a str,
    /// Pages to see: `(name, section)`.
    pub see_also: Vec<(String, u8)>,
}

/// Options of another help repeated in a page.
#[derive(Clone, Debug)]
pub struct Inherited<'a> {
    /// The section's title: `CYCLICTEST OPTIONS`.
    pub title: &'a str,
    /// The paragraph that opens it.
    pub intro: &'a str,
    /// The other help, read.
    pub help: &'a Help,
}

/// The page in roff.
pub fn render(page: &Page) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        ".\\\" {} (1): generated from the command line's tables and help by\n\
         .\\\" '{} --generate man'; edit the help text, not this file.",
        page.name,
        page.source.split(' ').next().unwrap_or_default()
    );
    let _ = writeln!(
        out,
        ".TH {} 1 \"\" \"{}\" \"User Commands\"",
        escape(&page.name.to_ascii_uppercase()),
        escape(page.source)
    );
    // No hyphenation: names of commands and options must not be split.
    out.push_str(".nh\n.SH NAME\n");
    let _ = writeln!(out, "{} \\- {}", escape(page.name), escape(page.summary));

    out.push_str(".SH SYNOPSIS\n");
    let usage: Vec<&str> = page
        .help
        .usage
        .iter()
        .map(String::as_str)
        .chain(page.more_usage.iter().map(String::as_str))
        .collect();
    for (n, line) in usage.iter().enumerate() {
        if n > 0 {
            out.push_str(".br\n");
        }
        out.push_str(&synopsis_line(line));
    }

    let parts = Parts::of(page.help);
    out.push_str(".SH DESCRIPTION\n");
    blocks(&mut out, parts.description);
    if !parts.options.is_empty() {
        out.push_str(".SH OPTIONS\n");
        blocks(&mut out, parts.options);
    }
    if let Some(inherited) = &page.inherited {
        let _ = writeln!(out, ".SH {}", escape(inherited.title));
        out.push_str(".PP\n");
        text_lines(&mut out, inherited.intro.lines());
        blocks(&mut out, Parts::of(inherited.help).options);
    }
    if !parts.examples.is_empty() {
        out.push_str(".SH EXAMPLES\n");
        blocks(&mut out, &parts.examples);
    }
    if !parts.notes.is_empty() {
        out.push_str(".SH NOTES\n");
        blocks(&mut out, &parts.notes);
    }
    out.push_str(".SH EXIT STATUS\n.PP\n");
    match &parts.exit_status {
        Some(lines) => text_lines(&mut out, lines.iter().map(String::as_str)),
        None => text_lines(&mut out, page.exit_status.lines()),
    }
    if !page.see_also.is_empty() {
        out.push_str(".SH SEE ALSO\n");
        let last = page.see_also.len() - 1;
        for (n, (name, section)) in page.see_also.iter().enumerate() {
            let comma = if n == last { "" } else { "," };
            let _ = writeln!(out, ".BR {} ({section}){comma}", escape(name));
        }
    }
    out
}

/// A help's blocks by the section they go to.
struct Parts<'h> {
    description: &'h [Block],
    options: &'h [Block],
    examples: Vec<Block>,
    notes: Vec<Block>,
    /// The lines of an `Exit status:` paragraph, that word removed.
    exit_status: Option<Vec<String>>,
}

impl<'h> Parts<'h> {
    /// DESCRIPTION: up to the first options (and their heading); OPTIONS:
    /// up to the last; after them, `Example...` paragraphs (and the lines
    /// that follow) are EXAMPLES, `Exit status:` is EXIT STATUS, the rest
    /// NOTES.
    fn of(help: &'h Help) -> Parts<'h> {
        let blocks = help.blocks.as_slice();
        let is_options = |b: &Block| matches!(b, Block::Options(_));
        let (first, last) = match (
            blocks.iter().position(is_options),
            blocks.iter().rposition(is_options),
        ) {
            (Some(first), Some(last)) => {
                let heading = first > 0 && matches!(blocks[first - 1], Block::Heading(_));
                (first - usize::from(heading), last + 1)
            }
            _ => (blocks.len(), blocks.len()),
        };
        let mut parts = Parts {
            description: &blocks[..first],
            options: &blocks[first..last],
            examples: Vec::new(),
            notes: Vec::new(),
            exit_status: None,
        };
        let mut in_example = false;
        for block in &blocks[last..] {
            match block {
                Block::Paragraph(lines) if lines[0].starts_with("Exit status:") => {
                    let mut lines = lines.clone();
                    lines[0] = lines[0]["Exit status:".len()..].trim().to_string();
                    parts.exit_status = Some(lines);
                    in_example = false;
                }
                Block::Paragraph(lines) => {
                    in_example = lines[0].starts_with("Example");
                    if in_example {
                        parts.examples.push(block.clone());
                    } else {
                        parts.notes.push(block.clone());
                    }
                }
                _ if in_example => parts.examples.push(block.clone()),
                _ => parts.notes.push(block.clone()),
            }
        }
        parts
    }
}

fn blocks(out: &mut String, blocks: &[Block]) {
    for block in blocks {
        match block {
            Block::Heading(h) if h == "Options" => {}
            Block::Heading(h) => {
                let _ = writeln!(out, ".SS {}", escape(h));
            }
            Block::Paragraph(lines) => {
                out.push_str(".PP\n");
                text_lines(out, lines.iter().map(String::as_str));
            }
            Block::Options(entries) => {
                for entry in entries {
                    option_entry(out, entry);
                }
            }
            Block::Bullets(items) => {
                for item in items {
                    out.push_str(".IP \\(bu 2\n");
                    text_lines(out, item.iter().map(String::as_str));
                }
            }
            Block::Terms(terms) => {
                for term in terms {
                    term_entry(out, term);
                }
            }
            Block::Verbatim(lines) => {
                out.push_str(".PP\n.RS 4\n.nf\n");
                for line in lines {
                    out.push_str(&guarded(&escape(line)));
                    out.push('\n');
                }
                out.push_str(".fi\n.RE\n");
            }
            Block::Indented(parts) => {
                out.push_str(".RS 4\n");
                self::blocks(out, parts);
                out.push_str(".RE\n");
            }
        }
    }
}

fn option_entry(out: &mut String, entry: &Entry) {
    out.push_str(".TP\n");
    let tag: Vec<String> = entry
        .spellings()
        .iter()
        .map(|s| format!("\\fB{}\\fR{}", escape(&s.name), value_syntax(&s.value)))
        .collect();
    out.push_str(&guarded(&tag.join(", ")));
    out.push('\n');
    text_lines(out, entry.text.iter().map(String::as_str));
}

fn term_entry(out: &mut String, term: &Term) {
    let _ = writeln!(out, ".TP\n.B {}", escape(&term.term));
    for (n, (own_line, line)) in term.lines.iter().enumerate() {
        if *own_line && n > 0 {
            out.push_str(".br\n");
        }
        out.push_str(&guarded(&escape(line)));
        out.push('\n');
    }
}

/// `[=N]`, `=FILE`, ` WxH`: names of values (with a capital letter) in
/// italics, options (in a synopsis) in bold, the rest as it is.
fn value_syntax(value: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.starts_with('-') && word.len() > 1 {
            let _ = write!(out, "\\fB{}\\fR", escape(word));
        } else if word.chars().any(|c| c.is_ascii_uppercase()) {
            let _ = write!(out, "\\fI{}\\fR", escape(word));
        } else {
            out.push_str(&escape(word));
        }
        word.clear();
    };
    for c in value.chars() {
        if matches!(c, '[' | ']' | '=' | ' ' | ',') {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A usage line: the command's words (up to the first that is not
/// lowercase letters and dashes) in bold, the rest as [`value_syntax`].
fn synopsis_line(line: &str) -> String {
    let words: Vec<&str> = line.split(' ').collect();
    let command = words
        .iter()
        .take_while(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c == '-' || c.is_ascii_digit())
        })
        .count();
    let mut out = String::new();
    if command > 0 {
        let _ = write!(out, "\\fB{}\\fR", escape(&words[..command].join(" ")));
    }
    let rest = words[command..].join(" ");
    if !rest.is_empty() {
        if command > 0 {
            out.push(' ');
        }
        out.push_str(&value_syntax(&rest));
    }
    guarded(&out) + "\n"
}

fn text_lines<'l>(out: &mut String, lines: impl Iterator<Item = &'l str>) {
    for line in lines {
        let line = line.trim();
        if !line.is_empty() {
            out.push_str(&guarded(&escape(line)));
            out.push('\n');
        }
    }
}

/// A line that would start with a control character (`.` or `'`) made
/// text.
fn guarded(line: &str) -> String {
    if line.starts_with(['.', '\'']) {
        format!("\\&{line}")
    } else {
        line.to_string()
    }
}

/// Text for roff: backslashes and double quotes escaped, every dash `\-`
/// (groff draws a plain `-` as a hyphen, U+2010, which breaks an option,
/// a command name or a CPU range copied from the page), anything beyond
/// ASCII by its code point (groff reads bytes as Latin-1 unless told
/// otherwise).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '"' => out.push_str("\\(dq"),
            '-' => out.push_str("\\-"),
            c if c.is_ascii() => out.push(c),
            c => {
                let _ = write!(out, "\\[u{:04X}]", u32::from(c));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::help::parse;
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(escape("--json=FILE"), "\\-\\-json=FILE");
        assert_eq!(escape("real-time, 0-3,8"), "real\\-time, 0\\-3,8");
        assert_eq!(escape("'-' reads stdin"), "'\\-' reads stdin");
        assert_eq!(escape("a \\ b \"c\""), "a \\e b \\(dqc\\(dq");
        assert_eq!(escape("10 µs"), "10 \\[u00B5]s");
        assert_eq!(guarded(".hidden"), "\\&.hidden");
        assert_eq!(guarded("'# load' lines"), "\\&'# load' lines");
    }

    #[test]
    fn option_tags() {
        assert_eq!(
            value_syntax("[=CPUS]"),
            "[=\\fICPUS\\fR]",
            "a value's name in italics"
        );
        assert_eq!(value_syntax(" 0"), " 0", "a literal value as it is");
        assert_eq!(value_syntax("=IP:PORT"), "=\\fIIP:PORT\\fR");
        let mut out = String::new();
        option_entry(
            &mut out,
            &Entry {
                spec: "-t, --threads[=N]".into(),
                text: vec!["number of threads".into(), ".5 more".into()],
            },
        );
        assert_eq!(
            out,
            ".TP\n\\fB\\-t\\fR, \\fB\\-\\-threads\\fR[=\\fIN\\fR]\nnumber of threads\n\\&.5 more\n"
        );
        assert_eq!(
            synopsis_line("rtlat plot INPUT... -o OUT.svg|OUT.png [OPTIONS]"),
            "\\fBrtlat plot\\fR \\fIINPUT...\\fR \\fB\\-o\\fR \\fIOUT.svg|OUT.png\\fR [\\fIOPTIONS\\fR]\n"
        );
    }

    #[test]
    fn sections_in_order() {
        let help = parse(
            "rtlat demo: demo\n\nUsage: rtlat demo [OPTIONS]\n\nWhat it does.\n\n\
             Options:\n  -q, --quiet   say little\n\nExample: quiet:\n  rtlat demo -q\n\n\
             A note.\n\nExit status: 0 fine, 2 bad.\n",
        );
        let page = Page {
            name: "rtlat-demo",
            summary: "demo",
            help: &help,
            source: "rtlat 1.0",
            more_usage: vec!["demo [OPTIONS]".into()],
            inherited: None,
            exit_status: "unused",
            see_also: vec![("rtlat".into(), 1), ("demo".into(), 8)],
        };
        let roff = render(&page);
        let sections: Vec<&str> = roff.lines().filter(|l| l.starts_with(".SH")).collect();
        assert_eq!(
            sections,
            [
                ".SH NAME",
                ".SH SYNOPSIS",
                ".SH DESCRIPTION",
                ".SH OPTIONS",
                ".SH EXAMPLES",
                ".SH NOTES",
                ".SH EXIT STATUS",
                ".SH SEE ALSO"
            ]
        );
        assert!(roff.contains(".TH RTLAT\\-DEMO 1 \"\" \"rtlat 1.0\" \"User Commands\"\n"));
        assert!(roff.contains("rtlat\\-demo \\- demo\n"));
        assert!(roff.contains(".br\n\\fBdemo\\fR [\\fIOPTIONS\\fR]\n"));
        assert!(roff.contains(".SH EXIT STATUS\n.PP\n0 fine, 2 bad.\n"));
        assert!(roff.contains(".nf\nrtlat demo \\-q\n.fi\n"));
        assert!(roff.ends_with(".BR rtlat (1),\n.BR demo (8)\n"));
        assert!(!roff.contains("unused"));
    }
}
