//! The `rtlat rt-migrate-test` command line: rt-migrate-test 2.4's
//! options, read the way its getopt reads them (`cD:ehl:m:p:qr:s:` and
//! the long names) with the optional NR_TASKS operand, turned into
//! validated [`Settings`].
//!
//! Unlike C, every value is checked (C's `atoi` takes `-l x` as 0 and
//! then divides by it) and a bad one is a one-line [`UsageError`] naming
//! the option, the value and what is accepted; and `-r`/`-s`, which 2.4
//! reads but never uses (its intervals are fixed at 20 and 100 ms), do
//! what its help says.

use std::ffi::OsString;
use std::sync::LazyLock;

use rtlat_core::migrate::MigrateConfig;

use super::output_options as outputs;
use super::shared::{HasShared, Measure, SharedArgs};
use super::stop_options as stop;
use crate::migrate::settings::Settings;
use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, REQ};
use rtlat_args::options::{
    self, Flag, Layout, Manual, Name, Page, Pages, Part, Read, name_of, pick,
};
use rtlat_args::values::{SystemView, duration_option, int_in};

/// What `rtlat rt-migrate-test` is for, in one line.
pub const SUMMARY: &str = "whether real-time tasks run by priority across the CPUs";

/// What the command line asks for: [`help_text`], or to run.
pub type Invocation = rtlat_args::Invocation<Measure<Box<Settings>>>;

/// The highest SCHED_FIFO priority.
const MAX_PRIO: i64 = 99;

#[derive(Default)]
struct Raw {
    check: bool,
    equal: bool,
    quiet: bool,
    loops: Option<String>,
    maxerr: Option<String>,
    prio: Option<String>,
    run_time: Option<String>,
    sleep_time: Option<String>,
    tasks: Option<OsString>,
    shared: SharedArgs,
}

impl HasShared for Raw {
    fn shared(&mut self) -> &mut SharedArgs {
        &mut self.shared
    }
}

