//! `rtlat audit`'s text: one entry per check (status word, id, the fact
//! seen), for `warn` and `bad` an indented line saying why and one saying
//! what to change, then the summary line and the suggested command.
//! The status word alone is coloured, and only when asked ([`Colour`]).
//!
//! Each line is wrapped to the width given (the terminal's, 80 when
//! stdout is not one: [`rtlat_args::columns`]): a fact continues under
//! the fact column (under `why: `, `fix: `, after `audit: `), so that
//! only a check's first line starts with a status word; the suggested
//! command continues with ` \` so that it pastes as one command.
//!
//! Facts name what the system holds (task and IRQ names, the kernel
//! command line, file names), which any local user may choose in part:
//! each is written escaped ([`Escaped`]) before it is wrapped, and a
//! continuation line always starts with spaces, so that a thread named
//! `\e]0;...\a\nok  fake` neither drives the terminal nor forges a
//! check's line. (The JSON keeps the exact text.)

use std::io::{self, IsTerminal, Write};

use rtlat_args::columns;
use rtlat_args::escape::Escaped;
use rtlat_audit::{Audit, Finding, Status};

/// Whether the status words are coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colour {
    /// ANSI colours on the status words.
    On,
    /// Plain text.
    Off,
}

impl Colour {
    /// On when standard output is a terminal and `NO_COLOR` is unset or
    /// empty (<https://no-color.org>).
    pub fn for_stdout() -> Colour {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        if io::stdout().is_terminal() && !no_color {
            Colour::On
        } else {
            Colour::Off
        }
    }
}

/// The widest status word, `unknown`.
const STATUS_WIDTH: usize = 7;

/// The ANSI select-graphic-rendition code of a status word.
fn sgr(status: Status) -> &'static str {
    match status {
        Status::Ok => "32",
        Status::Info => "36",
        Status::Unknown => "35",
        Status::Warn => "33",
        Status::Bad => "1;31",
    }
}

/// Writes the audit's text (see the module documentation), each line at
/// most `width` columns.
pub fn write_text(
    w: &mut dyn Write,
    audit: &Audit,
    colour: Colour,
    width: usize,
) -> io::Result<()> {
    let id_width = audit.checks.iter().map(|f| f.id.len()).max().unwrap_or(0);
    for finding in &audit.checks {
        write_finding(w, finding, id_width, colour, width)?;
    }
    let summary = Escaped(&audit.summary()).to_string();
    write_lines(w, &columns::wrap(&summary, width, "       "))?;
    let command = Escaped(&audit.suggested_command).to_string();
    write_lines(w, &columns::command("suggested: ", &command, width))
}

fn write_lines(w: &mut dyn Write, lines: &[String]) -> io::Result<()> {
    lines.iter().try_for_each(|line| writeln!(w, "{line}"))
}

/// The indent of `line`'s continuation lines: `column` (under the text
/// after the label), unless that leaves less than half the line or a word
/// of it (a path, a command's argument) would not fit there whole: then
/// `fallback`, the advice's column.
fn hanging(line: &str, column: usize, fallback: usize, width: usize) -> String {
    let room = width.saturating_sub(column);
    let widest_word = line.split(' ').map(columns::columns).max().unwrap_or(0);
    if room >= width / 2 && widest_word <= room {
        " ".repeat(column)
    } else {
        " ".repeat(fallback)
    }
}

