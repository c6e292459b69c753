//! The `rtlat cyclicdeadline` command line: cyclicdeadline 2.4's options,
//! read the way its getopt reads them (`a::c:D:hi:s:t:b:q` and the long
//! names), plus rtlat's shared `--verdict`, `--hgrm`, `--fail-if`/`--junit`
//! and `--load`, turned into validated [`Settings`].
//!
//! Unlike C, every value is checked and a bad one is a one-line
//! [`UsageError`] naming the option, the value and what is accepted.

use std::ffi::OsString;
use std::sync::LazyLock;

use rtlat_core::deadline::{DeadlineConfig, DeadlinePlan};
use rtlat_core::{Nanos, parse_cpu_list};

use super::output_options as outputs;
use super::shared::{HasShared, Measure, SharedArgs, gate_and_load_flags};
use super::stop_options as stop;
use super::verdict_options::{self, HasVerdictStyle};
use super::{gates, load_options};
use crate::cyclicdeadline::settings::Settings;
use crate::report::verdict::text::Style;
use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, OPT_CPUS, REQ};
use rtlat_args::options::{
    self, Flag, Layout, Manual, Name, Page, Pages, Part, Read, find, like, name_of, pick,
};
use rtlat_args::values::{OptionName, SystemView, int_in, invalid};

/// What `rtlat cyclicdeadline` is for, in one line.
pub const SUMMARY: &str = "how late SCHED_DEADLINE jobs start (rt-tests cyclicdeadline)";

/// What the command line asks for: help, or to measure.
pub type Invocation = rtlat_args::Invocation<Measure<Box<Settings>>>;

/// The kernel's default bounds of a deadline period
/// (`/proc/sys/kernel/sched_deadline_period_{min,max}_us`), used where
/// those files cannot be read.
const PERIOD_MIN_US: i64 = 100;
const PERIOD_MAX_US: i64 = 4_194_304;
/// C: a runtime under 2 ms wants HRTICK.
pub const HRTICK_RUNTIME_US: u64 = 2000;

