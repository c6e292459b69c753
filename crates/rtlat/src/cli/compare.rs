//! The `rtlat compare` command line: `[OPTIONS] BASE NEW`, scanned with the
//! same getopt rules as the other tools (options anywhere, `--` ends them,
//! unambiguous prefixes of long options), turned into
//! [`crate::compare::Settings`].

use std::ffi::OsString;
use std::sync::LazyLock;

use crate::compare::Settings;
use crate::compare::judge::NoiseRule;
use crate::output::OutputTarget;
use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, REQ};
use rtlat_args::options::{
    self, Flag, Layout, Manual, Name, Page, Pages, Part, Read, name_of, pick,
};
use rtlat_args::values::{DirReport, invalid, new_file_path};
use rtlat_results::file::StdinOr;

/// What `rtlat compare` is for, in one line: `rtlat --help` lists it and
/// the help starts with it (at most 65 characters).
pub const SUMMARY: &str = "compare two runs' latencies";

/// `rtlat compare`'s options, each defined once, in getopt's order.
static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    vec![
        Flag::help_option(Some('h')),
        Flag::new_long("fail-on-regression", NO, "")
            .help(rtlat_args::lines![
                "exit 3 when a judged row (of any phase) is",
                "worse (after the output; the worse rows go to",
                "stderr)",
            ])
            .apply(|r: &mut Raw, _| {
                r.fail_on_regression = true;
                Ok(())
            }),
        Flag::new_long("noise", REQ, "PERCENT")
            .help_owned(vec![
                "the relative part of the noise margin, 0 to".to_owned(),
                format!("{MAX_NOISE_PERCENT} (default {DEFAULT_NOISE_PERCENT})"),
            ])
            .apply(|r: &mut Raw, v| {
                r.noise = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("json", REQ, "FILE")
            .help(rtlat_args::lines![
                "also write the comparison as JSON to FILE",
                "(replaced whole); '-': the JSON instead of the",
                "text on standard output",
            ])
            .apply(|r: &mut Raw, v| {
                r.json = v.os_opt();
                Ok(())
            }),
    ]
});

/// How messages spell the option whose long name is `long`.
fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// The command line as given, before validation.
#[derive(Default)]
struct Raw {
    /// The operands, BASE and NEW (more are refused after the scan).
    files: Vec<OsString>,
    fail_on_regression: bool,
    noise: Option<String>,
    json: Option<OsString>,
}

/// The relative noise term by default, percent of BASE.
pub const DEFAULT_NOISE_PERCENT: f64 = NoiseRule::DEFAULT.percent;
const MAX_NOISE_PERCENT: f64 = 1000.0;

/// What the command line asks for: [`help_text`], or to compare with these
/// settings.
pub type Invocation = rtlat_args::Invocation<Settings>;

/// Reads the `rtlat compare` command line (`args` without the program and
/// tool names).
pub fn parse(args: &[OsString]) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    let read = options::parse_with_operands(&FLAGS, args, &mut raw, |r, word| {
        r.files.push(word);
        Ok(())
    })?;
    if read == Read::Help {
        return Ok(Invocation::Help);
    }
    let percent = match raw.noise {
        Some(text) => noise_percent(&text)?,
        None => DEFAULT_NOISE_PERCENT,
    };
    let mut files = raw.files.into_iter();
    let (Some(base), Some(new)) = (files.next(), files.next()) else {
        return Err(UsageError(
            "expected two files, BASE and NEW (the JSON of 'rtlat cyclictest --json'); try \
             'rtlat compare --help'"
                .into(),
        ));
    };
    if let Some(extra) = files.next() {
        return Err(UsageError(format!(
            "unexpected argument '{}': compare takes two files, BASE and NEW",
            extra.to_string_lossy()
        )));
    }
    let json = match raw.json.as_deref() {
        None => None,
        Some(path) if path == "-" => Some(OutputTarget::Stdout),
        Some(path) => Some(OutputTarget::File(new_file_path(
            name("json"),
            path,
            "write",
            DirReport::Missing,
        )?)),
    };
    let (base, new) = (StdinOr::from_arg(base), StdinOr::from_arg(new));
    if base == StdinOr::Stdin && new == StdinOr::Stdin {
        return Err(UsageError(
            "standard input ('-') given for both BASE and NEW; at most one of them can be read \
             from it"
                .into(),
        ));
    }
    Ok(Invocation::Run(Settings {
        base,
        new,
        rule: NoiseRule { percent },
        fail_on_regression: raw.fail_on_regression,
        json,
    }))
}

/// `--noise PERCENT`: a decimal 0 to 1000, `%` allowed after it.
fn noise_percent(text: &str) -> Result<f64, UsageError> {
    let number = text.trim();
    let number = number.strip_suffix('%').unwrap_or(number).trim_end();
    let plain = !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && number.bytes().filter(|&b| b == b'.').count() <= 1
        && number != ".";
    match number.parse::<f64>() {
        Ok(p) if plain && (0.0..=MAX_NOISE_PERCENT).contains(&p) => Ok(p),
        _ => Err(invalid(
            name("noise"),
            text,
            format_args!(
                "expected a percentage of BASE, 0 to {MAX_NOISE_PERCENT} ({DEFAULT_NOISE_PERCENT} \
                 by default)"
            ),
        )),
    }
}

