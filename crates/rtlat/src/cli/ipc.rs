//! The command lines of `rtlat svsematest`, `pmqtest`, `ptsematest` and
//! `sigwaittest`: the options of the rt-tests 2.4 tools of those names, read
//! the way their getopt reads them, turned into validated [`IpcSettings`].
//!
//! As in the C tools `-h` is help here. Unlike them, every value is checked
//! and a bad one is a one-line [`UsageError`] naming the option, the value
//! and what is accepted (exit status 2).

use std::ffi::OsString;
use std::sync::LazyLock;

use rtlat_core::config::RunConfig;
use rtlat_core::distribution::DistributionPlan;
use rtlat_core::ipc::{PairConfig, Side};
use rtlat_core::units::Nanos;

use super::gates;
use super::load_options::{self, run_duration};
use super::output_options as outputs;
use super::shared::{Measure, SYNTHETIC, SharedArgs, SharedOpt, gate_and_load_rows, row};
use super::stop_options as stop;
use super::verdict_options::{VERDICT_VALUE, verdict_style};
use crate::ipc::PairTool;
use crate::ipc::settings::IpcSettings;
use crate::report::verdict::text::Style;
pub use rtlat_args::UsageError;
use rtlat_args::getopt::{GetoptError, NO, OPT_NUM, OptSpec, REQ, ValueKind, getopt_long};
pub use rtlat_args::values::SystemView;
use rtlat_args::values::{OptionName, invalid, opt_values, optional_text, spelling, text};
use rtlat_core::load::schedule::LoadSchedule;