#[derive(Default)]
struct Raw {
    /// `Some(None)`: `-a` without a list.
    affinity: Option<Option<String>>,
    interval: Option<String>,
    step: Option<String>,
    threads: Option<String>,
    quiet: bool,
    breaktrace: Option<String>,
    tracemark: bool,
    verbose: bool,
    debug: bool,
    verdict: Option<Style>,
    shared: SharedArgs,
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

/// cyclicdeadline 2.4's options in its order, then ours (long only).
static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    let mut flags = vec![
        Flag::c(Some('a'), "affinity", OPT_CPUS, "CPUS")
            .help(rtlat_args::lines![
                "the CPUs the deadline threads share, like 0-3,8;",
                "alone: every CPU, and one thread per CPU unless -t",
                "says otherwise. It must be every CPU of the root",
                "domain (rtlat does not move the machine's tasks",
                "into cpusets as C does: see docs/cyclicdeadline.md)",
            ])
            .apply(|r: &mut Raw, v| {
                r.affinity = Some(v.optional()?);
                Ok(())
            }),
        // C's getopt string has -c LIST, the same as -a LIST, undocumented.
        Flag::c_short('c', REQ, "CPUS")
            .hidden()
            .apply(|r: &mut Raw, v| {
                r.affinity = Some(Some(v.text()?));
                Ok(())
            }),
        stop::duration(),
        Flag::c(Some('h'), "help", NO, "")
            .help(rtlat_args::lines!["print this help and exit"])
            .shows_help(),
        Flag::c(Some('i'), "interval", REQ, "US")
            .help(rtlat_args::lines![
                "the first thread's deadline and period, µs; its",
                "runtime: 60% of it (with more threads than CPUs,",
                "80% of the CPUs shared out)",
            ])
            .default("1000")
            .apply(|r: &mut Raw, v| {
                r.interval = Some(v.text()?);
                Ok(())
            }),
        outputs::json(&outputs::JSON),
        outputs::histogram(
            &outputs::HISTOGRAM,
            rtlat_args::lines![
                "after the run, a histogram of US one-µs buckets per",
                "thread, as cyclicdeadline 2.7 (in every dialect)",
            ],
        ),
        outputs::histfile(&outputs::HISTFILE),
        crate::cli::rt_tests_options::rt_tests(),
        Flag::c(Some('s'), "step", REQ, "US")
            .help(rtlat_args::lines!["how much longer each next one's is, µs"])
            .default("500")
            .apply(|r: &mut Raw, v| {
                r.step = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('t'), "threads", REQ, "N")
            .help(rtlat_args::lines!["the number of deadline threads"])
            .default("1")
            .apply(|r: &mut Raw, v| {
                r.threads = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('q'), "quiet", NO, "")
            .help(rtlat_args::lines![
                "no live display; the T: lines at the end"
            ])
            .apply(|r: &mut Raw, _| {
                r.quiet = true;
                Ok(())
            }),
        Flag::c(Some('b'), "breaktrace", REQ, "US")
            .help(rtlat_args::lines![
                "stop when a thread's maximum passes US, say which,",
                "and stop the kernel trace if tracefs is mounted",
            ])
            .apply(|r: &mut Raw, v| {
                r.breaktrace = Some(v.text()?);
                Ok(())
            }),
        Flag::c(None, "tracemark", NO, "")
            .help(rtlat_args::lines![
                "with -b, write a mark in the kernel trace at the break"
            ])
            .apply(|r: &mut Raw, _| {
                r.tracemark = true;
                Ok(())
            }),
        Flag::new_long("verbose", NO, "")
            .help(rtlat_args::lines![
                "print the interval: and Tested at lines (2.6's",
                "option; 2.4 and --rt-tests=2.4 always print them)",
            ])
            .apply(|r: &mut Raw, _| {
                r.verbose = true;
                Ok(())
            }),
        Flag::new_long("debug", NO, "")
            .help(rtlat_args::lines![
                "print the threads' ids and runtimes (2.6's option;",
                "2.4 and --rt-tests=2.4 always print them)",
            ])
            .apply(|r: &mut Raw, _| {
                r.debug = true;
                Ok(())
            }),
        verdict_options::verdict(),
        outputs::hgrm(),
        outputs::hgrm_per_thread(),
    ];
    flags.extend(
        gate_and_load_flags()
            .into_iter()
            .map(|flag| match flag.long {
                Some("load-schedule") => flag.hidden(),
                _ => flag,
            }),
    );
    flags
});

fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// Reads the `rtlat cyclicdeadline` command line (`args` without the
/// program name); `cmdline` is kept for the JSON output.
pub fn parse(
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse(&FLAGS, args, &mut raw)? == Read::Help {
        return Ok(Invocation::Help);
    }
    let (settings, warnings) = build(raw, cmdline, system, period_bounds())?;
    Ok(Invocation::Run(Measure {
        settings: Box::new(settings),
        warnings,
    }))
}

/// The kernel's bounds of a deadline period, µs.
fn period_bounds() -> (i64, i64) {
    let read = |file: &str, default: i64| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{file}"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(default)
    };
    (
        read("sched_deadline_period_min_us", PERIOD_MIN_US),
        read("sched_deadline_period_max_us", PERIOD_MAX_US),
    )
}

