//! The `rtlat signaltest` command line: signaltest 2.4's options, read the
//! way its getopt reads them (`a::b:D:hl:mp:qSt:v` and the long names),
//! plus `--histogram`, `--histfile`, `--nsecs` and the hidden
//! `--synthetic`, turned into validated [`Settings`].
//!
//! Unlike C, every value is checked and a bad one is a one-line
//! [`UsageError`] naming the option, the value and what is accepted.

use std::ffi::OsString;
use std::sync::LazyLock;

use rtlat_core::ring::{C_PACING, RingConfig};

use super::gates;
use super::load_options::{self, LoadOpt};
use super::output_options as outputs;
use super::shared::{Measure, SYNTHETIC, SharedArgs, SharedOpt, gate_and_load_rows, row};
use super::stop_options as stop;
use super::verdict_options::{VERDICT_VALUE, verdict_style};
use crate::report::verdict::text::Style;
use crate::signaltest::settings::Settings;
use rtlat_args::UsageError;
use rtlat_args::getopt::{NO, OPT_CPUS, OptSpec, REQ, getopt_long};
use rtlat_args::values::{
    OptionName, SystemView, int_in, opt_values, optional_text, spelling, text,
};

mod gates_and_load;
mod threads;

/// What the command line asks for: [`help_text`], or to measure.
pub type Invocation = rtlat_args::Invocation<Measure<Box<Settings>>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opt {
    Affinity,
    Breaktrace,
    Help,
    Mlockall,
    Priority,
    Quiet,
    Smp,
    Threads,
    Verbose,
    Nsecs,
    Verdict,
    Shared(SharedOpt),
}

/// signaltest 2.4's options, then ours (long only, never changing what a
/// 2.4 abbreviation means: `--h` stays `--help`).
static OPTIONS: LazyLock<Vec<OptSpec<Opt>>> = LazyLock::new(|| {
    let mut rows = vec![
        OptSpec::c(Opt::Affinity, Some('a'), "affinity", OPT_CPUS),
        OptSpec::c(Opt::Breaktrace, Some('b'), "breaktrace", REQ),
        row(stop::DURATION, Opt::Shared),
        OptSpec::c(Opt::Help, Some('h'), "help", NO),
        row(outputs::JSON, Opt::Shared),
        row(stop::LOOPS, Opt::Shared),
        OptSpec::c(Opt::Mlockall, Some('m'), "mlockall", NO),
        OptSpec::c(Opt::Priority, Some('p'), "priority", REQ),
        OptSpec::c(Opt::Quiet, Some('q'), "quiet", NO),
        OptSpec::c(Opt::Smp, Some('S'), "smp", NO),
        OptSpec::c(Opt::Threads, Some('t'), "threads", REQ),
        OptSpec::c(Opt::Verbose, Some('v'), "verbose", NO),
        row(outputs::HISTOGRAM, Opt::Shared),
        row(outputs::HISTFILE, Opt::Shared),
        OptSpec::new_long(Opt::Nsecs, "nsecs", NO),
        OptSpec::new_long(Opt::Verdict, "verdict", VERDICT_VALUE),
    ];
    // --load-schedule is read to be refused (a ring keeps no per-phase
    // figures): not in the help, the man page or the completions.
    let schedule = Opt::Shared(SharedOpt::Load(LoadOpt::Schedule));
    rows.extend(
        gate_and_load_rows(Opt::Shared).map(|r| if r.id == schedule { r.hidden() } else { r }),
    );
    // Hidden: the deterministic test seam.
    rows.push(row(SYNTHETIC, Opt::Shared));
    rows
});

const MAX_THREADS: i64 = 65_536;

impl OptionName for Opt {
    fn spelling(self) -> String {
        spelling(self, OPTIONS.iter())
    }
}

#[derive(Default)]
struct Raw {
    /// `Some(None)`: `-a` without a set.
    affinity: Option<Option<String>>,
    breaktrace: Option<String>,
    mlockall: bool,
    priority: Option<String>,
    quiet: bool,
    smp: bool,
    threads: Option<String>,
    verbose: bool,
    nsecs: bool,
    verdict: Option<Style>,
    shared: SharedArgs,
}

/// Reads the `rtlat signaltest` command line (`args` without the program
/// name); `cmdline` is kept for the JSON output.
pub fn parse(
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    let items = getopt_long(args, &OPTIONS).map_err(|e| UsageError(e.to_string()))?;
    let mut raw = Raw::default();
    for item in opt_values(items) {
        let (id, value) = item?;
        let val = || text(id, value.as_deref());
        match id {
            Opt::Help => return Ok(Invocation::Help),
            Opt::Affinity => raw.affinity = Some(optional_text(id, value.as_deref())?),
            Opt::Breaktrace => raw.breaktrace = Some(val()?),
            Opt::Mlockall => raw.mlockall = true,
            Opt::Priority => raw.priority = Some(val()?),
            Opt::Quiet => raw.quiet = true,
            Opt::Smp => raw.smp = true,
            Opt::Threads => raw.threads = Some(val()?),
            Opt::Verbose => raw.verbose = true,
            Opt::Nsecs => raw.nsecs = true,
            Opt::Verdict => raw.verdict = Some(verdict_style(id, value.as_deref())?),
            Opt::Shared(which) => raw.shared.set(which, value, id)?,
        }
    }
    let (settings, warnings) = build(raw, cmdline, system)?;
    Ok(Invocation::Run(Measure {
        settings: Box::new(settings),
        warnings,
    }))
}

