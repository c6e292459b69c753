//! The `rtlat audit` command line: `[--cpus LIST] [-p PRIO] [-i US]
//! [--json FILE|-] [--fail-on warn|bad] [--root DIR]`, scanned with the
//! same getopt rules as the other tools, turned into
//! [`crate::audit::Settings`].
//!
//! The CPU list is read against the machine audited: this process's view
//! for `/`, the tree's own CPUs for another `--root`, which is why the
//! caller says how to see a root ([`parse`]'s `machine_of`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use rtlat_audit::{Request, Status};
use rtlat_core::parse_cpu_list;

use crate::audit::Settings;
use crate::output::OutputTarget;
use rtlat_args::UsageError;
use rtlat_args::getopt::REQ;
use rtlat_args::options::{
    self, Flag, Layout, Manual, Name, Page, Pages, Part, Read, name_of, terms,
};
use rtlat_args::values::{DirReport, SystemView, int_in, int_in_or, invalid, new_file_path};

/// What `rtlat audit` is for, in one line: `rtlat --help` lists it and
/// the help starts with it (at most 65 characters).
pub const SUMMARY: &str = "how fit this machine is for real-time work, and what to use";

/// `rtlat audit`'s options, each defined once, in getopt's order.
static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    vec![
        Flag::new_long("cpus", REQ, "LIST")
            .help(rtlat_args::lines![
                "the CPUs to be measured, as cyclictest's -a takes",
                "them (0-3,8; !0; +1); default: every CPU this",
                "process may use",
            ])
            .apply(|r: &mut Raw, v| {
                r.cpus = Some(v.text()?);
                Ok(())
            }),
        Flag::new(Some('p'), "priority", REQ, "PRIO")
            .help(rtlat_args::lines![
                "the real-time priority to be used, 0 to 99: other",
                "real-time threads at or above it compete",
            ])
            .apply(|r: &mut Raw, v| {
                r.priority = Some(v.text()?);
                Ok(())
            }),
        Flag::new(Some('i'), "interval", REQ, "US")
            .help_owned(vec![
                "the interval to be used, in microseconds (default".to_owned(),
                format!("{DEFAULT_INTERVAL_US}): idle states whose exit latency is above a"),
                "tenth of it are flagged".to_owned(),
            ])
            .apply(|r: &mut Raw, v| {
                r.interval = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("json", REQ, "FILE")
            .help(rtlat_args::lines![
                "also write the audit as JSON to FILE; '-' writes",
                "it to standard output instead of the text",
            ])
            .apply(|r: &mut Raw, v| {
                r.json = v.os_opt();
                Ok(())
            }),
        Flag::new_long("fail-on", REQ, "LEVEL")
            .help(rtlat_args::lines![
                "exit 3 when a check is at LEVEL or worse: warn",
                "or bad"
            ])
            .apply(|r: &mut Raw, v| {
                r.fail_on = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("root", REQ, "DIR")
            .help(rtlat_args::lines![
                "read the tree under DIR instead of / (a copy of",
                "/proc and /sys, as the tests use)",
            ])
            .apply(|r: &mut Raw, v| {
                r.root = v.os_opt();
                Ok(())
            }),
        Flag::help_option(Some('h')),
    ]
});

/// How messages spell the option whose long name is `long`.
fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// The interval judged against when `-i` is not given: cyclictest's
/// default, µs.
pub const DEFAULT_INTERVAL_US: i64 = 1000;

/// The option values as given, before validation; a repeated option keeps
/// its last value.
#[derive(Default)]
struct Raw {
    cpus: Option<String>,
    priority: Option<String>,
    interval: Option<String>,
    json: Option<OsString>,
    fail_on: Option<String>,
    root: Option<OsString>,
}

/// What the command line asks for: [`help_text`], or to audit with these
/// settings.
pub type Invocation = rtlat_args::Invocation<Settings>;

/// Reads the `rtlat audit` command line (`args` without the program and
/// tool names). `machine_of` gives the CPUs of the machine under a root
/// (called once the root is known to be a directory), against which
/// `--cpus` is read.
pub fn parse(
    args: &[OsString],
    machine_of: impl FnOnce(&Path) -> SystemView,
) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    let read = options::parse_with_operands(&FLAGS, args, &mut raw, |_, word| {
        Err(UsageError(format!(
            "unexpected argument '{}': audit takes options only; try 'rtlat audit --help'",
            word.to_string_lossy()
        )))
    })?;
    if read == Read::Help {
        return Ok(Invocation::Help);
    }
    validate(raw, machine_of).map(Invocation::Run)
}

fn validate(
    raw: Raw,
    machine_of: impl FnOnce(&Path) -> SystemView,
) -> Result<Settings, UsageError> {
    let root = match raw.root {
        Some(dir) => root_dir(dir)?,
        None => PathBuf::from("/"),
    };
    let priority = raw
        .priority
        .map(|text| int_in(name("priority"), &text, 0..=99, "a real-time priority"))
        .transpose()?
        .map(|p| p as u8);
    let interval_us = int_in_or(
        name("interval"),
        raw.interval.as_deref(),
        1..=super::cyclictest::MAX_INTERVAL_US,
        "an interval in microseconds",
        DEFAULT_INTERVAL_US,
    )? as u64;
    let fail_on = raw.fail_on.map(|text| fail_level(&text)).transpose()?;
    let json = match raw.json {
        Some(dash) if dash == "-" => Some(OutputTarget::Stdout),
        Some(path) => Some(OutputTarget::File(new_file_path(
            name("json"),
            &path,
            "write",
            DirReport::Detailed,
        )?)),
        None => None,
    };
    let cpus = match raw.cpus {
        Some(text) => {
            let machine = machine_of(&root);
            Some(
                parse_cpu_list(&text, &machine.allowed_cpus, machine.configured_cpus)
                    .map_err(|e| invalid(name("cpus"), &text, e))?,
            )
        }
        None => None,
    };
    Ok(Settings {
        root,
        request: Request {
            cpus,
            priority,
            interval_us,
        },
        json,
        fail_on,
    })
}

/// `--root DIR`: an existing directory.
fn root_dir(raw: OsString) -> Result<PathBuf, UsageError> {
    let shown = raw.to_string_lossy().into_owned();
    if raw.is_empty() {
        return Err(invalid(name("root"), "", "expected a directory"));
    }
    let path = PathBuf::from(raw);
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_dir() => Ok(path),
        Ok(_) => Err(invalid(
            name("root"),
            &shown,
            "not a directory: expected the root of a tree holding proc/ and sys/",
        )),
        Err(e) => Err(invalid(
            name("root"),
            &shown,
            format_args!(
                "{}: expected the root of a tree holding proc/ and sys/",
                rtlat_sys::io_strerror(&e)
            ),
        )),
    }
}

