//! Table tests: every spelling of every option, every error, the warnings.

use std::path::PathBuf;

use rtlat_core::DistributionPlan;
use rtlat_core::Nanos;
use rtlat_core::Resolution;
use rtlat_core::{
    Alignment, BreakPlan, ClockKind, CyclicConfig, HistogramPlan, IntervalPlan, MeasureMode,
    RunConfig, SchedPolicy, SpikePlan, ThreadPlan, TimeSourceKind, WaitMode,
};

use super::*;
use crate::cyclictest::settings::{DmaLatency, HgrmOutput, HistogramOutput, IdleStateLimit};
use crate::output::OutputTarget;
use crate::report::verdict::text::Style;
use rtlat_testkit::parsing::{
    Spelled, expect_run, expect_usage_error, os_words as os, spellings, two_cpus as sys2,
};

fn sys4() -> SystemView {
    SystemView {
        allowed_cpus: vec![3, 1, 0, 2],
        configured_cpus: 4,
    }
}

fn try_on(system: &SystemView, args: &[&str]) -> Result<Invocation, UsageError> {
    parse(&os(args), String::new(), system)
}

fn run_on(system: &SystemView, args: &[&str]) -> (Settings, Vec<String>) {
    let Measure { settings, warnings } = expect_run(try_on(system, args), args);
    (settings, warnings)
}

fn run(args: &[&str]) -> (Settings, Vec<String>) {
    run_on(&sys2(), args)
}

fn settings(args: &[&str]) -> Settings {
    run(args).0
}

fn err_on(system: &SystemView, args: &[&str]) -> String {
    expect_usage_error(try_on(system, args), args)
}

fn err(args: &[&str]) -> String {
    err_on(&sys2(), args)
}

fn intervals_us(s: &Settings) -> Vec<i64> {
    s.engine
        .threads
        .iter()
        .map(|t| t.interval.as_micros_truncated())
        .collect()
}

fn cpus(s: &Settings) -> Vec<Option<usize>> {
    s.engine.threads.iter().map(|t| t.cpu).collect()
}

fn prios(s: &Settings) -> Vec<u8> {
    s.engine.threads.iter().map(|t| t.priority).collect()
}

/// One option and what it must do.
struct Case {
    name: Spelled<'static>,
    /// The value is optional: `-t` cannot be followed by another flag in
    /// the same word.
    optional: bool,
    /// The value is taken verbatim (a path), so `"-F /x"` in one word means
    /// the path `" /x"`: that spelling is left out (see `fifo_path`).
    verbatim: bool,
    /// Arguments put in front of every spelling.
    extra: &'static [&'static str],
    check: fn(&Settings, &[String]),
}

impl Case {
    /// The flag grouped with the option in clusters.
    fn partner(&self) -> char {
        if self.name.short == Some('q') {
            'm'
        } else {
            'q'
        }
    }

    /// Every way of writing this option, each with the partner flag.
    fn spellings(&self) -> Vec<Vec<String>> {
        spellings(
            &self.name,
            self.optional,
            !self.verbatim,
            self.partner(),
            self.extra,
        )
    }
}

const fn case(
    short: Option<char>,
    long: &'static str,
    abbrev: &'static str,
    value: Option<&'static str>,
    check: fn(&Settings, &[String]),
) -> Case {
    Case {
        name: Spelled {
            short,
            long,
            abbrev,
            value,
        },
        optional: false,
        verbatim: false,
        extra: &[],
        check,
    }
}

const HISTFILE: &str = "/tmp/rtlat-cli-test.hist";
const JSONFILE: &str = "/tmp/rtlat-cli-test.json";
const FIFOFILE: &str = "/tmp/rtlat-cli-test.fifo";
const STATSFILE: &str = "/tmp/rtlat-cli-test.jsonl";

