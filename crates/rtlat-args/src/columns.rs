//! Text for a person in lines that fit the terminal: the one place where
//! both binaries learn the width to write to and break their lines.
//!
//! The width ([`width`]): `COLUMNS` when it is set to a whole number (the
//! POSIX convention: the user's preferred width, whatever the output
//! is); else the terminal's when the stream is one; else
//! [`DEFAULT_WIDTH`], 80. Never narrower than [`NARROWEST`]. Messages on
//! standard error are the exception ([`terminal_width`]): wrapped on a
//! terminal only, one line each in a log or a pipe.
//!
//! Breaking ([`wrap`]) is textwrap's (its words, its first-fit line
//! filling), at spaces only: a run of spaces inside a line (a column's
//! padding) stays, a line ends without trailing spaces, a figure stays
//! with its unit (`1.8 us`), and the first line's leading `#` and spaces
//! are kept, so that a `# ` comment line of cyclictest's output continues
//! as comment lines (`indent` starts with `#`; [`wrap_deeper`] and
//! [`write_wrapped`] indent them two columns deeper). A word wider than a
//! whole line is cut, but never inside an escape of [`crate::escape`]
//! (`\e`, `\x07`, `\u{202e}`, `\\`): text from the system is escaped
//! first, then wrapped, and stays readable and unambiguous.
//!
//! A command to be copied ([`command`]) is broken between its arguments,
//! an option with its value, each line but the last ending in ` \` so
//! that the lines pasted into a shell are still one command.
//!
//! Machine formats (cyclictest's `T:` lines, JSON, histograms, metrics)
//! never come here.

use std::ffi::OsStr;
use std::io::{self, IsTerminal, Write};

use textwrap::WordSeparator;
use textwrap::core::{Word, display_width};
use textwrap::wrap_algorithms::wrap_first_fit;

/// The width text is written to when the output is not a terminal and
/// `COLUMNS` is not set.
pub const DEFAULT_WIDTH: usize = 80;

/// The narrowest width text is wrapped to: a narrower terminal or
/// `COLUMNS` gets lines of this width.
pub const NARROWEST: usize = 40;

/// The stream a text goes to, whose terminal sets its width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Standard output: results, the audit, the verdict.
    Stdout,
    /// Standard error: messages.
    Stderr,
}

/// The width to wrap text for `stream` to (see the module documentation).
pub fn width(stream: Stream) -> usize {
    let terminal = match stream {
        Stream::Stdout => {
            let out = io::stdout();
            out.is_terminal()
                .then(|| terminal_size::terminal_size_of(out))
        }
        Stream::Stderr => {
            let err = io::stderr();
            err.is_terminal()
                .then(|| terminal_size::terminal_size_of(err))
        }
    };
    let terminal = terminal.map(|size| size.map(|(w, _)| usize::from(w.0)));
    width_from(std::env::var_os("COLUMNS").as_deref(), terminal)
}

/// The width to wrap messages on `stream` to when it is a terminal;
/// `None` when it is not: a message to a log or a pipe stays one line, so
/// that each message is one line to grep.
pub fn terminal_width(stream: Stream) -> Option<usize> {
    let is_terminal = match stream {
        Stream::Stdout => io::stdout().is_terminal(),
        Stream::Stderr => io::stderr().is_terminal(),
    };
    is_terminal.then(|| width(stream))
}

/// The width for a `COLUMNS` value and a terminal of `terminal` columns
/// (`Some(None)`: a terminal of unknown size; `None`: not a terminal).
pub fn width_from(columns: Option<&OsStr>, terminal: Option<Option<usize>>) -> usize {
    let columns = columns
        .and_then(OsStr::to_str)
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    columns
        .or(terminal.flatten())
        .unwrap_or(DEFAULT_WIDTH)
        .max(NARROWEST)
}

/// The columns `text` takes on a terminal (ANSI colour codes take none).
pub fn columns(text: &str) -> usize {
    display_width(text)
}

