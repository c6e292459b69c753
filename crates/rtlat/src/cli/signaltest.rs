//! The `rtlat signaltest` command line: signaltest 2.4's options, read the
//! way its getopt reads them (`a::b:D:hl:mp:qSt:v` and the long names),
//! plus `--histogram`, `--histfile`, `--nsecs` and the hidden
//! `--synthetic`, turned into validated [`Settings`].
//!
//! Unlike C, every value is checked and a bad one is a one-line
//! [`UsageError`] naming the option, the value and what is accepted.

use std::ffi::OsString;

use rtlat_core::{C_PACING, RingConfig};

use super::shared::Measure;
use super::verdict_options;
use super::{gates, load_options};
use crate::signaltest::settings::Settings;
use rtlat_args::UsageError;
use rtlat_args::options::{self, Layout, Manual, Page, Pages, Part, Read, find, like, pick};
use rtlat_args::values::{SystemView, int_in};

mod flags;
mod gates_and_load;
mod raw;
mod threads;

use flags::{FLAGS, name};
use raw::Raw;

/// What `rtlat signaltest` is for, in one line: `rtlat --help` lists it and
/// the help starts with it (at most 65 characters).
pub const SUMMARY: &str = "how long a signal takes to go round a ring of threads";

/// What the command line asks for: [`help_text`], or to measure.
pub type Invocation = rtlat_args::Invocation<Measure<Box<Settings>>>;

/// Reads the `rtlat signaltest` command line (`args` without the program
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
    let threads = threads::ring_threads(&raw, system, &mut warnings)?;

    let limits = raw.shared.stop(name)?;
    let (resolution, unit) = rtlat_args::values::resolution(raw.nsecs, "--nsecs");
    let break_threshold = match &raw.breaktrace {
        Some(text) => Some(int_in(
            name("breaktrace"),
            text,
            1..=i64::from(i32::MAX),
            &format!("a latency threshold in {unit}"),
        )?),
        None => None,
    };
    let outputs = raw.shared.outputs(name, &unit)?;
    warnings.extend(outputs.warnings);
    let source = raw.shared.source(name)?;
    let (gates, projection, load) = gates_and_load::gates_and_load(&raw, system)?;
    let rt_tests = raw.shared.rt_tests(name)?;

    let settings = Settings {
        ring: RingConfig {
            threads,
            signal: signal_hook::consts::SIGUSR1,
            resolution,
            loops: limits.loops,
            duration: limits.duration,
            break_threshold,
            histogram_buckets: outputs.buckets,
            sample_ring: raw.verbose,
            pacing: Some(C_PACING),
            source,
        },
        quiet: raw.quiet,
        verbose: raw.verbose,
        histogram: outputs.histogram,
        json: outputs.json,
        verdict: raw.verdict,
        projection,
        rt_tests,
        mlockall: raw.mlockall,
        cmdline,
        gates,
        load,
    };
    Ok((settings, warnings))
}

/// The options and the help of `rtlat signaltest`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

