//! The definitions of the options of `rtlat svsematest`, `pmqtest`,
//! `ptsematest` and `sigwaittest`: each option once, with its spellings,
//! help and what it does to the raw state; the shared groups come from
//! their own modules, with the ipc tools' texts where theirs differ. Each
//! tool's list is built once ([`flags`]), and [`name`] spells an option
//! for the messages of the modules that validate.

use std::sync::LazyLock;

use rtlat_args::getopt::{NO, OPT_NUM, REQ};
use rtlat_args::options::{Flag, Name};

use super::raw::Raw;
use crate::cli::output_options as outputs;
use crate::cli::shared::{gate_and_load_flags, synthetic};
use crate::cli::stop_options as stop;
use crate::cli::verdict_options;
use crate::ipc::PairTool;

/// The four tools, in the order of [`FLAGS`].
const TOOLS: [PairTool; 4] = [
    PairTool::Svsematest,
    PairTool::Pmqtest,
    PairTool::Ptsematest,
    PairTool::Sigwaittest,
];

/// Each tool's options, in getopt's order: the four tools' common ones,
/// then the tool's own (`-S`, `-f`, `-T`).
static FLAGS: LazyLock<Vec<Vec<Flag<Raw>>>> = LazyLock::new(|| TOOLS.map(tool_flags).into());

/// The options of `tool`.
pub(super) fn flags(tool: PairTool) -> &'static [Flag<Raw>] {
    let index = TOOLS.iter().position(|t| *t == tool).unwrap_or(0);
    &FLAGS[index]
}

/// How messages spell the option whose long name is `long` (in any of the
/// four tools: `-f` is `--fork` in two and `--forcetimeout` in pmqtest).
pub(super) fn name(long: &str) -> Name {
    FLAGS
        .iter()
        .flatten()
        .find(|f| f.long == Some(long))
        .map(Flag::name)
        .unwrap_or_else(|| panic!("no option --{long}"))
}

/// The definitions of `tool`'s options.
pub(super) fn tool_flags(tool: PairTool) -> Vec<Flag<Raw>> {
    let mut flags = common_flags(tool);
    match tool {
        PairTool::Svsematest => flags.extend([smp(), fork()]),
        PairTool::Pmqtest => flags.extend([smp(), force_timeout(), timeout()]),
        PairTool::Ptsematest => flags.push(smp()),
        PairTool::Sigwaittest => flags.push(fork()),
    }
    flags
}

/// The options every one of the four tools has, in getopt's order (the
/// 2.4 ones, then ours).
fn common_flags(tool: PairTool) -> Vec<Flag<Raw>> {
    let mut flags = vec![
        affinity(),
        breaktrace(),
        distance(),
        stop::duration(),
        Flag::c(Some('h'), "help", NO, "")
            .help(rtlat_args::lines!["print this help and exit"])
            .shows_help(),
        interval(),
        outputs::json(&outputs::JSON),
        stop::loops(rtlat_args::lines![
            "each side stops after N hand-offs; the run ends",
            "when the first side is done; 0: no limit",
        ]),
        priority(tool),
        quiet(),
        threads(),
        // Ours, long only; newer than 2.4, so they never take a 2.4 prefix.
        histogram(),
        outputs::histfile(&outputs::HISTFILE),
        nsecs(),
        verdict_options::verdict(),
    ];
    flags.extend(
        gate_and_load_flags()
            .into_iter()
            .map(|flag| match flag.long {
                Some("fail-if") => flag.help(FAIL_IF_HELP),
                Some("load") => flag.help(LOAD_HELP),
                Some("load-schedule") => flag.help(LOAD_SCHEDULE_HELP),
                _ => flag,
            }),
    );
    flags.push(crate::cli::rt_tests_options::rt_tests());
    // The deterministic test seam (not in the help).
    flags.push(synthetic());
    flags
}

/// `-a/--affinity[=CPU]`.
fn affinity() -> Flag<Raw> {
    Flag::c(Some('a'), "affinity", OPT_NUM, "CPU")
        .help(rtlat_args::lines![
            "pin every pair to CPU; alone (or -a 0 as two",
            "words): pair i on the i-th CPU, round robin",
        ])
        .apply(|r: &mut Raw, v| {
            r.affinity = Some(v.optional()?);
            Ok(())
        })
}

/// `-b/--breaktrace=US`.
fn breaktrace() -> Flag<Raw> {
    Flag::c(Some('b'), "breaktrace", REQ, "US")
        .help(rtlat_args::lines![
            "stop the run (and the kernel trace) at the first",
            "latency above US",
        ])
        .apply(|r: &mut Raw, v| {
            r.breaktrace = Some(v.text()?);
            Ok(())
        })
}

/// `-d/--distance=US`.
fn distance() -> Flag<Raw> {
    Flag::c(Some('d'), "distance", REQ, "US")
        .help(rtlat_args::lines!["each further pair pauses US longer"])
        .default("500")
        .apply(|r: &mut Raw, v| {
            r.distance = Some(v.text()?);
            Ok(())
        })
}

/// `-i/--interval=US`.
fn interval() -> Flag<Raw> {
    Flag::c(Some('i'), "interval", REQ, "US")
        .help(rtlat_args::lines![
            "receiver's pause between hand-offs, 0 to",
            "2147483647 microseconds (0: none)",
        ])
        .default("1000")
        .apply(|r: &mut Raw, v| {
            r.interval = Some(v.text()?);
            Ok(())
        })
}