/// `line` in lines of at most `width` columns, broken at spaces, each
/// line after the first starting with `indent` (see the module
/// documentation). An empty line stays one empty line.
pub fn wrap(line: &str, width: usize, indent: &str) -> Vec<String> {
    let body = line.trim_start_matches(['#', ' ']);
    let lead = &line[..line.len() - body.len()];
    if body.is_empty() {
        return vec![line.trim_end().to_string()];
    }
    let first = width.saturating_sub(columns(lead)).max(1);
    let rest = width.saturating_sub(columns(indent)).max(1);
    // A word wider than any line is cut into pieces that fit one, at
    // escape boundaries, joined without a space.
    let room = first.min(rest);
    let mut pieces: Vec<Word<'_>> = Vec::new();
    for word in bound_units(body) {
        if word.width <= room {
            pieces.push(word);
            continue;
        }
        let mut start = 0;
        let mut end = 0;
        for unit in units(word.word) {
            if end > start && columns(&word.word[start..end + unit.len()]) > room {
                pieces.push(piece(&word.word[start..end], ""));
                start = end;
            }
            end += unit.len();
        }
        pieces.push(piece(&word.word[start..end], word.whitespace));
    }
    let widths = [first as f64, rest as f64];
    wrap_first_fit(&pieces, &widths)
        .into_iter()
        .enumerate()
        .map(|(i, words)| {
            let mut text = if i == 0 { lead } else { indent }.to_string();
            for (j, word) in words.iter().enumerate() {
                text.push_str(word.word);
                if j + 1 < words.len() {
                    text.push_str(word.whitespace);
                }
            }
            text
        })
        .collect()
}

/// Units a figure keeps on its line: `1.8 us` never ends one line and
/// starts the next with `us`.
const UNITS: &[&str] = &["ns", "us", "µs", "ms", "s", "%", "MiB", "GiB"];

/// The words of `text` (textwrap's, at spaces), a unit of [`UNITS`] bound
/// to the number before it.
fn bound_units(text: &str) -> Vec<Word<'_>> {
    let mut words: Vec<Word<'_>> = Vec::new();
    let mut start = 0;
    let mut last_start = 0;
    for word in WordSeparator::AsciiSpace.find_words(text) {
        let end = start + word.word.len();
        match words.last_mut() {
            Some(last)
                if UNITS.contains(&word.word.trim_end_matches([',', ';', ')', ':']))
                    && last.word.ends_with(|c: char| c.is_ascii_digit()) =>
            {
                *last = piece(&text[last_start..end], word.whitespace);
            }
            _ => {
                last_start = start;
                words.push(word);
            }
        }
        start = end + word.whitespace.len();
    }
    words
}

/// A piece of a word, `whitespace` after it.
fn piece<'a>(text: &'a str, whitespace: &'a str) -> Word<'a> {
    Word {
        word: text,
        whitespace,
        penalty: "",
        width: columns(text),
    }
}

/// `line` wrapped with its continuation lines two columns deeper than
/// its own leading `#` and spaces: `# Explain ...` continues as
/// `#   ...`, `#   irq_latency ...` as `#     ...`, so that a script
/// that skips `#` lines skips every piece.
pub fn wrap_deeper(line: &str, width: usize) -> Vec<String> {
    let body = line.trim_start_matches(['#', ' ']);
    let lead = &line[..line.len() - body.len()];
    let indent = format!("{lead}  ");
    wrap(line, width, &indent)
}

/// Writes to `w` what `write` writes, each line wrapped by
/// [`wrap_deeper`] to `width`: the one call that fits a block of lines
/// (the explanations, the load's summary) to the terminal, whatever lines
/// it has.
pub fn write_wrapped(
    w: &mut impl Write,
    width: usize,
    write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>,
) -> io::Result<()> {
    let mut text = Vec::new();
    write(&mut text)?;
    for line in String::from_utf8_lossy(&text).lines() {
        for piece in wrap_deeper(line, width) {
            writeln!(w, "{piece}")?;
        }
    }
    Ok(())
}

/// `text` split into the smallest pieces a cut may fall between: one
/// character, or one whole escape of [`crate::escape`] (`\\`, `\e`,
/// `\n`, `\xNN`, `\u{...}`).
fn units(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let mut chars = rest.char_indices();
        let (_, first) = chars.next()?;
        let end = if first == '\\' {
            match chars.next() {
                Some((i, 'x')) => (i + 3).min(rest.len()),
                Some((i, 'u')) => rest[i..]
                    .find('}')
                    .map_or(rest.len(), |close| i + close + 1),
                Some((i, c)) => i + c.len_utf8(),
                None => 1,
            }
        } else {
            first.len_utf8()
        };
        let end = (0..=end)
            .rev()
            .find(|&e| rest.is_char_boundary(e))
            .unwrap_or(end);
        let (unit, after) = rest.split_at(end);
        rest = after;
        Some(unit)
    })
}

