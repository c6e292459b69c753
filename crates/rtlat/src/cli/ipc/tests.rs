//! Table tests: every spelling of every option of the four tools, the
//! edge values, every error.

use super::*;
use crate::output::OutputTarget;
use rtlat_core::Resolution;
use rtlat_core::{SchedPolicy, TimeSourceKind};
use rtlat_testkit::parsing::{Spelled, expect_usage_error, os_words, spellings, two_cpus as sys2};

const TOOLS: [PairTool; 4] = [
    PairTool::Svsematest,
    PairTool::Pmqtest,
    PairTool::Ptsematest,
    PairTool::Sigwaittest,
];

fn try_parse(tool: PairTool, args: &[&str]) -> Result<Invocation, UsageError> {
    parse(tool, &os_words(args), String::new(), &sys2())
}

fn run(tool: PairTool, args: &[&str]) -> (IpcSettings, Vec<String>) {
    match try_parse(tool, args) {
        Ok(Invocation::Run(Measure { settings, warnings })) => (settings, warnings),
        other => panic!("{tool:?} {args:?}: {other:?}"),
    }
}

fn settings(tool: PairTool, args: &[&str]) -> IpcSettings {
    run(tool, args).0
}

fn err(tool: PairTool, args: &[&str]) -> String {
    expect_usage_error(try_parse(tool, args), (tool, args))
}

fn intervals(s: &IpcSettings) -> Vec<i64> {
    s.engine
        .pairs
        .iter()
        .map(|p| p.interval.as_micros_truncated())
        .collect()
}

fn prios(s: &IpcSettings) -> Vec<u8> {
    s.engine.pairs.iter().map(|p| p.priority).collect()
}

fn cpus(s: &IpcSettings) -> Vec<Option<usize>> {
    s.engine.pairs.iter().map(|p| p.cpu).collect()
}

/// One option and what it must do.
struct Case {
    name: Spelled<'static>,
    /// The value is optional (`-t`, `-a`, `-f`): nothing may follow the
    /// letter in the same word but the value.
    optional: bool,
    extra: &'static [&'static str],
    check: fn(&IpcSettings),
}

const fn case(
    short: Option<char>,
    long: &'static str,
    abbrev: &'static str,
    value: Option<&'static str>,
    check: fn(&IpcSettings),
) -> Case {
    Case {
        name: Spelled {
            short,
            long,
            abbrev,
            value,
        },
        optional: false,
        extra: &[],
        check,
    }
}

impl Case {
    /// Every way of writing the option, each with a partner flag.
    fn spellings(&self, tool: PairTool) -> Vec<Vec<String>> {
        // sigwaittest has no flag but -q (and -h): -q is then spelled alone.
        let p = match (self.name.short, tool) {
            (Some('q'), PairTool::Sigwaittest) => return self.alone(),
            (Some('q'), _) => 'S',
            _ => 'q',
        };
        spellings(&self.name, self.optional, false, p, self.extra)
    }
}

impl Case {
    fn alone(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        if let Some(s) = self.name.short {
            out.push(vec![format!("-{s}")]);
        }
        out.push(vec![format!("--{}", self.name.long)]);
        out.push(vec![format!("--{}", self.name.abbrev)]);
        out
    }
}

const JSONFILE: &str = "/tmp/rtlat-ipc-cli-test.json";
const HISTFILE: &str = "/tmp/rtlat-ipc-cli-test.hist";