/// `--fail-on warn|bad`: the least status that fails.
fn fail_level(text: &str) -> Result<Status, UsageError> {
    match text.trim() {
        "warn" => Ok(Status::Warn),
        "bad" => Ok(Status::Bad),
        _ => Err(invalid(
            name("fail-on"),
            text,
            "expected warn (exit 3 on any warn or bad) or bad (exit 3 on any bad)",
        )),
    }
}

/// The options and the help of `rtlat audit`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

/// `rtlat audit --help`: its prose and its options.
fn help_page() -> Page<'static, Raw> {
    Page {
        title: rtlat_args::tools::help_title("audit", SUMMARY),
        usage: vec!["rtlat audit [OPTIONS]".to_owned()],
        layout: Layout::spaced(25),
        parts: vec![
            Part::Paragraph(
                "\
Reads /proc and /sys (it changes nothing) and prints one line per check:
its status, its name and what it saw. A check that can add latency says
why and what to change (a kernel parameter, a sysctl, a command). Then a
summary line and the cyclictest command line suggested for this machine."
                    .to_owned(),
            ),
            Part::Paragraph("Statuses, from harmless to worst:".to_owned()),
            terms(
                11,
                &[
                    ("ok", "as a real-time machine should be"),
                    ("info", "worth knowing, nothing to change"),
                    ("unknown", "could not be read"),
                    ("warn", "can add latency; worth changing"),
                    ("bad", "makes real-time results meaningless"),
                ],
            ),
            Part::Heading("Options"),
            Part::Options(FLAGS.iter().collect()),
            Part::Paragraph(
                "\
Exit status: 0 audited (whatever was found), 1 an output could not be
written, 2 a usage error, 3 a check at or above --fail-on's level."
                    .to_owned(),
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_testkit::parsing::{expect_run, expect_usage_error, os_words as os};

    fn four_cpus(_: &Path) -> SystemView {
        SystemView {
            allowed_cpus: vec![0, 1, 2, 3],
            configured_cpus: 4,
        }
    }

    fn run(args: &[&str]) -> Settings {
        expect_run(parse(&os(args), four_cpus), args)
    }

    fn error(args: &[&str]) -> String {
        expect_usage_error(parse(&os(args), four_cpus), args)
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
    fn defaults() {
        let s = run(&[]);
        assert_eq!(s.root, PathBuf::from("/"));
        assert_eq!(
            s.request,
            Request {
                cpus: None,
                priority: None,
                interval_us: 1000
            }
        );
        assert_eq!(s.json, None);
        assert_eq!(s.fail_on, None);
    }

    #[test]
    fn every_option() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("audit.json");
        let root = dir.path().to_str().unwrap();
        let s = run(&[
            "--cpus",
            "1-2",
            "-p99",
            "-i",
            "200",
            "--json",
            json.to_str().unwrap(),
            "--fail-on=warn",
            "--root",
            root,
        ]);
        assert_eq!(s.request.cpus, Some(vec![1, 2]));
        assert_eq!(s.request.priority, Some(99));
        assert_eq!(s.request.interval_us, 200);
        assert_eq!(s.json, Some(OutputTarget::File(json)));
        assert_eq!(s.fail_on, Some(Status::Warn));
        assert_eq!(s.root, PathBuf::from(root));

        let s = run(&["--json", "-", "--fail-on", "bad", "--priority", "0"]);
        assert_eq!(s.json, Some(OutputTarget::Stdout));
        assert_eq!(s.fail_on, Some(Status::Bad));
        assert_eq!(s.request.priority, Some(0));
        // cyclictest's CPU-list syntax, and the last value of a repeat.
        assert_eq!(run(&["--cpus", "!0"]).request.cpus, Some(vec![1, 2, 3]));
        assert_eq!(run(&["--cpus", "+3"]).request.cpus, Some(vec![3]));
        assert_eq!(
            run(&["--cpus", "0", "--cpus", "all"]).request.cpus,
            Some(vec![0, 1, 2, 3])
        );
        assert_eq!(
            run(&["--int=5", "--fail-on", "warn"]).request.interval_us,
            5
        );
        for args in [&["-h"][..], &["--help"], &["--cpus", "0", "--he"]] {
            assert!(
                matches!(parse(&os(args), four_cpus), Ok(Invocation::Help)),
                "{args:?}"
            );
        }
    }

    #[test]
    fn the_cpu_list_is_read_against_the_root_given() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let mut seen = None;
        let parsed = parse(
            &os(&["--cpus", "5", "--root", root.to_str().unwrap()]),
            |r: &Path| {
                seen = Some(r.to_path_buf());
                SystemView {
                    allowed_cpus: (0..8).collect(),
                    configured_cpus: 8,
                }
            },
        );
        assert!(matches!(parsed, Ok(Invocation::Run(s)) if s.request.cpus == Some(vec![5])));
        assert_eq!(seen, Some(root));
    }

    #[test]
    fn table_of_errors() {
        let cases: &[(&[&str], &str)] = &[
            (
                &["--cpus", "99"],
                "--cpus: invalid value '99': cpu 99 is out of range: this machine has CPUs 0-3",
            ),
            (
                &["--cpus", "x"],
                "--cpus: invalid value 'x': bad CPU list item 'x'",
            ),
            (&["--cpus", ""], "--cpus: invalid value '': empty CPU list"),
            (
                &["--fail-on", "maybe"],
                "--fail-on: invalid value 'maybe': expected warn (exit 3 on any warn or bad) or \
                 bad (exit 3 on any bad)",
            ),
            (&["--fail-on", "ok"], "--fail-on: invalid value 'ok'"),
            (
                &["--root", "/nonexistent"],
                "--root: invalid value '/nonexistent': No such file or directory: expected the \
                 root of a tree holding proc/ and sys/",
            ),
            (
                &["--root", "/proc/self/status"],
                "--root: invalid value '/proc/self/status': not a directory",
            ),
            (
                &["--root", ""],
                "--root: invalid value '': expected a directory",
            ),
            (
                &["-p", "100"],
                "-p/--priority: invalid value '100': expected a real-time priority, 0 to 99",
            ),
            (&["-p", "-1"], "-p/--priority: invalid value '-1'"),
            (
                &["-i", "0"],
                "-i/--interval: invalid value '0': expected an interval in microseconds, 1 to \
                 2147483647",
            ),
            (&["-i", "1ms"], "-i/--interval: invalid value '1ms'"),
            (
                &["--json", "/nonexistent/a.json"],
                "--json: cannot write '/nonexistent/a.json': directory '/nonexistent' does not \
                 exist",
            ),
            (
                &["--json", "/tmp"],
                "--json: cannot write '/tmp': it is a directory",
            ),
            (&["-q"], "unrecognized option '-q'"),
            (&["--frobnicate"], "unrecognized option '--frobnicate'"),
            (&["--cpus"], "option '--cpus' requires a value"),
            (
                &["extra"],
                "unexpected argument 'extra': audit takes options only; try 'rtlat audit --help'",
            ),
        ];
        for (args, expected) in cases {
            let message = error(args);
            assert!(
                message.starts_with(expected),
                "{args:?}\n got {message}\nwant {expected}"
            );
            assert!(!message.contains('\n'), "{message}");
        }
    }

    #[test]
    fn help_fits_80_columns() {
        let help = MANUAL.help_text();
        assert!(help.contains("--fail-on LEVEL"));
        assert!(help.lines().all(|l| l.chars().count() <= 80), "{help}");
    }
}