/// A command line to be copied, after `lead` (`suggested: `), in lines
/// of at most `width` columns: broken between arguments, never inside
/// one, an option and its value kept together, each line but the last
/// ending in ` \` (a shell's line continuation) and each line after the
/// first indented by four spaces. An argument wider than a whole line
/// gets a line of its own.
pub fn command(lead: &str, command: &str, width: usize) -> Vec<String> {
    const INDENT: &str = "    ";
    const CONTINUED: &str = " \\";
    // Each group: its text and the spaces after it, as written.
    let mut groups: Vec<(String, &str)> = Vec::new();
    for word in WordSeparator::AsciiSpace.find_words(command.trim_start()) {
        match groups.last_mut() {
            Some((last, gap))
                if !word.word.starts_with('-') && last.starts_with('-') && !last.contains(' ') =>
            {
                last.push_str(gap);
                last.push_str(word.word);
                *gap = word.whitespace;
            }
            _ => groups.push((word.word.to_string(), word.whitespace)),
        }
    }
    let mut lines = Vec::new();
    let mut current = lead.to_string();
    let mut gap = "";
    for (i, (group, after)) in groups.iter().enumerate() {
        let tail = if i + 1 == groups.len() {
            0
        } else {
            CONTINUED.len()
        };
        if i > 0 && columns(&current) + gap.len() + columns(group) + tail > width {
            current.push_str(CONTINUED);
            lines.push(std::mem::replace(&mut current, INDENT.to_string()));
        } else {
            current.push_str(gap);
        }
        current.push_str(group);
        gap = after;
    }
    lines.push(current);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::escape::Escaped;

    fn widest(lines: &[String]) -> usize {
        lines.iter().map(|l| columns(l)).max().unwrap_or(0)
    }

    #[test]
    fn the_width_is_columns_then_the_terminal_then_80() {
        let c = |s: &str| Some(OsStr::new(s).to_owned());
        assert_eq!(width_from(None, None), 80);
        assert_eq!(width_from(None, Some(None)), 80);
        assert_eq!(width_from(None, Some(Some(132))), 132);
        assert_eq!(width_from(c("100").as_deref(), Some(Some(132))), 100);
        assert_eq!(width_from(c("100").as_deref(), None), 100);
        assert_eq!(width_from(c("20").as_deref(), None), NARROWEST);
        assert_eq!(width_from(None, Some(Some(10))), NARROWEST);
        for junk in ["", "0", "wide", "-5", "80x"] {
            assert_eq!(width_from(c(junk).as_deref(), Some(Some(60))), 60, "{junk}");
        }
    }

    #[test]
    fn wrap_breaks_at_spaces_and_keeps_the_leading_comment_mark() {
        let line = format!("#   id (doubtful): {}", "word ".repeat(30));
        let lines = wrap(line.trim_end(), 40, "#     ");
        assert!(lines.len() > 1);
        assert!(widest(&lines) <= 40, "{lines:?}");
        assert!(lines[0].starts_with("#   id (doubtful): word"));
        assert!(lines[1..].iter().all(|l| l.starts_with("#     word")));
        assert_eq!(wrap("# short", 40, "#   "), ["# short"]);
        assert_eq!(wrap("", 40, "  "), [""]);
        assert_eq!(wrap("#", 40, "  "), ["#"]);
    }

    #[test]
    fn padding_inside_a_line_stays_and_no_line_ends_in_a_space() {
        assert_eq!(
            wrap("  max    12.0    13.0", 80, "  "),
            ["  max    12.0    13.0"]
        );
        let lines = wrap(&format!("a{}b", " ".repeat(50)), 40, "");
        assert_eq!(lines, ["a", "b"]);
    }

    #[test]
    fn a_word_too_long_is_cut_and_nothing_is_lost() {
        let long = format!("# x {}", "y".repeat(100));
        let lines = wrap(&long, 40, "#     ");
        assert!(widest(&lines) <= 40, "{lines:?}");
        let ys: usize = lines.iter().map(|l| l.matches('y').count()).sum();
        assert_eq!(ys, 100, "{lines:?}");
        assert!(
            lines[1..].iter().all(|l| l.starts_with("#     y")),
            "{lines:?}"
        );
    }

    #[test]
    fn a_cut_never_splits_an_escape() {
        let hostile = "\x1b]0;OWNED\x07\u{202e}\\".repeat(12);
        let escaped = Escaped(&hostile).to_string();
        for width in 40..60 {
            let lines = wrap(&format!("fact {escaped}"), width, "   ");
            assert!(widest(&lines) <= width, "{lines:?}");
            let bodies: Vec<&str> = std::iter::once(lines[0].as_str())
                .chain(lines[1..].iter().map(|l| l.strip_prefix("   ").unwrap()))
                .collect();
            // The space after `fact` goes where the line breaks there.
            let whole = format!("fact{escaped}");
            let bodies: Vec<String> = bodies.iter().map(|b| b.replace(' ', "")).collect();
            assert_eq!(bodies.concat(), whole, "{width}: {lines:?}");
            // Each line holds whole escapes: its pieces, line after line,
            // are the pieces of the whole.
            let pieces: Vec<&str> = bodies.iter().flat_map(|b| units(b)).collect();
            assert_eq!(pieces, units(&whole).collect::<Vec<_>>(), "{lines:?}");
        }
    }

    #[test]
    fn comment_lines_continue_deeper_and_stay_comments() {
        let long = format!("# Explain T:0 {}", "cause 1.0 us, ".repeat(10));
        let lines = wrap_deeper(long.trim_end(), 40);
        assert!(lines.len() > 1 && widest(&lines) <= 40, "{lines:?}");
        let deeper = |l: &String, lead: &str| {
            l.strip_prefix(lead)
                .is_some_and(|rest| !rest.starts_with(' '))
        };
        assert!(lines[1..].iter().all(|l| deeper(l, "#   ")), "{lines:?}");
        let lines = wrap_deeper(&format!("#   irq_latency {}", "x y ".repeat(20)), 40);
        assert!(lines[1..].iter().all(|l| deeper(l, "#     ")), "{lines:?}");
        let lines = wrap_deeper(&format!("KIND: {}", "w ".repeat(30)), 40);
        assert!(lines[1..].iter().all(|l| deeper(l, "  ")), "{lines:?}");
        let mut out = Vec::new();
        write_wrapped(&mut out, 40, |w| writeln!(w, "{long}\n# short")).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.lines().all(|l| l.starts_with('#') && columns(l) <= 40),
            "{out}"
        );
        assert!(out.ends_with("\n# short\n"), "{out}");
    }

    #[test]
    fn a_figure_keeps_its_unit() {
        let line =
            "#   thread_latency 274.8 us: task bash fifo 80 268.9 us, timer 1.8 us, idle 0.4 us";
        for width in 40..90 {
            let lines = wrap(line, width, "#     ");
            assert!(widest(&lines) <= width, "{lines:?}");
            for l in &lines {
                let first = l.trim_start_matches(['#', ' ']).split(' ').next().unwrap();
                assert!(
                    !UNITS.contains(&first.trim_end_matches([',', ':'])),
                    "{width}: {lines:?}"
                );
            }
        }
        assert_eq!(wrap("a 1 us b", 80, ""), ["a 1 us b"]);
        assert_eq!(wrap("max  12.0  us", 80, ""), ["max  12.0  us"]);
    }

    #[test]
    fn units_are_whole_escapes() {
        let units: Vec<&str> = units(r"a\e\x07\u{202e}\\µ").collect();
        assert_eq!(units, ["a", r"\e", r"\x07", r"\u{202e}", r"\\", "µ"]);
    }

    #[test]
    fn a_command_continues_with_backslashes_an_option_beside_its_value() {
        let cmd = "rtlat cyclictest -m -a 2-3 -t 2 -p 95 -i 1000 --mainaffinity=0";
        assert_eq!(
            command("suggested: ", cmd, 80),
            [format!("suggested: {cmd}")]
        );
        let lines = command("suggested: ", cmd, 40);
        assert!(widest(&lines) <= 40, "{lines:?}");
        assert!(lines.len() > 1);
        for l in &lines[..lines.len() - 1] {
            assert!(l.ends_with(" \\"), "{l}");
        }
        assert!(lines[1..].iter().all(|l| l.starts_with("    ")));
        // Pasted into a shell: the same words.
        let words: Vec<&str> = lines
            .iter()
            .flat_map(|l| l.trim_end_matches('\\').split_whitespace())
            .skip(1)
            .collect();
        assert_eq!(words.join(" "), cmd);
        // Spaces inside an argument's text (escaped, from the system) stay.
        let odd = "rtlat cyclictest -a 1  -t 1";
        assert_eq!(
            command("suggested: ", odd, 80),
            [format!("suggested: {odd}")]
        );
        // No line starts with a value torn from its option.
        for l in &lines[1..] {
            assert!(l.trim_start().starts_with('-'), "{lines:?}");
        }
    }
}
