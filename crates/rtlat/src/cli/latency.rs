//! The `rtlat latency` command line: Xenomai 3 `latency`'s options
//! (`g:hp:l:T:qH:B:sD:t:fc:P:b`) where they mean something on Linux, plus
//! our long options (`--json`, `--verdict`, `--fail-if`, `--load`, ...),
//! `--help` and the hidden `--synthetic`, turned into validated
//! [`Settings`].
//!
//! `-t 1`, `-t 2`, `-D` and `-b` drive Xenomai's in-kernel benchmark and
//! mode switches; they are refused with a line saying so. Unlike Xenomai,
//! every value is checked (no `atoi`, no silent clamping of `-P`) and a bad
//! one is a one-line [`UsageError`].

use std::ffi::OsString;

use rtlat_core::CyclicConfig;

use super::explain::ExplainArgs;
use super::shared::{Measure, SharedArgs};
use crate::latency::settings::Settings;
use crate::report::verdict::text::Style;
use rtlat_args::UsageError;
use rtlat_args::getopt::OptSpec;
use rtlat_args::options::{self, Flag, Read};
use rtlat_args::values::SystemView;

use flags::{FLAGS, name};
pub use help::{SUMMARY, help_model, help_text};

mod engine;
mod explanation;
mod flags;
mod help;
mod printing;
mod thread;
mod xenomai;

/// What the command line asks for: [`help_text`], or to measure.
pub type Invocation = rtlat_args::Invocation<Measure<Box<Settings>>>;

/// Xenomai's default period on x86, 32- and 64-bit alike (its configure
/// script sets CONFIG_XENO_DEFAULT_PERIOD to 100 µs for `i*86` and
/// `x86_64` builds); 1000 µs on other architectures (ARM, arm64), as
/// Xenomai builds them.
pub const DEFAULT_PERIOD_US: i64 = if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
    100
} else {
    1000
};
/// Xenomai's default priority.
const DEFAULT_PRIORITY: u8 = 99;
/// Xenomai's histogram size (the code's 300, not its help text's 200).
const DEFAULT_BUCKETS: i64 = 300;
/// Xenomai's bucket width.
const DEFAULT_BUCKET_NS: i64 = 1000;
/// Xenomai's lines between headers.
const DEFAULT_LINES: u64 = 21;
/// How many sealed seconds the display may fall behind without losing one.
const INTERVAL_RING: usize = 64;
/// The most seconds a synthetic run keeps (64 B each).
const MAX_SYNTHETIC_RING: usize = 16_384;

const MAX_PERIOD_US: i64 = 1_000_000;
const MAX_BUCKET_NS: i64 = 1_000_000_000;
const MAX_LINES: i64 = 1_000_000;

#[derive(Default)]
struct Raw {
    gnuplot: Option<OsString>,
    histograms: bool,
    period: Option<String>,
    lines: Option<String>,
    duration: Option<String>,
    quiet: bool,
    histogram_size: Option<String>,
    bucket_size: Option<String>,
    stats: bool,
    device: Option<String>,
    test_mode: Option<String>,
    freeze: bool,
    cpu: Option<String>,
    priority: Option<String>,
    break_on_switch: bool,
    verdict: Option<Style>,
    shared: SharedArgs,
    explain: ExplainArgs,
}

/// Reads the `rtlat latency` command line (`args` without the program
/// name); `cmdline` is kept for the JSON output.
pub fn parse(
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse(&FLAGS, args, &mut raw)? == Read::Help {
        return Ok(Invocation::Help);
    }
    let (settings, warnings) = build(raw, cmdline, system)?;
    Ok(Invocation::Run(Measure {
        settings: Box::new(settings),
        warnings,
    }))
}

/// Checks the values, concern by concern, in the order their errors are
/// reported, and puts the settings together.
fn build(
    raw: Raw,
    cmdline: String,
    system: &SystemView,
) -> Result<(Settings, Vec<String>), UsageError> {
    let mut warnings = Vec::new();
    xenomai::refuse_xenomai_only(&raw)?;
    let thread = thread::thread(&raw, system)?;
    let (load, duration_secs) = thread::load_and_duration(&raw, system)?;
    let printing = printing::printing(&raw, duration_secs, &mut warnings)?;
    let source = raw.shared.source(name)?;
    let gates = raw.shared.gates(name)?;
    let projection = raw.shared.projection(name)?;
    let engine = engine::engine(
        &raw,
        &thread,
        &printing,
        duration_secs,
        source,
        load.as_ref(),
    );
    let explain = explanation::explanation(&raw, thread.cpu, system)?;
    let engine = CyclicConfig {
        explain: explain.as_ref().map(|plan| plan.trigger),
        ..engine
    };
    let settings = Settings {
        engine,
        period: thread.period,
        priority: thread.priority,
        duration_secs,
        lines_per_header: printing.lines_per_header,
        quiet: printing.quiet,
        histograms: raw.histograms,
        gnuplot: printing.gnuplot,
        freeze: raw.freeze,
        json: printing.json,
        verdict: raw.verdict,
        projection,
        cmdline,
        gates,
        load,
        explain,
    };
    Ok((settings, warnings))
}