/// rt-migrate-test 2.4's options, in its help's order.
static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    vec![
        Flag::c(Some('c'), "check", NO, "")
            .help(rtlat_args::lines![
                "stop at the first interval where a task started",
                "after a lower-priority one (beyond -m), and end",
                "with Passed! or Failed! (status 255)",
            ])
            .apply(|r: &mut Raw, _| {
                r.check = true;
                Ok(())
            }),
        stop::duration(),
        Flag::c(Some('e'), "equal", NO, "")
            .help(rtlat_args::lines![
                "give every task but the lowest and the highest the",
                "same priority (meant for more than 2 CPUs)",
            ])
            .apply(|r: &mut Raw, _| {
                r.equal = true;
                Ok(())
            }),
        Flag::c(Some('h'), "help", NO, "")
            .help(rtlat_args::lines!["print this help and exit"])
            .shows_help(),
        outputs::json(&outputs::JSON),
        super::rt_tests_options::rt_tests(),
        Flag::c(Some('l'), "loops", REQ, "N")
            .help(rtlat_args::lines!["intervals to run, 1 or more"])
            .default("50")
            .apply(|r: &mut Raw, v| {
                r.loops = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('m'), "maxerr", REQ, "US")
            .help(rtlat_args::lines![
                "how much later than a lower-priority task a task",
                "may start before -c counts it, microseconds",
            ])
            .default("1000")
            .apply(|r: &mut Raw, v| {
                r.maxerr = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('p'), "prio", REQ, "PRIO")
            .help(rtlat_args::lines![
                "SCHED_FIFO priority of task 0; task i gets PRIO+i",
                "and the main thread PRIO+NR_TASKS (at most 99)",
            ])
            .default("2")
            .apply(|r: &mut Raw, v| {
                r.prio = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('q'), "quiet", NO, "")
            .help(rtlat_args::lines!["no progress bar on stderr"])
            .apply(|r: &mut Raw, _| {
                r.quiet = true;
                Ok(())
            }),
        Flag::c(Some('r'), "run-time", REQ, "MS")
            .help(rtlat_args::lines![
                "how long each task busy-loops in an interval,",
                "milliseconds",
            ])
            .default("20")
            .apply(|r: &mut Raw, v| {
                r.run_time = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('s'), "sleep-time", REQ, "MS")
            .help(rtlat_args::lines![
                "the main thread's sleep before and after it",
                "releases the tasks, milliseconds",
            ])
            .default("100")
            .apply(|r: &mut Raw, v| {
                r.sleep_time = Some(v.text()?);
                Ok(())
            }),
    ]
});

fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// Reads the `rtlat rt-migrate-test` command line (`args` without the
/// program name); `cmdline` is kept for the JSON output.
pub fn parse(
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    let read = options::parse_with_operands(&FLAGS, args, &mut raw, |r, word| {
        if r.tasks.is_some() {
            return Err(UsageError(format!(
                "unexpected argument '{}': NR_TASKS is already given",
                word.to_string_lossy()
            )));
        }
        r.tasks = Some(word);
        Ok(())
    })?;
    if read == Read::Help {
        return Ok(Invocation::Help);
    }
    Ok(Invocation::Run(Measure {
        settings: Box::new(build(raw, cmdline, system)?),
        warnings: Vec::new(),
    }))
}

fn build(raw: Raw, cmdline: String, system: &SystemView) -> Result<Settings, UsageError> {
    let prio_start = match &raw.prio {
        Some(text) => int_in(
            name("prio"),
            text,
            1..=MAX_PRIO - 1,
            "a SCHED_FIFO priority",
        )?,
        None => 2,
    };
    let most_tasks = MAX_PRIO - prio_start;
    let tasks = match &raw.tasks {
        Some(word) => {
            let text = word.to_string_lossy();
            match rtlat_args::values::int::<i64>(&text) {
                Some(n) if (1..=most_tasks).contains(&n) => n,
                _ => {
                    return Err(UsageError(format!(
                        "NR_TASKS: invalid value '{text}': expected a number of tasks, 1 to \
                         {most_tasks} (with -p {prio_start} the main thread's priority, \
                         {prio_start} + NR_TASKS, must stay within {MAX_PRIO})"
                    )));
                }
            }
        }
        None => (system.allowed_cpus.len() as i64 + 1).min(most_tasks),
    } as usize;
    let loops = match &raw.loops {
        Some(text) => int_in(name("loops"), text, 1..=1_000_000, "a number of intervals")?,
        None => 50,
    } as usize;
    let maxerr_us = match &raw.maxerr {
        Some(text) => int_in(
            name("maxerr"),
            text,
            0..=i64::from(i32::MAX),
            "microseconds",
        )?,
        None => 1000,
    } as u64;
    let ms = |long: &str, given: &Option<String>, default: i64| match given {
        Some(text) => int_in(name(long), text, 1..=3_600_000, "milliseconds"),
        None => Ok(default),
    };
    let run_ms = ms("run-time", &raw.run_time, 20)? as u64;
    let sleep_ms = ms("sleep-time", &raw.sleep_time, 100)? as u64;
    let duration = match &raw.shared.stop.duration {
        Some(text) => duration_option(name("duration"), text)?,
        None => None,
    };
    let json = raw.shared.outputs.validate(name, "microseconds")?.json;
    let rt_tests = raw.shared.rt_tests(name)?;
    let priorities = (0..tasks)
        .map(|id| {
            let step = if raw.equal && id > 0 && id + 1 < tasks {
                1
            } else {
                id
            };
            (prio_start as usize + step) as u8
        })
        .collect();
    Ok(Settings {
        engine: MigrateConfig {
            priorities,
            main_priority: (prio_start as usize + tasks) as u8,
            loops,
            run_ns: run_ms * 1_000_000,
            sleep_ns: sleep_ms * 1_000_000,
            max_err_ns: maxerr_us * 1000,
            check: raw.check,
            cpus: system.allowed_cpus.clone(),
        },
        duration,
        quiet: raw.quiet,
        json,
        rt_tests,
        cmdline,
    })
}

/// The options and the help of `rtlat rt-migrate-test`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

fn help_page() -> Page<'static, Raw> {
    Page {
        title: rtlat_args::tools::help_title("rt-migrate-test", SUMMARY),
        usage: vec!["rtlat rt-migrate-test [OPTIONS] [NR_TASKS]".to_owned()],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(
                "\
NR_TASKS SCHED_FIFO tasks (by default one more than the CPUs the process
may use), task i at priority PRIO+i, are released together every interval
and each busy-loops for the run time; the highest task moves to the next
CPU every interval. The scheduler must run the highest-priority runnable
tasks first: the table shows, for each interval, when each task started
(after the release, in us), when it ended (len) and its clock reads
(loops). With -c a task that started later than a lower-priority one,
beyond -m, fails the run. Exit status: 0, 255 when -c failed, 1 when a
signal or -D stopped the run before its last interval (as 2.4)."
                    .to_owned(),
            ),
            Part::Heading("Tasks"),
            pick(&FLAGS, &["prio", "equal", "run-time", "sleep-time"]),
            Part::Heading("When to stop"),
            pick(&FLAGS, &["loops", "duration", "check", "maxerr"]),
            Part::Heading("Output"),
            pick(&FLAGS, &["quiet", "json", "rt-tests", "help"]),
            Part::Paragraph("Example: three tasks, five short intervals, checked:".to_owned()),
            Part::Example("rtlat rt-migrate-test -c -l 5 -r 5 -s 20 3"),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_testkit::parsing::{expect_usage_error, os_words, two_cpus};

    fn parse_words(words: &[&str]) -> Result<Invocation, UsageError> {
        parse(&os_words(words), "rt-migrate-test".into(), &two_cpus())
    }

    rtlat_testkit::measured_parser_checks!();

    #[test]
    fn the_help_lists_every_visible_option_once() {
        let none: Vec<String> = Vec::new();
        assert_eq!(
            options::unlisted(&FLAGS, &help_page()),
            (none.clone(), none)
        );
    }

    #[test]
    fn defaults_like_c() {
        let s = settings(&[]);
        assert_eq!(s.engine.priorities, [2, 3, 4]);
        assert_eq!(s.engine.main_priority, 5);
        assert_eq!(s.engine.loops, 50);
        assert_eq!(s.engine.run_ns, 20_000_000);
        assert_eq!(s.engine.sleep_ns, 100_000_000);
        assert_eq!(s.engine.max_err_ns, 1_000_000);
        assert!(!s.engine.check && !s.quiet);
        assert_eq!((s.duration, s.json), (None, None));
    }

    #[test]
    fn spellings() {
        type Check = fn(&Settings) -> bool;
        let table: &[(&[&str], Check)] = &[
            (&["-c"], |s| s.engine.check),
            (&["--check"], |s| s.engine.check),
            (&["--ch"], |s| s.engine.check),
            (&["-cq"], |s| s.engine.check && s.quiet),
            (&["-l3"], |s| s.engine.loops == 3),
            (&["--loops=3"], |s| s.engine.loops == 3),
            (&["--lo", "3"], |s| s.engine.loops == 3),
            (&["-m", "500"], |s| s.engine.max_err_ns == 500_000),
            (&["--maxerr=0"], |s| s.engine.max_err_ns == 0),
            (&["-p10", "4"], |s| s.engine.priorities == [10, 11, 12, 13]),
            (&["--prio", "10"], |s| s.engine.main_priority == 13),
            (&["-e", "5"], |s| s.engine.priorities == [2, 3, 3, 3, 6]),
            (&["--equal", "2"], |s| s.engine.priorities == [2, 3]),
            (&["-r", "5"], |s| s.engine.run_ns == 5_000_000),
            (&["--run-time=5"], |s| s.engine.run_ns == 5_000_000),
            (&["-s20"], |s| s.engine.sleep_ns == 20_000_000),
            (&["--sleep=20"], |s| s.engine.sleep_ns == 20_000_000),
            (&["-D", "1m"], |s| {
                s.duration == Some(rtlat_core::Nanos::from_secs(60))
            }),
            (&["--json=-"], |s| s.json.is_some()),
            (&["1"], |s| s.engine.priorities == [2]),
            (&["-q", "--", "2"], |s| {
                s.quiet && s.engine.priorities.len() == 2
            }),
        ];
        for (words, check) in table {
            let s = settings(words);
            assert!(check(&s), "{words:?}: {s:?}");
        }
    }

    #[test]
    fn bad_values_name_the_option() {
        for (words, prefix) in [
            (&["-l", "0"][..], "-l/--loops: invalid value '0'"),
            (&["-l", "x"], "-l/--loops: invalid value 'x'"),
            (&["-m", "-1"], "-m/--maxerr: invalid value '-1'"),
            (&["-p", "0"], "-p/--prio: invalid value '0'"),
            (&["-p", "99"], "-p/--prio: invalid value '99'"),
            (&["-r", "0"], "-r/--run-time: invalid value '0'"),
            (&["-s", "x"], "-s/--sleep-time: invalid value 'x'"),
            (&["-D", "x"], "-D/--duration: invalid value 'x'"),
            (&["0"], "NR_TASKS: invalid value '0'"),
            (&["-p", "90", "10"], "NR_TASKS: invalid value '10'"),
            (&["x"], "NR_TASKS: invalid value 'x'"),
            (&["2", "3"], "unexpected argument '3'"),
            (&["--json=/nonexistent/x.json"], "--json: cannot write"),
            (&["-Z"], "unrecognized option '-Z'"),
            (&["-l"], "option '-l' requires a value"),
        ] {
            let e = expect_usage_error(parse_words(words), words);
            assert!(e.starts_with(prefix), "{words:?}: {e}");
            assert!(!e.contains('\n'), "{words:?}: {e}");
        }
    }
}
