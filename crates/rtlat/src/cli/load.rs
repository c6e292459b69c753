//! The `rtlat load` command line: `SPEC [-D DURATION] [--cpus LIST]
//! [--nice N]`, turned into a validated [`Settings`]. Every bad value is a
//! one-line [`UsageError`] before any worker starts.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::LazyLock;

use rtlat_core::load::{LoadKind, LoadPlan, MAX_WORKERS, kind_names, parse_spec};
use rtlat_core::parse_cpu_list;

use crate::load::Settings;
use rtlat_args::UsageError;
use rtlat_args::docs::help::Term;
use rtlat_args::getopt::REQ;
use rtlat_args::options::{
    self, Flag, Layout, Manual, Name, Page, Pages, Part, Read, name_of, pick,
};
use rtlat_args::values::{DURATION_EXPECTED, DurationError, SystemView, int_in, invalid};

/// What `rtlat load` is for, in one line: `rtlat --help` lists it and
/// the help starts with it (at most 65 characters).
pub const SUMMARY: &str = "background load until stopped, with the work it did per second";

/// `rtlat load`'s options, each defined once, in getopt's order.
static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    vec![
        Flag::new(Some('D'), "duration", REQ, "DURATION")
            .help(rtlat_args::lines![
                "stop after DURATION: seconds, or with a suffix",
                "s, m, h or d (90, 10m, 2h); 0 for no limit",
            ])
            .apply(|r: &mut Raw, v| {
                r.duration = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("cpus", REQ, "LIST")
            .help(rtlat_args::lines![
                "pin the workers round-robin to the CPUs of LIST",
                "(as cyclictest -a: 0-3,8, !1, +0-1)",
            ])
            .apply(|r: &mut Raw, v| {
                r.cpus = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("nice", REQ, "N")
            .help(rtlat_args::lines!["nice value of every worker, -20 to 19"])
            .apply(|r: &mut Raw, v| {
                r.nice = Some(v.text()?);
                Ok(())
            }),
        Flag::help_option(Some('h')),
    ]
});

/// How messages spell the option whose long name is `long`.
fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// The command line as given, before validation; a repeated option keeps
/// its last value.
#[derive(Default)]
struct Raw {
    /// SPEC, the one operand.
    spec: Option<String>,
    duration: Option<String>,
    cpus: Option<String>,
    nice: Option<String>,
}

/// SPEC: the first operand (UTF-8); a second one is refused.
fn operand(raw: &mut Raw, word: OsString) -> Result<(), UsageError> {
    if raw.spec.is_some() {
        return Err(UsageError(format!(
            "unexpected argument '{}': the load is one SPEC, its kinds separated by commas",
            word.to_string_lossy()
        )));
    }
    raw.spec = Some(word.into_string().map_err(|word| {
        UsageError(format!(
            "invalid load spec '{}': not valid UTF-8",
            word.to_string_lossy()
        ))
    })?);
    Ok(())
}

/// What the command line asks for: [`help_text`], or to run the load with
/// these settings.
pub type Invocation = rtlat_args::Invocation<Settings>;

/// Reads the `rtlat load` command line (`args` without the program name);
/// `temp_root` is where `io` makes its files ($TMPDIR or /tmp).
pub fn parse(
    args: &[OsString],
    system: &SystemView,
    temp_root: PathBuf,
) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse_with_operands(&FLAGS, args, &mut raw, operand)? == Read::Help {
        return Ok(Invocation::Help);
    }
    let Some(spec) = raw.spec else {
        return Err(UsageError(format!(
            "no load given: expected SPEC, KIND[:WORKERS][,KIND[:WORKERS]...] (kinds: {})",
            kind_names()
        )));
    };
    let requests =
        parse_spec(&spec).map_err(|e| UsageError(format!("invalid load spec '{spec}': {e}")))?;
    let duration = match raw.duration {
        None => None,
        Some(text) => match rtlat_args::values::duration(&text) {
            Ok(d) => d,
            Err(DurationError::Malformed) => {
                return Err(invalid(name("duration"), &text, DURATION_EXPECTED));
            }
            Err(DurationError::SecondsOverflow | DurationError::TooLong) => {
                return Err(invalid(
                    name("duration"),
                    &text,
                    "too long: at most 292 years",
                ));
            }
        },
    };
    let cpus = match raw.cpus {
        None => Vec::new(),
        Some(text) => parse_cpu_list(&text, &system.allowed_cpus, system.configured_cpus)
            .map_err(|e| invalid(name("cpus"), &text, e))?,
    };
    let nice = match raw.nice {
        None => None,
        Some(text) => Some(int_in(name("nice"), &text, -20..=19, "a nice value")? as i32),
    };
    let default_workers = if cpus.is_empty() {
        system.allowed_cpus.len()
    } else {
        cpus.len()
    };
    let plan = LoadPlan {
        fork_helper: Some(PathBuf::from(super::load_options::FORK_HELPER)),
        ..LoadPlan::from_requests(&requests, default_workers, cpus, nice, temp_root)
    };
    Ok(Invocation::Run(Settings { plan, duration }))
}

/// The widest a help line may be.
const HELP_WIDTH: usize = 80;

/// `text` filled into lines of at most [`HELP_WIDTH`] columns, the first
/// after `first`, the others after `rest`; a word is never cut.
fn fill(text: &str, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > HELP_WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = rest.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The options and the help of `rtlat load`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

/// Each kind of load, what it does and what one of its operations is: the
/// kind's text lines, then its `op:` line filled (a line of its own).
fn kinds() -> Vec<Term> {
    [
        (
            LoadKind::Cpu,
            "integer and floating-point (SIMD) arithmetic",
        ),
        (
            LoadKind::Memory,
            "streaming copies through a buffer of 4x the largest cache",
        ),
        (
            LoadKind::Cache,
            "cache-line thrashing (all workers write the same lines) and\n             a sweep through a buffer the size of the largest cache",
        ),
        (
            LoadKind::Io,
            "writes with fsync to files without a name in $TMPDIR or\n             /tmp (nothing is left, however the run ends)",
        ),
        (
            LoadKind::Messaging,
            "hackbench-like messages over pipes and UNIX sockets, by\n             threads that never end (steady, no process created)",
        ),
        (
            LoadKind::Hackbench,
            "rt-tests' hackbench in rounds (rteval's default load):\n             forked senders and receivers, run by a helper process\n             per worker, which never outlives it",
        ),
        (
            LoadKind::Syscalls,
            "cheap system calls and context switches (each worker and\n             its partner thread share one CPU)",
        ),
        (LoadKind::Timers, "many threads with short sleeps"),
        (
            LoadKind::Fork,
            "processes created, exiting at once, reaped (by a helper\n             process per worker, which never outlives it)",
        ),
    ]
    .into_iter()
    .map(|(kind, what)| {
        let mut lines: Vec<(bool, String)> = what
            .lines()
            .map(|line| (false, line.trim().to_owned()))
            .collect();
        let op = fill(
            &format!("op: {}", kind.op_definition()),
            KIND_TEXT_INDENT,
            OP_CARRY_ON_INDENT,
        );
        lines.extend(
            op.lines()
                .enumerate()
                .map(|(i, line)| (i == 0, line.trim().to_owned())),
        );
        Term {
            term: kind.name().to_owned(),
            lines,
        }
    })
    .collect()
}

/// Where a kind's text starts.
const KIND_TEXT_INDENT: &str = "             ";
/// Where the lines carrying on its `op:` line start.
const OP_CARRY_ON_INDENT: &str = "                 ";

/// `rtlat load --help`: its prose, the kinds and its options.
fn help_page() -> Page<'static, Raw> {
    Page {
        title: rtlat_args::tools::help_title("load", SUMMARY),
        usage: vec!["rtlat load SPEC [-D DURATION] [--cpus LIST] [--nice N]".to_owned()],
        layout: Layout::spaced(27),
        parts: vec![
            Part::Paragraph(
                "\
Runs worker threads that load the machine in the ways SPEC names, until
SIGINT, SIGTERM or SIGHUP or for DURATION, then prints one line per kind
on stdout: 'KIND: N ops/s (W workers)', the operations its workers did per
second."
                    .to_owned(),
            ),
            Part::Paragraph(format!(
                "\
SPEC is KIND[:WORKERS][,KIND[:WORKERS]...], each kind at most once;
WORKERS is 1 to {MAX_WORKERS}, by default one per CPU the load may use.
Kinds, and what one operation (op) is:"
            )),
            Part::Terms {
                column: KIND_TEXT_INDENT.len(),
                hang: OP_CARRY_ON_INDENT.len() - KIND_TEXT_INDENT.len(),
                terms: kinds(),
            },
            Part::Paragraph("Workers run SCHED_OTHER, never real-time.".to_owned()),
            Part::Heading("Options"),
            pick(&FLAGS, &["duration", "cpus", "nice", "help"]),
            Part::Paragraph(
                "\
Exit status: 0 after a normal stop, 1 if a worker could not start or
failed, 2 for a usage error."
                    .to_owned(),
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_core::Nanos;
    use rtlat_testkit::parsing::os_words;

    fn system() -> SystemView {
        SystemView {
            allowed_cpus: vec![0, 1, 2, 3],
            configured_cpus: 4,
        }
    }

    fn run(words: &[&str]) -> Result<Settings, String> {
        match parse(&os_words(words), &system(), PathBuf::from("/tmp")) {
            Ok(Invocation::Run(s)) => Ok(s),
            Ok(Invocation::Help) => Err("help".into()),
            Err(e) => Err(e.0),
        }
    }

    #[test]
    fn the_help_lists_every_option_once() {
        let none: Vec<String> = Vec::new();
        assert_eq!(
            rtlat_args::options::unlisted(&FLAGS, &help_page()),
            (none.clone(), none)
        );
    }

    #[test]
    fn good_command_lines() {
        let s = run(&["cpu"]).unwrap();
        assert_eq!(s.plan.kinds[0].workers, 4);
        assert_eq!(s.duration, None);
        assert_eq!(s.plan.nice, None);
        assert!(s.plan.cpus.is_empty());
        let s = run(&["cpu:2,io", "-D", "10m", "--cpus", "1-2", "--nice=5"]).unwrap();
        assert_eq!(
            s.plan.kinds.iter().map(|k| k.workers).collect::<Vec<_>>(),
            vec![2, 2]
        );
        assert_eq!(s.duration, Some(Nanos(600_000_000_000)));
        assert_eq!(s.plan.cpus, vec![1, 2]);
        assert_eq!(s.plan.nice, Some(5));
        assert_eq!(run(&["-D0", "fork"]).unwrap().duration, None);
        assert_eq!(
            run(&["--dur", "2", "fork"]).unwrap().duration,
            Some(Nanos(2_000_000_000))
        );
        assert_eq!(run(&["--nice", "-20", "cpu"]).unwrap().plan.nice, Some(-20));
        assert_eq!(run(&["-h"]).unwrap_err(), "help");
        assert_eq!(run(&["bogus", "--help"]).unwrap_err(), "help");
    }

    #[test]
    fn bad_command_lines_name_the_problem() {
        for (words, want) in [
            (&[][..], "no load given: expected SPEC"),
            (
                &["bogus"][..],
                "invalid load spec 'bogus': unknown load kind 'bogus' (kinds: cpu, ",
            ),
            (
                &["cpu:0"][..],
                "invalid load spec 'cpu:0': worker count '0' of cpu: expected a whole number, 1 to 4096",
            ),
            (
                &["cpu:x"][..],
                "invalid load spec 'cpu:x': worker count 'x' of cpu",
            ),
            (&[""][..], "invalid load spec '': expected KIND[:WORKERS]"),
            (
                &["cpu,cpu"][..],
                "invalid load spec 'cpu,cpu': load kind 'cpu' is given twice",
            ),
            (&["cpu", "io"][..], "unexpected argument 'io'"),
            (
                &["cpu", "-D", "x"][..],
                "-D/--duration: invalid value 'x': expected a whole number of seconds",
            ),
            (
                &["cpu", "-D", "-1"][..],
                "-D/--duration: invalid value '-1'",
            ),
            (&["cpu", "--cpus", "9"][..], "--cpus: invalid value '9': "),
            (&["cpu", "--cpus", "x"][..], "--cpus: invalid value 'x': "),
            (
                &["cpu", "--nice", "20"][..],
                "--nice: invalid value '20': expected a nice value, -20 to 19",
            ),
            (&["cpu", "--nice", "x"][..], "--nice: invalid value 'x'"),
            (&["cpu", "--bogus"][..], "--bogus"),
        ] {
            let e = run(words).unwrap_err();
            assert!(
                e.starts_with(want) || (want == "--bogus" && e.contains(want)),
                "{words:?}: {e}"
            );
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn help_defines_every_op() {
        // The help's lines are filled: compare its words.
        let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        let h = words(&MANUAL.help_text());
        for kind in LoadKind::ALL {
            assert!(h.contains(&words(kind.op_definition())), "{kind}");
        }
    }

    #[test]
    fn fill_keeps_lines_within_80_columns() {
        let text = "word ".repeat(40);
        let filled = fill(&text, "  op: ", "      ");
        assert!(filled.lines().all(|l| l.chars().count() <= 80), "{filled}");
        assert!(filled.starts_with("  op: word word"));
        assert!(filled.lines().skip(1).all(|l| l.starts_with("      word")));
        assert_eq!(filled.split_whitespace().count(), 41);
    }
}
