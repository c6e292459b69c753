//! The definitions of `rtlat latency`'s options: Xenomai 3 `latency`'s
//! short ones (`g:hp:l:T:qH:B:sD:t:fc:P:b`), then ours, long only, in
//! getopt's order. The texts are latency's own (its help mimics
//! Xenomai's), shared groups included and their texts replaced.

use std::sync::LazyLock;

use super::{DEFAULT_PERIOD_US, Raw};
use crate::cli::explain::{self, ExplainArgs, HasExplain};
use crate::cli::output_options as outputs;
use crate::cli::shared::{HasShared, SharedArgs, gate_and_load_flags, synthetic};
use crate::cli::verdict_options::{self, HasVerdictStyle};
use crate::report::verdict::text::Style;
use rtlat_args::getopt::{NO, REQ};
use rtlat_args::options::{Flag, Name, name_of, name_of_short};

/// Xenomai's short options (its `latency` has no long ones), then ours.
pub(super) static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    let mut flags = vec![
        Flag::c_short('g', REQ, "FILE")
            .help(rtlat_args::lines![
                "write the all-samples histogram to FILE as gnuplot data",
                "(x: bucket centre in us, y: count + 1)",
            ])
            .apply(|r: &mut Raw, v| {
                r.gnuplot = Some(v.os());
                Ok(())
            }),
        Flag::c_short('h', NO, "")
            .help(rtlat_args::lines![
                "print the histograms of all samples, of the per-second",
                "minima and of the per-second maxima (HSD lines)",
            ])
            .apply(|r: &mut Raw, _| {
                r.histograms = true;
                Ok(())
            }),
        Flag::c_short('p', REQ, "US")
            .help_owned(vec![format!(
                "sampling period in microseconds, 1 to 1000000       [{DEFAULT_PERIOD_US}]"
            )])
            .apply(|r: &mut Raw, v| {
                r.period = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('l', REQ, "LINES")
            .help(rtlat_args::lines![
                "RTD lines between RTT/RTH headers; 0: no headers       [21]"
            ])
            .apply(|r: &mut Raw, v| {
                r.lines = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('T', REQ, "SECS")
            .help(rtlat_args::lines![
                "measure for SECS seconds after the warm-up (or 10m, 2h, ...);",
                "0: until Ctrl-C                                        [0]",
            ])
            .apply(|r: &mut Raw, v| {
                r.duration = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('q', NO, "")
            .help(rtlat_args::lines![
                "with -T: no RTT, RTH or RTD lines, only the summary"
            ])
            .apply(|r: &mut Raw, _| {
                r.quiet = true;
                Ok(())
            }),
        Flag::c_short('H', REQ, "N")
            .help(rtlat_args::lines![
                "buckets on each side of zero, 1 to 1000000              [300]"
            ])
            .apply(|r: &mut Raw, v| {
                r.histogram_size = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('B', REQ, "NS")
            .help(rtlat_args::lines![
                "bucket width in nanoseconds, 1 to 1000000000          [1000]"
            ])
            .apply(|r: &mut Raw, v| {
                r.bucket_size = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('s', NO, "")
            .help(rtlat_args::lines![
                "print the sample count, average and standard deviation of",
                "each histogram's values (HSH/HSS lines, in microseconds)",
            ])
            .apply(|r: &mut Raw, _| {
                r.stats = true;
                Ok(())
            }),
        // Read to be refused: the help's prose names them (Xenomai only).
        Flag::c_short('D', REQ, "DEV")
            .hidden()
            .apply(|r: &mut Raw, v| {
                r.device = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('t', REQ, "0")
            .help(rtlat_args::lines![
                "the periodic user-mode task (the only test mode on Linux)"
            ])
            .apply(|r: &mut Raw, v| {
                r.test_mode = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('f', NO, "")
            .help(rtlat_args::lines![
                "at each new maximum, write a trace marker and freeze the",
                "kernel trace (a tracefs snapshot; without snapshot support,",
                "the trace is stopped)",
            ])
            .apply(|r: &mut Raw, _| {
                r.freeze = true;
                Ok(())
            }),
        Flag::c_short('c', REQ, "CPU")
            .help(rtlat_args::lines![
                "pin the thread to CPU                          [not pinned]"
            ])
            .apply(|r: &mut Raw, v| {
                r.cpu = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('P', REQ, "PRIO")
            .help(rtlat_args::lines![
                "SCHED_FIFO priority of the thread, 1 to 99             [99]"
            ])
            .apply(|r: &mut Raw, v| {
                r.priority = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('b', NO, "").hidden().apply(|r: &mut Raw, _| {
            r.break_on_switch = true;
            Ok(())
        }),
        Flag::help_option(None),
        outputs::json(&outputs::JSON_NEW).help(rtlat_args::lines![
            "write the results as JSON to FILE (- for stdout, after",
            "the RTD lines): cyclictest's document, with the environment,",
            "the audit of the machine made before the warm-up and the verdict",
        ]),
        verdict_options::verdict().help(rtlat_args::lines![
            "after the summary, the verdict on the run: was it",
            "measured right (measurement: valid, doubtful, invalid), is the",
            "machine set up for real-time work (machine: ready, caveats,",
            "not ready), the worst case projected; STYLE short (6 lines, the",
            "default) or full (every reason, wrapped); always in the JSON",
        ]),
    ];
    flags.extend(gate_and_load_flags().into_iter().map(|flag| {
        let help = match flag.long {
            Some("fail-if") => FAIL_IF_HELP,
            Some("junit") => rtlat_args::lines!["with --fail-if: a JUnit XML report of the limits"],
            Some("horizon") => rtlat_args::lines![
                "project the worst case over these durations,",
                "comma-separated (30m, 1h, 24h, 7d)",
            ],
            Some("deadline") => rtlat_args::lines![
                "also estimate how often a latency above TIME comes",
                "(100us, 1ms; us without a unit)",
            ],
            Some("load") => rtlat_args::lines![
                "background load from before the warm-up to the end",
                "(KIND[:WORKERS],...; see rtlat load --help): '# load' lines",
                "after the summary",
            ],
            Some("load-schedule") => rtlat_args::lines![
                "load in phases after the warm-up,",
                "LOAD=DURATION,... with LOAD idle or KIND[:WORKERS]+...; ends",
                "the run when it ends (or -T sooner); '# phase' lines per phase",
            ],
            Some("load-cpus") => rtlat_args::lines![
                "run the load on these CPUs only (0-3,8), one worker",
                "per CPU of LIST by default",
            ],
            _ => flag.help,
        };
        flag.help(help)
    }));
    flags.extend(explain::flags().into_iter().map(|flag| {
        let help = match flag.long {
            Some("explain") => EXPLAIN_HELP,
            Some("explain-threshold") => rtlat_args::lines![
                "with --explain: every sample above US is a",
                "candidate (default: each new maximum)",
            ],
            _ => flag.help,
        };
        flag.help(help)
    }));
    // Hidden: the deterministic test seam.
    flags.push(synthetic());
    flags
});

/// latency's `--fail-if`: after the warm-up.
const FAIL_IF_HELP: &str = rtlat_args::lines![
    "exit 3 after the summary when the samples after the",
    "warm-up break a limit: 'max>100us,p99.9>40us' (METRIC min avg",
    "max p50 p90 p99 p99.9 p99.99 p99.999 overruns, OP > >= < <=,",
    "the failing condition, unit ns us ms s); verdict=trustworthy",
    "or verdict!=untrustworthy: the level of the run's verdict",
    "required or refused (missed periods, disturbances, steal,",
    "throttling, samples too few for the percentiles); the same for",
    "measurement (valid, doubtful, invalid) and machine (ready,",
    "caveats, not-ready)",
];

/// latency's `--explain`: one measured CPU.
const EXPLAIN_HELP: &str = rtlat_args::lines![
    "record kernel events on the measured CPU(s) and",
    "explain the N worst samples after the warm-up [3]: IRQ latency,",
    "timer handler to wake-up, thread latency, return to user, each",
    "with what ran meanwhile ('# Explain' lines after the summary,",
    "\"explain\" in the JSON); needs root and tracefs",
];

/// How messages spell the option whose long name is `long`.
pub(super) fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// How messages spell Xenomai's short-only option `-short`.
pub(super) fn short(short: char) -> Name {
    name_of_short(&FLAGS, short)
}

impl HasShared for Raw {
    fn shared(&mut self) -> &mut SharedArgs {
        &mut self.shared
    }
}

impl HasVerdictStyle for Raw {
    fn verdict_style(&mut self) -> &mut Option<Style> {
        &mut self.verdict
    }
}

impl HasExplain for Raw {
    fn explain(&mut self) -> &mut ExplainArgs {
        &mut self.explain
    }
}