/// The options and the help of `rtlat compare`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

/// `rtlat compare --help`: its prose and its options.
fn help_page() -> Page<'static, Raw> {
    let host_stalls_percent = crate::compare::judge::HOST_STALLS_STEAL * 100.0;
    Page {
        title: rtlat_args::tools::help_title("compare", SUMMARY),
        usage: vec!["rtlat compare [OPTIONS] BASE NEW".to_owned()],
        layout: Layout::spaced(29),
        parts: vec![
            Part::Paragraph(
                "\
BASE and NEW are JSON results of rtlat ('rtlat cyclictest --json FILE'),
or of the C cyclictest run with a histogram ('cyclictest -h US --json=FILE':
its percentiles come from its 1 us buckets, to the whole us, which the
file's line says); '-' reads one of them from standard input.
The first line is the answer: \"No change beyond noise\", or what is
worse (then better), e.g. \"Worse: thread 1 p99.9 +412.0%\". Then, for
each thread (matched by index) and for all threads together, min, p50,
p99, p99.9, floor and max in microseconds for BASE and NEW, the change in
percent of BASE, the interval of the difference and a verdict; how the
rows were judged; then one verdict line per row over all threads.
Threads only one run has are named and left out; \"all threads\" takes
every thread of each run. Above the verdict, the facts of the two
machines that differ (kernel, its command line, CPU, governors,
isolation, clocksource, rtlat version: each result's \"environment\")."
                    .to_owned(),
            ),
            Part::Paragraph(
                "\
BASE and NEW may instead both be evaluations: the directory of 'rtlat
evaluate -o DIR', or its report.json. The first line is then the answer
over the phases (\"Against BASE: worse in cpu (floor +87%); ...\"); each
of NEW's phases is compared with BASE's phase of the same name, under a
heading (\"Phase cpu:\"), as two runs are; a phase only one of them has,
or without a result, is named. The environments' differences come once,
at the end. --json writes one document, each phase with its comparison;
--fail-on-regression exits 3 when any phase is worse. An evaluation and a
run's result together are refused."
                    .to_owned(),
            ),
            Part::Paragraph("When is a change noise?".to_owned()),
            Part::Indented(format!(
                "\
A percentile row is worse (or better) only when both hold:
- the interval of the difference excludes 0. Each run's percentile
  gets an interval from order statistics: the samples of ranks
  n*p -+ z*sqrt(n*p*(1-p)*D), read from its distribution. D >= 1 is
  how much more the count of late samples varies between the run's
  blocks than independent samples would (\"blocks\" in rtlat's
  JSON: one stall makes several late samples), at the upper end of
  its 95 % interval, or 10 times its dispersion over the run's tenths
  when that is larger (two runs drift apart as much as two tenths of
  one run do), the larger of the two runs'; a file without blocks
  gets D = 1, and the output says so. The rows judged are one family:
  95 % family-wise, each row's interval at 1 - 0.05/m (Bonferroni).
- the change is above the noise threshold,
    |NEW - BASE| > max(NOISE % of BASE, 2 buckets)
  NOISE is {DEFAULT_NOISE_PERCENT} by default (--noise): the variation between runs
  that no interval from one run sees. The buckets are the
  distribution's at that value: a percentile is known to one bucket.
A percentile is judged only when both runs have at least 10 samples at
or beyond it (p50 needs 20 samples, p99 1000, p99.9 10000) and, with
blocks, at least 10 blocks with samples.
min and max are single samples: information only, with the reason.
When both runs' blocks support a projection of the maximum over 1 h,
max is judged by it: worse only when the two 95 % intervals do not
overlap and the change is above the threshold.
floor: the latency 9 windows (blocks, 100 ms) in 10 reach: each tenth
  of a run has its windows' maxima's 10th percentile, and the run's
  floor is their geometric mean. A disturbance in every window (a
  thread of higher priority that runs every 50 ms) raises it; a host
  stall of a few seconds does not. Worse when the interval of the
  ratio NEW/BASE, Student's t over the tenths' logs as wide as two
  single tenths differ (runs drift between them as much as tenths do),
  is above 1, and the change above NOISE % of BASE. It needs 50
  windows (5 s) in each run.
Host stalls: when the hypervisor took more than {host_stalls_percent} % of either run's
  measured CPUs' time (\"steal_share\" in the result's verdict), p50 to
  max hold the host's stalls and are not judged; the floor still is.
  A file that does not record it is judged as if the host took none."
            )),
            Part::Heading("Options"),
            pick(&FLAGS, &["noise", "fail-on-regression", "json", "help"]),
            Part::Paragraph(
                "\
Exit status: 0 compared, 1 an output could not be written, 2 a usage
error or a file that is not an rtlat result or evaluation (named, with
what is wrong), 3 a regression with --fail-on-regression."
                    .to_owned(),
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_testkit::parsing::{expect_run, expect_usage_error, os_words as os};

    fn run(args: &[&str]) -> Settings {
        expect_run(parse(&os(args)), args)
    }

    fn error(args: &[&str]) -> String {
        expect_usage_error(parse(&os(args)), args)
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
    fn two_files_and_defaults() {
        let s = run(&["a.json", "b.json"]);
        assert_eq!(s.base, StdinOr::Path("a.json".into()));
        assert_eq!(s.new, StdinOr::Path("b.json".into()));
        let s = run(&["-", "b.json"]);
        assert_eq!(
            (s.base, s.new),
            (StdinOr::Stdin, StdinOr::Path("b.json".into()))
        );
        let s = run(&["a.json", "-"]);
        assert_eq!(
            (s.base, s.new),
            (StdinOr::Path("a.json".into()), StdinOr::Stdin)
        );
        assert_eq!(s.rule.percent, 10.0);
        assert!(!s.fail_on_regression);
    }

    #[test]
    fn every_spelling() {
        for args in [
            &["--fail-on-regression", "a", "b"][..],
            &["a", "--fail-on-regression", "b"],
            &["a", "b", "--fail"],
            &["--f", "a", "b"],
        ] {
            assert!(run(args).fail_on_regression, "{args:?}");
        }
        for (args, percent) in [
            (&["--noise", "5", "a", "b"][..], 5.0),
            (&["--noise=2.5", "a", "b"], 2.5),
            (&["a", "b", "--noise", "20%"], 20.0),
            (&["--no", "0", "a", "b"], 0.0),
            (&["--noise", "1000", "a", "b"], 1000.0),
            (&["--noise", "5", "--noise", "7", "a", "b"], 7.0),
        ] {
            assert_eq!(run(args).rule.percent, percent, "{args:?}");
        }
        // `--` ends the options: a file may start with a dash.
        assert_eq!(
            run(&["--", "-a.json", "b"]).base,
            StdinOr::Path("-a.json".into())
        );
        for args in [
            &["-h"][..],
            &["--help"],
            &["a", "--he"],
            &["a", "b", "c", "-h"],
        ] {
            assert!(matches!(parse(&os(args)), Ok(Invocation::Help)), "{args:?}");
        }
    }

    #[test]
    fn table_of_errors() {
        let cases: &[(&[&str], &str)] = &[
            (
                &[],
                "expected two files, BASE and NEW (the JSON of 'rtlat cyclictest --json'); try \
                 'rtlat compare --help'",
            ),
            (&["a.json"], "expected two files, BASE and NEW"),
            (
                &["-", "-"],
                "standard input ('-') given for both BASE and NEW; at most one of them can be \
                 read from it",
            ),
            (
                &["a", "b", "c"],
                "unexpected argument 'c': compare takes two files, BASE and NEW",
            ),
            (
                &["--noise", "x", "a", "b"],
                "--noise: invalid value 'x': expected a percentage of BASE, 0 to 1000 (10 by \
                 default)",
            ),
            (&["--noise", "-5", "a", "b"], "--noise: invalid value '-5'"),
            (
                &["--noise", "1001", "a", "b"],
                "--noise: invalid value '1001'",
            ),
            (&["--noise", "", "a", "b"], "--noise: invalid value ''"),
            (
                &["--noise", "nan", "a", "b"],
                "--noise: invalid value 'nan'",
            ),
            (
                &["--noise", "1e2", "a", "b"],
                "--noise: invalid value '1e2'",
            ),
            (&["a", "b", "--noise"], "option '--noise' requires a value"),
            (&["-q", "a", "b"], "unrecognized option '-q'"),
            (
                &["--json", "/nonexistent/c.json", "a", "b"],
                "--json: cannot write '/nonexistent/c.json': directory '/nonexistent' does not \
                 exist",
            ),
            (&["--json=", "a", "b"], "--json: invalid value ''"),
            (&["a", "b", "--json"], "option '--json' requires a value"),
            (
                &["--fail-on-regression=1", "a", "b"],
                "option '--fail-on-regression' takes no value",
            ),
        ];
        for (args, expected) in cases {
            let message = error(args);
            assert!(
                message.starts_with(expected),
                "{args:?}\n got {message}\nwant {expected}"
            );
        }
    }

    #[test]
    fn help_states_the_noise_rule() {
        let help = MANUAL.help_text();
        assert!(help.contains("|NEW - BASE| > max(NOISE % of BASE, 2 buckets)"));
        assert!(help.contains("n*p -+ z*sqrt(n*p*(1-p)*D)"));
        assert!(help.contains("(Bonferroni)"));
        assert!(help.contains("min and max are single samples: information only"));
        assert!(help.contains("NOISE is 10 by default"));
        assert!(help.contains("p99.9 10000"));
        assert!(help.contains("--json FILE"));
        assert!(help.lines().all(|l| l.chars().count() <= 80), "{help}");
    }
}