/// Checks the values, concern by concern, in the order their errors are
/// reported, and puts the settings together.
fn build(
    raw: Raw,
    cmdline: String,
    system: &SystemView,
) -> Result<(Settings, Vec<String>), UsageError> {
    let mut warnings = Vec::new();
    let threads = threads::ring_threads(&raw, system, &mut warnings)?;

    let limits = raw.shared.stop(Opt::Shared)?;
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
    let outputs = raw.shared.outputs(Opt::Shared, &unit)?;
    warnings.extend(outputs.warnings);
    let source = raw.shared.source(Opt::Shared)?;
    let (gates, projection, load) = gates_and_load::gates_and_load(&raw, system)?;

    let settings = Settings {
        ring: RingConfig {
            threads,
            signal: signal_hook::consts::SIGUSR1,
            resolution,
            loops: limits.loops,
            duration: limits.duration,
            break_threshold,
            histogram_buckets: outputs.buckets,
            sample_ring: raw.verbose,
            pacing: Some(C_PACING),
            source,
        },
        quiet: raw.quiet,
        verbose: raw.verbose,
        histogram: outputs.histogram,
        json: outputs.json,
        verdict: raw.verdict,
        projection,
        mlockall: raw.mlockall,
        cmdline,
        gates,
        load,
    };
    Ok((settings, warnings))
}

/// The text of `rtlat signaltest --help`.
/// The option table, as the man page and the completions see it.
pub fn table() -> Vec<OptSpec<()>> {
    OPTIONS.iter().map(OptSpec::names).collect()
}

pub fn help_text() -> String {
    format!(
        "\
{title}

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
{duration}  -b, --breaktrace=US    stop at thread 0's first sample above US, say so,
                         and stop the kernel trace if tracefs is mounted

Output:
  -q, --quiet            no live display; one line per thread at the end
  -v, --verbose          print every sample of thread 0 (thread:count:value)
                         instead of the live display
{json}      --histogram=US     at the end, print a histogram of US one-unit
                         buckets per thread (as cyclictest -h)
{histfile}      --nsecs            report nanoseconds instead of microseconds (-b
                         too)
{verdict}
Gates for CI (checked after every output is written; exit status 3):
      --fail-if=LIMITS   fail when a thread, or all threads together, break a
                         limit: comma-separated METRIC OP VALUE, METRIC one
                         of min avg max overruns (a ring keeps no
                         percentiles), OP one of > >= < <= (the failing
                         condition), VALUE with ns, us, ms or s (us if
                         none): 'max>100us,avg>40us'; and verdict=LEVEL
                         (required) or verdict!=LEVEL (refused), LEVEL
                         trustworthy, caveats or untrustworthy; the same
                         for measurement (valid, doubtful, invalid) and
                         machine (ready, caveats, not-ready)
{junit}
Background load (see rtlat load --help for the kinds):
      --load=SPEC        run load beside the ring, from before the first trip
                         to after the last: KIND[:WORKERS],...; one '# load'
                         line per kind at the end, \"load\" in the JSON
{load_cpus}
  -h, --help             print this help and exit

Example: a ring of four threads at priority 80, 10000 trips, summary only:
  rtlat signaltest -m -t 4 -p 80 -l 10000 -q
",
        title = super::dispatch::Tool::Signaltest.help_title(),
        duration = stop::duration_help(),
        json = outputs::json_help(),
        histfile = outputs::histfile_help(),
        junit = gates::junit_help(),
        verdict = super::verdict_options::help(),
        load_cpus = load_options::load_cpus_help(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::OutputTarget;
    use rtlat_args::testing::{expect_run, expect_usage_error, os_words, two_cpus};
    use rtlat_core::config::SchedPolicy;
    use rtlat_core::config::TimeSourceKind;
    use rtlat_core::units::Nanos;
    use rtlat_core::units::Resolution;

    fn parse_words(words: &[&str]) -> Result<Invocation, UsageError> {
        parse(&os_words(words), "signaltest".into(), &two_cpus())
    }

    fn settings(words: &[&str]) -> Settings {
        *expect_run(parse_words(words), words).settings
    }

    fn warnings(words: &[&str]) -> Vec<String> {
        expect_run(parse_words(words), words).warnings
    }

    fn error(words: &[&str]) -> String {
        expect_usage_error(parse_words(words), words)
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
    fn gates_and_load_through_the_shared_options() {
        let s = settings(&[
            "--fail-if",
            "max>100us,verdict!=untrustworthy",
            "--ju=j.xml",
        ]);
        let gates = s.gates.expect("gates");
        assert_eq!(gates.limits.len(), 2);
        assert_eq!(gates.junit, Some("j.xml".into()));
        let s = settings(&["--load", "cpu:1", "--load-cpus", "1"]);
        let load = s.load.expect("load");
        assert_eq!(load.phases.len(), 1);
        assert_eq!(load.phases[0].plan.as_ref().unwrap().cpus, [1]);
        assert_eq!((settings(&[]).gates, settings(&[]).load), (None, None));
        for (words, want) in [
            (
                &["--fail-if", "p99.9>1ms"][..],
                "--fail-if: 'p99.9 > 1ms': a signaltest run keeps no percentiles",
            ),
            (
                &["--load-schedule", "idle=5"],
                "--load-schedule: a signaltest run keeps no per-phase figures",
            ),
            (&["--junit", "j.xml"], "--junit needs --fail-if LIMITS"),
            (&["--load", "bogus"], "--load: invalid value 'bogus'"),
        ] {
            let e = error(words);
            assert!(e.starts_with(want), "{words:?}: {e}");
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