fn nanos_us(us: i64) -> Nanos {
    Nanos::from_micros(us)
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            optional: true,
            ..case(Some('a'), "affinity", "aff", Some("1"), |s, w| {
                assert_eq!(cpus(s), [Some(1)]);
                assert_eq!(s.main_cpus_before_start, Some(vec![1]));
                assert!(w.is_empty());
            })
        },
        Case {
            optional: true,
            extra: &["-t", "3"],
            ..case(Some('a'), "affinity", "af", None, |s, _| {
                assert_eq!(cpus(s), [Some(0), Some(1), Some(0)]);
                assert_eq!(s.main_cpus_before_start, None);
            })
        },
        case(Some('c'), "clock", "c", Some("1"), |s, _| {
            assert_eq!(s.engine.clock, ClockKind::Realtime)
        }),
        case(Some('c'), "clock", "cl", Some("realtime"), |s, _| {
            assert_eq!(s.engine.clock, ClockKind::Realtime)
        }),
        case(Some('c'), "clock", "clo", Some("0"), |s, _| {
            assert_eq!(s.engine.clock, ClockKind::Monotonic)
        }),
        Case {
            extra: &["-t2"],
            ..case(Some('d'), "distance", "di", Some("100"), |s, w| {
                assert_eq!(intervals_us(s), [1000, 1100]);
                assert!(w.is_empty());
            })
        },
        case(Some('D'), "duration", "dur", Some("10"), |s, _| {
            assert_eq!(s.engine.run.duration, Some(Nanos::from_secs(10)))
        }),
        case(Some('D'), "duration", "du", Some("2m"), |s, _| {
            assert_eq!(s.engine.run.duration, Some(Nanos::from_secs(120)))
        }),
        Case {
            extra: &["-t2"],
            ..case(Some('h'), "histogram", "histog", Some("20"), |s, w| {
                assert_eq!(s.engine.histogram, Some(HistogramPlan { buckets: 20 }));
                assert_eq!(
                    s.histogram,
                    Some(HistogramOutput {
                        summary_column: false,
                        target: OutputTarget::Stdout
                    })
                );
                assert_eq!(intervals_us(s), [1000, 1000]);
                assert!(w.is_empty());
            })
        },
        case(Some('H'), "histofall", "histof", Some("20"), |s, _| {
            assert_eq!(s.engine.histogram, Some(HistogramPlan { buckets: 20 }));
            assert!(s.histogram.as_ref().unwrap().summary_column);
        }),
        Case {
            extra: &["-h", "5"],
            ..case(None, "histfile", "histf", Some(HISTFILE), |s, w| {
                assert_eq!(
                    s.histogram.as_ref().unwrap().target,
                    OutputTarget::File(HISTFILE.into())
                );
                assert!(w.is_empty());
            })
        },
        case(Some('i'), "interval", "int", Some("250"), |s, _| {
            assert_eq!(intervals_us(s), [250])
        }),
        case(None, "json", "j", Some(JSONFILE), |s, _| {
            assert_eq!(s.json, Some(OutputTarget::File(JSONFILE.into())))
        }),
        case(None, "json", "js", Some("-"), |s, _| {
            assert_eq!(s.json, Some(OutputTarget::Stdout))
        }),
        case(Some('l'), "loops", "lo", Some("100"), |s, _| {
            assert_eq!(s.engine.run.loops, Some(100))
        }),
        case(Some('m'), "mlockall", "ml", None, |s, _| {
            assert!(s.mlockall)
        }),
        case(None, "mainaffinity", "ma", Some("1"), |s, _| {
            assert_eq!(s.main_affinity, Some(vec![1]));
            assert_eq!(cpus(s), [None]);
        }),
        case(Some('N'), "nsecs", "n", None, |s, _| {
            assert_eq!(s.engine.run.resolution, Resolution::Nanos)
        }),
        case(Some('p'), "priority", "prior", Some("80"), |s, w| {
            assert_eq!(prios(s), [80]);
            assert_eq!(s.engine.threads[0].policy, SchedPolicy::Fifo);
            assert_eq!(s.header_policy, "fifo");
            // As in C, -p itself switches the default policy to fifo,
            // without a warning.
            assert!(w.is_empty());
        }),
        case(None, "policy", "pol", Some("rr"), |s, w| {
            assert_eq!(s.engine.threads[0].policy, SchedPolicy::RoundRobin);
            assert_eq!(prios(s), [2]);
            assert_eq!(s.header_policy, "rr");
            assert_eq!(w, ["defaulting realtime priority to 2"]);
        }),
        Case {
            extra: &["-p", "10", "-t", "3"],
            ..case(None, "priospread", "prios", None, |s, _| {
                assert_eq!(prios(s), [10, 9, 8])
            })
        },
        case(Some('q'), "quiet", "q", None, |s, _| assert!(s.quiet)),
        case(Some('r'), "relative", "rel", None, |s, _| {
            assert_eq!(s.engine.wait, WaitMode::Relative)
        }),
        case(Some('S'), "smp", "smp", None, |s, w| {
            assert_eq!(cpus(s), [Some(0), Some(1)]);
            assert_eq!(intervals_us(s), [1000, 1500]);
            assert_eq!(s.main_cpus_before_start, None);
            assert!(w.is_empty());
        }),
        Case {
            optional: true,
            ..case(Some('t'), "threads", "th", Some("3"), |s, _| {
                assert_eq!(intervals_us(s), [1000, 1500, 2000]);
                assert_eq!(cpus(s), [None, None, None]);
            })
        },
        Case {
            optional: true,
            ..case(Some('t'), "threads", "thr", None, |s, _| {
                assert_eq!(s.engine.threads.len(), 2)
            })
        },
        Case {
            optional: true,
            ..case(Some('t'), "threads", "thre", Some("0"), |s, _| {
                assert_eq!(s.engine.threads.len(), 2)
            })
        },
        case(Some('u'), "unbuffered", "u", None, |s, _| {
            assert!(s.unbuffered)
        }),
        case(Some('v'), "verbose", "v", None, |s, _| {
            assert!(s.verbose);
            assert!(s.engine.sample_ring);
        }),
        case(None, "laptop", "lap", None, |s, _| {
            assert_eq!(s.dma_latency, DmaLatency::SkipLaptop)
        }),
        case(None, "latency", "lat", Some("10"), |s, _| {
            assert_eq!(s.dma_latency, DmaLatency::Set(10))
        }),
        case(None, "default-system", "def", None, |s, _| {
            assert_eq!(s.dma_latency, DmaLatency::SkipDefaultSystem)
        }),
        case(None, "synthetic", "syn", Some("42"), |s, _| {
            assert_eq!(s.engine.run.source, TimeSourceKind::Synthetic { seed: 42 })
        }),
        Case {
            optional: true,
            extra: &["-t", "2"],
            ..case(Some('A'), "aligned", "al", Some("10"), |s, w| {
                assert_eq!(
                    s.engine.alignment,
                    Some(Alignment::Threads {
                        offset: nanos_us(10)
                    })
                );
                assert!(w.is_empty());
            })
        },
        Case {
            optional: true,
            ..case(Some('A'), "aligned", "align", None, |s, w| {
                assert_eq!(
                    s.engine.alignment,
                    Some(Alignment::Threads { offset: Nanos(0) })
                );
                assert!(w.is_empty());
            })
        },
        Case {
            optional: true,
            ..case(None, "secaligned", "sec", Some("250"), |s, w| {
                assert_eq!(
                    s.engine.alignment,
                    Some(Alignment::NextSecond {
                        offset: nanos_us(250)
                    })
                );
                assert!(w.is_empty());
            })
        },
        Case {
            optional: true,
            ..case(None, "secaligned", "se", None, |s, _| {
                assert_eq!(
                    s.engine.alignment,
                    Some(Alignment::NextSecond { offset: Nanos(0) })
                );
            })
        },
        case(Some('b'), "breaktrace", "br", Some("50"), |s, w| {
            assert_eq!(s.engine.breaktrace, Some(BreakPlan { threshold: 50 }));
            assert!(!s.tracemark);
            assert!(w.is_empty());
        }),
        Case {
            extra: &["-N"],
            ..case(Some('b'), "breaktrace", "b", Some("50000"), |s, _| {
                assert_eq!(s.engine.breaktrace, Some(BreakPlan { threshold: 50_000 }));
                assert_eq!(s.engine.run.resolution, Resolution::Nanos);
            })
        },
        Case {
            verbatim: true,
            ..case(Some('F'), "fifo", "fi", Some(FIFOFILE), |s, w| {
                assert_eq!(s.fifo, Some(PathBuf::from(FIFOFILE)));
                assert!(w.is_empty());
            })
        },
        case(Some('M'), "refresh_on_max", "ref", None, |s, _| {
            assert!(s.refresh_on_max)
        }),
        Case {
            extra: &["-v"],
            ..case(Some('o'), "oscope", "o", Some("5"), |s, w| {
                assert_eq!(s.oscope_reduction, 5);
                assert!(s.verbose);
                assert!(w.is_empty());
            })
        },
        case(Some('o'), "oscope", "osc", Some("1"), |s, _| {
            assert_eq!(s.oscope_reduction, 1);
            assert!(!s.verbose);
        }),
        case(Some('R'), "resolution", "res", None, |s, w| {
            assert!(s.check_resolution);
            assert!(!s.debug_resolution);
            assert!(w.is_empty());
        }),
        case(Some('s'), "system", "sy", None, |s, w| {
            assert_eq!(s.engine.wait, WaitMode::Nanosleep);
            assert!(w.is_empty());
        }),
        Case {
            extra: &["-r"],
            ..case(Some('s'), "system", "sys", None, |s, _| {
                assert_eq!(s.engine.wait, WaitMode::Nanosleep)
            })
        },
        case(Some('x'), "posix_timers", "pos", None, |s, w| {
            assert_eq!(
                s.engine.wait,
                WaitMode::PosixTimer {
                    armed_relative: false
                }
            );
            assert!(w.is_empty());
        }),
        Case {
            extra: &["-r"],
            ..case(Some('x'), "posix_timers", "posix", None, |s, _| {
                assert_eq!(
                    s.engine.wait,
                    WaitMode::PosixTimer {
                        armed_relative: true
                    }
                )
            })
        },
        Case {
            extra: &["-a"],
            ..case(None, "smi", "smi", None, |s, w| {
                assert!(s.engine.smi);
                assert_eq!(cpus(s), [Some(0)]);
                assert!(w.is_empty());
            })
        },
        Case {
            extra: &["-S"],
            ..case(None, "smi", "smi", None, |s, _| {
                assert!(s.engine.smi);
                assert_eq!(cpus(s), [Some(0), Some(1)]);
            })
        },
        case(None, "spike", "spike", Some("100"), |s, w| {
            assert_eq!(
                s.engine.spikes,
                Some(SpikePlan {
                    trigger: 100,
                    capacity: 1024
                })
            );
            assert!(w.is_empty());
        }),
        Case {
            extra: &["--spike", "100"],
            ..case(None, "spike-nodes", "spike-n", Some("64"), |s, w| {
                assert_eq!(
                    s.engine.spikes,
                    Some(SpikePlan {
                        trigger: 100,
                        capacity: 64
                    })
                );
                assert!(w.is_empty());
            })
        },
        Case {
            extra: &["-b", "10"],
            ..case(None, "tracemark", "tr", None, |s, w| {
                assert!(s.tracemark);
                assert_eq!(s.engine.breaktrace, Some(BreakPlan { threshold: 10 }));
                assert!(w.is_empty());
            })
        },
        Case {
            extra: &["-R"],
            ..case(None, "dbg_cyclictest", "db", None, |s, w| {
                assert!(s.debug_resolution);
                assert!(s.check_resolution);
                assert!(w.is_empty());
            })
        },
        case(None, "wait", "wa", Some("abs"), |s, w| {
            assert_eq!(s.engine.wait, WaitMode::Absolute);
            assert!(!s.show_methods);
            assert!(w.is_empty());
        }),
        case(None, "wait", "wai", Some("rel"), |s, _| {
            assert_eq!(s.engine.wait, WaitMode::Relative);
            assert!(s.show_methods);
        }),
        case(None, "wait", "wa", Some("nanosleep"), |s, _| {
            assert_eq!(s.engine.wait, WaitMode::Nanosleep)
        }),
        case(None, "wait", "wa", Some("posix-timer"), |s, _| {
            assert_eq!(
                s.engine.wait,
                WaitMode::PosixTimer {
                    armed_relative: false
                }
            )
        }),
        case(None, "wait", "wa", Some("timerfd"), |s, _| {
            assert_eq!(s.engine.wait, WaitMode::Timerfd)
        }),
        case(None, "wait", "wa", Some("std-sleep"), |s, _| {
            assert_eq!(s.engine.wait, WaitMode::StdSleep)
        }),
        case(None, "wait", "wa", Some("BUSY"), |s, _| {
            assert_eq!(s.engine.wait, WaitMode::Busy)
        }),
        case(None, "measure", "mea", Some("clock"), |s, _| {
            assert_eq!(s.engine.measure, MeasureMode::Clock);
            assert!(!s.show_methods);
        }),
        case(None, "measure", "meas", Some("tsc"), |s, _| {
            assert_eq!(s.engine.measure, MeasureMode::Tsc);
            assert!(s.show_methods);
        }),
        Case {
            extra: &["--wait", "timerfd"],
            ..case(None, "measure", "mea", Some("timer"), |s, _| {
                assert_eq!(s.engine.measure, MeasureMode::Timer);
                assert_eq!(s.engine.wait, WaitMode::Timerfd);
            })
        },
        Case {
            extra: &["--stats-file", STATSFILE],
            ..case(None, "stats-interval", "stats-i", Some("0.5"), |s, w| {
                assert_eq!(
                    s.engine.intervals,
                    Some(IntervalPlan {
                        length: Nanos(500_000_000),
                        ring: 64
                    })
                );
                assert_eq!(s.stats_file, Some(STATSFILE.into()));
                assert!(w.is_empty());
            })
        },
        Case {
            extra: &["--stats-interval", "2"],
            verbatim: true,
            ..case(None, "stats-file", "stats-f", Some(STATSFILE), |s, w| {
                assert_eq!(s.stats_file, Some(STATSFILE.into()));
                assert_eq!(
                    s.engine.intervals.map(|p| p.length),
                    Some(Nanos::from_secs(2))
                );
                assert!(w.is_empty());
            })
        },
        case(None, "bucket-width", "bu", Some("250"), |s, _| {
            let plan = s.engine.run.distribution.expect("always kept");
            assert_eq!((plan.width_ns, plan.exact_buckets), (250, 8_000));
        }),
        Case {
            extra: &["-h", "8000"],
            ..case(None, "bucket-width", "buck", Some("2000"), |s, _| {
                // The -h range (8 ms) is larger than the default (2 ms).
                let plan = s.engine.run.distribution.expect("always kept");
                assert_eq!((plan.width_ns, plan.exact_buckets), (2000, 4000));
            })
        },
        case(None, "percentiles", "pe", None, |s, _| {
            assert!(s.percentiles)
        }),
        // `--ver` stays 2.4's --verbose.
        case(None, "verdict", "verd", None, |s, _| {
            assert_eq!(s.verdict, Some(Style::Short))
        }),
        // No 2.4 long option starts with `rt`.
        case(None, "rt-tests", "rt", Some("2.10"), |s, _| {
            assert_eq!(s.rt_tests, rtlat_core::RtTests::V2_10)
        }),
        case(None, "horizon", "ho", Some("30m,2h"), |s, _| {
            assert_eq!(s.projection.horizons_s, [1_800, 7_200])
        }),
        case(None, "deadline", "dea", Some("100us"), |s, _| {
            assert_eq!(s.projection.deadline_ns, Some(100_000))
        }),
        // Every prefix of --hgrm is one of --hgrm-per-thread too: only the
        // whole name reaches it.
        case(None, "hgrm", "hgrm", Some("run.hgrm"), |s, _| {
            assert_eq!(
                s.hgrm,
                Some(HgrmOutput {
                    target: OutputTarget::File("run.hgrm".into()),
                    per_thread: false
                })
            )
        }),
        case(
            None,
            "fail-if",
            "fa",
            Some("max>100us,p99.9>=40"),
            |s, _| {
                let gates = s.gates.as_ref().expect("gates");
                let limits: Vec<String> = gates.limits.iter().map(ToString::to_string).collect();
                assert_eq!(limits, ["max > 100us", "p99.9 >= 40us"]);
                assert_eq!(gates.junit, None);
            },
        ),
        Case {
            extra: &["--fail-if", "max>1ms"],
            ..case(None, "junit", "ju", Some("report.xml"), |s, _| {
                let gates = s.gates.as_ref().expect("gates");
                assert_eq!(gates.junit, Some("report.xml".into()));
            })
        },
        Case {
            extra: &["--hgrm", "run.hgrm"],
            ..case(None, "hgrm-per-thread", "hgrm-", None, |s, _| {
                assert!(s.hgrm.as_ref().is_some_and(|h| h.per_thread))
            })
        },
        // --load is a prefix of the other two: only the whole name.
        case(None, "load", "load", Some("cpu:1"), |s, _| {
            let load = s.load.as_ref().expect("load");
            assert_eq!(load.phases.len(), 1);
            assert_eq!(load.phases[0].name, "cpu:1");
            assert_eq!(
                (s.engine.run.phases.clone(), s.engine.run.duration),
                (None, None)
            );
        }),
        case(
            None,
            "load-schedule",
            "load-s",
            Some("idle=5,cpu:1=1m"),
            |s, _| {
                let load = s.load.as_ref().expect("load");
                let names: Vec<&str> = load.phases.iter().map(|p| p.name.as_str()).collect();
                assert_eq!(names, ["idle", "cpu:1"]);
                let ends = &s.engine.run.phases.as_ref().expect("phases").ends;
                assert_eq!(ends, &[Nanos::from_secs(5), Nanos::from_secs(65)]);
                // The run ends with the schedule.
                assert_eq!(s.engine.run.duration, Some(Nanos::from_secs(65)));
            },
        ),
        Case {
            extra: &["--load", "cpu"],
            ..case(None, "load-cpus", "load-c", Some("0"), |s, _| {
                let load = s.load.as_ref().expect("load");
                let plan = load.phases[0].plan.as_ref().expect("a plan");
                assert_eq!((plan.cpus.clone(), plan.kinds[0].workers), (vec![0], 1));
            })
        },
    ]
}