fn write_finding(
    w: &mut dyn Write,
    finding: &Finding,
    id_width: usize,
    colour: Colour,
    width: usize,
) -> io::Result<()> {
    let word = finding.status.name();
    let pad = " ".repeat(STATUS_WIDTH - word.len());
    let line = format!(
        "{word}{pad}  {:<id_width$}  {}",
        finding.id,
        Escaped(&finding.fact)
    );
    let fact_column = STATUS_WIDTH + 2 + id_width + 2;
    let advice = " ".repeat(STATUS_WIDTH + 2);
    let under = hanging(&line, fact_column, STATUS_WIDTH + 2, width);
    let mut lines = columns::wrap(&line, width, &under);
    if colour == Colour::On {
        // The status word is the first line's first word: coloured after
        // wrapping, so that the codes take no column.
        lines[0] = format!(
            "\x1b[{}m{word}\x1b[0m{}",
            sgr(finding.status),
            &lines[0][word.len()..]
        );
    }
    write_lines(w, &lines)?;
    for (label, text) in [("why", &finding.why), ("fix", &finding.fix)] {
        if let Some(text) = text.as_deref().filter(|_| finding.status >= Status::Warn) {
            let line = format!("{advice}{label}: {}", Escaped(text));
            let under = hanging(&line, advice.len() + label.len() + 2, advice.len(), width);
            write_lines(w, &columns::wrap(&line, width, &under))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::test_support;

    fn text(colour: Colour) -> String {
        let mut out = Vec::new();
        write_text(&mut out, &test_support::audit(), colour, 80).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn one_line_per_check_advice_under_warn_and_bad_then_summary_and_command() {
        assert_eq!(
            text(Colour::Off),
            "\
ok       kernel.preemption    PREEMPT_RT
info     kernel.hz            HZ=250
unknown  cpufreq.governor     no governor
warn     memory.thp           transparent huge pages: always
         why: huge-page faults stall
         fix: echo madvise > enabled
bad      clocksource.current  hpet \"slow\"
         why: every timestamp costs µs
         fix: clocksource=tsc
audit: 1 ok, 1 info, 1 unknown, 1 warn, 1 bad: every timestamp costs µs
suggested: rtlat cyclictest -m -a 2-3 -t 2 -p 95 -i 1000
"
        );
    }

    #[test]
    fn colour_marks_the_status_words_only() {
        let coloured = text(Colour::On);
        for (word, code) in [
            ("ok", "32"),
            ("info", "36"),
            ("unknown", "35"),
            ("warn", "33"),
            ("bad", "1;31"),
        ] {
            let line = coloured
                .lines()
                .find(|l| l.contains(&format!("m{word}\x1b")))
                .unwrap_or_else(|| panic!("{word}\n{coloured}"));
            assert!(
                line.starts_with(&format!("\x1b[{code}m{word}\x1b[0m ")),
                "{line:?}"
            );
        }
        assert_eq!(coloured.matches('\x1b').count(), 10, "{coloured}");
        // Without the codes, the plain text, columns and all.
        let mut stripped = coloured.clone();
        for code in [
            "\x1b[32m",
            "\x1b[36m",
            "\x1b[35m",
            "\x1b[33m",
            "\x1b[1;31m",
            "\x1b[0m",
        ] {
            stripped = stripped.replace(code, "");
        }
        assert_eq!(stripped, text(Colour::Off));
    }

    #[test]
    fn text_from_the_system_is_escaped_one_finding_one_line() {
        let mut audit = test_support::audit();
        let hostile = "\x1b]0;OWNED\x07\nok  fake";
        audit.checks[0].fact = format!("spin {hostile}");
        audit.checks[4].why = Some(format!("why {hostile}"));
        audit.checks[4].fix = Some(format!("fix \u{202e}{hostile}"));
        audit.suggested_command = format!("rtlat cyclictest {hostile}");
        let mut out = Vec::new();
        write_text(&mut out, &audit, Colour::Off, 80).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains(['\x1b', '\x07', '\u{202e}']), "{text:?}");
        assert!(!text.lines().any(|l| l.starts_with("ok  fake")), "{text}");
        assert_eq!(text.lines().count(), 11, "{text}");
        let escaped = r"\e]0;OWNED\x07\nok  fake";
        assert!(text.contains(&format!("kernel.preemption    spin {escaped}\n")));
        assert!(text.contains(&format!("why: why {escaped}\n")));
        assert!(text.contains(&format!("fix: fix \\u{{202e}}{escaped}\n")));
        assert!(text.contains(&format!(": why {escaped}\n")), "the summary");
        assert!(text.contains(&format!("suggested: rtlat cyclictest {escaped}\n")));
    }

    #[test]
    fn long_lines_wrap_under_their_column_and_only_a_check_starts_a_line() {
        let mut audit = test_support::audit();
        audit.checks[1].fact = format!("HZ=250 {}", "word ".repeat(40).trim_end());
        audit.checks[3].fact =
            format!("/sys/{} {}", "d/".repeat(40), "fact ".repeat(20).trim_end());
        audit.checks[3].why = Some("because ".repeat(20).trim_end().to_owned());
        audit.suggested_command =
            "rtlat cyclictest -m -a 1-63 -t 63 -p 95 -i 1000 --mainaffinity=0 --policy fifo".into();
        for width in [40, 60, 80, 132] {
            for colour in [Colour::Off, Colour::On] {
                let mut out = Vec::new();
                write_text(&mut out, &audit, colour, width).unwrap();
                let text = String::from_utf8(out).unwrap();
                for line in text.lines() {
                    assert!(columns::columns(line) <= width, "{width}: {line:?}");
                }
                // A check per line that starts with a word; the rest of
                // a check under it, after spaces.
                let starts: Vec<&str> = text
                    .lines()
                    .filter(|l| !l.starts_with(' '))
                    .map(|l| l.split(' ').next().unwrap())
                    .collect();
                assert_eq!(starts.len(), audit.checks.len() + 2, "{width}\n{text}");
                let plain = if colour == Colour::On {
                    continue;
                } else {
                    &text
                };
                // The hanging fact sits under the fact column when it fits.
                let hz: Vec<&str> = plain
                    .lines()
                    .skip_while(|l| !l.starts_with("info"))
                    .take(2)
                    .collect();
                if width >= 60 {
                    assert!(hz[1].starts_with(&" ".repeat(30)), "{width}: {hz:?}");
                }
                // The command pastes as one.
                let command: Vec<&str> = plain
                    .lines()
                    .skip_while(|l| !l.starts_with("suggested:"))
                    .collect();
                let words: Vec<&str> = command
                    .iter()
                    .flat_map(|l| l.trim_end_matches('\\').split_whitespace())
                    .skip(1)
                    .collect();
                assert_eq!(words.join(" "), audit.suggested_command, "{width}");
                assert_eq!(command.len() > 1, width < 90, "{width}: {command:?}");
            }
        }
    }

    #[test]
    fn advice_on_a_harmless_status_is_not_printed() {
        let mut audit = test_support::audit();
        audit.checks[0].why = Some("stray".into());
        let mut out = Vec::new();
        write_text(&mut out, &audit, Colour::Off, 80).unwrap();
        assert!(!String::from_utf8(out).unwrap().contains("stray"));
    }
}
