//! The `rtlat hwlatdetect` command line: the options of rt-tests 2.4's
//! hwlatdetect script (long only, as its argparse reads them: `--opt
//! VALUE`, `--opt=VALUE`, unambiguous prefixes), then ours (`--json`,
//! `--fail-if`, `--junit`), turned into validated [`Settings`].
//!
//! Unlike the script, whose bad values end in a Python traceback (exit
//! status 1) or are written to the kernel as they are (`--window` wrote
//! a fraction), every value is checked here: one line naming the option,
//! the value and what is accepted, exit 2, before the tracer is touched.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::LazyLock;

use super::gates;
use super::output_options as outputs;
use super::shared::{HasShared, Measure, SharedArgs};
use crate::hwlatdetect::settings::{DEFAULT_DURATION_S, FIXTURE_ENV, Settings};
use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, REQ};
use rtlat_args::options::{
    self, Flag, Layout, Manual, Name, Page, Pages, Part, Read, like, name_of, pick,
};
use rtlat_args::values::{DirReport, OptionName, SystemView, invalid, new_file_path};

/// What `rtlat hwlatdetect` is for, in one line (at most 65 characters).
pub const SUMMARY: &str = "hardware and firmware latency through the hwlat tracer";

/// What the command line asks for: [`help_text`], or to run.
pub type Invocation = rtlat_args::Invocation<Measure<Box<Settings>>>;

#[derive(Default)]
struct Raw {
    duration: Option<String>,
    threshold: Option<String>,
    hardlimit: Option<String>,
    window: Option<String>,
    width: Option<String>,
    report: Option<OsString>,
    cpu_list: Option<String>,
    debug: bool,
    quiet: bool,
    watch: bool,
    shared: SharedArgs,
}

impl HasShared for Raw {
    fn shared(&mut self) -> &mut SharedArgs {
        &mut self.shared
    }
}

/// The script's options (argparse's order), then ours.
static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    let mut flags = vec![
        Flag::c(Some('h'), "help", NO, "")
            .help(rtlat_args::lines!["print this help and exit"])
            .shows_help(),
        Flag::c(None, "duration", REQ, "TIME")
            .help(rtlat_args::lines![
                "how long the tracer samples: seconds, or a number",
                "with s, m, h, d or w (10m)",
            ])
            .default("120")
            .apply(|r: &mut Raw, v| {
                r.duration = Some(v.text()?);
                Ok(())
            }),
        Flag::c(None, "threshold", REQ, "US")
            .help(rtlat_args::lines![
                "record gaps above US (tracing_thresh); µs, or",
                "with us, ms or s. Default: the tracer's",
            ])
            .apply(|r: &mut Raw, v| {
                r.threshold = Some(v.text()?);
                Ok(())
            }),
        Flag::c(None, "hardlimit", REQ, "US")
            .help(rtlat_args::lines![
                "exit status 1 when the largest sample is above",
                "US. Default: the threshold",
            ])
            .apply(|r: &mut Raw, v| {
                r.hardlimit = Some(v.text()?);
                Ok(())
            }),
        Flag::c(None, "window", REQ, "US")
            .help(rtlat_args::lines![
                "one sample every US (hwlat_detector/window); a",
                "width above it is halved to fit",
            ])
            .apply(|r: &mut Raw, v| {
                r.window = Some(v.text()?);
                Ok(())
            }),
        Flag::c(None, "width", REQ, "US")
            .help(rtlat_args::lines![
                "of each window, how long the tracer spins",
                "(hwlat_detector/width); a window below it is",
                "doubled to fit",
            ])
            .apply(|r: &mut Raw, v| {
                r.width = Some(v.text()?);
                Ok(())
            }),
        Flag::c(None, "report", REQ, "FILE")
            .help(rtlat_args::lines![
                "write the samples to FILE, one line each"
            ])
            .apply(|r: &mut Raw, v| {
                r.report = Some(v.os());
                Ok(())
            }),
        Flag::c(None, "cpu-list", REQ, "CPUS")
            .help(rtlat_args::lines![
                "the CPUs the tracer's thread moves across",
                "(tracing_cpumask): N or N-M, comma-separated.",
                "Default: the tracer's",
            ])
            .apply(|r: &mut Raw, v| {
                r.cpu_list = Some(v.text()?);
                Ok(())
            }),
        Flag::c(None, "debug", NO, "")
            .help(rtlat_args::lines!["print each step of the set-up"])
            .apply(|r: &mut Raw, _| {
                r.debug = true;
                Ok(())
            }),
        Flag::c(None, "quiet", NO, "")
            .help(rtlat_args::lines![
                "print only the samples (and --report's line)"
            ])
            .apply(|r: &mut Raw, _| {
                r.quiet = true;
                Ok(())
            }),
        Flag::c(None, "watch", NO, "")
            .help(rtlat_args::lines!["print each sample as it arrives"])
            .apply(|r: &mut Raw, _| {
                r.watch = true;
                Ok(())
            }),
        outputs::json(&outputs::JSON_NEW),
        super::rt_tests_options::rt_tests(),
    ];
    flags.extend(gates::flags().into_iter().map(|flag| match flag.long {
        Some("fail-if") => flag.help(FAIL_IF_HELP),
        _ => flag,
    }));
    flags
});