#[test]
fn every_spelling_of_every_option() {
    let mut checked = 0;
    for case in cases() {
        let spellings = case.spellings();
        assert!(spellings.len() >= 4, "{}", case.name.long);
        let first: Vec<&str> = spellings[0].iter().map(String::as_str).collect();
        let (want, want_warnings) = run(&first);
        (case.check)(&want, &want_warnings);
        for argv in &spellings {
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let (got, got_warnings) = run(&argv);
            assert_eq!(got, want, "{argv:?} differs from {first:?}");
            assert_eq!(got_warnings, want_warnings, "{argv:?}");
            checked += 1;
        }
    }
    assert!(checked > 200, "{checked}");
}

#[test]
fn defaults() {
    let (s, w) = run(&[]);
    assert!(w.is_empty());
    assert_eq!(
        s,
        Settings {
            engine: CyclicConfig {
                run: RunConfig {
                    distribution: Some(DistributionPlan::new(1000, Nanos::ZERO).unwrap()),
                    ..RunConfig::default()
                },
                // The blocks' intervals.
                intervals: Some(IntervalPlan {
                    length: Nanos(100_000_000),
                    ring: 64,
                }),
                ..CyclicConfig::new(vec![ThreadPlan {
                    index: 0,
                    interval: Nanos::from_micros(1000),
                    policy: SchedPolicy::Other,
                    priority: 0,
                    cpu: None,
                }])
            },
            quiet: false,
            progress: false,
            verbose: false,
            unbuffered: false,
            histogram: None,
            json: None,
            mlockall: false,
            dma_latency: DmaLatency::Set(0),
            deepest_idle_state: None,
            injected: None,
            main_cpus_before_start: None,
            main_affinity: None,
            header_policy: "other/other".into(),
            cmdline: String::new(),
            tracemark: false,
            fifo: None,
            refresh_on_max: false,
            oscope_reduction: 1,
            check_resolution: false,
            debug_resolution: false,
            show_methods: false,
            stats_file: None,
            percentiles: false,
            verdict: None,
            projection: Default::default(),
            rt_tests: Default::default(),
            hgrm: None,
            gates: None,
            load: None,
            explain: None,
            monitor: None,
        }
    );
}

#[test]
fn cmdline_is_stored_as_given() {
    let inv = parse(&os(&["-q"]), "cyclictest -q".into(), &sys2()).unwrap();
    let Invocation::Run(Measure { settings, .. }) = inv else {
        panic!("help")
    };
    assert_eq!(settings.cmdline, "cyclictest -q");
}

#[test]
fn rteval_command_line() {
    let (s, w) = run(&["-i100", "-qmu", "-h 3500", "-p95", "-t2", "-a0-1"]);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(s.engine.threads.len(), 2);
    for (i, t) in s.engine.threads.iter().enumerate() {
        assert_eq!(t.index, i);
        assert_eq!(t.interval, Nanos::from_micros(100));
        assert_eq!(t.policy, SchedPolicy::Fifo);
        assert_eq!(t.priority, 95);
        assert_eq!(t.cpu, Some(i));
    }
    assert!(s.quiet && s.mlockall && s.unbuffered && !s.verbose);
    assert_eq!(s.engine.histogram, Some(HistogramPlan { buckets: 3500 }));
    assert_eq!(
        s.histogram,
        Some(HistogramOutput {
            summary_column: false,
            target: OutputTarget::Stdout
        })
    );
    assert_eq!(s.main_cpus_before_start, Some(vec![0, 1]));
    assert_eq!(s.header_policy, "fifo");
}

#[test]
fn help() {
    for args in [
        &["-?"][..],
        &["--help"],
        &["--he"],
        &["-q?"],
        &["-q", "--help", "-i", "0"],
        &["--help", "foo"],
    ] {
        assert_eq!(try_on(&sys2(), args).unwrap(), Invocation::Help, "{args:?}");
    }
    // getopt reports an unknown option before anything is acted on.
    assert_eq!(
        err(&["--help", "--bogus"]),
        "unrecognized option '--bogus' (--help lists every option)"
    );
    // -h is the histogram, not help.
    assert_eq!(
        err(&["-h"]),
        "option '-h' requires a value (help is --help)"
    );
}

#[test]
fn help_text_mentions_every_option() {
    let text = help_text();
    for flag in FLAGS.iter() {
        if let Some(long) = flag.long {
            // The hidden test seams.
            if flag.hidden {
                assert!(!text.contains(long), "{long}");
                continue;
            }
            // rtlat monitor's, in its help.
            if monitor::is_own(flag.name()) {
                assert!(!text.contains(&format!("--{long}")), "--{long}");
                assert!(crate::cli::monitor::help_text().contains(&format!("--{long}")));
                continue;
            }
            assert!(text.contains(&format!("--{long}")), "--{long}");
        }
        if let Some(short) = flag.short {
            assert!(text.contains(&format!("-{short}")), "-{short}");
        }
    }
    assert!(text.contains("rtlat cyclictest -m -S -p 90 -i 200 -D 1m -q -h 400"));
    assert!(text.ends_with('\n'));
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "too long: {line}");
    }
}

#[test]
fn last_of_a_repeated_option_wins() {
    assert_eq!(settings(&["-t", "2", "-t", "3"]).engine.threads.len(), 3);
    assert_eq!(settings(&["-t3", "-t"]).engine.threads.len(), 2);
    assert_eq!(intervals_us(&settings(&["-i", "0", "-i", "7"])), [7]);
    assert_eq!(prios(&settings(&["-p", "100", "-p", "5"])), [5]);
    assert_eq!(
        settings(&["--policy=foo", "--policy", "BATCH"]).header_policy,
        "batch/other"
    );
    assert_eq!(settings(&["-a", "1", "-a"]).main_cpus_before_start, None);
    assert_eq!(
        settings(&["-a", "-a", "1"]).main_cpus_before_start,
        Some(vec![1])
    );
    // -H then -h: the bucket count of -h, the summary column of -H.
    let s = settings(&["-H", "10", "-h", "20"]);
    assert_eq!(s.engine.histogram, Some(HistogramPlan { buckets: 20 }));
    assert!(s.histogram.unwrap().summary_column);
}