/// Checks the values in C's order and puts the settings together.
fn build(
    raw: Raw,
    cmdline: String,
    system: &SystemView,
    (period_min, period_max): (i64, i64),
) -> Result<(Settings, Vec<String>), UsageError> {
    let mut warnings = Vec::new();
    let mut allowed = system.allowed_cpus.clone();
    allowed.sort_unstable();
    allowed.dedup();
    // The CPUs the threads share: -a LIST must name every allowed CPU.
    let (nr_cpus, using_all_cpus) = match &raw.affinity {
        Some(Some(text)) => {
            let set = parse_cpu_list(text, &allowed, system.configured_cpus)
                .map_err(|e| invalid(name("affinity"), text, e))?;
            if set.len() != allowed.len() {
                return Err(UsageError(format!(
                    "{}: '{text}' is not every CPU this process may use ({}): a SCHED_DEADLINE \
                     thread cannot be pinned to part of its root domain, and rtlat does not move \
                     the machine's tasks into cpusets as C does; leave out -a, or run rtlat in an \
                     exclusive cpuset partition of those CPUs",
                    name("affinity").spelling(),
                    rtlat_core::format_cpu_list(&allowed),
                )));
            }
            (set.len(), true)
        }
        Some(None) => (allowed.len(), false),
        None => (allowed.len(), true),
    };
    let nr_cpus = nr_cpus.max(1);
    let interval = match &raw.interval {
        Some(text) => int_in(
            name("interval"),
            text,
            period_min..=period_max,
            "a deadline in µs within the kernel's sched_deadline_period_min_us and _max_us",
        )?,
        None => 1000,
    };
    let step = match &raw.step {
        Some(text) => int_in(name("step"), text, 0..=period_max, "µs to add per thread")?,
        None => 500,
    };
    let max_threads = (nr_cpus * 80) as i64;
    let nthreads = match (&raw.threads, &raw.affinity) {
        (Some(text), _) => int_in(
            name("threads"),
            text,
            1..=max_threads,
            "a number of threads (at most 80 per CPU: each needs 1% of a CPU)",
        )? as usize,
        (None, Some(_)) => nr_cpus,
        (None, None) => 1,
    };
    let last = interval + step * (nthreads as i64 - 1);
    if last > period_max {
        return Err(UsageError(format!(
            "{}: thread {} would have an interval of {last} µs, above the kernel's \
             sched_deadline_period_max_us ({period_max}); use a smaller -i, -s or -t",
            name("step").spelling(),
            nthreads - 1
        )));
    }
    let percent: u64 = if nthreads > nr_cpus {
        (nr_cpus * 80 / nthreads) as u64
    } else {
        60
    };
    let threads: Vec<DeadlinePlan> = (0..nthreads)
        .map(|i| {
            let period_us = (interval + step * i as i64) as u64;
            let runtime_us = period_us * percent / 100;
            DeadlinePlan {
                index: i,
                runtime: Nanos::from_micros(runtime_us as i64),
                deadline: Nanos::from_micros(period_us as i64),
                period: Nanos::from_micros(period_us as i64),
            }
        })
        .collect();
    if let Some(p) = threads.iter().find(|p| p.runtime.as_nanos() < 1024) {
        return Err(UsageError(format!(
            "{}: thread {}'s runtime would be {} µs, below the kernel's 1.024 µs; use a longer -i \
             or fewer threads",
            name("interval").spelling(),
            p.index,
            p.runtime.as_nanos() / 1000
        )));
    }
    let break_threshold = match &raw.breaktrace {
        Some(text) => Some(int_in(
            name("breaktrace"),
            text,
            1..=i64::from(i32::MAX),
            "a latency threshold in µs",
        )?),
        None => None,
    };
    if raw.tracemark && break_threshold.is_none() {
        warnings.push("WARN: --tracemark does nothing without -b".to_owned());
    }
    let limits = raw.shared.stop(name)?;
    let outs = raw.shared.outputs(name, "microseconds")?;
    warnings.extend(outs.warnings);
    let hgrm = raw.shared.outputs.hgrm(name, threads.len())?;
    let gate_plan = raw.shared.gates(name)?;
    let projection = raw.shared.projection(name)?;
    if raw.shared.load.schedule.is_some() {
        return Err(UsageError(format!(
            "{}: a cyclicdeadline run keeps no per-phase figures; use {} SPEC for a constant load",
            name("load-schedule").spelling(),
            name("load").spelling()
        )));
    }
    let load = raw.shared.load(name, system)?;
    let rt_tests = raw.shared.rt_tests(name)?;
    let settings = Settings {
        config: DeadlineConfig {
            threads,
            break_threshold,
            histogram_buckets: outs.buckets,
        },
        histogram: outs.histogram,
        info_lines: raw.verbose || !rt_tests.cyclicdeadline_info_when_asked(),
        debug_lines: raw.debug || !rt_tests.cyclicdeadline_info_when_asked(),
        rt_tests,
        using_all_cpus,
        duration: limits.duration,
        quiet: raw.quiet,
        tracemark: raw.tracemark,
        json: outs.json,
        hgrm,
        verdict: raw.verdict,
        projection,
        cmdline,
        gates: gate_plan,
        load,
    };
    Ok((settings, warnings))
}

/// The options and the help of `rtlat cyclicdeadline`.
pub static MANUAL: &dyn Manual = &Pages {
    flags: &FLAGS,
    page: help_page,
};