/// `-p/--priority=N`; the floor of the further pairs' priorities is
/// `tool`'s.
fn priority(tool: PairTool) -> Flag<Raw> {
    Flag::c(Some('p'), "priority", REQ, "N")
        .help(if tool == PairTool::Sigwaittest {
            rtlat_args::lines![
                "SCHED_FIFO priority of pair 0, 0 to 99; each",
                "further pair one less, down to 0; 0: SCHED_OTHER",
            ]
        } else {
            rtlat_args::lines![
                "SCHED_FIFO priority of pair 0, 0 to 99; each",
                "further pair one less, down to 1; 0: SCHED_OTHER",
            ]
        })
        .apply(|r: &mut Raw, v| {
            r.priority = Some(v.text()?);
            Ok(())
        })
}

/// `-q/--quiet`.
fn quiet() -> Flag<Raw> {
    Flag::c(Some('q'), "quiet", NO, "")
        .help(rtlat_args::lines![
            "no live display; print the figures once at the end"
        ])
        .apply(|r: &mut Raw, _| {
            r.quiet = true;
            Ok(())
        })
}

/// `-t/--threads[=N]`.
fn threads() -> Flag<Raw> {
    Flag::c(Some('t'), "threads", OPT_NUM, "N")
        .help(rtlat_args::lines![
            "number of pairs; -t alone or -t 0: one per CPU"
        ])
        .default("1")
        .apply(|r: &mut Raw, v| {
            r.threads = Some(v.optional()?);
            Ok(())
        })
}

/// `--histogram=N`: the receivers' latencies.
fn histogram() -> Flag<Raw> {
    Flag {
        value_name: "N",
        ..outputs::histogram(
            &outputs::HISTOGRAM,
            rtlat_args::lines![
                "at the end, print a histogram of the receivers'",
                "latencies with N one-microsecond buckets",
            ],
        )
    }
}

/// `--nsecs`.
fn nsecs() -> Flag<Raw> {
    Flag::new_long("nsecs", NO, "")
        .help(rtlat_args::lines![
            "figures and histogram buckets in nanoseconds"
        ])
        .apply(|r: &mut Raw, _| {
            r.nsecs = true;
            Ok(())
        })
}

/// The ipc tools' `--fail-if`: per receiver, no percentiles with `-f`.
const FAIL_IF_HELP: &str = rtlat_args::lines![
    "exit 3 after the outputs when a receiver (or all",
    "together) breaks a limit: 'max>100us,p99>40us';",
    "METRIC min avg max p50 p90 p99 p99.9 p99.99",
    "p99.999 overruns, OP > >= < <= (the failing",
    "condition), unit ns us ms s; no percentiles -f;",
    "verdict=trustworthy or verdict!=untrustworthy",
    "(the level required or refused; see --verdict);",
    "the same for measurement (valid, doubtful,",
    "invalid) and machine (ready, caveats, not-ready)",
];

/// The ipc tools' `--load`: around the hand-offs.
const LOAD_HELP: &str = rtlat_args::lines![
    "background load from before the first hand-off to",
    "after the last: KIND[:WORKERS],... (see rtlat load",
    "--help); '# load' lines at the end, \"load\" in JSON",
];

/// The ipc tools' `--load-schedule`: not with `-f`.
const LOAD_SCHEDULE_HELP: &str = rtlat_args::lines![
    "",
    "load in phases, LOAD=DURATION,... with LOAD idle or",
    "KIND[:WORKERS]+...; ends the run when it ends (or -l,",
    "-D sooner); '# phase' lines and \"phases\" in JSON;",
    "not with -f",
];

/// `-S/--smp` (svsematest, pmqtest, ptsematest).
fn smp() -> Flag<Raw> {
    Flag::c(Some('S'), "smp", NO, "")
        .help(rtlat_args::lines![
            "one pair per CPU, each on its own, all at the same",
            "priority; -t and -a are then ignored",
        ])
        .apply(|r: &mut Raw, _| {
            r.smp = true;
            Ok(())
        })
}

/// `-f/--fork` (svsematest, sigwaittest); its hidden values `r<N>` and
/// `s<N>` start a fork-mode child (they are for the processes fork mode
/// starts, not for the user: the help shows a flag).
fn fork() -> Flag<Raw> {
    Flag::c(Some('f'), "fork", OPT_NUM, "")
        .value_hidden()
        .help(rtlat_args::lines![
            "run each side as a process of its own instead of",
            "a thread (IDs are then process ids)",
        ])
        .apply(|r: &mut Raw, v| {
            r.fork = Some(v.optional()?);
            Ok(())
        })
}

/// pmqtest's `-f/--forcetimeout`.
fn force_timeout() -> Flag<Raw> {
    Flag::c(Some('f'), "forcetimeout", REQ, "SECS")
        .help(rtlat_args::lines![
            "with -T: the sender waits SECS seconds before",
            "each message; the receiver's time-outs are",
            "counted (TO) and it waits again",
        ])
        .apply(|r: &mut Raw, v| {
            r.force_timeout = Some(v.text()?);
            Ok(())
        })
}

/// pmqtest's `-T/--timeout`.
fn timeout() -> Flag<Raw> {
    Flag::c(Some('T'), "timeout", REQ, "SECS")
        .help(rtlat_args::lines![
            "the receiver waits at most SECS seconds; a",
            "time-out ends the pair with an error",
        ])
        .apply(|r: &mut Raw, v| {
            r.timeout = Some(v.text()?);
            Ok(())
        })
}