#[test]
fn positional_arguments_are_refused() {
    assert_eq!(err(&["foo"]), "unexpected argument 'foo'");
    assert_eq!(err(&["-q", "foo", "-m"]), "unexpected argument 'foo'");
    assert_eq!(err(&["-"]), "unexpected argument '-'");
    assert_eq!(err(&["--", "-q"]), "unexpected argument '-q'");
    // C's peeking leaves these words behind; we consume them, so no error.
    assert!(try_on(&sys2(), &["-t", "2", "-a", "1"]).is_ok());
    // A word -t does not take is a stray argument.
    assert_eq!(err(&["-t", "all"]), "unexpected argument 'all'");
    assert_eq!(err(&["-a", "foo"]), "unexpected argument 'foo'");
}

#[test]
fn threads_option_forms() {
    let n = |args: &[&str]| run_on(&sys4(), args).0.engine.threads.len();
    assert_eq!(n(&[]), 1);
    assert_eq!(n(&["-t"]), 4);
    assert_eq!(n(&["-t", "0"]), 4);
    assert_eq!(n(&["-t0"]), 4);
    assert_eq!(n(&["--threads=0"]), 4);
    assert_eq!(n(&["-t", "7"]), 7);
    // With an explicit -a set, "one per CPU" counts the set.
    assert_eq!(n(&["-t", "-a", "1-2"]), 2);
    assert_eq!(n(&["-a", "!0", "-t"]), 3);
    assert_eq!(n(&["-a", "-t"]), 4);
    // Surrounding blanks are fine.
    assert_eq!(n(&["-t 3"]), 3);
}

#[test]
fn affinity_forms() {
    let (s, _) = run_on(&sys4(), &["-t", "5", "-a", "1,3"]);
    assert_eq!(cpus(&s), [Some(1), Some(3), Some(1), Some(3), Some(1)]);
    assert_eq!(s.main_cpus_before_start, Some(vec![1, 3]));
    let (s, _) = run_on(&sys4(), &["-t", "3", "-a", "!1"]);
    assert_eq!(cpus(&s), [Some(0), Some(2), Some(3)]);
    let (s, _) = run_on(&sys4(), &["-t", "2", "-a", "+2-3"]);
    assert_eq!(cpus(&s), [Some(2), Some(3)]);
    let (s, _) = run_on(&sys4(), &["-t", "2", "-a", "all"]);
    assert_eq!(s.main_cpus_before_start, Some(vec![0, 1, 2, 3]));
    // "use all" follows the allowed CPUs in numeric order.
    let odd = SystemView {
        allowed_cpus: vec![5, 3],
        configured_cpus: 8,
    };
    let (s, _) = run_on(&odd, &["-t", "3", "-a"]);
    assert_eq!(cpus(&s), [Some(3), Some(5), Some(3)]);
    let (s, _) = run_on(&odd, &["-S"]);
    assert_eq!(cpus(&s), [Some(3), Some(5)]);
}

#[test]
fn smp_warnings_in_either_order() {
    for args in [&["-S", "-t", "3"][..], &["-t", "3", "-S"], &["-St3"]] {
        let (s, w) = run(args);
        assert_eq!(w, ["WARN: -t ignored due to smp mode"], "{args:?}");
        assert_eq!(s.engine.threads.len(), 2);
    }
    for args in [&["-S", "-a", "1"][..], &["-a", "1", "-S"], &["-a", "-S"]] {
        let (s, w) = run(args);
        assert_eq!(w, ["WARN: -a ignored due to smp mode"], "{args:?}");
        assert_eq!(cpus(&s), [Some(0), Some(1)]);
        assert_eq!(s.main_cpus_before_start, None);
    }
    let (_, w) = run(&["-a", "0", "-t", "-S"]);
    assert_eq!(
        w,
        [
            "WARN: -t ignored due to smp mode",
            "WARN: -a ignored due to smp mode"
        ]
    );
}

#[test]
fn distance_with_histogram() {
    let (s, w) = run(&["-t", "2", "-d", "100", "-h", "10"]);
    assert_eq!(intervals_us(&s), [1000, 1000]);
    assert_eq!(
        w,
        ["WARN: distance is ignored and set to 0, if histogram enabled"]
    );
    let (_, w) = run(&["-H", "10", "-d", "0"]);
    assert_eq!(
        w,
        ["WARN: distance is ignored and set to 0, if histogram enabled"]
    );
    // Not given: no warning.
    assert!(run(&["-t", "2", "-h", "10"]).1.is_empty());
}

#[test]
fn negative_distance() {
    assert_eq!(
        intervals_us(&settings(&["-t", "3", "-d", "-400"])),
        [1000, 600, 200]
    );
    assert_eq!(
        intervals_us(&settings(&["-t", "3", "-d", "-499"])),
        [1000, 501, 2]
    );
    assert_eq!(
        err(&["-d", "-600", "-t", "3"]),
        "-d/--distance: invalid value '-600': thread 2 would get an interval of -200 us; \
         with an interval of 1000 us and 3 threads the distance must be -499 to 1073741323"
    );
    // One thread: the distance does not matter.
    assert_eq!(intervals_us(&settings(&["-d", "-5000"])), [1000]);
    // Too long an interval for the last thread.
    assert!(err(&["-t", "2", "-d", "2147483647"]).starts_with("-d/--distance: invalid value"));
    // The default distance can push the last thread out of range too.
    assert!(
        err(&["-t", "2", "-i", "2147483647"]).starts_with("-d/--distance: invalid value '500'")
    );
}

#[test]
fn priority_and_policy_rules() {
    // -p 0 alone: -p switches to fifo, whose priority then defaults to
    // threads + 1 (C prints the same warning).
    let (s, w) = run(&["-p", "0"]);
    assert_eq!(s.header_policy, "fifo");
    assert_eq!(prios(&s), [2]);
    assert_eq!(w, ["defaulting realtime priority to 2"]);
    // -p then a non-real-time --policy: the policy given last loses to the
    // priority, with C's warning.
    let (s, w) = run(&["-p", "3", "--policy=batch"]);
    assert_eq!(s.header_policy, "fifo");
    assert_eq!(
        w,
        ["policy and priority don't match: setting policy to SCHED_FIFO"]
    );
    // --policy fifo without -p: threads + 1.
    let (s, w) = run(&["--policy", "fifo", "-t", "2"]);
    assert_eq!(prios(&s), [3, 3]);
    assert_eq!(w, ["defaulting realtime priority to 3"]);
    // --priospread without -p.
    let (s, w) = run(&["--priospread", "-t", "2"]);
    assert_eq!(prios(&s), [3, 2]);
    assert_eq!(s.engine.threads[0].policy, SchedPolicy::Fifo);
    assert_eq!(
        w,
        [
            "defaulting realtime priority to 3",
            "policy and priority don't match: setting policy to SCHED_FIFO"
        ]
    );
    // -p with rr keeps rr.
    let (s, w) = run(&["-p", "50", "--policy=RR"]);
    assert_eq!(s.engine.threads[0].policy, SchedPolicy::RoundRobin);
    assert!(w.is_empty());
    // Non-real-time policies.
    for (name, header) in [
        ("other", "other/other"),
        ("normal", "other/other"),
        ("Batch", "batch/other"),
        ("IDLE", "idle/other"),
    ] {
        let (s, w) = run(&["--policy", name]);
        assert_eq!(s.header_policy, header);
        assert_eq!(prios(&s), [0]);
        assert!(w.is_empty());
    }
    // --policy=batch then -p: -p switches to fifo silently.
    let (s, w) = run(&["--policy=batch", "-p", "3"]);
    assert_eq!(s.header_policy, "fifo");
    assert!(w.is_empty());
    // --priospread that would drop below 1.
    assert_eq!(
        err(&["-p2", "-t", "4", "--priospread"]),
        "--priospread: with priority 2 and 4 threads, thread 3 would get priority -1; \
         give -p 4 or more"
    );
    assert_eq!(
        prios(&settings(&["-p4", "-t", "4", "--priospread"])),
        [4, 3, 2, 1]
    );
    // The default priority must fit.
    let big = SystemView {
        allowed_cpus: (0..128).collect(),
        configured_cpus: 128,
    };
    assert!(
        err_on(&big, &["-S", "--policy", "fifo"])
            .starts_with("--policy fifo needs a real-time priority")
    );
    assert!(run_on(&big, &["-S", "-p", "90"]).1.is_empty());
}

#[test]
fn duration_forms() {
    let d = |v: &str| settings(&["-D", v]).engine.run.duration;
    assert_eq!(d("0"), None);
    assert_eq!(d("0m"), None);
    assert_eq!(d("90"), Some(Nanos::from_secs(90)));
    assert_eq!(d("90s"), Some(Nanos::from_secs(90)));
    assert_eq!(d("90S"), Some(Nanos::from_secs(90)));
    assert_eq!(d("2M"), Some(Nanos::from_secs(120)));
    assert_eq!(d("2h"), Some(Nanos::from_secs(7200)));
    assert_eq!(d("1d"), Some(Nanos::from_secs(86_400)));
    assert_eq!(d(" 5 "), Some(Nanos::from_secs(5)));
}