/// The option table, as the man page and the completions see it.
pub fn table() -> Vec<OptSpec<()>> {
    FLAGS.iter().map(Flag::row).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::OutputTarget;
    use rtlat_core::Nanos;
    use rtlat_core::{SchedPolicy, TimeSourceKind, WaitMode};
    use rtlat_testkit::parsing::{expect_run, expect_usage_error, os_words, two_cpus};
    use std::path::PathBuf;

    #[test]
    fn the_default_period_is_xenomais_for_this_architecture() {
        // 100 µs on every x86 (i686 included), 1000 µs elsewhere.
        let expected = match std::env::consts::ARCH {
            "x86" | "x86_64" => 100,
            _ => 1000,
        };
        assert_eq!(DEFAULT_PERIOD_US, expected);
    }

    fn parse_words(words: &[&str]) -> Result<Invocation, UsageError> {
        parse(&os_words(words), "latency".into(), &two_cpus())
    }

    fn settings(words: &[&str]) -> Settings {
        *expect_run(parse_words(words), words).settings
    }

    fn error(words: &[&str]) -> String {
        expect_usage_error(parse_words(words), words)
    }

    #[test]
    fn defaults_like_xenomai() {
        let s = settings(&[]);
        let plan = &s.engine.threads[0];
        assert_eq!(s.engine.threads.len(), 1);
        assert_eq!(plan.interval, Nanos::from_micros(DEFAULT_PERIOD_US));
        assert_eq!((plan.policy, plan.priority), (SchedPolicy::Fifo, 99));
        assert_eq!(plan.cpu, None);
        assert_eq!(s.engine.wait, WaitMode::Timerfd);
        assert_eq!(s.engine.warmup, Some(Nanos::from_secs(1)));
        assert_eq!(
            s.engine.intervals.map(|i| i.length),
            Some(Nanos::from_secs(1))
        );
        assert_eq!(s.engine.run.duration, None);
        assert_eq!(s.engine.signed_histogram, None);
        assert!(!s.engine.freeze_on_max);
        assert_eq!(
            (s.lines_per_header, s.quiet, s.histograms),
            (21, false, false)
        );
        assert_eq!((s.duration_secs, s.gnuplot.clone()), (None, None));
        assert_eq!((s.json.clone(), s.verdict), (None, None));
        assert_eq!(s.cmdline, "latency");
    }

    /// Every option in every spelling getopt allows: separate, attached,
    /// grouped.
    #[test]
    fn spelling_table() {
        type Check = fn(&Settings) -> bool;
        let table: &[(&[&str], Check)] = &[
            (&["-p", "250"], |s| s.period == Nanos::from_micros(250)),
            (&["-p250"], |s| {
                s.engine.threads[0].interval == Nanos::from_micros(250)
            }),
            (&["-T", "5"], |s| {
                s.duration_secs == Some(5) && s.engine.run.duration == Some(Nanos::from_secs(6))
            }),
            (&["-T5"], |s| s.duration_secs == Some(5)),
            (&["-T", "2m"], |s| s.duration_secs == Some(120)),
            (&["-T", "0"], |s| s.duration_secs.is_none()),
            (&["-P", "80"], |s| s.priority == 80),
            (&["-P80"], |s| s.engine.threads[0].priority == 80),
            (&["-c", "1"], |s| s.engine.threads[0].cpu == Some(1)),
            (&["-c0"], |s| s.engine.threads[0].cpu == Some(0)),
            (&["-l", "5"], |s| s.lines_per_header == 5),
            (&["-l0"], |s| s.lines_per_header == 0),
            (&["-q", "-T", "3"], |s| s.quiet),
            (&["-qT3"], |s| s.quiet && s.duration_secs == Some(3)),
            (&["-h"], |s| {
                s.histograms && s.engine.signed_histogram.is_some()
            }),
            (&["-s"], |s| {
                !s.histograms && s.engine.signed_histogram.is_some()
            }),
            (&["-hs"], |s| {
                s.histograms && s.engine.signed_histogram.is_some()
            }),
            (&["-g", "out.dat"], |s| {
                s.gnuplot == Some(PathBuf::from("out.dat")) && s.engine.signed_histogram.is_some()
            }),
            (&["-gout.dat"], |s| {
                s.gnuplot == Some(PathBuf::from("out.dat"))
            }),
            (&["-h", "-H", "50"], |s| {
                s.engine.signed_histogram.map(|h| h.per_side) == Some(50)
            }),
            (&["-hH50"], |s| {
                s.engine.signed_histogram.map(|h| h.per_side) == Some(50)
            }),
            (&["-h", "-B", "250"], |s| {
                s.engine.signed_histogram.map(|h| h.width) == Some(Nanos(250))
            }),
            (&["-sB250"], |s| {
                s.engine.signed_histogram.map(|h| h.width) == Some(Nanos(250))
            }),
            (&["-H", "50"], |s| s.engine.signed_histogram.is_none()),
            (&["-f"], |s| s.freeze && s.engine.freeze_on_max),
            (&["-t", "0"], |s| s.engine.wait == WaitMode::Timerfd),
            (&["-t0"], |s| s.engine.wait == WaitMode::Timerfd),
            (&["--synthetic", "3"], |s| {
                s.engine.run.source == TimeSourceKind::Synthetic { seed: 3 }
            }),
            (&["--synthetic=4"], |s| {
                s.engine.run.source == TimeSourceKind::Synthetic { seed: 4 }
            }),
            (&["--json", "-"], |s| s.json == Some(OutputTarget::Stdout)),
            (&["--json=-"], |s| s.json == Some(OutputTarget::Stdout)),
            (&["--json=out.json"], |s| {
                s.json == Some(OutputTarget::File("out.json".into()))
            }),
            (&["--js", "out.json"], |s| {
                s.json == Some(OutputTarget::File("out.json".into()))
            }),
            (&["--verdict"], |s| {
                s.verdict == Some(Style::Short) && s.json.is_none()
            }),
            (&["--ver"], |s| s.verdict.is_some()),
            (&["--verdict=full"], |s| s.verdict == Some(Style::Full)),
            (&["--horizon=7d", "--deadline=1ms"], |s| {
                s.projection.horizons_s == [604_800] && s.projection.deadline_ns == Some(1_000_000)
            }),
        ];
        for (words, check) in table {
            let s = settings(words);
            assert!(check(&s), "{words:?}: {s:?}");
        }
    }

    #[test]
    fn help_is_the_long_option_only() {
        assert!(matches!(parse_words(&["--help"]), Ok(Invocation::Help)));
        assert!(matches!(parse_words(&["--he"]), Ok(Invocation::Help)));
        assert!(matches!(parse_words(&["-h"]), Ok(Invocation::Run(_))));
    }

    #[test]
    fn xenomai_only_modes_are_refused() {
        for (words, needle) in [
            (&["-t", "1"][..], "-t 1: the in-kernel periodic task"),
            (&["-t2"][..], "-t 2: the in-kernel timer handler"),
            (
                &["-D", "0"][..],
                "-D 0: it picks a Xenomai timerbench device",
            ),
            (&["-b"][..], "-b: it stops at a switch"),
        ] {
            let e = error(words);
            assert!(e.contains(needle), "{words:?}: {e}");
            assert!(e.contains("needs the Xenomai kernel"), "{words:?}: {e}");
        }
    }

    #[test]
    fn bad_values_name_the_option_the_value_and_what_is_accepted() {
        for (words, needle) in [
            (
                &["-p", "0"][..],
                "-p: invalid value '0': expected a sampling period in microseconds, 1 to 1000000",
            ),
            (&["-p", "abc"][..], "-p: invalid value 'abc'"),
            (
                &["-P", "0"][..],
                "-P: invalid value '0': expected a SCHED_FIFO priority, 1 to 99",
            ),
            (&["-P", "100"][..], "-P: invalid value '100'"),
            (
                &["-c", "7"][..],
                "-c: invalid value '7': expected a CPU this process may run on: 0, 1",
            ),
            (
                &["-H", "0"][..],
                "-H: invalid value '0': expected a number of histogram buckets",
            ),
            (
                &["-B", "-5"][..],
                "-B: invalid value '-5': expected a bucket width in nanoseconds",
            ),
            (&["-l", "x"][..], "-l: invalid value 'x'"),
            (&["-T", "soon"][..], "-T: invalid value 'soon'"),
            (
                &["-t", "3"][..],
                "-t: invalid value '3': expected a test mode",
            ),
            (
                &["-g", ""][..],
                "-g: invalid value '': expected a file name",
            ),
            (
                &["-g", "/nonexistent/dir/x.dat"][..],
                "directory '/nonexistent/dir' does not exist",
            ),
            (
                &["--json="][..],
                "--json: invalid value '': expected a file name",
            ),
            (
                &["--json", "/nonexistent/dir/x.json"][..],
                "--json: cannot write '/nonexistent/dir/x.json': directory '/nonexistent/dir' \
                 does not exist",
            ),
            (&["--json"][..], "option '--json' requires a value"),
            // Two of our options begin so: neither is guessed.
            (
                &["--j=-"][..],
                "option '--j' is ambiguous (could be --json, --junit)",
            ),
            (&["-x"][..], "-x"),
            (&["extra"][..], "unexpected argument 'extra'"),
        ] {
            let e = error(words);
            assert!(e.contains(needle), "{words:?}: {e}");
            assert!(!e.contains('\n'), "{words:?}: one line: {e}");
        }
    }

    #[test]
    fn quiet_without_duration_warns_as_xenomai_and_is_ignored() {
        match parse_words(&["-q"]) {
            Ok(Invocation::Run(Measure { settings, warnings })) => {
                assert!(!settings.quiet);
                assert_eq!(
                    warnings,
                    vec!["latency: -q only works if -T has been given.".to_string()]
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
