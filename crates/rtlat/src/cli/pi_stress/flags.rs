//! The definitions of the options of `rtlat pi_stress`: pi_stress 2.4's
//! (`+hD:vqi:g:rs:pdVum` and `--json`), each once, with its spellings,
//! help and what it does to the raw state, then the hidden test seam.

use std::sync::LazyLock;

use rtlat_args::getopt::{NO, REQ};
use rtlat_args::options::{Flag, Name, name_of};

use super::Raw;
use crate::cli::output_options as outputs;
use crate::cli::stop_options as stop;

/// An option without a value: its short and long names, its help, and
/// what it sets.
macro_rules! switch {
    ($short:literal, $long:literal, $help:expr, |$r:ident| $set:expr $(,)?) => {
        Flag::c(Some($short), $long, NO, "")
            .help($help)
            .apply(|$r: &mut Raw, _| {
                $set;
                Ok(())
            })
    };
}

/// pi_stress 2.4's options in its help's order, then the seam.
pub(super) static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    vec![
        switch!(
            'd',
            "debug",
            rtlat_args::lines![
                "print DEBUG: lines on stderr as the groups are made",
                "and as their threads start and end",
            ],
            |r| r.debug = true,
        ),
        stop::duration(),
        Flag::c(Some('g'), "groups", REQ, "N")
            .help(rtlat_args::lines![
                "inversion groups (three threads each), 1 to the",
                "number of CPUs this process may use",
            ])
            .default("CPUs - 1")
            .apply(|r: &mut Raw, v| {
                r.groups = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('h'), "help", NO, "")
            .help(rtlat_args::lines!["print this help and exit"])
            .shows_help(),
        Flag::c(Some('i'), "inversions", REQ, "N")
            .help(rtlat_args::lines![
                "stop once a group has done N inversions (the",
                "round under way is finished)",
            ])
            .default("no limit")
            .apply(|r: &mut Raw, v| {
                r.inversions = Some(v.text()?);
                Ok(())
            }),
        outputs::json(&outputs::JSON),
        super::super::rt_tests_options::rt_tests(),
        switch!(
            'm',
            "mlockall",
            rtlat_args::lines!["lock current and future memory in RAM"],
            |r| r.mlockall = true,
        ),
        switch!(
            'p',
            "prompt",
            rtlat_args::lines!["wait for Return on stdin before starting"],
            |r| r.prompt = true,
        ),
        switch!(
            'q',
            "quiet",
            rtlat_args::lines!["no banner and no running count; the summary only"],
            |r| {
                r.quiet = true;
                r.verbose = false
            },
        ),
        switch!(
            'r',
            "rr",
            rtlat_args::lines!["SCHED_RR instead of SCHED_FIFO for every thread"],
            |r| r.rr = true,
        ),
        Flag::c(Some('s'), "sched", REQ, "OPTS")
            .help(rtlat_args::lines![
                "one thread kind's scheduling:",
                "id=low|med|high[,policy=fifo|rr][,priority=N]",
                "or id=high,policy=deadline,runtime=NS,",
                "deadline=NS[,period=NS] (ns; period: the deadline)",
            ])
            .apply(|r: &mut Raw, v| {
                r.sched.push(v.text()?);
                Ok(())
            }),
        switch!(
            'u',
            "uniprocessor",
            rtlat_args::lines![
                "every thread on one CPU (the first this process",
                "may use)",
            ],
            |r| r.uniprocessor = true,
        ),
        switch!(
            'v',
            "verbose",
            rtlat_args::lines!["print INFO: lines on stderr about each step"],
            |r| {
                r.verbose = true;
                r.quiet = false
            },
        ),
        switch!(
            'V',
            "version",
            rtlat_args::lines!["print the version of pi_stress emulated and exit"],
            |r| r.version = true,
        ),
        // Hidden: the test seam that makes a group stuck, for the watchdog.
        Flag::new_long("stuck-group", REQ, "G")
            .hidden()
            .apply(|r: &mut Raw, v| {
                r.stuck_group = Some(v.text()?);
                Ok(())
            }),
    ]
});

/// How messages spell the option whose long name is `long`.
pub(super) fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}