#[test]
fn loops_and_clock_forms() {
    assert_eq!(settings(&["-l", "0"]).engine.run.loops, None);
    assert_eq!(settings(&["-l", "+5"]).engine.run.loops, Some(5));
    assert_eq!(
        settings(&["-c", "MONOTONIC"]).engine.clock,
        ClockKind::Monotonic
    );
    assert_eq!(settings(&["-c1"]).engine.clock, ClockKind::Realtime);
}

#[test]
fn histfile_without_histogram_warns() {
    let (s, w) = run(&["--histfile", HISTFILE]);
    assert_eq!(s.histogram, None);
    assert_eq!(
        w,
        ["WARN: --histfile given without -h/--histogram; no histogram is written"]
    );
}

#[test]
fn output_paths() {
    let dir = std::env::temp_dir();
    let dir_text = dir.to_str().unwrap();
    assert_eq!(
        err(&["--json", dir_text]),
        format!("--json: cannot write '{dir_text}': it is a directory")
    );
    assert_eq!(
        err(&["--json", "/etc/passwd/x.json"]),
        "--json: cannot write '/etc/passwd/x.json': '/etc/passwd' is not a directory"
    );
    assert_eq!(
        err(&["-h", "3", "--histfile=/nonexistent/h"]),
        "--histfile: cannot write '/nonexistent/h': directory '/nonexistent' does not exist"
    );
    assert_eq!(
        err(&["--json="]),
        "--json: invalid value '': expected a file name"
    );
    // A bare file name lives in the current directory.
    assert_eq!(
        settings(&["--json", "out.json"]).json,
        Some(OutputTarget::File("out.json".into()))
    );
    // The file is not created by parsing.
    let path = dir.join(format!("rtlat-cli-test-{}.json", std::process::id()));
    let p = path.to_str().unwrap();
    assert_eq!(
        settings(&["--json", p]).json,
        Some(OutputTarget::File(path.clone()))
    );
    assert!(!path.exists());
    // A name longer than the file system takes.
    let long = format!("{}/{}.json", dir.display(), "n".repeat(300));
    assert_eq!(
        err(&["--json", &long]),
        format!(
            "--json: cannot write '{long}': its name is 305 bytes long; this file system takes \
             at most 255"
        )
    );
}

#[test]
fn hgrm_to_standard_output() {
    assert_eq!(
        settings(&["--hgrm=-"]).hgrm,
        Some(HgrmOutput {
            target: OutputTarget::Stdout,
            per_thread: false
        })
    );
    assert_eq!(
        err(&["--hgrm", "-", "--hgrm-per-thread"]),
        "--hgrm-per-thread needs --hgrm FILE, not - (standard output): the per-thread files \
         are named after it"
    );
    assert_eq!(
        err(&["--hgrm-per-thread"]),
        "--hgrm-per-thread needs --hgrm FILE: the per-thread files are named after it"
    );
}

#[test]
fn file_names_are_bytes_other_values_text() {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let name = std::env::temp_dir().join(std::ffi::OsStr::from_bytes(b"rtlat-\xff.json"));
    let mut json = OsString::from("--json=");
    json.push(&name);
    let parsed = parse(&[json], String::new(), &sys2()).unwrap();
    let Invocation::Run(Measure { settings, .. }) = parsed else {
        panic!("{parsed:?}")
    };
    assert_eq!(settings.json, Some(OutputTarget::File(name)));
    for (option, spelled) in [
        ("-p", "-p/--priority"),
        ("--load", "--load"),
        ("-t", "-t/--threads"),
    ] {
        let args = [
            OsString::from(option),
            OsString::from_vec(b"1\xff".to_vec()),
        ];
        assert_eq!(
            parse(&args, String::new(), &sys2())
                .unwrap_err()
                .to_string(),
            format!(
                "{spelled}: invalid value '1\u{fffd}': not valid UTF-8 (only file names may be \
                 any bytes)"
            )
        );
    }
}

#[test]
fn dma_latency_forms() {
    assert_eq!(
        settings(&["--latency", "0"]).dma_latency,
        DmaLatency::Set(0)
    );
    assert_eq!(
        settings(&["--latency=2147483647"]).dma_latency,
        DmaLatency::Set(i32::MAX)
    );
    assert_eq!(
        settings(&["--latency=5", "--laptop"]).dma_latency,
        DmaLatency::SkipLaptop
    );
}

#[test]
fn long_abbreviations_follow_2_4() {
    let ambiguous = [
        ("--hist", "--histogram, --histofall, --histfile"),
        ("--histo", "--histogram, --histofall"),
        ("--l", "--loops, --laptop, --latency"),
        ("--la", "--laptop, --latency"),
        ("--prio", "--priority, --priospread"),
        ("--pri", "--priority, --priospread"),
        (
            "--d",
            "--distance, --duration, --default-system, --dbg_cyclictest",
        ),
        ("--sm", "--smp, --smi"),
        ("--t", "--threads, --tracemark"),
        ("--m", "--mlockall, --mainaffinity"),
        ("--a", "--affinity, --aligned"),
        ("--po", "--policy, --posix_timers"),
        ("--h", "--histogram, --histofall, --histfile, --help"),
        ("--r", "--relative, --refresh_on_max, --resolution"),
    ];
    for (word, names) in ambiguous {
        assert_eq!(
            err(&[word, "1"]),
            format!("option '{word}' is ambiguous (could be {names})"),
        );
    }
    // A 2.4 prefix keeps its 2.4 meaning despite the hidden --synthetic.
    let s = settings(&["--sy"]);
    assert_eq!(s.engine.wait, WaitMode::Nanosleep);
    assert_eq!(s.engine.run.source, TimeSourceKind::Real);
    assert_eq!(
        err(&["--s"]).split(" (could").next(),
        Some("option '--s' is ambiguous")
    );
    assert!(!err(&["--s"]).contains("synthetic"));
    // No 2.4 name starts with `st`: the new --stats-* options only share
    // prefixes among themselves.
    assert!(!err(&["--s"]).contains("stats"));
    assert_eq!(
        err(&["--st", "1"]),
        "option '--st' is ambiguous (could be --stats-interval, --stats-file)"
    );
    assert_eq!(
        err(&["--stats", "1"]),
        "option '--stats' is ambiguous (could be --stats-interval, --stats-file)"
    );
    // Abbreviations that work.
    assert_eq!(settings(&["--j", "-"]).json, Some(OutputTarget::Stdout));
    assert_eq!(
        settings(&["--dur=1h"]).engine.run.duration,
        Some(Nanos::from_secs(3600))
    );
    assert_eq!(intervals_us(&settings(&["--int", "5"])), [5]);
    assert_eq!(prios(&settings(&["--prior=7"])), [7]);
    assert!(settings(&["--histog", "9"]).histogram.is_some());
}