/// The options all four tools share.
fn common_cases() -> Vec<Case> {
    vec![
        Case {
            optional: true,
            extra: &["-t", "3"],
            ..case(Some('a'), "affinity", "aff", None, |s| {
                assert_eq!(cpus(s), [Some(0), Some(1), Some(0)])
            })
        },
        Case {
            optional: true,
            extra: &["-t", "2"],
            ..case(Some('a'), "affinity", "af", Some("1"), |s| {
                assert_eq!(cpus(s), [Some(1), Some(1)])
            })
        },
        case(Some('b'), "breaktrace", "br", Some("150"), |s| {
            assert_eq!(s.engine.breaktrace, Some(150))
        }),
        Case {
            extra: &["-t2"],
            ..case(Some('d'), "distance", "di", Some("100"), |s| {
                assert_eq!(intervals(s), [1000, 1100])
            })
        },
        case(Some('D'), "duration", "dur", Some("10"), |s| {
            assert_eq!(s.engine.run.duration, Some(Nanos::from_secs(10)))
        }),
        case(Some('D'), "duration", "du", Some("2m"), |s| {
            assert_eq!(s.engine.run.duration, Some(Nanos::from_secs(120)))
        }),
        case(Some('i'), "interval", "int", Some("250"), |s| {
            assert_eq!(intervals(s), [250])
        }),
        case(Some('i'), "interval", "in", Some("1500000"), |s| {
            assert_eq!(intervals(s), [1_500_000])
        }),
        case(None, "json", "j", Some(JSONFILE), |s| {
            assert_eq!(s.json, Some(OutputTarget::File(JSONFILE.into())))
        }),
        case(None, "json", "js", Some("-"), |s| {
            assert_eq!(s.json, Some(OutputTarget::Stdout))
        }),
        case(Some('l'), "loops", "lo", Some("100"), |s| {
            assert_eq!(s.engine.run.loops, Some(100))
        }),
        case(Some('p'), "priority", "prio", Some("80"), |s| {
            assert_eq!(prios(s), [80]);
            assert_eq!(s.engine.pairs[0].policy, SchedPolicy::Fifo);
        }),
        case(Some('q'), "quiet", "qu", None, |s| assert!(s.quiet)),
        Case {
            optional: true,
            ..case(Some('t'), "threads", "thr", Some("3"), |s| {
                assert_eq!(s.engine.pairs.len(), 3)
            })
        },
        Case {
            optional: true,
            ..case(Some('t'), "threads", "th", None, |s| {
                assert_eq!(s.engine.pairs.len(), 2)
            })
        },
        case(None, "histogram", "histo", Some("50"), |s| {
            assert_eq!(s.engine.histogram, Some(50));
            assert_eq!(s.histogram, Some(OutputTarget::Stdout));
        }),
        Case {
            extra: &["--histogram", "5"],
            ..case(None, "histfile", "histf", Some(HISTFILE), |s| {
                assert_eq!(s.histogram, Some(OutputTarget::File(HISTFILE.into())))
            })
        },
        case(None, "nsecs", "ns", None, |s| {
            assert_eq!(s.engine.run.resolution, Resolution::Nanos)
        }),
        case(None, "rt-tests", "rt", Some("2.10"), |s| {
            assert_eq!(s.rt_tests, rtlat_core::RtTests::V2_10)
        }),
    ]
}

fn specific_cases(tool: PairTool) -> Vec<Case> {
    let smp = case(Some('S'), "smp", "sm", None, |s| {
        assert_eq!(s.engine.pairs.len(), 2);
        assert_eq!(cpus(s), [Some(0), Some(1)]);
    });
    let fork = Case {
        optional: true,
        ..case(Some('f'), "fork", "fo", None, |s| assert!(s.fork))
    };
    match tool {
        PairTool::Svsematest => vec![smp, fork],
        PairTool::Sigwaittest => vec![fork],
        PairTool::Ptsematest => vec![smp],
        PairTool::Pmqtest => vec![
            smp,
            case(Some('T'), "timeout", "ti", Some("2"), |s| {
                let t = s.engine.mq_timeouts.unwrap();
                assert_eq!(t.receive, Nanos::from_secs(2));
                assert_eq!(t.force_send_delay, None);
            }),
            Case {
                extra: &["-T", "1"],
                ..case(Some('f'), "forcetimeout", "fo", Some("3"), |s| {
                    let t = s.engine.mq_timeouts.unwrap();
                    assert_eq!(t.force_send_delay, Some(Nanos::from_secs(3)));
                })
            },
        ],
    }
}