/// hwlatdetect's `--fail-if`: on the samples, no percentiles.
const FAIL_IF_HELP: &str = rtlat_args::lines![
    "exit status 3 when the samples break a limit:",
    "comma-separated METRIC OP VALUE, METRIC one of min",
    "avg max, OP one of > >= < <=, VALUE with ns, us, ms",
    "or s (us if none): 'max>20us'. No sample above the",
    "threshold counts as 0",
];

fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// Reads the `rtlat hwlatdetect` command line (`args` without the
/// program name); `cmdline` is kept for the JSON.
pub fn parse(
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse(&FLAGS, args, &mut raw)? == Read::Help {
        return Ok(Invocation::Help);
    }
    let settings = build(raw, cmdline, system)?;
    Ok(Invocation::Run(Measure {
        settings: Box::new(settings),
        warnings: Vec::new(),
    }))
}

fn build(raw: Raw, cmdline: String, system: &SystemView) -> Result<Settings, UsageError> {
    let duration_s = match &raw.duration {
        Some(text) => seconds(name("duration"), text)?,
        None => DEFAULT_DURATION_S,
    };
    let micros_opt = |long: &str, text: &Option<String>, min: u64| match text {
        Some(text) => micros(name(long), text, min).map(Some),
        None => Ok(None),
    };
    let threshold_us = micros_opt("threshold", &raw.threshold, 0)?;
    let hardlimit_us = micros_opt("hardlimit", &raw.hardlimit, 0)?;
    let window_us = micros_opt("window", &raw.window, 1)?;
    let width_us = micros_opt("width", &raw.width, 1)?;
    let report = match &raw.report {
        Some(path) => Some(new_file_path(
            name("report"),
            path,
            "write",
            DirReport::Detailed,
        )?),
        None => None,
    };
    let cpu_list = match &raw.cpu_list {
        Some(text) => Some((text.clone(), cpus(text, system)?)),
        None => None,
    };
    let json = raw.shared.outputs(name, "microseconds")?.json;
    let rt_tests = raw.shared.rt_tests(name)?;
    let gates = raw.shared.gates(name)?;
    gates::refuse_percentiles(gates.as_ref(), name("fail-if"), "an hwlatdetect run")?;
    if let Some(plan) = &gates
        && let Some(limit) = plan
            .limits
            .iter()
            .find(|l| !matches!(l.metric.to_string().as_str(), "min" | "avg" | "max"))
    {
        return Err(UsageError(format!(
            "{}: '{}': an hwlatdetect run is judged on min, avg and max only (the tracer's \
             samples have no overruns and rtlat gives them no verdict)",
            name("fail-if").spelling(),
            limit
        )));
    }
    Ok(Settings {
        duration_s,
        threshold_us,
        hardlimit_us,
        window_us,
        width_us,
        report,
        cpu_list,
        debug: raw.debug,
        quiet: raw.quiet,
        watch: raw.watch,
        json,
        gates,
        rt_tests,
        cmdline,
        fixture: std::env::var_os(FIXTURE_ENV).map(PathBuf::from),
    })
}

/// The longest value accepted in seconds or microseconds: a year.
const MAX_SECONDS: u64 = 366 * 86_400;

/// The script's seconds: a whole number, or one with s, m, h, d or w.
fn seconds(id: Name, text: &str) -> Result<u64, UsageError> {
    let expected = "a whole number of seconds, or one with s, m, h, d or w (10m), up to a year";
    let (digits, unit) = split_unit(text);
    let scale = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(invalid(id, text, expected)),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|&s| s <= MAX_SECONDS)
        .ok_or_else(|| invalid(id, text, expected))
}

/// The script's microseconds: a whole number, or one with us, ms or s;
/// at least `min`.
fn micros(id: Name, text: &str, min: u64) -> Result<u64, UsageError> {
    let expected =
        format!("a whole number of microseconds, or one with us, ms or s (100us), {min} to a year");
    let (digits, unit) = split_unit(text);
    let scale = match unit {
        "" | "us" => 1,
        "ms" => 1_000,
        "s" => 1_000_000,
        _ => return Err(invalid(id, text, expected)),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|&us| us >= min && us <= MAX_SECONDS * 1_000_000)
        .ok_or_else(|| invalid(id, text, expected))
}

/// The leading digits and the rest.
fn split_unit(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(end)
}

/// `--cpu-list`: N or N-M, comma-separated, each CPU one of the machine's.
fn cpus(text: &str, system: &SystemView) -> Result<Vec<usize>, UsageError> {
    let last = system.configured_cpus.saturating_sub(1);
    let expected = format!("CPUs as N or N-M (N <= M), comma-separated, each from 0 to {last}");
    let bad = || invalid(name("cpu-list"), text, &expected);
    let mut all = Vec::new();
    for part in text.split(',') {
        let (from, to) = part.split_once('-').unwrap_or((part, part));
        let number = |s: &str| -> Option<usize> {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse().ok())
                .flatten()
        };
        let (from, to) = (number(from).ok_or_else(bad)?, number(to).ok_or_else(bad)?);
        if from > to || to > last {
            return Err(bad());
        }
        all.extend(from..=to);
    }
    all.sort_unstable();
    all.dedup();
    Ok(all)
}