mod gates_and_load;
mod outputs_and_source;
mod pairs;
mod stopping;
#[cfg(test)]
mod tests;
mod timing;

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[expect(
    clippy::large_enum_variant,
    reason = "built once per process; boxing would only complicate the callers"
)]
pub enum Invocation {
    /// `-h`/`--help`: print [`help_text`] to stdout and exit 0.
    Help,
    /// Measure.
    Run(Measure<IpcSettings>),
    /// `-fr<N>` / `-fs<N>`: be side `side` of pair `pair` of a fork-mode
    /// run started by another rtlat process.
    ForkChild {
        /// Which side.
        side: Side,
        /// Which pair.
        pair: usize,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opt {
    Affinity,
    Breaktrace,
    Distance,
    Fork,
    ForceTimeout,
    Help,
    Interval,
    Priority,
    Quiet,
    Smp,
    Threads,
    Timeout,
    Nsecs,
    Verdict,
    Shared(SharedOpt),
}

/// The options every one of the four tools has.
static COMMON: LazyLock<Vec<OptSpec<Opt>>> = LazyLock::new(|| {
    let mut rows = vec![
        OptSpec::c(Opt::Affinity, Some('a'), "affinity", OPT_NUM),
        OptSpec::c(Opt::Breaktrace, Some('b'), "breaktrace", REQ),
        OptSpec::c(Opt::Distance, Some('d'), "distance", REQ),
        row(stop::DURATION, Opt::Shared),
        OptSpec::c(Opt::Help, Some('h'), "help", NO),
        OptSpec::c(Opt::Interval, Some('i'), "interval", REQ),
        row(outputs::JSON, Opt::Shared),
        row(stop::LOOPS, Opt::Shared),
        OptSpec::c(Opt::Priority, Some('p'), "priority", REQ),
        OptSpec::c(Opt::Quiet, Some('q'), "quiet", NO),
        OptSpec::c(Opt::Threads, Some('t'), "threads", OPT_NUM),
        // Ours, long only; newer than 2.4, so they never take a 2.4 prefix.
        row(outputs::HISTOGRAM, Opt::Shared),
        row(outputs::HISTFILE, Opt::Shared),
        OptSpec::new_long(Opt::Nsecs, "nsecs", NO),
        OptSpec::new_long(Opt::Verdict, "verdict", VERDICT_VALUE),
    ];
    rows.extend(gate_and_load_rows(Opt::Shared));
    // The deterministic test seam (not in the help).
    rows.push(row(SYNTHETIC, Opt::Shared));
    rows
});

const SMP: OptSpec<Opt> = OptSpec::c(Opt::Smp, Some('S'), "smp", NO);
const FORK: OptSpec<Opt> = OptSpec::c(Opt::Fork, Some('f'), "fork", OPT_NUM);
const FORCE_TIMEOUT: OptSpec<Opt> = OptSpec::c(Opt::ForceTimeout, Some('f'), "forcetimeout", REQ);
const TIMEOUT: OptSpec<Opt> = OptSpec::c(Opt::Timeout, Some('T'), "timeout", REQ);

/// The option table of `tool`.
fn options(tool: PairTool) -> Vec<OptSpec<Opt>> {
    let mut specs = COMMON.clone();
    match tool {
        PairTool::Svsematest => specs.extend([SMP, FORK]),
        PairTool::Pmqtest => specs.extend([SMP, FORCE_TIMEOUT, TIMEOUT]),
        PairTool::Ptsematest => specs.push(SMP),
        PairTool::Sigwaittest => specs.push(FORK),
    }
    specs
}

impl OptionName for Opt {
    /// From every table entry any of the four tools has.
    fn spelling(self) -> String {
        let extra = [SMP, FORK, FORCE_TIMEOUT, TIMEOUT];
        spelling(self, COMMON.iter().chain(extra.iter()))
    }
}

/// The largest interval, distance product and `-b` value (µs).
const MAX_US: i64 = i32::MAX as i64;
/// The most pairs a run may have (C 2.4: 255).
pub const MAX_PAIRS: i64 = 1024;

#[derive(Default)]
struct Raw {
    /// `Some(None)`: `-a` alone.
    affinity: Option<Option<String>>,
    breaktrace: Option<String>,
    distance: Option<String>,
    /// `Some(None)`: `-f` alone (fork mode).
    fork: Option<Option<String>>,
    force_timeout: Option<String>,
    interval: Option<String>,
    priority: Option<String>,
    quiet: bool,
    smp: bool,
    threads: Option<Option<String>>,
    timeout: Option<String>,
    nsecs: bool,
    verdict: Option<Style>,
    shared: SharedArgs,
}

/// Whether the command line gives `-a` its value in the same word (`-a0`,
/// `-qa0`, `--affinity=0`). The C tools read a value in the next word only
/// when it is not 0, so `-a 0` means `-a` alone while `-a0` means CPU 0.
fn affinity_attached(args: &[OsString], specs: &[OptSpec<Opt>]) -> bool {
    let short = |c: char| specs.iter().find(|s| s.short == Some(c));
    let long = |name: &str| {
        specs.iter().find(|s| {
            s.long
                .is_some_and(|l| !name.is_empty() && l.starts_with(name))
        })
    };
    let mut attached = false;
    // Every word counts, UTF-8 or not (a file name), so that a value is
    // never taken for an option.
    let words: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
    let mut words = words.iter().map(|w| w.as_ref());
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        let (spec, rest) = if let Some(body) = word.strip_prefix("--") {
            match body.split_once('=') {
                Some((name, value)) => (long(name), Some(value)),
                None => (long(body), None),
            }
        } else if let Some(cluster) = word.strip_prefix('-') {
            // The first option of the cluster that takes a value ends it.
            let found = cluster.char_indices().find_map(|(pos, c)| {
                short(c)
                    .filter(|s| s.value != ValueKind::None)
                    .map(|s| (s, &cluster[pos + c.len_utf8()..]))
            });
            match found {
                Some((spec, rest)) => (Some(spec), (!rest.is_empty()).then_some(rest)),
                None => (None, None),
            }
        } else {
            (None, None)
        };
        let Some(spec) = spec else { continue };
        if spec.id == Opt::Affinity {
            attached = rest.is_some();
        }
        if rest.is_none() && spec.value == ValueKind::Required {
            words.next();
        }
    }
    attached
}

/// Reads the command line of `tool`. `args` excludes the program name (and
/// the subcommand); `cmdline` is kept for the JSON output.
pub fn parse(
    tool: PairTool,
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    let specs = options(tool);
    let items = getopt_long(args, &specs).map_err(|e| match e {
        // `-t -2`: getopt takes `-2` for an option of its own.
        GetoptError::Unrecognized(word, _)
            if word.len() > 1 && word[1..].starts_with(|c: char| c.is_ascii_digit()) =>
        {
            UsageError(format!(
                "unrecognized option '{word}' (-t/--threads and -a/--affinity take no \
                 negative numbers)"
            ))
        }
        e => UsageError(e.to_string()),
    })?;
    let mut raw = Raw::default();
    for item in opt_values(items) {
        let (id, value) = item?;
        let val = || text(id, value.as_deref());
        match id {
            Opt::Help => return Ok(Invocation::Help),
            Opt::Affinity => raw.affinity = Some(optional_text(id, value.as_deref())?),
            Opt::Breaktrace => raw.breaktrace = Some(val()?),
            Opt::Distance => raw.distance = Some(val()?),
            Opt::Fork => raw.fork = Some(optional_text(id, value.as_deref())?),
            Opt::ForceTimeout => raw.force_timeout = Some(val()?),
            Opt::Interval => raw.interval = Some(val()?),
            Opt::Priority => raw.priority = Some(val()?),
            Opt::Quiet => raw.quiet = true,
            Opt::Smp => raw.smp = true,
            Opt::Threads => raw.threads = Some(optional_text(id, value.as_deref())?),
            Opt::Timeout => raw.timeout = Some(val()?),
            Opt::Nsecs => raw.nsecs = true,
            Opt::Verdict => raw.verdict = Some(verdict_style(id, value.as_deref())?),
            Opt::Shared(which) => raw.shared.set(which, value, id)?,
        }
    }
    if let Some(Some(role)) = &raw.fork {
        return fork_role(role).map(|(side, pair)| Invocation::ForkChild { side, pair });
    }
    let affinity_zero_is_cpu = affinity_attached(args, &specs);
    let (settings, warnings) = build(tool, raw, affinity_zero_is_cpu, cmdline, system)?;
    Ok(Invocation::Run(Measure { settings, warnings }))
}

/// `-fr<N>` / `-fs<N>`: the hidden values of `-f` that name a fork-mode
/// child's part.
fn fork_role(text: &str) -> Result<(Side, usize), UsageError> {
    let bad = || {
        invalid(
            Opt::Fork,
            text,
            "expected no value (fork mode); r<N> and s<N> are for the processes it starts",
        )
    };
    let (side, number) = match text.split_at_checked(1) {
        Some(("r", n)) => (Side::Receiver, n),
        Some(("s", n)) => (Side::Sender, n),
        _ => return Err(bad()),
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let pair = number.parse::<usize>().map_err(|_| bad())?;
    Ok((side, pair))
}

/// Checks the values, concern by concern, in the order their errors are
/// reported, and puts the settings together.
fn build(
    tool: PairTool,
    raw: Raw,
    affinity_zero_is_cpu: bool,
    cmdline: String,
    system: &SystemView,
) -> Result<(IpcSettings, Vec<String>), UsageError> {
    let mut warnings = Vec::new();
    let allowed = pairs::allowed_cpus(system)?;
    let (npairs, pinning) =
        pairs::pairs_and_pinning(&raw, affinity_zero_is_cpu, &allowed, system, &mut warnings)?;
    let plans = timing::plans(tool, &raw, npairs, &pinning, &allowed)?;
    let stopping = stopping::stopping(&raw)?;
    let (outputs, source) = outputs_and_source::outputs_and_source(&raw, &stopping, &mut warnings)?;
    let fork = matches!(raw.fork, Some(None));
    let (gates, projection, load) = gates_and_load::gates_and_load(&raw, fork, system)?;
    // A schedule ends the run when it ends, unless -D comes first.
    let duration = run_duration(stopping.duration, load.as_ref());
    let resolution = stopping.resolution;
    let buckets = outputs.buckets;
    let settings = IpcSettings {
        tool,
        engine: PairConfig {
            mechanism: tool.mechanism(),
            pairs: plans,
            run: RunConfig {
                loops: stopping.loops,
                duration,
                resolution,
                source,
                // Percentiles for --fail-if; fork mode keeps its results in
                // shared cells, without one.
                distribution: (!fork)
                    .then(|| {
                        let buckets = i64::try_from(buckets.unwrap_or(0)).unwrap_or(i64::MAX);
                        let range = Nanos(buckets.saturating_mul(resolution.nanos_per_unit()));
                        DistributionPlan::new(1000, range).ok()
                    })
                    .flatten(),
                phases: load.as_ref().and_then(LoadSchedule::phase_plan),
            },
            histogram: buckets,
            breaktrace: stopping.breaktrace,
            mq_timeouts: stopping.mq_timeouts,
        },
        quiet: raw.quiet,
        fork,
        json: outputs.json,
        verdict: raw.verdict,
        projection,
        histogram: outputs.histogram,
        cmdline,
        gates,
        load,
    };
    Ok((settings, warnings))
}

/// The option table of `tool`, as the man page and the completions see
/// it.
pub fn table(tool: PairTool) -> Vec<OptSpec<()>> {
    options(tool).iter().map(OptSpec::names).collect()
}

/// The text of `rtlat <tool> --help`.
pub fn help_text(tool: PairTool) -> String {
    let name = tool.name();
    let how = match tool {
        PairTool::Svsematest => {
            "The sender posts a semaphore the receiver waits on (semop); both sides\n\
             use a private semaphore set, so runs never disturb each other."
        }
        PairTool::Pmqtest => {
            "The sender sends a message the receiver waits for (mq_receive); the\n\
             receiver answers on a second queue."
        }
        PairTool::Ptsematest => {
            "The sender posts a futex-based binary semaphore the receiver sleeps on,\n\
             the wake-up path of the C tool's mutex hand-off."
        }
        PairTool::Sigwaittest => {
            "The sender sends SIGUSR2 (pthread_kill) to the receiver, which takes it\n\
             with sigwaitinfo; SIGUSR1 goes back."
        }
    };
    let mut text = format!(
        "rtlat {name}: {summary}\n\
         \n\
         Usage: rtlat {name} [OPTIONS]\n\
         \n\
         Each pair has a receiver and a sender. The sender reads the clock and wakes\n\
         the receiver, which reads the clock as soon as it runs: the difference is\n\
         the latency, in microseconds (CLOCK_MONOTONIC). The receiver then pauses\n\
         for its interval and lets the sender start the next hand-off.\n\
         {how}\n\
         The options are those of rt-tests {name} 2.4.\n\
         \n\
         Options:\n\
         \x20 -t, --threads[=N]      number of pairs; -t alone or -t 0: one per CPU [1]\n\
         \x20 -i, --interval=US      receiver's pause between hand-offs, 0 to\n\
         \x20                        2147483647 microseconds (0: none)          [1000]\n\
         \x20 -d, --distance=US      each further pair pauses US longer          [500]\n\
         \x20 -p, --priority=N       SCHED_FIFO priority of pair 0, 0 to 99; each\n\
         \x20                        further pair one less, down to {floor}; 0: SCHED_OTHER\n\
         \x20 -a, --affinity[=CPU]   pin every pair to CPU; alone (or -a 0 as two\n\
         \x20                        words): pair i on the i-th CPU, round robin\n",
        summary = rtlat_args::tools::summary(name),
        floor = if tool == PairTool::Sigwaittest { 0 } else { 1 },
    );
    if tool != PairTool::Sigwaittest {
        text.push_str(
            "  -S, --smp              one pair per CPU, each on its own, all at the same\n\
             \x20                        priority; -t and -a are then ignored\n",
        );
    }
    if matches!(tool, PairTool::Svsematest | PairTool::Sigwaittest) {
        text.push_str(
            "  -f, --fork             run each side as a process of its own instead of\n\
             \x20                        a thread (IDs are then process ids)\n",
        );
    }
    if tool == PairTool::Pmqtest {
        text.push_str(
            "  -T, --timeout=SECS     the receiver waits at most SECS seconds; a\n\
             \x20                        time-out ends the pair with an error\n\
             \x20 -f, --forcetimeout=SECS  with -T: the sender waits SECS seconds before\n\
             \x20                        each message; the receiver's time-outs are\n\
             \x20                        counted (TO) and it waits again\n",
        );
    }
    text.push_str(&format!(
        "  -l, --loops=N          each side stops after N hand-offs; the run ends\n\
         \x20                        when the first side is done; 0: no limit  [0]\n\
         {duration}\
         \x20 -b, --breaktrace=US    stop the run (and the kernel trace) at the first\n\
         \x20                        latency above US\n\
         \x20 -q, --quiet            no live display; print the figures once at the end\n\
         {json}\
         \x20     --histogram=N      at the end, print a histogram of the receivers'\n\
         \x20                        latencies with N one-microsecond buckets\n\
         {histfile}\
         \x20     --nsecs            figures and histogram buckets in nanoseconds\n\
         {verdict}\
         \x20     --fail-if=LIMITS   exit 3 after the outputs when a receiver (or all\n\
         \x20                        together) breaks a limit: 'max>100us,p99>40us';\n\
         \x20                        METRIC min avg max p50 p90 p99 p99.9 p99.99\n\
         \x20                        p99.999 overruns, OP > >= < <= (the failing\n\
         \x20                        condition), unit ns us ms s; no percentiles -f;\n\
         \x20                        verdict=trustworthy or verdict!=untrustworthy\n\
         \x20                        (the level required or refused; see --verdict);\n\
         \x20                        the same for measurement (valid, doubtful,\n\
         \x20                        invalid) and machine (ready, caveats, not-ready)\n\
         {junit}\
         \x20     --load=SPEC        background load from before the first hand-off to\n\
         \x20                        after the last: KIND[:WORKERS],... (see rtlat load\n\
         \x20                        --help); '# load' lines at the end, \"load\" in JSON\n\
         \x20     --load-schedule=SCHEDULE\n\
         \x20                        load in phases, LOAD=DURATION,... with LOAD idle or\n\
         \x20                        KIND[:WORKERS]+...; ends the run when it ends (or -l,\n\
         \x20                        -D sooner); '# phase' lines and \"phases\" in JSON;\n\
         \x20                        not with -f\n\
         {load_cpus}\
         \x20 -h, --help             print this help and exit\n\
         \n\
         Output, one block per refresh:\n\
         \x20 #0: ID<tid>, P<prio>, CPU<cpu>, I<interval>;\n\
         \x20     #1: ID<tid>, P<prio>, CPU<cpu>, Cycles <n>\n\
         \x20 #1 -> #0, Min <us>, Cur <us>, Avg <us>, Max <us>\n",
        duration = super::stop_options::duration_help(),
        json = outputs::json_help(),
        histfile = outputs::histfile_help(),
        junit = gates::junit_help(),
        verdict = super::verdict_options::help(),
        load_cpus = load_options::load_cpus_help(),
    ));
    text.push_str(&format!(
        "\nExample: two pairs at priority 80, 200 us apart, 10000 hand-offs each:\n\
         \x20 rtlat {name} -q -p 80 -i 200 -t 2 -l 10000\n"
    ));
    text
}
