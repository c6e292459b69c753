//! The `rtlat signaltest` command line: signaltest 2.4's options, read the
//! way its getopt reads them (`a::b:D:hl:mp:qSt:v` and the long names),
//! plus `--histogram`, `--histfile`, `--nsecs` and the hidden
//! `--synthetic`, turned into validated [`Settings`].
//!
//! Unlike C, every value is checked and a bad one is a one-line
//! [`UsageError`] naming the option, the value and what is accepted.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use rtlat_core::config::SchedPolicy;
use rtlat_core::cpuset::parse_cpu_list;
use rtlat_core::ring::{C_PACING, RingConfig, RingThreadPlan};
use rtlat_core::units::Nanos;

use crate::output::OutputTarget;
use crate::signaltest::settings::Settings;
use rtlat_args::UsageError;
use rtlat_args::getopt::{OptSpec, Peek, ValueKind, getopt_long};
use rtlat_args::values::{
    DirReport, DurationError, OptionName, SystemView, int_in, invalid, loop_limit, opt_values,
    optional_text, spelling, text, time_source,
};

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invocation {
    /// `-h`/`--help`: print [`help_text`] and exit 0.
    Help,
    /// Measure.
    Run {
        /// The validated settings.
        settings: Box<Settings>,
        /// Complete stderr lines to print first.
        warnings: Vec<String>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opt {
    Affinity,
    Breaktrace,
    Duration,
    Help,
    Json,
    Loops,
    Mlockall,
    Priority,
    Quiet,
    Smp,
    Threads,
    Verbose,
    Histogram,
    Histfile,
    Nsecs,
    Verdict,
    Synthetic,
}

const NO: ValueKind = ValueKind::None;
const REQ: ValueKind = ValueKind::Required;

const fn opt(
    id: Opt,
    short: Option<char>,
    long: &'static str,
    value: ValueKind,
    in_2_4: bool,
) -> OptSpec<Opt> {
    OptSpec {
        id,
        short,
        long: Some(long),
        value,
        in_2_4,
    }
}

/// signaltest 2.4's options, then ours (long only, never changing what a
/// 2.4 abbreviation means: `--h` stays `--help`).
const OPTIONS: &[OptSpec<Opt>] = &[
    opt(
        Opt::Affinity,
        Some('a'),
        "affinity",
        ValueKind::Optional(Peek::CpuList),
        true,
    ),
    opt(Opt::Breaktrace, Some('b'), "breaktrace", REQ, true),
    opt(Opt::Duration, Some('D'), "duration", REQ, true),
    opt(Opt::Help, Some('h'), "help", NO, true),
    opt(Opt::Json, None, "json", REQ, true),
    opt(Opt::Loops, Some('l'), "loops", REQ, true),
    opt(Opt::Mlockall, Some('m'), "mlockall", NO, true),
    opt(Opt::Priority, Some('p'), "priority", REQ, true),
    opt(Opt::Quiet, Some('q'), "quiet", NO, true),
    opt(Opt::Smp, Some('S'), "smp", NO, true),
    opt(Opt::Threads, Some('t'), "threads", REQ, true),
    opt(Opt::Verbose, Some('v'), "verbose", NO, true),
    opt(Opt::Histogram, None, "histogram", REQ, false),
    opt(Opt::Histfile, None, "histfile", REQ, false),
    opt(Opt::Nsecs, None, "nsecs", NO, false),
    opt(Opt::Verdict, None, "verdict", NO, false),
    // Hidden: the deterministic test seam.
    opt(Opt::Synthetic, None, "synthetic", REQ, false),
];

const MAX_THREADS: i64 = 65_536;
const MAX_BUCKETS: i64 = 1_000_000;

impl OptionName for Opt {
    fn spelling(self) -> String {
        spelling(self, OPTIONS)
    }
}

#[derive(Default)]
struct Raw {
    /// `Some(None)`: `-a` without a set.
    affinity: Option<Option<String>>,
    breaktrace: Option<String>,
    duration: Option<String>,
    json: Option<OsString>,
    loops: Option<String>,
    mlockall: bool,
    priority: Option<String>,
    quiet: bool,
    smp: bool,
    threads: Option<String>,
    verbose: bool,
    histogram: Option<String>,
    histfile: Option<OsString>,
    nsecs: bool,
    verdict: bool,
    synthetic: Option<String>,
}

/// Reads the `rtlat signaltest` command line (`args` without the program
/// name); `cmdline` is kept for the JSON output.
pub fn parse(
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    let items = getopt_long(args, OPTIONS).map_err(|e| UsageError(e.to_string()))?;
    let mut raw = Raw::default();
    for item in opt_values(items) {
        let (id, value) = item?;
        let val = || text(id, value.as_deref());
        let path = || value.clone().unwrap_or_default();
        match id {
            Opt::Help => return Ok(Invocation::Help),
            Opt::Affinity => raw.affinity = Some(optional_text(id, value.as_deref())?),
            Opt::Breaktrace => raw.breaktrace = Some(val()?),
            Opt::Duration => raw.duration = Some(val()?),
            Opt::Json => raw.json = Some(path()),
            Opt::Loops => raw.loops = Some(val()?),
            Opt::Mlockall => raw.mlockall = true,
            Opt::Priority => raw.priority = Some(val()?),
            Opt::Quiet => raw.quiet = true,
            Opt::Smp => raw.smp = true,
            Opt::Threads => raw.threads = Some(val()?),
            Opt::Verbose => raw.verbose = true,
            Opt::Histogram => raw.histogram = Some(val()?),
            Opt::Histfile => raw.histfile = Some(path()),
            Opt::Nsecs => raw.nsecs = true,
            Opt::Verdict => raw.verdict = true,
            Opt::Synthetic => raw.synthetic = Some(val()?),
        }
    }
    let (settings, warnings) = build(raw, cmdline, system)?;
    Ok(Invocation::Run {
        settings: Box::new(settings),
        warnings,
    })
}

fn build(
    raw: Raw,
    cmdline: String,
    system: &SystemView,
) -> Result<(Settings, Vec<String>), UsageError> {
    let mut warnings = Vec::new();
    let mut allowed = system.allowed_cpus.clone();
    allowed.sort_unstable();
    allowed.dedup();

    // Threads and CPUs.
    let set = match (&raw.affinity, raw.smp) {
        (Some(Some(text)), false) => Some(
            parse_cpu_list(text, &allowed, system.configured_cpus)
                .map_err(|e| invalid(Opt::Affinity, text, e))?,
        ),
        _ => None,
    };
    let nthreads = if raw.smp {
        if raw.threads.is_some() {
            warnings.push("WARN: -t ignored due to smp mode".to_owned());
        }
        if raw.affinity.is_some() {
            warnings.push("WARN: -a ignored due to smp mode".to_owned());
        }
        if allowed.len() < 2 {
            return Err(UsageError(format!(
                "{}: one thread per CPU makes a ring of {}; a ring needs at least two threads \
                 (use -t 2 instead)",
                Opt::Smp.spelling(),
                allowed.len()
            )));
        }
        allowed.len()
    } else {
        match &raw.threads {
            Some(text) => int_in(
                Opt::Threads,
                text,
                2..=MAX_THREADS,
                "a number of threads in the ring",
            )? as usize,
            None => 2,
        }
    };
    let cpu_of = |i: usize| -> Option<usize> {
        if raw.smp || matches!(raw.affinity, Some(None)) {
            Some(allowed[i % allowed.len()])
        } else {
            set.as_ref().map(|s| s[i % s.len()])
        }
    };

    let priority = match &raw.priority {
        Some(text) => int_in(Opt::Priority, text, 0..=99, "a real-time priority")? as u8,
        None => 0,
    };
    let policy = if priority > 0 {
        SchedPolicy::Fifo
    } else {
        SchedPolicy::Other
    };

    let loops = match &raw.loops {
        Some(text) => loop_limit(Opt::Loops, text, "a number of round trips for thread 0")?,
        None => None,
    };
    let duration = match &raw.duration {
        Some(text) => parse_duration(text)?,
        None => None,
    };
    let (resolution, unit) = rtlat_args::values::resolution(raw.nsecs, "--nsecs");
    let break_threshold = match &raw.breaktrace {
        Some(text) => Some(int_in(
            Opt::Breaktrace,
            text,
            1..=i64::from(i32::MAX),
            &format!("a latency threshold in {unit}"),
        )?),
        None => None,
    };
    let buckets = match &raw.histogram {
        Some(text) => Some(int_in(
            Opt::Histogram,
            text,
            1..=MAX_BUCKETS,
            "a number of one-unit histogram buckets",
        )? as usize),
        None => None,
    };
    let histfile = match &raw.histfile {
        Some(text) => {
            let path = new_file_path(Opt::Histfile, text)?;
            if buckets.is_none() {
                warnings.push(
                    "WARN: --histfile given without --histogram; no histogram is written"
                        .to_owned(),
                );
            }
            Some(path)
        }
        None => None,
    };
    let json = match &raw.json {
        Some(text) if text == "-" => Some(OutputTarget::Stdout),
        Some(text) => Some(OutputTarget::File(new_file_path(Opt::Json, text)?)),
        None => None,
    };
    let source = time_source(Opt::Synthetic, raw.synthetic.as_deref())?;

    let threads = (0..nthreads)
        .map(|index| RingThreadPlan {
            index,
            policy,
            priority,
            cpu: cpu_of(index),
        })
        .collect();
    let settings = Settings {
        ring: RingConfig {
            threads,
            signal: signal_hook::consts::SIGUSR1,
            resolution,
            loops,
            duration,
            break_threshold,
            histogram_buckets: buckets,
            sample_ring: raw.verbose,
            pacing: Some(C_PACING),
            source,
        },
        quiet: raw.quiet,
        verbose: raw.verbose,
        histogram: buckets.map(|_| histfile.map_or(OutputTarget::Stdout, OutputTarget::File)),
        json,
        verdict: raw.verdict,
        mlockall: raw.mlockall,
        cmdline,
    };
    Ok((settings, warnings))
}

/// `-D`: whole seconds with an optional single suffix s, m, h or d.
fn parse_duration(text: &str) -> Result<Option<Nanos>, UsageError> {
    rtlat_args::values::duration(text).map_err(|e| match e {
        DurationError::Malformed => {
            invalid(Opt::Duration, text, rtlat_args::values::DURATION_EXPECTED)
        }
        DurationError::SecondsOverflow | DurationError::TooLong => invalid(
            Opt::Duration,
            text,
            "too long: at most 292 years (9223372036 seconds)",
        ),
    })
}

/// A file the run writes at its end, checked writable now (its directory
/// exists, the name fits, a file can be made there).
fn new_file_path(id: Opt, raw: &OsStr) -> Result<PathBuf, UsageError> {
    rtlat_args::values::new_file_path(id, raw, "write", DirReport::Missing)
}

/// The text of `rtlat signaltest --help`.
pub fn help_text() -> &'static str {
    HELP
}

const HELP: &str = "\
rtlat signaltest: measure how long a signal takes to go round a ring of threads

Usage: rtlat signaltest [OPTIONS]

The threads form a ring: each waits for SIGUSR1 and, once it has it, sends
it on to the next thread (the last one to thread 0). A thread's sample is
the time between two arrivals of the signal, one full trip round the ring,
in microseconds. Thread 0 pauses the ring for 10 ms every 16 trips so that
it does not take a whole CPU; no sample of any thread includes that pause.
The options are those of rt-tests signaltest 2.4: short options group
(-qm), values may be attached (-p80) or separate (-p 80), and long options
may be shortened while unambiguous (--prio).

Ring and scheduling:
  -t, --threads=N        threads in the ring, 2 to 65536               [2]
  -p, --priority=N       SCHED_FIFO priority of every thread, 1 to 99;
                         0: SCHED_OTHER                             [none]
  -a, --affinity[=CPUS]  pin thread i to the i-th CPU of CPUS, round robin;
                         CPUS is like 0-3,8 or all, !LIST for all but LIST,
                         +LIST to count within the allowed CPUs. Alone: the
                         CPUs the process may use. Without -a or -S the
                         threads are not pinned.
  -S, --smp              one thread per allowed CPU, each pinned to its own;
                         -t and -a are then ignored
  -m, --mlockall         lock current and future memory in RAM

When to stop (by default the run goes on until Ctrl-C):
  -l, --loops=N          stop once thread 0 has N samples; 0: no limit [0]
  -D, --duration=TIME    stop after TIME: seconds, or a number followed by
                         s, m, h or d (30s, 10m, 2h, 1d); 0: no limit [0]
  -b, --breaktrace=US    stop at thread 0's first sample above US, say so,
                         and stop the kernel trace if tracefs is mounted

Output:
  -q, --quiet            no live display; one line per thread at the end
  -v, --verbose          print every sample of thread 0 (thread:count:value)
                         instead of the live display
      --json=FILE        write the results as JSON to FILE (- for stdout)
      --histogram=US     at the end, print a histogram of US one-unit
                         buckets per thread (as cyclictest -h)
      --histfile=PATH    write that histogram to PATH instead of stdout
      --nsecs            report nanoseconds instead of microseconds (-b
                         too)
      --verdict          at the end, print each thread's missed periods and
                         the verdict on the run (trustworthy, caveats or
                         untrustworthy, with the reasons; always in the JSON)

  -h, --help             print this help and exit

Example: a ring of four threads at priority 80, 10000 trips, summary only:
  rtlat signaltest -m -t 4 -p 80 -l 10000 -q
";

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_core::config::TimeSourceKind;
    use rtlat_core::units::Resolution;

    fn system() -> SystemView {
        SystemView {
            allowed_cpus: vec![0, 1],
            configured_cpus: 2,
        }
    }

    fn parse_words(words: &[&str]) -> Result<Invocation, UsageError> {
        let args: Vec<OsString> = words.iter().map(OsString::from).collect();
        parse(&args, "signaltest".into(), &system())
    }

    fn settings(words: &[&str]) -> Settings {
        match parse_words(words) {
            Ok(Invocation::Run { settings, .. }) => *settings,
            other => panic!("{words:?}: {other:?}"),
        }
    }

    fn warnings(words: &[&str]) -> Vec<String> {
        match parse_words(words) {
            Ok(Invocation::Run { warnings, .. }) => warnings,
            other => panic!("{words:?}: {other:?}"),
        }
    }

    fn error(words: &[&str]) -> String {
        match parse_words(words) {
            Err(e) => e.0,
            other => panic!("{words:?} should fail: {other:?}"),
        }
    }

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
    fn histfile_without_histogram_warns() {
        assert_eq!(
            warnings(&["--histfile=h.txt"]),
            ["WARN: --histfile given without --histogram; no histogram is written"]
        );
    }
}