#[test]
fn error_messages() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-i", "0"],
            "-i/--interval: invalid value '0': expected an interval in microseconds, \
             1 to 2147483647",
        ),
        (
            &["-i", "-5"],
            "-i/--interval: invalid value '-5': expected an interval in microseconds, \
             1 to 2147483647",
        ),
        (
            &["-i", "2147483648"],
            "-i/--interval: invalid value '2147483648': expected an interval in microseconds, \
             1 to 2147483647",
        ),
        (
            &["--interval=1x"],
            "-i/--interval: invalid value '1x': expected an interval in microseconds, \
             1 to 2147483647",
        ),
        (
            &["-p", "100"],
            "-p/--priority: invalid value '100': expected a real-time priority, 0 to 99",
        ),
        (
            &["-p", "-1"],
            "-p/--priority: invalid value '-1': expected a real-time priority, 0 to 99",
        ),
        (
            &["-c", "2"],
            "-c/--clock: invalid value '2': expected 0 or monotonic (CLOCK_MONOTONIC), \
             1 or realtime (CLOCK_REALTIME)",
        ),
        (
            &["-c", "-1"],
            "-c/--clock: invalid value '-1': expected 0 or monotonic (CLOCK_MONOTONIC), \
             1 or realtime (CLOCK_REALTIME)",
        ),
        (
            &["-D", "abc"],
            "-D/--duration: invalid value 'abc': expected a whole number of seconds, \
             optionally followed by s, m, h or d (90, 10m, 2h); 0 for no limit",
        ),
        (
            &["-h", "0"],
            "-h/--histogram: invalid value '0': expected a number of one-unit histogram \
             buckets (microseconds), 1 to 1000000",
        ),
        (
            &["-H", "1000001"],
            "-H/--histofall: invalid value '1000001': expected a number of one-unit \
             histogram buckets (microseconds), 1 to 1000000",
        ),
        (
            &["-l", "-3"],
            "-l/--loops: invalid value '-3': expected a number of loops, \
             0 (no limit) or more",
        ),
        (
            &["-t", "4x"],
            "-t/--threads: invalid value '4x': expected a number of threads, 1 to 65536, \
             or 0 for one per CPU",
        ),
        (
            &["-t=3"],
            "-t/--threads: invalid value '=3': expected a number of threads, 1 to 65536, \
             or 0 for one per CPU",
        ),
        (
            &["-t", "-3"],
            "unrecognized option '-3' (--help lists every option)",
        ),
        (
            &["--policy=foo"],
            "--policy: invalid value 'foo': expected one of other, normal, batch, idle, fifo, rr",
        ),
        (
            &["--policy=fifoxyz"],
            "--policy: invalid value 'fifoxyz': expected one of other, normal, batch, idle, \
             fifo, rr",
        ),
        (
            &["-a", "64"],
            "-a/--affinity: invalid value '64': cpu 64 is out of range: this machine has CPUs 0-1",
        ),
        (
            &["-a", "3-1"],
            "-a/--affinity: invalid value '3-1': bad CPU range '3-1': 1 is below 3",
        ),
        (
            &["--affinity="],
            "-a/--affinity: invalid value '': empty CPU list",
        ),
        (
            &["--mainaffinity", "5"],
            "--mainaffinity: invalid value '5': cpu 5 is out of range: this machine has CPUs 0-1",
        ),
        (
            &["--json", "/nonexistent/dir/out.json"],
            "--json: cannot write '/nonexistent/dir/out.json': directory '/nonexistent/dir' \
             does not exist",
        ),
        (
            &["--latency=-5"],
            "--latency: invalid value '-5': expected a /dev/cpu_dma_latency value in \
             microseconds, 0 to 2147483647",
        ),
        (
            &["-d", "x"],
            "-d/--distance: invalid value 'x': expected a whole number of microseconds \
             (may be negative)",
        ),
        (
            &["--synthetic", "-1"],
            "--synthetic: invalid value '-1': expected a seed, 0 to 18446744073709551615",
        ),
        (
            &["--bogus"],
            "unrecognized option '--bogus' (--help lists every option)",
        ),
        (
            &["-Z"],
            "unrecognized option '-Z' (--help lists every option)",
        ),
        (
            &["-w"],
            "unrecognized option '-w' (--help lists every option)",
        ),
        (&["--quiet=1"], "option '--quiet' takes no value"),
        (&["-p"], "option '-p' requires a value"),
        (&["--json"], "option '--json' requires a value"),
        (&["--spike-"], "option '--spike-nodes' requires a value"),
        (&["-b"], "option '-b' requires a value"),
        (&["--spike"], "option '--spike' requires a value"),
        (&["-F"], "option '-F' requires a value"),
        (&["-o"], "option '-o' requires a value"),
        (&["--tracemark=1"], "option '--tracemark' takes no value"),
        (
            &["-A", "-5"],
            "unrecognized option '-5' (--help lists every option)",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(err(args), *want, "{args:?}");
        assert!(!want.contains('\n'));
    }
    for bad in [
        "-1",
        "1.5",
        "10ms",
        "",
        "1x",
        "s",
        "99999999999999999999",
        "1 m",
    ] {
        assert!(
            err(&["-D", bad]).starts_with(&format!("-D/--duration: invalid value '{bad}'")),
            "{bad}"
        );
    }
    assert!(err(&["-D", "300000000000d"]).contains("too long"));
}

#[test]
fn every_table_entry_is_reachable() {
    // Each option has a short and/or long name and none repeats.
    let mut seen = std::collections::HashSet::new();
    // cyclictest 2.4's long options (a fixed list): every other one is
    // ours, newer, and never changes what a 2.4 abbreviation means.
    let c_2_4 = [
        "affinity",
        "aligned",
        "breaktrace",
        "clock",
        "dbg_cyclictest",
        "default-system",
        "distance",
        "duration",
        "fifo",
        "help",
        "histfile",
        "histofall",
        "histogram",
        "interval",
        "json",
        "laptop",
        "latency",
        "loops",
        "mainaffinity",
        "mlockall",
        "nsecs",
        "oscope",
        "policy",
        "posix_timers",
        "priority",
        "priospread",
        "quiet",
        "refresh_on_max",
        "relative",
        "resolution",
        "secaligned",
        "smi",
        "smp",
        "spike",
        "spike-nodes",
        "system",
        "threads",
        "tracemark",
        "unbuffered",
        "verbose",
    ];
    for flag in FLAGS.iter() {
        assert!(flag.short.is_some() || flag.long.is_some());
        if let Some(c) = flag.short {
            assert!(seen.insert(format!("-{c}")), "-{c}");
        }
        if let Some(l) = flag.long {
            assert!(seen.insert(format!("--{l}")), "--{l}");
        }
        let long = flag.long.unwrap_or_default();
        assert_eq!(flag.in_2_4, c_2_4.contains(&long), "--{long}");
    }
    assert_eq!(
        rtlat_args::options::unlisted(&FLAGS, &super::help::help_page()),
        (
            vec![],
            vec![
                "--listen".to_owned(),
                "--textfile".to_owned(),
                "--window".to_owned(),
                "--checkpoint".to_owned(),
                "--checkpoint-interval".to_owned(),
                "--resume".to_owned()
            ]
        )
    );
}

#[test]
fn formerly_refused_options_are_accepted() {
    // Each of these was refused as "not supported yet"; they now run.
    for args in [
        &["-A"][..],
        &["-A", "10"],
        &["-b", "5"],
        &["-b5"],
        &["--break", "5"],
        &["-qb", "5"],
        &["-F", FIFOFILE],
        &["-M"],
        &["--ref"],
        &["-o", "5", "-v"],
        &["-R"],
        &["--reso"],
        &["-s"],
        &["-x"],
        &["--posix"],
        &["--secaligned"],
        &["--sec", "10"],
        &["-a", "--smi"],
        &["--spike", "100"],
        &["--spike=100", "--spike-nodes=10"],
        &["-b", "1", "--tracemark"],
        &["-b", "1", "--tr"],
        &["-R", "--dbg_cyclictest"],
        &["-R", "--db"],
    ] {
        assert!(
            matches!(try_on(&sys2(), args), Ok(Invocation::Run(_))),
            "{args:?}"
        );
    }
}

#[test]
fn new_option_errors() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-b", "0"],
            "-b/--breaktrace: invalid value '0': expected a latency threshold in \
             microseconds, 1 to 2147483647",
        ),
        (
            &["--breaktrace=-3"],
            "-b/--breaktrace: invalid value '-3': expected a latency threshold in \
             microseconds, 1 to 2147483647",
        ),
        (
            &["-N", "-b", "0"],
            "-b/--breaktrace: invalid value '0': expected a latency threshold in \
             nanoseconds (-N), 1 to 2147483647",
        ),
        (
            &["-b", "2147483648"],
            "-b/--breaktrace: invalid value '2147483648': expected a latency threshold in \
             microseconds, 1 to 2147483647",
        ),
        (
            &["--spike", "-1"],
            "--spike: invalid value '-1': expected a latency trigger in microseconds, \
             1 to 2147483647",
        ),
        (
            &["--spike=0"],
            "--spike: invalid value '0': expected a latency trigger in microseconds, \
             1 to 2147483647",
        ),
        (
            &["--spike", "5", "--spike-nodes", "0"],
            "--spike-nodes: invalid value '0': expected a number of spikes to keep, \
             1 to 1000000",
        ),
        (
            &["--spike-nodes=1000001", "--spike", "5"],
            "--spike-nodes: invalid value '1000001': expected a number of spikes to keep, \
             1 to 1000000",
        ),
        (
            &["-o", "0"],
            "-o/--oscope: invalid value '0': expected a number of samples per printed line, \
             1 to 2147483647",
        ),
        (
            &["-v", "-o", "-2"],
            "-o/--oscope: invalid value '-2': expected a number of samples per printed line, \
             1 to 2147483647",
        ),
        (
            &["-o", "5"],
            "-o/--oscope: only meaningful with -v/--verbose",
        ),
        (
            &["-A", "10", "--secaligned"],
            "-A/--aligned and --secaligned cannot be used together",
        ),
        (
            &["--secaligned", "-A"],
            "-A/--aligned and --secaligned cannot be used together",
        ),
        (
            &["--secaligned=5", "--aligned=5"],
            "-A/--aligned and --secaligned cannot be used together",
        ),
        (
            &["-A=5"],
            "-A/--aligned: invalid value '=5': expected an offset in microseconds, \
             0 to 2147483647",
        ),
        (
            &["--aligned=2147483648"],
            "-A/--aligned: invalid value '2147483648': expected an offset in microseconds, \
             0 to 2147483647",
        ),
        (
            &["--secaligned=-1"],
            "--secaligned: invalid value '-1': expected an offset in microseconds, \
             0 to 2147483647",
        ),
        (
            &["--secaligned", "5x"],
            "--secaligned: invalid value '5x': expected an offset in microseconds, \
             0 to 2147483647",
        ),
        (
            &["-F", "/nonexistent/dir/f"],
            "-F/--fifo: cannot create '/nonexistent/dir/f': directory '/nonexistent/dir' \
             does not exist",
        ),
        (
            &["--fifo="],
            "-F/--fifo: invalid value '': expected a file name",
        ),
        (
            &["--latency=-5"],
            "--latency: invalid value '-5': expected a /dev/cpu_dma_latency value in \
             microseconds, 0 to 2147483647",
        ),
        (
            &["--smi"],
            "--smi: needs threads pinned to CPUs: add -a or -S",
        ),
        (
            &["--smi", "-t", "2", "--mainaffinity", "0"],
            "--smi: needs threads pinned to CPUs: add -a or -S",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(err(args), *want, "{args:?}");
        assert!(!want.contains('\n'));
    }
    // A bad value is reported even when the combination is also refused.
    assert!(err(&["--aligned=x", "--secaligned"]).starts_with("-A/--aligned: invalid value 'x'"));
}

