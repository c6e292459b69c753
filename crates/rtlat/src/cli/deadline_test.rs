//! The `rtlat deadline_test` command line: deadline_test 2.4's options,
//! read the way its getopt reads them (`+hbr:c:i:p:P:t:s:`, no long
//! options), plus our `--duration` (C always runs 10 s), turned into
//! validated [`Settings`]. Every value is checked: a bad one is a
//! one-line [`UsageError`] naming the option (C: a message and exit 255,
//! or silently `atoi`'s 0).

use std::ffi::OsString;
use std::sync::LazyLock;

use rtlat_core::{Nanos, parse_cpu_list};

use super::shared::Measure;
use crate::deadline_test::settings::Settings;
use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, REQ};
use rtlat_args::options::{
    self, Flag, Layout, Manual, Name, Page, Pages, Part, Read, find, find_short, name_of,
    name_of_short,
};
use rtlat_args::values::{OptionName, SystemView, duration_option, int_in, invalid};

/// What `rtlat deadline_test` is for, in one line.
pub const SUMMARY: &str = "do SCHED_DEADLINE jobs meet their deadlines (rt-tests)";

/// What the command line asks for: help, or to run.
pub type Invocation = rtlat_args::Invocation<Measure<Box<Settings>>>;

#[derive(Default)]
struct Raw {
    bind_last: bool,
    cpus: Option<String>,
    interval: Option<String>,
    percent: Option<String>,
    run_percent: Option<String>,
    rt_prio: Option<String>,
    step: Option<String>,
    threads: Option<String>,
    duration: Option<String>,
}