/// The options and the help of `rtlat hwlatdetect`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

fn help_page() -> Page<'static, Raw> {
    let group = |longs: &[&str]| pick(&FLAGS, longs);
    Page {
        title: rtlat_args::tools::help_title("hwlatdetect", SUMMARY),
        usage: vec!["rtlat hwlatdetect [OPTIONS]".to_owned()],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(
                "\
The kernel's hwlat tracer (CONFIG_HWLAT_TRACER) spins on one CPU with
interrupts off for the width of each window and records every gap in
time it sees above the threshold: time the CPU spent outside the kernel's
control (System Management Interrupts, firmware). This sets the tracer up
through tracefs, reads its samples for the duration, puts every setting
back as it was (also when stopped by a signal or killed), and prints the
report of rt-tests' hwlatdetect script. Run as root. The options are the
script's: long only, --opt VALUE or --opt=VALUE, shortened while
unambiguous (--dur)."
                    .to_owned(),
            ),
            Part::Heading("The tracer"),
            group(&["duration", "threshold", "window", "width", "cpu-list"]),
            Part::Heading("Report"),
            group(&[
                "hardlimit",
                "report",
                "watch",
                "quiet",
                "debug",
                "json",
                "rt-tests",
            ]),
            Part::Heading("Gates for CI (checked after every output is written; exit status 3)"),
            Part::Options(like(&FLAGS, &gates::flags::<Raw>())),
            group(&["help"]),
            Part::Paragraph("Example: one minute, gaps above 20 us, fail above 50 us:".to_owned()),
            Part::Example("rtlat hwlatdetect --duration=1m --threshold=20 --hardlimit=50"),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_testkit::parsing::{os_words, two_cpus};

    fn parse_words(words: &[&str]) -> Result<Invocation, UsageError> {
        parse(&os_words(words), "hwlatdetect".into(), &two_cpus())
    }

    rtlat_testkit::measured_parser_checks!();

    #[test]
    fn the_help_lists_every_visible_option_once() {
        let none: Vec<String> = Vec::new();
        assert_eq!(
            rtlat_args::options::unlisted(&FLAGS, &help_page()),
            (none.clone(), none)
        );
    }

    #[test]
    fn defaults_and_spellings() {
        let s = settings(&[]);
        assert_eq!(s.duration_s, 120);
        assert_eq!((s.threshold_us, s.hardlimit_us), (None, None));
        assert!(!s.quiet && !s.debug && !s.watch && s.cpu_list.is_none());
        assert_eq!(settings(&["--duration=10m"]).duration_s, 600);
        assert_eq!(settings(&["--dur", "2h"]).duration_s, 7200);
        assert_eq!(settings(&["--duration", "1w"]).duration_s, 604_800);
        assert_eq!(settings(&["--threshold=1ms"]).threshold_us, Some(1000));
        assert_eq!(settings(&["--thr", "15us"]).threshold_us, Some(15));
        assert_eq!(settings(&["--hardlimit=2s"]).hardlimit_us, Some(2_000_000));
        assert_eq!(settings(&["--window=100000"]).window_us, Some(100_000));
        assert_eq!(settings(&["--width=50ms"]).width_us, Some(50_000));
        assert_eq!(
            settings(&["--cpu-list=0-1,1"]).cpu_list,
            Some(("0-1,1".to_owned(), vec![0, 1]))
        );
        assert!(settings(&["--qu", "--wa", "--deb"]).quiet);
    }

    #[test]
    fn bad_values_are_one_line() {
        for (words, start) in [
            (&["--duration=5x"][..], "--duration: invalid value '5x'"),
            (&["--duration="], "--duration: invalid value ''"),
            (&["--threshold=-1"], "--threshold: invalid value '-1'"),
            (&["--hardlimit=1.5"], "--hardlimit: invalid value '1.5'"),
            (&["--window=0"], "--window: invalid value '0'"),
            (&["--width=3m"], "--width: invalid value '3m'"),
            (&["--cpu-list=2"], "--cpu-list: invalid value '2'"),
            (&["--cpu-list=1-0"], "--cpu-list: invalid value '1-0'"),
            (&["--cpu-list=a"], "--cpu-list: invalid value 'a'"),
        ] {
            let e = error(words);
            assert!(e.starts_with(start), "{words:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        assert!(
            error(&["--d=1"]).contains("ambiguous"),
            "{}",
            error(&["--d=1"])
        );
        assert!(error(&["--fail-if=p99>1us"]).contains("fail-if"));
        assert!(error(&["--fail-if=overruns>1"]).contains("min, avg and max"));
        assert!(error(&["--junit=x.xml"]).contains("--fail-if"));
    }
}