#[test]
fn fifo_path() {
    // A path in one word with its option keeps the blank, as in C.
    assert_eq!(
        err(&[&format!("-F {FIFOFILE}")]),
        format!("-F/--fifo: cannot create ' {FIFOFILE}': directory ' /tmp' does not exist")
    );
    let dir = std::env::temp_dir();
    let dir_text = dir.to_str().unwrap();
    assert_eq!(
        err(&["-F", dir_text]),
        format!("-F/--fifo: cannot create '{dir_text}': it is a directory")
    );
    // An existing ordinary file is left to the run; parsing creates nothing.
    let plain = dir.join(format!("rtlat-cli-test-{}.plain", std::process::id()));
    std::fs::write(&plain, b"x").unwrap();
    let got = settings(&["--fifo", plain.to_str().unwrap()]).fifo;
    std::fs::remove_file(&plain).unwrap();
    assert_eq!(got, Some(plain));
    let fresh = dir.join(format!("rtlat-cli-test-{}.fifo", std::process::id()));
    assert_eq!(
        settings(&["-F", fresh.to_str().unwrap()]).fifo,
        Some(fresh.clone())
    );
    assert!(!fresh.exists());
    // A bare name lives in the current directory.
    assert_eq!(settings(&["-Fstatus"]).fifo, Some(PathBuf::from("status")));
}

#[test]
fn system_with_posix_timers_warns_and_uses_clock_nanosleep() {
    let want = [
        "WARN: The system option requires clock_nanosleep",
        "WARN: and is not compatible with posix_timers",
        "WARN: Using clock_nanosleep",
    ];
    for args in [
        &["-s", "-x"][..],
        &["-x", "-s"],
        &["-sx"],
        &["--sys", "--posix"],
    ] {
        let (s, w) = run(args);
        assert_eq!(w, want, "{args:?}");
        assert_eq!(s.engine.wait, WaitMode::Absolute, "{args:?}");
    }
    for args in [&["-s", "-x", "-r"][..], &["-rxs"]] {
        let (s, w) = run(args);
        assert_eq!(w, want, "{args:?}");
        assert_eq!(s.engine.wait, WaitMode::Relative, "{args:?}");
    }
    // C settles this before anything else, so its warnings come first.
    let (_, w) = run(&["-S", "-t", "3", "-x", "-s"]);
    assert_eq!(w[..3], want);
    assert_eq!(w[3..], ["WARN: -t ignored due to smp mode"]);
}

#[test]
fn wait_modes() {
    let wait = |args: &[&str]| settings(args).engine.wait;
    assert_eq!(wait(&[]), WaitMode::Absolute);
    assert_eq!(wait(&["-r"]), WaitMode::Relative);
    assert_eq!(wait(&["-s"]), WaitMode::Nanosleep);
    assert_eq!(wait(&["-s", "-r"]), WaitMode::Nanosleep);
    assert_eq!(wait(&["-r", "-s"]), WaitMode::Nanosleep);
    assert_eq!(
        wait(&["-x"]),
        WaitMode::PosixTimer {
            armed_relative: false
        }
    );
    assert_eq!(
        wait(&["-x", "-r"]),
        WaitMode::PosixTimer {
            armed_relative: true
        }
    );
    assert_eq!(
        wait(&["-r", "-x"]),
        WaitMode::PosixTimer {
            armed_relative: true
        }
    );
}

#[test]
fn options_without_their_partner_warn() {
    let (s, w) = run(&["--tracemark"]);
    assert!(s.tracemark);
    assert_eq!(s.engine.breaktrace, None);
    assert_eq!(
        w,
        ["WARN: --tracemark has no effect without -b/--breaktrace"]
    );

    let (s, w) = run(&["--spike-nodes", "5"]);
    assert_eq!(s.engine.spikes, None);
    assert_eq!(w, ["WARN: --spike-nodes has no effect without --spike"]);

    let (s, w) = run(&["--dbg_cyclictest"]);
    assert!(s.debug_resolution);
    assert!(!s.check_resolution);
    assert_eq!(
        w,
        ["WARN: --dbg_cyclictest has no effect without -R/--resolution"]
    );

    // With their partners, anywhere on the line: no warning.
    assert!(run(&["--tracemark", "-b", "3"]).1.is_empty());
    assert!(run(&["--spike-nodes", "5", "--spike", "3"]).1.is_empty());
    assert!(run(&["--dbg_cyclictest", "-R"]).1.is_empty());
    // -o 1 needs no -v.
    assert!(run(&["-o", "1"]).1.is_empty());
}

#[test]
fn spike_nodes_count_wherever_they_are() {
    let want = Some(SpikePlan {
        trigger: 30,
        capacity: 8,
    });
    assert_eq!(
        settings(&["--spike", "30", "--spike-nodes", "8"])
            .engine
            .spikes,
        want
    );
    // C ignores --spike-nodes before --spike; we do not.
    assert_eq!(
        settings(&["--spike-nodes", "8", "--spike", "30"])
            .engine
            .spikes,
        want
    );
    assert_eq!(
        settings(&["--spike-nodes=8", "-q", "--spike=30"])
            .engine
            .spikes,
        want
    );
    // Without --spike-nodes: 1024.
    assert_eq!(
        settings(&["--spike", "30"]).engine.spikes,
        Some(SpikePlan {
            trigger: 30,
            capacity: 1024
        })
    );
}

#[test]
fn last_of_a_repeated_new_option_wins() {
    assert_eq!(
        settings(&["-b", "0", "-b", "7"]).engine.breaktrace,
        Some(BreakPlan { threshold: 7 })
    );
    assert_eq!(
        settings(&[
            "--spike",
            "-1",
            "--spike",
            "2",
            "--spike-nodes=0",
            "--spike-nodes=3"
        ])
        .engine
        .spikes,
        Some(SpikePlan {
            trigger: 2,
            capacity: 3
        })
    );
    assert_eq!(settings(&["-o", "0", "-o", "4", "-v"]).oscope_reduction, 4);
    assert_eq!(
        settings(&["-A", "3", "-A"]).engine.alignment,
        Some(Alignment::Threads { offset: Nanos(0) })
    );
    assert_eq!(
        settings(&["--secaligned", "--secaligned=7"])
            .engine
            .alignment,
        Some(Alignment::NextSecond {
            offset: nanos_us(7)
        })
    );
    assert_eq!(
        settings(&["-F", "/nonexistent/x", "-F", FIFOFILE]).fifo,
        Some(PathBuf::from(FIFOFILE))
    );
}

#[test]
fn smi_needs_pinned_threads() {
    for args in [
        &["--smi", "-a"][..],
        &["-S", "--smi"],
        &["--smi", "-a", "1", "-t", "2"],
    ] {
        let s = settings(args);
        assert!(s.engine.smi, "{args:?}");
        assert!(s.engine.threads.iter().all(|t| t.cpu.is_some()), "{args:?}");
    }
    assert!(!settings(&[]).engine.smi);
}

#[test]
fn bounds_of_the_new_values() {
    assert_eq!(
        settings(&["-b", "2147483647"]).engine.breaktrace,
        Some(BreakPlan {
            threshold: 2_147_483_647
        })
    );
    assert_eq!(
        settings(&["--spike=1", "--spike-nodes=1000000"])
            .engine
            .spikes,
        Some(SpikePlan {
            trigger: 1,
            capacity: 1_000_000
        })
    );
    assert_eq!(
        settings(&["-v", "-o", "2147483647"]).oscope_reduction,
        2_147_483_647
    );
    assert_eq!(
        settings(&["-A", "2147483647"]).engine.alignment,
        Some(Alignment::Threads {
            offset: nanos_us(2_147_483_647)
        })
    );
    assert_eq!(
        settings(&["--secaligned", "0"]).engine.alignment,
        Some(Alignment::NextSecond { offset: Nanos(0) })
    );
    // An offset word that does not start with a digit is not -A's.
    assert_eq!(err(&["-A", "x"]), "unexpected argument 'x'");
}

#[test]
fn wait_and_measure_methods_combine_or_are_refused() {
    // -r/-s/-x may repeat what --wait says, never contradict it.
    assert_eq!(
        settings(&["--wait", "rel", "-r"]).engine.wait,
        WaitMode::Relative
    );
    assert_eq!(
        settings(&["-s", "--wait", "nanosleep"]).engine.wait,
        WaitMode::Nanosleep
    );
    assert_eq!(
        settings(&["--wait", "posix-timer", "-x", "-r"]).engine.wait,
        WaitMode::PosixTimer {
            armed_relative: true
        }
    );
    // -r, -s, -x alone stay C's options and announce nothing.
    assert!(!settings(&["-r"]).show_methods);
    assert!(!settings(&["-x"]).show_methods);
    assert_eq!(
        err(&["--wait", "busy", "-x"]),
        "--wait busy: cannot be combined with -x/--posix_timers"
    );
    assert_eq!(
        err(&["-r", "--wait", "abs"]),
        "--wait abs: cannot be combined with -r/--relative"
    );
    assert_eq!(
        err(&["--wait", "timerfd", "-s"]),
        "--wait timerfd: cannot be combined with -s/--system"
    );
    assert_eq!(
        err(&["--wait", "rel", "-x"]),
        "--wait rel: cannot be combined with -x/--posix_timers"
    );
    assert_eq!(
        err(&["--wait", "sleep"]),
        "--wait: invalid value 'sleep': expected one of abs, rel, nanosleep, posix-timer, \
         timerfd, std-sleep, busy"
    );
    assert_eq!(
        err(&["--measure", "rdtsc"]),
        "--measure: invalid value 'rdtsc': expected one of clock, tsc, timer"
    );
    assert_eq!(
        err(&["--measure", "timer"]),
        "--measure timer: reads the timerfd's own time, so it needs --wait timerfd (not abs)"
    );
    assert_eq!(
        err(&["--measure", "timer", "--wait", "busy"]),
        "--measure timer: reads the timerfd's own time, so it needs --wait timerfd (not busy)"
    );
    assert_eq!(
        err(&["--measure", "tsc", "--synthetic", "1"]),
        "--measure tsc: measures real time, not the --synthetic clock"
    );
    assert_eq!(
        err(&[
            "--wait",
            "timerfd",
            "--measure",
            "timer",
            "--synthetic",
            "1"
        ]),
        "--measure timer: measures real time, not the --synthetic clock"
    );
    // The new options do not change what a 2.4 abbreviation means.
    assert!(settings(&["--mlock"]).mlockall);
}

