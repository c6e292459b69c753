//! The `rtlat ssdd` command line: ssdd 2.4's options, read the way its
//! getopt reads them (`f:hqi:` and the long names), turned into validated
//! [`Settings`]. Unlike C, a bad value is a one-line [`UsageError`]
//! (C's `atoi` takes `-f x` as 0 forks and passes, and `-i 0` leaves its
//! tracees spinning after it exits).

use std::ffi::OsString;
use std::sync::LazyLock;

use super::output_options as outputs;
use super::shared::{HasShared, Measure, SharedArgs};
use crate::ssdd::Settings;
use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, REQ};
use rtlat_args::options::{
    self, Flag, Layout, Manual, Name, Page, Pages, Part, Read, name_of, pick,
};
use rtlat_args::values::int_in;

/// What `rtlat ssdd` is for, in one line.
pub const SUMMARY: &str = "whether ptrace single-steps hold with many tracers at once";

/// What the command line asks for: [`help_text`], or to run.
pub type Invocation = rtlat_args::Invocation<Measure<Settings>>;

#[derive(Default)]
struct Raw {
    forks: Option<String>,
    iters: Option<String>,
    quiet: bool,
    shared: SharedArgs,
}

impl HasShared for Raw {
    fn shared(&mut self) -> &mut SharedArgs {
        &mut self.shared
    }
}

/// ssdd 2.4's options, in its help's order.
static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    vec![
        Flag::c(Some('f'), "forks", REQ, "NUM")
            .help(rtlat_args::lines![
                "tracer/tracee pairs, all at once, 1 to 4096"
            ])
            .default("10")
            .apply(|r: &mut Raw, v| {
                r.forks = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('h'), "help", NO, "")
            .help(rtlat_args::lines!["print this help and exit"])
            .shows_help(),
        outputs::json(&outputs::JSON),
        Flag::c(Some('q'), "quiet", NO, "")
            .help(rtlat_args::lines![
                "only the final PASSED/FAILED line (and errors)"
            ])
            .apply(|r: &mut Raw, _| {
                r.quiet = true;
                Ok(())
            }),
        Flag::c(Some('i'), "iters", REQ, "NUM")
            .help(rtlat_args::lines![
                "single steps each tracer makes, 1 or more"
            ])
            .default("10000")
            .apply(|r: &mut Raw, v| {
                r.iters = Some(v.text()?);
                Ok(())
            }),
        super::rt_tests_options::rt_tests(),
    ]
});

fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// Reads the `rtlat ssdd` command line (`args` without the program name);
/// `cmdline` is kept for the JSON output.
pub fn parse(args: &[OsString], cmdline: String) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse(&FLAGS, args, &mut raw)? == Read::Help {
        return Ok(Invocation::Help);
    }
    let forks = match &raw.forks {
        Some(text) => int_in(name("forks"), text, 1..=4096, "a number of tracers")?,
        None => 10,
    } as u32;
    let steps = match &raw.iters {
        Some(text) => int_in(
            name("iters"),
            text,
            1..=i64::from(i32::MAX),
            "a number of single steps",
        )?,
        None => 10_000,
    } as u32;
    let json = raw.shared.outputs.validate(name, "microseconds")?.json;
    let rt_tests = raw.shared.rt_tests(name)?;
    Ok(Invocation::Run(Measure {
        settings: Settings {
            forks,
            steps,
            quiet: raw.quiet,
            json,
            rt_tests,
            cmdline,
        },
        warnings: Vec::new(),
    }))
}

/// The options and the help of `rtlat ssdd`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

fn help_page() -> Page<'static, Raw> {
    Page {
        title: rtlat_args::tools::help_title("ssdd", SUMMARY),
        usage: vec!["rtlat ssdd [OPTIONS]".to_owned()],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(
                "\
Forks NUM tracers at once; each forks a spinning tracee, attaches to it
with ptrace and single-steps it NUM times, checking every stop: the right
process, stopped by SIGTRAP, with a SIGCHLD. One line per tracer as it
starts and ends, then \"All tests PASSED.\" (status 0) or \"One or more
tests FAILED.\" (status 1, also when a signal stopped the run). Every
tracer and tracee ends with the run, a killed one included."
                    .to_owned(),
            ),
            pick(
                &FLAGS,
                &["forks", "iters", "quiet", "json", "rt-tests", "help"],
            ),
            Part::Paragraph("Example: two tracers, 100 steps each:".to_owned()),
            Part::Example("rtlat ssdd -f 2 -i 100"),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_testkit::parsing::{expect_run, expect_usage_error, os_words};

    fn parse_words(words: &[&str]) -> Result<Invocation, UsageError> {
        parse(&os_words(words), "ssdd".into())
    }

    #[test]
    fn the_help_lists_every_visible_option_once() {
        let none: Vec<String> = Vec::new();
        assert_eq!(
            options::unlisted(&FLAGS, &help_page()),
            (none.clone(), none)
        );
    }

    #[test]
    fn spellings_and_defaults() {
        let s = |words: &[&str]| expect_run(parse_words(words), words).settings;
        assert_eq!(
            (s(&[]).forks, s(&[]).steps, s(&[]).quiet),
            (10, 10_000, false)
        );
        assert_eq!(s(&["-f", "2"]).forks, 2);
        assert_eq!(s(&["-f2"]).forks, 2);
        assert_eq!(s(&["--forks=3"]).forks, 3);
        assert_eq!(s(&["--fo", "3"]).forks, 3);
        assert_eq!(s(&["-i", "100"]).steps, 100);
        assert_eq!(s(&["--iters=7"]).steps, 7);
        assert_eq!(s(&["--it", "7"]).steps, 7);
        assert!(s(&["-qf2"]).quiet);
        assert!(s(&["--quiet"]).quiet);
        assert!(s(&["--json=-"]).json.is_some());
    }

    #[test]
    fn bad_values_name_the_option() {
        for (words, prefix) in [
            (&["-f", "0"][..], "-f/--forks: invalid value '0'"),
            (&["-f", "x"], "-f/--forks: invalid value 'x'"),
            (&["-i", "0"], "-i/--iters: invalid value '0'"),
            (&["-i", "-5"], "-i/--iters: invalid value '-5'"),
            (&["--json=/nonexistent/x"], "--json: cannot write"),
            (&["-x"], "unrecognized option '-x'"),
            (&["extra"], "unexpected argument 'extra'"),
        ] {
            let e = expect_usage_error(parse_words(words), words);
            assert!(e.starts_with(prefix), "{words:?}: {e}");
            assert!(!e.contains('\n'), "{words:?}: {e}");
        }
    }
}