/// `rtlat signaltest --help`: its prose and the groups of its options.
fn help_page() -> Page<'static, Raw> {
    let group = |longs: &[&str]| pick(&FLAGS, longs);
    Page {
        title: rtlat_args::tools::help_title("signaltest", SUMMARY),
        usage: vec!["rtlat signaltest [OPTIONS]".to_owned()],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(
                "\
The threads form a ring: each waits for SIGUSR1 and, once it has it, sends
it on to the next thread (the last one to thread 0). A thread's sample is
the time between two arrivals of the signal, one full trip round the ring,
in microseconds. Thread 0 pauses the ring for 10 ms every 16 trips so that
it does not take a whole CPU; no sample of any thread includes that pause.
The options are those of rt-tests signaltest 2.4: short options group
(-qm), values may be attached (-p80) or separate (-p 80), and long options
may be shortened while unambiguous (--prio)."
                    .to_owned(),
            ),
            Part::Heading("Ring and scheduling"),
            group(&["threads", "priority", "affinity", "smp", "mlockall"]),
            Part::Heading("When to stop (by default the run goes on until Ctrl-C)"),
            group(&["loops", "duration", "breaktrace"]),
            Part::Heading("Output"),
            Part::Options(
                [
                    find(
                        &FLAGS,
                        &[
                            "quiet",
                            "verbose",
                            "json",
                            "histogram",
                            "histfile",
                            "nsecs",
                            "rt-tests",
                            "verdict",
                        ],
                    ),
                    like(&FLAGS, &verdict_options::flags::<Raw>()),
                ]
                .concat(),
            ),
            Part::Heading("Gates for CI (checked after every output is written; exit status 3)"),
            Part::Options(like(&FLAGS, &gates::flags::<Raw>())),
            Part::Heading("Background load (see rtlat load --help for the kinds)"),
            Part::Options(like(&FLAGS, &load_options::flags::<Raw>())),
            group(&["help"]),
            Part::Paragraph(
                "Example: a ring of four threads at priority 80, 10000 trips, summary only:"
                    .to_owned(),
            ),
            Part::Example("rtlat signaltest -m -t 4 -p 80 -l 10000 -q"),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::OutputTarget;
    use rtlat_core::Nanos;
    use rtlat_core::Resolution;
    use rtlat_core::SchedPolicy;
    use rtlat_core::TimeSourceKind;
    use rtlat_testkit::parsing::{os_words, two_cpus};

    fn parse_words(words: &[&str]) -> Result<Invocation, UsageError> {
        parse(&os_words(words), "signaltest".into(), &two_cpus())
    }

    rtlat_testkit::measured_parser_checks!();

    #[test]
    fn defaults_like_c() {
        let s = settings(&[]);
        assert_eq!(s.ring.threads.len(), 2);
        assert!(
            s.ring
                .threads
                .iter()
                .all(|t| t.priority == 0 && t.policy == SchedPolicy::Other && t.cpu.is_none())
        );
        assert_eq!(s.ring.loops, None);
        assert_eq!(s.ring.duration, None);
        assert_eq!(s.ring.pacing, Some(C_PACING));
        assert_eq!(s.ring.signal, signal_hook::consts::SIGUSR1);
        assert_eq!(s.ring.resolution, Resolution::Micros);
        assert!(!s.quiet && !s.verbose && !s.mlockall);
        assert_eq!((s.json, s.histogram), (None, None));
    }

    /// Every spelling of every option: short, clustered, attached, long,
    /// `--name=value`, abbreviated.
    #[test]
    fn the_help_lists_every_visible_option_once() {
        let none: Vec<String> = Vec::new();
        assert_eq!(
            rtlat_args::options::unlisted(&FLAGS, &help_page()),
            (none.clone(), none)
        );
    }

    #[test]
    fn spelling_table() {
        type Check = fn(&Settings) -> bool;
        let table: &[(&[&str], Check)] = &[
            (&["-a"], |s| s.ring.threads[1].cpu == Some(1)),
            (&["-a", "1"], |s| {
                s.ring.threads.iter().all(|t| t.cpu == Some(1))
            }),
            (&["-a1"], |s| s.ring.threads[0].cpu == Some(1)),
            (&["--affinity=0-1"], |s| s.ring.threads[1].cpu == Some(1)),
            (&["--affinity", "1"], |s| s.ring.threads[0].cpu == Some(1)),
            (&["--aff"], |s| s.ring.threads[0].cpu == Some(0)),
            (&["--rt-tests=2.10"], |s| {
                s.rt_tests == rtlat_core::RtTests::V2_10
            }),
            (&["--rt", "2.6"], |s| {
                s.rt_tests == rtlat_core::RtTests::V2_6
            }),
            (&[], |s| s.rt_tests == rtlat_core::RtTests::V2_4),
            (&["-b", "50"], |s| s.ring.break_threshold == Some(50)),
            (&["-b50"], |s| s.ring.break_threshold == Some(50)),
            (&["--breaktrace=50"], |s| s.ring.break_threshold == Some(50)),
            (&["--break", "50"], |s| s.ring.break_threshold == Some(50)),
            (&["-D", "10"], |s| {
                s.ring.duration == Some(Nanos::from_secs(10))
            }),
            (&["-D2m"], |s| {
                s.ring.duration == Some(Nanos::from_secs(120))
            }),
            (&["--duration=1h"], |s| {
                s.ring.duration == Some(Nanos::from_secs(3600))
            }),
            (&["--dur", "0"], |s| s.ring.duration.is_none()),
            (&["--json=x.json"], |s| {
                s.json == Some(OutputTarget::File("x.json".into()))
            }),
            (&["--json", "-"], |s| s.json == Some(OutputTarget::Stdout)),
            (&["--js=-"], |s| s.json == Some(OutputTarget::Stdout)),
            (&["-l", "100"], |s| s.ring.loops == Some(100)),
            (&["-l100"], |s| s.ring.loops == Some(100)),
            (&["--loops=100"], |s| s.ring.loops == Some(100)),
            (&["--lo", "0"], |s| s.ring.loops.is_none()),
            (&["-m"], |s| s.mlockall),
            (&["--mlockall"], |s| s.mlockall),
            (&["--ml"], |s| s.mlockall),
            (&["-p", "80"], |s| {
                s.ring.threads.iter().all(|t| t.priority == 80)
                    && s.ring.threads[0].policy == SchedPolicy::Fifo
            }),
            (&["-p80"], |s| s.ring.max_priority() == 80),
            (&["--priority=80"], |s| s.ring.max_priority() == 80),
            (&["--prio", "80"], |s| s.ring.max_priority() == 80),
            (&["-p", "0"], |s| !s.ring.needs_realtime()),
            (&["-q"], |s| s.quiet),
            (&["--quiet"], |s| s.quiet),
            (&["--q"], |s| s.quiet),
            (&["-S"], |s| {
                s.ring.threads.len() == 2 && s.ring.threads[1].cpu == Some(1)
            }),
            (&["--smp"], |s| s.ring.threads[0].cpu == Some(0)),
            (&["-t", "5"], |s| s.ring.threads.len() == 5),
            (&["-t5"], |s| s.ring.threads.len() == 5),
            (&["--threads=5"], |s| s.ring.threads.len() == 5),
            (&["--thr", "3"], |s| s.ring.threads.len() == 3),
            (&["-v"], |s| s.verbose && s.ring.sample_ring),
            (&["--verbose"], |s| s.verbose),
            (&["--verb"], |s| s.verbose),
            (&["-qmp80"], |s| {
                s.quiet && s.mlockall && s.ring.max_priority() == 80
            }),
            (&["-qvl", "5"], |s| {
                s.quiet && s.verbose && s.ring.loops == Some(5)
            }),
            (&["--histogram=30"], |s| {
                s.ring.histogram_buckets == Some(30) && s.histogram == Some(OutputTarget::Stdout)
            }),
            (&["--histogram", "30", "--histfile=h.txt"], |s| {
                s.histogram == Some(OutputTarget::File("h.txt".into()))
            }),
            (&["--histo=7"], |s| s.ring.histogram_buckets == Some(7)),
            (&["--nsecs"], |s| s.ring.resolution == Resolution::Nanos),
            (&["--ns"], |s| s.ring.resolution == Resolution::Nanos),
            (&["--synthetic", "3"], |s| {
                s.ring.source == TimeSourceKind::Synthetic { seed: 3 }
            }),
            (&["-l", "5", "-l", "9"], |s| s.ring.loops == Some(9)),
            (&["-q", "--"], |s| s.quiet),
        ];
        for (words, check) in table {
            let s = settings(words);
            assert!(check(&s), "{words:?}: {s:?}");
        }
    }

    #[test]
    fn help_spellings() {
        for words in [&["-h"][..], &["--help"], &["--he"], &["--h"], &["-qh"]] {
            assert!(
                matches!(parse_words(words), Ok(Invocation::Help)),
                "{words:?}"
            );
        }
    }

    #[test]
    fn smp_overrides_threads_and_affinity_with_warnings() {
        let s = settings(&["-S", "-t", "5", "-a", "1"]);
        assert_eq!(s.ring.threads.len(), 2);
        assert_eq!(
            warnings(&["-S", "-t", "5", "-a", "1"]),
            [
                "WARN: -t ignored due to smp mode",
                "WARN: -a ignored due to smp mode"
            ]
        );
        let one_cpu = SystemView {
            allowed_cpus: vec![0],
            configured_cpus: 1,
        };
        let err = parse(&[OsString::from("-S")], String::new(), &one_cpu).unwrap_err();
        assert!(err.0.starts_with("-S/--smp:"), "{}", err.0);
    }

    #[test]
    fn bad_values_name_the_option() {
        for (words, prefix) in [
            (&["-t", "1"][..], "-t/--threads: invalid value '1'"),
            (&["-t", "-2"], "-t/--threads: invalid value '-2'"),
            (&["-t", "0"], "-t/--threads: invalid value '0'"),
            (&["-t", "x"], "-t/--threads: invalid value 'x'"),
            (&["-p", "100"], "-p/--priority: invalid value '100'"),
            (&["-p", "-1"], "-p/--priority: invalid value '-1'"),
            (&["-D", "-5"], "-D/--duration: invalid value '-5'"),
            (&["-D", "1.5"], "-D/--duration: invalid value '1.5'"),
            (&["-l", "-1"], "-l/--loops: invalid value '-1'"),
            (&["-a", "64"], "-a/--affinity: invalid value '64'"),
            (&["-b", "0"], "-b/--breaktrace: invalid value '0'"),
            (&["--histogram=0"], "--histogram: invalid value '0'"),
            (&["--synthetic=x"], "--synthetic: invalid value 'x'"),
            (&["--json=/nonexistent/x.json"], "--json: cannot write"),
            (&["-Z"], "unrecognized option '-Z'"),
            (&["--bogus"], "unrecognized option '--bogus'"),
            (&["--hist=3"], "option '--hist' is ambiguous"),
            (&["-t"], "option '-t' requires a value"),
            (&["extra"], "unexpected argument 'extra'"),
        ] {
            let e = error(words);
            assert!(e.starts_with(prefix), "{words:?}: {e}");
            assert!(!e.contains('\n'), "{words:?}: one line: {e}");
        }
    }

    #[test]
    fn gates_and_load_through_the_shared_options() {
        let s = settings(&[
            "--fail-if",
            "max>100us,verdict!=untrustworthy",
            "--ju=j.xml",
        ]);
        let gates = s.gates.expect("gates");
        assert_eq!(gates.limits.len(), 2);
        assert_eq!(gates.junit, Some("j.xml".into()));
        let s = settings(&["--load", "cpu:1", "--load-cpus", "1"]);
        let load = s.load.expect("load");
        assert_eq!(load.phases.len(), 1);
        assert_eq!(load.phases[0].plan.as_ref().unwrap().cpus, [1]);
        assert_eq!((settings(&[]).gates, settings(&[]).load), (None, None));
        for (words, want) in [
            (
                &["--fail-if", "p99.9>1ms"][..],
                "--fail-if: 'p99.9 > 1ms': a signaltest run keeps no percentiles",
            ),
            (
                &["--load-schedule", "idle=5"],
                "--load-schedule: a signaltest run keeps no per-phase figures",
            ),
            (&["--junit", "j.xml"], "--junit needs --fail-if LIMITS"),
            (&["--load", "bogus"], "--load: invalid value 'bogus'"),
        ] {
            let e = error(words);
            assert!(e.starts_with(want), "{words:?}: {e}");
        }
    }

    #[test]
    fn histfile_without_histogram_warns() {
        assert_eq!(
            warnings(&["--histfile=h.txt"]),
            ["WARN: --histfile given without --histogram; no histogram is written"]
        );
    }
}