#[test]
fn stats_interval_and_file() {
    let with_file = |interval: &str| {
        settings(&["--stats-interval", interval, "--stats-file", STATSFILE])
            .engine
            .intervals
            .map(|p| p.length)
    };
    assert_eq!(with_file("0.01"), Some(Nanos(10_000_000)));
    assert_eq!(with_file(" 1.25"), Some(Nanos(1_250_000_000)));
    assert_eq!(with_file("86400"), Some(Nanos::from_secs(86_400)));
    assert_eq!(with_file("3"), Some(Nanos::from_secs(3)));
    // The units of -D, and ms.
    assert_eq!(with_file("100ms"), Some(Nanos(100_000_000)));
    assert_eq!(with_file("10ms"), Some(Nanos(10_000_000)));
    assert_eq!(with_file("2s"), Some(Nanos::from_secs(2)));
    assert_eq!(with_file("1.5m"), Some(Nanos::from_secs(90)));
    assert_eq!(with_file("1d"), Some(Nanos::from_secs(86_400)));
    // The last of a repeated option wins.
    assert_eq!(
        settings(&[
            "--stats-interval=5",
            "--stats-file=/tmp/a",
            "--stats-interval=0.5",
            "--stats-file",
            STATSFILE
        ])
        .engine
        .intervals
        .map(|p| p.length),
        Some(Nanos(500_000_000))
    );
    let expected = "expected a length of 0.01 to 86400 seconds: seconds, decimals allowed \
                    (0.5), or a number with a unit ms, s, m, h or d (100ms, 2s, 1.5m)";
    for bad in [
        "0",
        "abc",
        "0.001",
        "0.0099",
        "9ms",
        "-1",
        "86400.5",
        "1441m",
        "2d",
        "1e3",
        "1us",
        "1 s",
        "",
        "0,5",
        "1.0000000001",
    ] {
        assert_eq!(
            err(&["--stats-interval", bad, "--stats-file", STATSFILE]),
            format!("--stats-interval: invalid value '{bad}': {expected}"),
        );
    }
    assert_eq!(
        err(&["--stats-interval", "1"]),
        "--stats-interval needs --stats-file FILE: the file the per-interval lines go to"
    );
    assert_eq!(
        err(&["--stats-file", STATSFILE]),
        "--stats-file needs --stats-interval SECONDS: how long each interval is"
    );
    assert_eq!(
        err(&[
            "--stats-interval",
            "1",
            "--stats-file",
            "/nonexistent/dir/s.jsonl"
        ]),
        "--stats-file: cannot write '/nonexistent/dir/s.jsonl': directory \
         '/nonexistent/dir' does not exist"
    );
    assert_eq!(
        err(&["--stats-interval", "1", "--stats-file", "/tmp"]),
        "--stats-file: cannot write '/tmp': it is a directory"
    );
    // Neither: the intervals of the run's blocks.
    let s = settings(&[]);
    assert_eq!(
        (s.engine.intervals.map(|p| p.length), s.stats_file),
        (Some(Nanos(100_000_000)), None)
    );
}

#[test]
fn the_blocks_intervals_hold_ten_periods_and_a_whole_synthetic_run() {
    let plan = |args: &[&str]| {
        let p = settings(args).engine.intervals.unwrap();
        (p.length.as_nanos(), p.ring)
    };
    assert_eq!(plan(&[]), (100_000_000, 64));
    // Ten periods of the slowest thread, in whole 100 ms.
    assert_eq!(plan(&["-i", "25000"]), (300_000_000, 64));
    assert_eq!(
        plan(&["-t", "2", "-i", "10000", "-d", "5000"]),
        (200_000_000, 64)
    );
    // A synthetic run's ring holds it whole: 2 s / 0.1 s + 2.
    assert_eq!(plan(&["--synthetic", "1", "-l", "1000"]), (100_000_000, 64));
    assert_eq!(
        plan(&["--synthetic", "1", "-D", "100"]),
        (100_000_000, 1002)
    );
    // A day: 100 ms doubled six times.
    assert_eq!(
        plan(&["--synthetic", "1", "-D", "1d"]),
        (6_400_000_000, 13_502)
    );
    // Unbounded: 100 ms, the ring keeps the end.
    assert_eq!(plan(&["--synthetic", "1"]), (100_000_000, 16_384));
    // --stats-interval's own, whatever its length.
    assert_eq!(
        plan(&["--stats-interval", "5", "--stats-file", STATSFILE]),
        (5_000_000_000, 64)
    );
}

#[test]
fn a_synthetic_stats_ring_holds_the_bounded_run() {
    let ring = |args: &[&str]| {
        let mut all = vec!["--synthetic", "1", "--stats-file", STATSFILE];
        all.extend_from_slice(args);
        settings(&all).engine.intervals.map(|p| p.ring)
    };
    // -l 1000 at 1 ms: at most 2 s with skipped periods, 4 half-seconds.
    assert_eq!(ring(&["--stats-interval", "0.5", "-l", "1000"]), Some(64));
    // -l 100000 at 1 ms: 200 s / 0.5 s + 2.
    assert_eq!(
        ring(&["--stats-interval", "0.5", "-l", "100000"]),
        Some(402)
    );
    // -D bounds it too.
    assert_eq!(ring(&["--stats-interval", "0.01", "-D", "10"]), Some(1002));
    // Unbounded or very long: the cap.
    assert_eq!(ring(&["--stats-interval", "0.01"]), Some(16_384));
    assert_eq!(
        ring(&["--stats-interval", "0.01", "-D", "1d"]),
        Some(16_384)
    );
    // A real run keeps 64.
    assert_eq!(
        settings(&[
            "--stats-interval",
            "0.01",
            "--stats-file",
            STATSFILE,
            "-l",
            "100000000"
        ])
        .engine
        .intervals
        .map(|p| p.ring),
        Some(64)
    );
}

#[test]
fn deepest_idle_state_limits_the_measured_cpus_instead_of_cpu_dma_latency() {
    let s = settings(&["--deepest-idle-state", "1"]);
    let all = vec![0, 1, 2, 3];
    let on = |sys: &SystemView, args: &[&str]| run_on(sys, args).0.deepest_idle_state;
    assert_eq!(s.dma_latency, DmaLatency::SkipDeepestIdleState);
    assert_eq!(
        on(&sys4(), &["--deepest-idle-state=-1"]),
        Some(IdleStateLimit {
            deepest: -1,
            cpus: all.clone()
        })
    );
    assert_eq!(
        on(&sys4(), &["-a", "1,3", "--dee", "0"]).map(|l| l.cpus),
        Some(vec![1, 3])
    );
    assert_eq!(
        on(&sys4(), &["-S", "--dee", "0"]).map(|l| l.cpus),
        Some(all)
    );
    // --laptop and --default-system keep their own warnings.
    let laptop = settings(&["--laptop", "--deepest-idle-state", "0"]);
    assert_eq!(laptop.dma_latency, DmaLatency::SkipLaptop);
    // `--de` is --default-system, as in 2.4.
    let s = settings(&["--de"]);
    assert_eq!(s.dma_latency, DmaLatency::SkipDefaultSystem);
    assert_eq!(s.deepest_idle_state, None);
    for bad in ["x", "-2", "1.5", ""] {
        let e = err(&["--deepest-idle-state", bad]);
        assert!(
            e.contains("--deepest-idle-state") && e.contains("-1 to"),
            "{e}"
        );
    }
}

#[test]
fn progress_line_only_with_quiet_without_verbose_or_no_progress() {
    assert!(run(&["-q"]).0.progress);
    assert!(!run(&[]).0.progress, "the live display is there");
    assert!(!run(&["-q", "-v"]).0.progress, "-v prints every sample");
    assert!(!run(&["-q", "--no-progress"]).0.progress);
    assert!(
        !run(&["-q", "--no"]).0.progress,
        "--no abbreviates --no-progress"
    );
    let mut abbreviated = settings(&["-q", "--n"]);
    let spelled = settings(&["-q", "--nsecs"]);
    abbreviated.cmdline.clone_from(&spelled.cmdline);
    assert_eq!(abbreviated, spelled, "--n stays --nsecs, as in 2.4");
}