#[test]
fn every_spelling_of_every_option_of_every_tool() {
    let mut checked = 0;
    for tool in TOOLS {
        for c in common_cases().into_iter().chain(specific_cases(tool)) {
            for argv in c.spellings(tool) {
                let words: Vec<&str> = argv.iter().map(String::as_str).collect();
                let s = settings(tool, &words);
                (c.check)(&s);
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "{checked}");
}

#[test]
fn help_in_every_spelling() {
    for tool in TOOLS {
        for args in [
            &["-h"][..],
            &["--help"],
            &["--he"],
            &["-qh"],
            &["-p", "80", "-h"],
        ] {
            assert_eq!(try_parse(tool, args).unwrap(), Invocation::Help, "{args:?}");
        }
        let text = help_text(tool);
        assert!(text.contains(tool.name()));
        assert!(text.lines().all(|l| l.len() <= 100), "{tool:?}");
    }
}

#[test]
fn defaults() {
    for tool in TOOLS {
        let s = settings(tool, &[]);
        assert_eq!(s.engine.pairs.len(), 1);
        assert_eq!(intervals(&s), [1000]);
        assert_eq!(prios(&s), [0]);
        assert_eq!(s.engine.pairs[0].policy, SchedPolicy::Other);
        assert_eq!(cpus(&s), [None]);
        assert_eq!(s.engine.run.loops, None);
        assert_eq!(s.engine.run.duration, None);
        assert_eq!(s.engine.mechanism, tool.mechanism());
        assert!(!s.quiet && !s.fork);
        assert_eq!((s.json.clone(), s.histogram.clone()), (None, None));
        assert_eq!(s.engine.run.source, TimeSourceKind::Real);
        let with_distance = settings(tool, &["-t", "3"]);
        assert_eq!(intervals(&with_distance), [1000, 1500, 2000]);
    }
}

#[test]
fn priorities_step_down_per_pair() {
    for tool in [
        PairTool::Svsematest,
        PairTool::Pmqtest,
        PairTool::Ptsematest,
    ] {
        assert_eq!(
            prios(&settings(tool, &["-p", "80", "-t", "3"])),
            [80, 79, 78]
        );
        assert_eq!(prios(&settings(tool, &["-p", "2", "-t", "3"])), [2, 1, 1]);
        // -S with -p: the same priority for all.
        assert_eq!(prios(&settings(tool, &["-p", "80", "-S"])), [80, 80]);
    }
    // sigwaittest goes down to 0, which is SCHED_OTHER.
    let s = settings(PairTool::Sigwaittest, &["-p", "1", "-t", "3"]);
    assert_eq!(prios(&s), [1, 0, 0]);
    let policies: Vec<_> = s.engine.pairs.iter().map(|p| p.policy).collect();
    assert_eq!(
        policies,
        [SchedPolicy::Fifo, SchedPolicy::Other, SchedPolicy::Other]
    );
}

#[test]
fn threads_and_affinity_edge_values() {
    for tool in TOOLS {
        // -t 0 with a space: one pair per CPU.
        assert_eq!(settings(tool, &["-t", "0"]).engine.pairs.len(), 2);
        // -a 0 with a space is -a alone (round robin); -a0 is CPU 0.
        let rr = settings(tool, &["-t", "3", "-a", "0"]);
        assert_eq!(cpus(&rr), [Some(0), Some(1), Some(0)]);
        for attached in [
            &["-t", "3", "-a0"][..],
            &["-t", "3", "-qa0"],
            &["-t3", "--affinity=0"],
        ] {
            assert_eq!(
                cpus(&settings(tool, attached)),
                [Some(0), Some(0), Some(0)],
                "{attached:?}"
            );
        }
        // A value-taking option's own value is not mistaken for -a's.
        let s = settings(tool, &["--json", "-a0", "-t", "2", "-a", "0"]);
        assert_eq!(cpus(&s), [Some(0), Some(1)]);
        assert_eq!(s.json, Some(OutputTarget::File("-a0".into())));
        // Also when that value is a file name that is not UTF-8.
        use std::os::unix::ffi::OsStrExt;
        let name = std::env::temp_dir().join(std::ffi::OsStr::from_bytes(b"rtlat-\xff.json"));
        let mut args = vec![OsString::from("--json"), name.clone().into_os_string()];
        args.extend(["-a0", "-t", "3"].map(OsString::from));
        let Ok(Invocation::Run(Measure { settings: s, .. })) =
            parse(tool, &args, String::new(), &sys2())
        else {
            panic!("{args:?}")
        };
        assert_eq!(cpus(&s), [Some(0), Some(0), Some(0)]);
        assert_eq!(s.json, Some(OutputTarget::File(name)));
    }
}

#[test]
fn interval_zero_and_long_intervals() {
    for tool in TOOLS {
        assert_eq!(intervals(&settings(tool, &["-i", "0"])), [0]);
        assert_eq!(
            intervals(&settings(tool, &["-i", "0", "-d", "0", "-t", "2"])),
            [0, 0]
        );
        assert_eq!(intervals(&settings(tool, &["-i", "1500000"])), [1_500_000]);
        assert_eq!(
            intervals(&settings(tool, &["-i", "1000", "-d", "-400", "-t", "3"])),
            [1000, 600, 200]
        );
    }
}

#[test]
fn smp_warns_about_t_and_a() {
    for tool in [
        PairTool::Svsematest,
        PairTool::Pmqtest,
        PairTool::Ptsematest,
    ] {
        let (s, w) = run(tool, &["-S", "-t", "5", "-a", "1"]);
        assert_eq!(s.engine.pairs.len(), 2);
        assert_eq!(
            w,
            [
                "WARN: -t ignored due to --smp",
                "WARN: -a ignored due to --smp"
            ]
        );
    }
    assert_eq!(
        err(PairTool::Sigwaittest, &["-S"]),
        "unrecognized option '-S' (--help lists every option)"
    );
}

#[test]
fn fork_roles() {
    for tool in [PairTool::Svsematest, PairTool::Sigwaittest] {
        assert_eq!(
            try_parse(tool, &["-fr3"]).unwrap(),
            Invocation::ForkChild {
                side: Side::Receiver,
                pair: 3
            }
        );
        assert_eq!(
            try_parse(tool, &["--fork=s0"]).unwrap(),
            Invocation::ForkChild {
                side: Side::Sender,
                pair: 0
            }
        );
        for bad in ["-fx", "-fr", "-fr-1", "-fq"] {
            assert!(
                err(tool, &[bad]).starts_with("-f/--fork: invalid value"),
                "{bad}"
            );
        }
    }
    for tool in [PairTool::Pmqtest, PairTool::Ptsematest] {
        assert!(try_parse(tool, &["--fork"]).is_err());
    }
    assert_eq!(
        err(PairTool::Ptsematest, &["-f"]),
        "unrecognized option '-f' (--help lists every option)"
    );
}

#[test]
fn synthetic_seam() {
    for tool in TOOLS {
        let s = settings(tool, &["--synthetic", "7", "-l", "10"]);
        assert_eq!(s.engine.run.source, TimeSourceKind::Synthetic { seed: 7 });
        // Newer than 2.4: --sy is not a prefix any 2.4 option has, so it works.
        let s = settings(tool, &["--syn", "8", "-D", "1"]);
        assert_eq!(s.engine.run.source, TimeSourceKind::Synthetic { seed: 8 });
        assert_eq!(
            err(tool, &["--synthetic", "1"]),
            "--synthetic needs -l/--loops or -D/--duration to end"
        );
    }
}

#[test]
fn bad_values_are_one_line_errors() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-t", "-2"],
            "unrecognized option '-2' (-t/--threads and -a/--affinity take no negative numbers)",
        ),
        (
            &["-t", "2000"],
            "-t/--threads: invalid value '2000': expected a number of pairs, 1 to 1024, or 0 \
             for one per CPU",
        ),
        (
            &["-p", "100"],
            "-p/--priority: invalid value '100': expected a real-time priority (0: none), 0 to 99",
        ),
        (
            &["-p", "-1"],
            "-p/--priority: invalid value '-1': expected a real-time priority (0: none), 0 to 99",
        ),
        (
            &["-D", "-5"],
            "-D/--duration: invalid value '-5': expected a whole number of seconds, optionally \
             followed by s, m, h or d (90, 10m, 2h); 0 for no limit",
        ),
        (
            &["-l", "-1"],
            "-l/--loops: invalid value '-1': expected a number of loops, 0 (no \
             limit) or more",
        ),
        (
            &["-a", "64"],
            "-a/--affinity: invalid value '64': CPU 64 does not exist: this machine has 2 CPUs \
             (0 to 1)",
        ),
        (
            &["-a2"],
            "-a/--affinity: invalid value '2': CPU 2 does not exist: this machine has 2 CPUs \
             (0 to 1)",
        ),
        (
            &["-i", "-5"],
            "-i/--interval: invalid value '-5': expected a pause between hand-offs in \
             microseconds (0: none), 0 to 2147483647",
        ),
        (
            &["-d", "-600", "-t", "3"],
            "-d/--distance: invalid value '-600': pair 2 would get an interval of -200 us; with \
             an interval of 1000 us and 3 pairs each pair's interval must stay within 0 to \
             2147483647",
        ),
        (
            &["-b", "0"],
            "-b/--breaktrace: invalid value '0': expected a latency threshold in microseconds, \
             1 to 2147483647",
        ),
        (
            &["--histogram", "0"],
            "--histogram: invalid value '0': expected a number of one-unit histogram buckets \
             (microseconds), 1 to 1000000",
        ),
        (
            &["--json", "/nonexistent/x.json"],
            "--json: cannot write '/nonexistent/x.json': directory '/nonexistent' does not exist",
        ),
        (
            &["-Z"],
            "unrecognized option '-Z' (--help lists every option)",
        ),
        (
            &["--bogus"],
            "unrecognized option '--bogus' (--help lists every option)",
        ),
        (&["-p"], "option '-p' requires a value"),
        (&["stray"], "unexpected argument 'stray'"),
    ];
    for tool in TOOLS {
        for (args, want) in cases {
            let got = err(tool, args);
            assert_eq!(&got, want, "{tool:?} {args:?}");
            assert!(!got.contains('\n'));
        }
    }
}