static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    vec![
        Flag::c_short('b', NO, "")
            .help(rtlat_args::lines![
                "run on the last CPU only (-c LASTCPU): refused, see -c"
            ])
            .apply(|r: &mut Raw, _| {
                r.bind_last = true;
                Ok(())
            }),
        Flag::c_short('c', REQ, "CPUS")
            .help(rtlat_args::lines![
                "the CPUs of the deadline threads, like 0-3,8; it",
                "must be every CPU of the root domain (rtlat does",
                "not move the machine's tasks into cpusets as C",
                "does: see docs/cyclicdeadline.md)",
            ])
            .apply(|r: &mut Raw, v| {
                r.cpus = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('h', NO, "")
            .help(rtlat_args::lines!["print this help and exit"])
            .shows_help(),
        Flag::c_short('i', REQ, "US")
            .help(rtlat_args::lines![
                "the first thread's deadline and period, µs"
            ])
            .default("1000")
            .apply(|r: &mut Raw, v| {
                r.interval = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('p', REQ, "PERCENT")
            .help(rtlat_args::lines![
                "the bandwidth of all threads together, % of the",
                "CPUs (each thread: at most 90% of one), 1 to 100",
            ])
            .default("80")
            .apply(|r: &mut Raw, v| {
                r.percent = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('P', REQ, "PERCENT")
            .help(rtlat_args::lines![
                "how much of its runtime a job works, 1 to 100"
            ])
            .default("100")
            .apply(|r: &mut Raw, v| {
                r.run_percent = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('r', REQ, "PRIO")
            .help(rtlat_args::lines![
                "add a SCHED_FIFO thread of this priority (1 to 98)",
                "that spins until the end, to stress the system",
            ])
            .apply(|r: &mut Raw, v| {
                r.rt_prio = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('s', REQ, "US")
            .help(rtlat_args::lines!["how much longer each next one's is, µs"])
            .default("500")
            .apply(|r: &mut Raw, v| {
                r.step = Some(v.text()?);
                Ok(())
            }),
        Flag::c_short('t', REQ, "N")
            .help(rtlat_args::lines!["the number of deadline threads"])
            .default("2")
            .apply(|r: &mut Raw, v| {
                r.threads = Some(v.text()?);
                Ok(())
            }),
        // Ours: --help, as every rtlat tool has (C has no long options).
        Flag::new_long("help", NO, "").hidden().shows_help(),
        Flag::new_long("duration", REQ, "TIME")
            .help(rtlat_args::lines![
                "how long the threads work: seconds, or a number",
                "with s, m, h or d (C: always 10 s)",
            ])
            .default("10")
            .apply(|r: &mut Raw, v| {
                r.duration = Some(v.text()?);
                Ok(())
            }),
    ]
});

fn short(c: char) -> Name {
    name_of_short(&FLAGS, c)
}

/// Reads the command line (`args` without the program name).
pub fn parse(
    args: &[OsString],
    _cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse(&FLAGS, args, &mut raw)? == Read::Help {
        return Ok(Invocation::Help);
    }
    Ok(Invocation::Run(Measure {
        settings: Box::new(build(raw, system)?),
        warnings: Vec::new(),
    }))
}

fn build(raw: Raw, system: &SystemView) -> Result<Settings, UsageError> {
    let mut allowed = system.allowed_cpus.clone();
    allowed.sort_unstable();
    allowed.dedup();
    let refuse_part = |what: &str| {
        UsageError(format!(
            "{what} is not every CPU this process may use ({}): a SCHED_DEADLINE thread cannot \
             be pinned to part of its root domain, and rtlat does not move the machine's tasks \
             into cpusets as C does; leave it out, or run rtlat in an exclusive cpuset \
             partition of those CPUs",
            rtlat_core::format_cpu_list(&allowed)
        ))
    };
    let nr_cpus = match (&raw.cpus, raw.bind_last) {
        (Some(text), _) => {
            let set = parse_cpu_list(text, &allowed, system.configured_cpus)
                .map_err(|e| invalid(short('c'), text, e))?;
            if set.len() != allowed.len() {
                return Err(refuse_part(&format!("{}: '{text}'", short('c').spelling())));
            }
            set.len()
        }
        (None, true) if allowed.len() > 1 => {
            return Err(refuse_part(&format!(
                "{}: the last CPU",
                short('b').spelling()
            )));
        }
        _ => allowed.len(),
    }
    .max(1);
    let num = |c: char, text: &Option<String>, default: i64, range, what: &str| match text {
        Some(t) => int_in(short(c), t, range, what),
        None => Ok(default),
    };
    let rt_prio = match &raw.rt_prio {
        // C: 0 means none.
        Some(t) => match int_in(short('r'), t, 0..=98, "a SCHED_FIFO priority, 1 to 98")? {
            0 => None,
            p => Some(p as u8),
        },
        None => None,
    };
    let percent = num('p', &raw.percent, 80, 1..=100, "a percentage, 1 to 100")?;
    let run_percent = num(
        'P',
        &raw.run_percent,
        100,
        1..=100,
        "a percentage, 1 to 100",
    )?;
    let threads = num(
        't',
        &raw.threads,
        2,
        1..=1024,
        "a number of threads, 1 to 1024",
    )?;
    let interval = num(
        'i',
        &raw.interval,
        1000,
        100..=4_194_304,
        "a deadline in µs, 100 to 4194304 (the kernel's default bounds)",
    )?;
    let step = num('s', &raw.step, 500, 0..=4_194_304, "µs to add per thread")?;
    if interval + step * (threads - 1) > 4_194_304 {
        return Err(UsageError(format!(
            "{}: the last thread's interval would be {} µs, above the kernel's 4194304",
            short('s').spelling(),
            interval + step * (threads - 1)
        )));
    }
    let duration = match &raw.duration {
        Some(t) => duration_option(name_of(&FLAGS, "duration"), t)?.ok_or_else(|| {
            invalid(
                name_of(&FLAGS, "duration"),
                t,
                "a duration above 0: seconds, or a number with s, m, h or d",
            )
        })?,
        None => Nanos::from_secs(10),
    };
    // C: percent * nr_cpus / nr_threads, at most 90 per thread.
    let per_thread = ((percent as usize * nr_cpus) / threads as usize).min(90) as u64;
    Ok(Settings {
        threads: threads as usize,
        interval_us: interval as u64,
        step_us: step as u64,
        percent: per_thread,
        run_percent: run_percent as u64,
        nr_cpus,
        rt_prio,
        duration,
    })
}

/// The options and the help of `rtlat deadline_test`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

fn help_page() -> Page<'static, Raw> {
    Page {
        title: rtlat_args::tools::help_title("deadline_test", SUMMARY),
        usage: vec!["rtlat deadline_test [OPTIONS]".to_owned()],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(
                "\
Each thread runs under SCHED_DEADLINE and, in each period, works for about
its runtime (a prime search calibrated at start); at the end each thread's
missed deadlines and periods, the adjustments of its periods and the time
its jobs took are printed. The options are those of rt-tests deadline_test
2.4 (short options only, as there)."
                    .to_owned(),
            ),
            Part::Heading("Threads"),
            Part::Options(find_short(
                &FLAGS,
                &['t', 'i', 's', 'p', 'P', 'r', 'c', 'b'],
            )),
            Part::Heading("When to stop (or at Ctrl-C)"),
            Part::Options(find(&FLAGS, &["duration"])),
            Part::Options(find_short(&FLAGS, &['h'])),
            Part::Paragraph("Example: two threads of 10 and 15 ms for 3 seconds:".to_owned()),
            Part::Example("rtlat deadline_test -i 10000 -s 5000 --duration 3"),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_testkit::parsing::{expect_run, expect_usage_error, os_words, two_cpus};

    fn parse_words(words: &[&str]) -> Result<Invocation, UsageError> {
        parse(&os_words(words), String::new(), &two_cpus())
    }

    #[test]
    fn the_help_lists_every_visible_option_once() {
        let none: Vec<String> = Vec::new();
        assert_eq!(
            rtlat_args::options::unlisted(&FLAGS, &help_page()),
            (none.clone(), none)
        );
    }

    #[test]
    fn defaults_and_spellings_like_c() {
        let s = *expect_run(parse_words(&[]), &[] as &[&str]).settings;
        assert_eq!((s.threads, s.interval_us, s.step_us), (2, 1000, 500));
        // 80 % of two CPUs over two threads.
        assert_eq!((s.percent, s.run_percent, s.rt_prio), (80, 100, None));
        assert_eq!(s.duration, Nanos::from_secs(10));
        let s = *expect_run(
            parse_words(&["-t1", "-i10000", "-P", "50", "-r", "5"]),
            ["-t1"],
        )
        .settings;
        assert_eq!((s.threads, s.interval_us, s.percent), (1, 10000, 90));
        assert_eq!((s.run_percent, s.rt_prio), (50, Some(5)));
        let s = *expect_run(parse_words(&["-c", "0-1", "--dur", "2"]), ["-c"]).settings;
        assert_eq!((s.nr_cpus, s.duration), (2, Nanos::from_secs(2)));
        assert!(matches!(parse_words(&["-h"]), Ok(Invocation::Help)));
        assert!(matches!(parse_words(&["--help"]), Ok(Invocation::Help)));
    }

    #[test]
    fn bad_values_name_the_option() {
        for (words, prefix) in [
            (&["-i", "0"][..], "-i: invalid value '0'"),
            (&["-p", "0"], "-p: invalid value '0'"),
            (&["-p", "101"], "-p: invalid value '101'"),
            (&["-P", "x"], "-P: invalid value 'x'"),
            (&["-r", "99"], "-r: invalid value '99'"),
            (&["-t", "0"], "-t: invalid value '0'"),
            (&["-s", "-1"], "-s: invalid value '-1'"),
            (&["-c", "1"], "-c: '1' is not every CPU"),
            (&["-b"], "-b: the last CPU is not every CPU"),
            (&["--duration", "0"], "--duration: invalid value '0'"),
            (&["-x"], "unrecognized option '-x'"),
        ] {
            let e = expect_usage_error(parse_words(words), words);
            assert!(e.starts_with(prefix), "{words:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
