//! The definitions of the options of `rtlat signaltest`: each option once,
//! with its spellings, help and what it does to the raw state; the shared
//! groups come from their own modules, with signaltest's texts where
//! theirs differ. [`name`] spells an option for the messages of the
//! modules that validate.

use std::sync::LazyLock;

use rtlat_args::getopt::{NO, OPT_CPUS, REQ};
use rtlat_args::options::{Flag, Name, name_of};

use super::raw::Raw;
use crate::cli::output_options as outputs;
use crate::cli::shared::{gate_and_load_flags, synthetic};
use crate::cli::stop_options as stop;
use crate::cli::verdict_options;

/// signaltest 2.4's options, then ours (long only, never changing what a
/// 2.4 abbreviation means: `--h` stays `--help`), in getopt's order.
pub(super) static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    let mut flags = vec![
        Flag::c(Some('a'), "affinity", OPT_CPUS, "CPUS")
            .help(rtlat_args::lines![
                "pin thread i to the i-th CPU of CPUS, round robin;",
                "CPUS is like 0-3,8 or all, !LIST for all but LIST,",
                "+LIST to count within the allowed CPUs. Alone: the",
                "CPUs the process may use. Without -a or -S the",
                "threads are not pinned.",
            ])
            .apply(|r: &mut Raw, v| {
                r.affinity = Some(v.optional()?);
                Ok(())
            }),
        Flag::c(Some('b'), "breaktrace", REQ, "US")
            .help(rtlat_args::lines![
                "stop at thread 0's first sample above US, say so,",
                "and stop the kernel trace if tracefs is mounted",
            ])
            .apply(|r: &mut Raw, v| {
                r.breaktrace = Some(v.text()?);
                Ok(())
            }),
        stop::duration(),
        Flag::c(Some('h'), "help", NO, "")
            .help(rtlat_args::lines!["print this help and exit"])
            .shows_help(),
        outputs::json(&outputs::JSON),
        stop::loops(rtlat_args::lines![
            "stop once thread 0 has N samples; 0: no limit"
        ]),
        Flag::c(Some('m'), "mlockall", NO, "")
            .help(rtlat_args::lines!["lock current and future memory in RAM"])
            .apply(|r: &mut Raw, _| {
                r.mlockall = true;
                Ok(())
            }),
        Flag::c(Some('p'), "priority", REQ, "N")
            .help(rtlat_args::lines![
                "SCHED_FIFO priority of every thread, 1 to 99;",
                "0: SCHED_OTHER",
            ])
            .default("none")
            .apply(|r: &mut Raw, v| {
                r.priority = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('q'), "quiet", NO, "")
            .help(rtlat_args::lines![
                "no live display; one line per thread at the end"
            ])
            .apply(|r: &mut Raw, _| {
                r.quiet = true;
                Ok(())
            }),
        Flag::c(Some('S'), "smp", NO, "")
            .help(rtlat_args::lines![
                "one thread per allowed CPU, each pinned to its own;",
                "-t and -a are then ignored",
            ])
            .apply(|r: &mut Raw, _| {
                r.smp = true;
                Ok(())
            }),
        Flag::c(Some('t'), "threads", REQ, "N")
            .help(rtlat_args::lines!["threads in the ring, 2 to 65536"])
            .default("2")
            .apply(|r: &mut Raw, v| {
                r.threads = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('v'), "verbose", NO, "")
            .help(rtlat_args::lines![
                "print every sample of thread 0 (thread:count:value)",
                "instead of the live display",
            ])
            .apply(|r: &mut Raw, _| {
                r.verbose = true;
                Ok(())
            }),
        outputs::histogram(
            &outputs::HISTOGRAM,
            rtlat_args::lines![
                "at the end, print a histogram of US one-unit",
                "buckets per thread (as cyclictest -h)",
            ],
        ),
        outputs::histfile(&outputs::HISTFILE),
        Flag::new_long("nsecs", NO, "")
            .help(rtlat_args::lines![
                "report nanoseconds instead of microseconds (-b",
                "too)"
            ])
            .apply(|r: &mut Raw, _| {
                r.nsecs = true;
                Ok(())
            }),
        verdict_options::verdict(),
    ];
    // A ring keeps no percentiles and no per-phase figures: its own
    // --fail-if text, and --load-schedule is read to be refused (not in
    // the help, the man page or the completions).
    flags.extend(
        gate_and_load_flags()
            .into_iter()
            .map(|flag| match flag.long {
                Some("fail-if") => flag.help(FAIL_IF_HELP),
                Some("load") => flag.help(LOAD_HELP),
                Some("load-schedule") => flag.hidden(),
                _ => flag,
            }),
    );
    flags.push(crate::cli::rt_tests_options::rt_tests());
    // Hidden: the deterministic test seam.
    flags.push(synthetic());
    flags
});

/// signaltest's `--fail-if`: no percentiles.
const FAIL_IF_HELP: &str = rtlat_args::lines![
    "fail when a thread, or all threads together, break a",
    "limit: comma-separated METRIC OP VALUE, METRIC one",
    "of min avg max overruns (a ring keeps no",
    "percentiles), OP one of > >= < <= (the failing",
    "condition), VALUE with ns, us, ms or s (us if",
    "none): 'max>100us,avg>40us'; and verdict=LEVEL",
    "(required) or verdict!=LEVEL (refused), LEVEL",
    "trustworthy, caveats or untrustworthy; the same",
    "for measurement (valid, doubtful, invalid) and",
    "machine (ready, caveats, not-ready)",
];

/// signaltest's `--load`: beside the ring.
const LOAD_HELP: &str = rtlat_args::lines![
    "run load beside the ring, from before the first trip",
    "to after the last: KIND[:WORKERS],...; one '# load'",
    "line per kind at the end, \"load\" in the JSON",
];

/// How messages spell the option whose long name is `long`.
pub(super) fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}