#[test]
fn pmqtest_timeouts() {
    let t = PairTool::Pmqtest;
    assert_eq!(err(t, &["-f", "2"]), "-f/--forcetimeout needs -T/--timeout");
    assert_eq!(
        err(t, &["-T", "0"]),
        "-T/--timeout: invalid value '0': expected a time-out in whole seconds, 1 to 2147483647"
    );
    assert_eq!(
        err(t, &["-T", "1", "-f", "x"]),
        "-f/--forcetimeout: invalid value 'x': expected a time-out in whole seconds, 1 to \
         2147483647"
    );
    for tool in [
        PairTool::Svsematest,
        PairTool::Ptsematest,
        PairTool::Sigwaittest,
    ] {
        assert_eq!(
            err(tool, &["-T", "1"]),
            "unrecognized option '-T' (--help lists every option)"
        );
    }
}

#[test]
fn repeated_options_take_the_last_value_and_histfile_alone_warns() {
    for tool in TOOLS {
        let s = settings(tool, &["-i", "100", "-i", "200", "-l", "5", "--loops=6"]);
        assert_eq!((intervals(&s), s.engine.run.loops), (vec![200], Some(6)));
        let (s, w) = run(tool, &["--histfile", HISTFILE]);
        assert_eq!(s.histogram, None);
        assert_eq!(
            w,
            ["WARN: --histfile given without --histogram; no histogram is written"]
        );
    }
}

#[test]
fn each_help_lists_every_visible_option_once() {
    let none: Vec<String> = Vec::new();
    for tool in TOOLS {
        assert_eq!(
            rtlat_args::options::unlisted(flags(tool), &help::help_page(tool)),
            (none.clone(), none.clone()),
            "{tool:?}"
        );
    }
}