fn help_page() -> Page<'static, Raw> {
    let group = |longs: &[&str]| pick(&FLAGS, longs);
    Page {
        title: rtlat_args::tools::help_title("cyclicdeadline", SUMMARY),
        usage: vec!["rtlat cyclicdeadline [OPTIONS]".to_owned()],
        layout: Layout::GNU,
        parts: vec![
            Part::Paragraph(
                "\
Each thread runs under SCHED_DEADLINE: a runtime every period, the period
equal to the deadline (-i, then -s more for each next thread). Each job
reads the clock, records how late it started against the start of its
period, in microseconds, and yields until the next period. The options are
those of rt-tests cyclicdeadline 2.4: short options group (-qt2), values
may be attached (-i2000) or separate, long options may be shortened while
unambiguous (--inter). SCHED_DEADLINE needs CAP_SYS_NICE, and the kernel
admits only as much bandwidth as sched_rt_runtime_us allows."
                    .to_owned(),
            ),
            Part::Heading("Threads"),
            group(&["interval", "step", "threads", "affinity"]),
            Part::Heading("When to stop (by default the run goes on until Ctrl-C)"),
            group(&["duration", "breaktrace", "tracemark"]),
            Part::Heading("Output"),
            Part::Options(
                [
                    find(
                        &FLAGS,
                        &[
                            "quiet",
                            "verbose",
                            "debug",
                            "histogram",
                            "histfile",
                            "json",
                            "hgrm",
                            "hgrm-per-thread",
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
                "Example: two threads of 10 and 15 ms for 5 seconds, summary only:".to_owned(),
            ),
            Part::Example("rtlat cyclicdeadline -t 2 -i 10000 -s 5000 -D 5 -q"),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::OutputTarget;
    use rtlat_testkit::parsing::{os_words, two_cpus};

    fn parse_words(words: &[&str]) -> Result<Invocation, UsageError> {
        let mut raw = Raw::default();
        match options::parse(&FLAGS, &os_words(words), &mut raw)? {
            Read::Help => Ok(Invocation::Help),
            _ => {
                let (settings, warnings) =
                    build(raw, "cyclicdeadline".into(), &two_cpus(), (100, 4_194_304))?;
                Ok(Invocation::Run(Measure {
                    settings: Box::new(settings),
                    warnings,
                }))
            }
        }
    }

    rtlat_testkit::measured_parser_checks!();

    fn us(p: &DeadlinePlan) -> (i64, i64) {
        (p.runtime.as_nanos() / 1000, p.deadline.as_nanos() / 1000)
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
    fn defaults_like_c() {
        let s = settings(&[]);
        assert_eq!(s.config.threads.len(), 1);
        assert_eq!(us(&s.config.threads[0]), (600, 1000));
        assert!(s.using_all_cpus && !s.quiet && s.duration.is_none());
        assert_eq!(s.config.break_threshold, None);
    }

    #[test]
    fn intervals_step_and_percent_like_c() {
        let s = settings(&["-t", "3", "-i", "10000", "-s", "1000"]);
        // Three threads on two CPUs: 2 * 80 / 3 = 53 %.
        let got: Vec<_> = s.config.threads.iter().map(us).collect();
        assert_eq!(got, [(5300, 10000), (5830, 11000), (6360, 12000)]);
        let s = settings(&["-a"]);
        assert_eq!(s.config.threads.len(), 2);
        assert!(!s.using_all_cpus);
        let s = settings(&["-a", "0-1", "-t1"]);
        assert_eq!(s.config.threads.len(), 1);
        assert!(s.using_all_cpus);
    }

    #[test]
    fn spellings() {
        type Check = fn(&Settings) -> bool;
        let table: &[(&[&str], Check)] = &[
            (&["-i2000"], |s| us(&s.config.threads[0]).1 == 2000),
            (&["--interval=2000"], |s| us(&s.config.threads[0]).1 == 2000),
            (&["--inter", "2000"], |s| us(&s.config.threads[0]).1 == 2000),
            (&["-t2", "-s", "100"], |s| {
                us(&s.config.threads[1]).1 == 1100
            }),
            (&["--step=100", "--threads=2"], |s| {
                us(&s.config.threads[1]).1 == 1100
            }),
            (&["-qt2"], |s| s.quiet && s.config.threads.len() == 2),
            // 2.4's abbreviations keep their meaning beside our options.
            (&["--d", "5"], |s| s.duration == Some(Nanos::from_secs(5))),
            (&["--th", "2"], |s| s.config.threads.len() == 2),
            (&["--quiet"], |s| s.quiet),
            (&["-D", "2"], |s| s.duration == Some(Nanos::from_secs(2))),
            (&["-D1m"], |s| s.duration == Some(Nanos::from_secs(60))),
            (&["--dur=1h"], |s| {
                s.duration == Some(Nanos::from_secs(3600))
            }),
            (&["-b", "50"], |s| s.config.break_threshold == Some(50)),
            (&["--breaktrace=50", "--tracemark"], |s| {
                s.tracemark && s.config.break_threshold == Some(50)
            }),
            (&["-c", "0-1"], |s| s.config.threads.len() == 2),
            (&["--json=x.json"], |s| {
                s.json == Some(OutputTarget::File("x.json".into()))
            }),
            (&["--js", "-"], |s| s.json == Some(OutputTarget::Stdout)),
            (&["--hgrm", "x.hgrm", "--hgrm-per-thread"], |s| {
                s.hgrm.as_ref().is_some_and(|h| h.per_thread)
            }),
            (&["--verdict"], |s| s.verdict == Some(Style::Short)),
            (&[], |s| s.verdict.is_none() && s.hgrm.is_none()),
            (&["--histogram=30"], |s| {
                s.config.histogram_buckets == Some(30) && s.histogram == Some(OutputTarget::Stdout)
            }),
            (&["--histogram", "5", "--histfile=h.txt"], |s| {
                s.histogram == Some(OutputTarget::File("h.txt".into()))
            }),
            (&[], |s| {
                s.info_lines && s.debug_lines && s.rt_tests == rtlat_core::RtTests::V2_4
            }),
            (&["--rt-tests=2.10"], |s| !s.info_lines && !s.debug_lines),
            (&["--rt-tests=2.6", "--verbose"], |s| {
                s.info_lines && !s.debug_lines
            }),
            (&["--rt-tests=2.10", "--debug"], |s| {
                !s.info_lines && s.debug_lines
            }),
            (&["--fail-if", "max>100us"], |s| s.gates.is_some()),
            (&["--fail-if", "p99.9>1ms", "--junit=j.xml"], |s| {
                s.gates.is_some()
            }),
        ];
        for (words, check) in table {
            let s = settings(words);
            assert!(check(&s), "{words:?}: {s:?}");
        }
        for words in [&["-h"][..], &["--help"], &["--he"], &["--h"], &["-qh"]] {
            assert!(
                matches!(parse_words(words), Ok(Invocation::Help)),
                "{words:?}"
            );
        }
    }

    #[test]
    fn bad_values_name_the_option() {
        for (words, prefix) in [
            (&["-i", "0"][..], "-i/--interval: invalid value '0'"),
            (&["-i", "50"], "-i/--interval: invalid value '50'"),
            (&["-i", "x"], "-i/--interval: invalid value 'x'"),
            (&["-i", "5000000"], "-i/--interval: invalid value '5000000'"),
            (&["-s", "-1"], "-s/--step: invalid value '-1'"),
            (&["-t", "0"], "-t/--threads: invalid value '0'"),
            (&["-t", "161"], "-t/--threads: invalid value '161'"),
            (
                &["-t", "2", "-i", "4194304"],
                "-s/--step: thread 1 would have",
            ),
            (&["-D", "-5"], "-D/--duration: invalid value '-5'"),
            (&["-b", "0"], "-b/--breaktrace: invalid value '0'"),
            (&["-a", "1"], "-a/--affinity: '1' is not every CPU"),
            (&["-a", "64"], "-a/--affinity: invalid value '64'"),
            (&["--json=/nonexistent/x.json"], "--json: cannot write"),
            (&["--hgrm=/nonexistent/x.hgrm"], "--hgrm: cannot write"),
            (&["--hgrm-per-thread"], "--hgrm-per-thread needs"),
            (&["--histogram=0"], "--histogram: invalid value '0'"),
            (&["--rt-tests=3"], "--rt-tests: invalid value '3'"),
            (&["-Z"], "unrecognized option '-Z'"),
            (&["-l", "5"], "unrecognized option '-l'"),
            (&["extra"], "unexpected argument 'extra'"),
        ] {
            let e = error(words);
            assert!(e.starts_with(prefix), "{words:?}: {e}");
            assert!(!e.contains('\n'), "{words:?}: one line: {e}");
        }
    }
}
