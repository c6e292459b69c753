//! The definitions of `rtlat cyclictest`'s options (and `rtlat
//! monitor`'s, which reads the same command line): each option once, with
//! its spellings, help and what it keeps in [`Raw`], in the order of C's
//! table.

use std::sync::LazyLock;

use super::raw::Raw;
use crate::cli::monitor;
use crate::cli::output_options as outputs;
use crate::cli::shared;
use crate::cli::stop_options as stop;
use crate::cli::verdict_options;
use rtlat_args::getopt::{NO, OPT_CPUS, OPT_NUM, REQ};
use rtlat_args::options::{Flag, Name, name_of};

/// Every option cyclictest 2.4 knows, plus ours and our hidden test seams,
/// in the table's order (C's, then ours as they came): each defined once,
/// with its help and what it keeps in [`Raw`].
pub(super) static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    let mut flags = vec![
        Flag::c(Some('a'), "affinity", OPT_CPUS, "CPUS")
            .help(rtlat_args::lines![
                "pin thread i to the i-th CPU of CPUS, round robin,",
                "and keep the main thread on CPUS too; CPUS is like",
                "0-3,8 or all, !LIST for all but LIST, +LIST to count",
                "within the allowed CPUs. Alone: use the CPUs the",
                "process may use. Without -a or -S threads are",
                "not pinned.",
            ])
            .apply(|r: &mut Raw, v| {
                r.affinity = Some(v.optional()?);
                Ok(())
            }),
        Flag::c(Some('c'), "clock", REQ, "CLOCK")
            .help(rtlat_args::lines![
                "0 or monotonic: CLOCK_MONOTONIC; 1 or realtime:",
                "CLOCK_REALTIME",
            ])
            .default("0")
            .apply(|r: &mut Raw, v| {
                r.clock = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('d'), "distance", REQ, "US")
            .help(rtlat_args::lines![
                "each further thread's period is US microseconds",
                "longer (may be negative); 0 with -h/-H",
            ])
            .default("500")
            .apply(|r: &mut Raw, v| {
                r.distance = Some(v.text()?);
                Ok(())
            }),
        stop::duration(),
        outputs::histogram(
            &outputs::HISTOGRAM_C,
            rtlat_args::lines![
                "print a latency histogram of US one-microsecond",
                "buckets (1 to 1000000) at the end; sets -d to 0.",
                "(-h is the histogram; help is --help or -?)",
            ],
        ),
        outputs::histofall(),
        outputs::histfile(&outputs::HISTFILE_C),
        Flag::c(Some('i'), "interval", REQ, "US")
            .help(rtlat_args::lines![
                "wake-up period of thread 0 in microseconds,",
                "1 to 2147483647",
            ])
            .default("1000")
            .apply(|r: &mut Raw, v| {
                r.interval = Some(v.text()?);
                Ok(())
            }),
        outputs::json(&outputs::JSON),
        stop::loops(rtlat_args::lines![
            "each thread stops after N wake-ups; the run ends",
            "when the first thread is done; 0: no limit",
        ]),
        Flag::c(Some('m'), "mlockall", NO, "")
            .help(rtlat_args::lines!["lock current and future memory in RAM"])
            .apply(|r: &mut Raw, _| {
                r.mlockall = true;
                Ok(())
            }),
        Flag::c(None, "mainaffinity", REQ, "CPUS")
            .help(rtlat_args::lines![
                "move the main thread to CPUS once the measuring",
                "threads run",
            ])
            .apply(|r: &mut Raw, v| {
                r.main_affinity = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('N'), "nsecs", NO, "")
            .help(rtlat_args::lines!["report latencies in nanoseconds"])
            .apply(|r: &mut Raw, _| {
                r.nsecs = true;
                Ok(())
            }),
        Flag::c(Some('p'), "priority", REQ, "N")
            .help(rtlat_args::lines![
                "real-time priority, 0 to 99; a non-zero value makes",
                "the policy fifo unless it is rr",
            ])
            .default("none")
            .apply(|r: &mut Raw, v| {
                r.priority = Some(v.text()?);
                r.priority_sets_fifo = true;
                Ok(())
            }),
        Flag::c(None, "policy", REQ, "NAME")
            .help(rtlat_args::lines![
                "other (also: normal), batch, idle, fifo or rr; fifo",
                "and rr without -p run at priority threads+1",
            ])
            .default("other")
            .apply(|r: &mut Raw, v| {
                r.policy = Some(v.text()?);
                r.priority_sets_fifo = false;
                Ok(())
            }),
        Flag::c(None, "priospread", NO, "")
            .help(rtlat_args::lines![
                "thread i runs at priority N-i instead of all at N"
            ])
            .apply(|r: &mut Raw, _| {
                r.priospread = true;
                Ok(())
            }),
        Flag::c(Some('q'), "quiet", NO, "")
            .help(rtlat_args::lines![
                "no live display, one summary line per thread at",
                "the end (none when a histogram is printed); on a",
                "terminal, a progress line on stderr until then",
            ])
            .apply(|r: &mut Raw, _| {
                r.quiet = true;
                Ok(())
            }),
        Flag::c(Some('r'), "relative", NO, "")
            .help(rtlat_args::lines![
                "sleep one period from the previous wake-up instead",
                "of until an absolute deadline",
            ])
            .apply(|r: &mut Raw, _| {
                r.relative = true;
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
        Flag::c(Some('t'), "threads", OPT_NUM, "N")
            .help(rtlat_args::lines![
                "number of measuring threads; -t alone or -t 0 starts",
                "one per CPU the process may use (or per CPU of -a's",
                "list)",
            ])
            .default("1")
            .apply(|r: &mut Raw, v| {
                r.threads = Some(v.optional()?);
                Ok(())
            }),
        Flag::c(Some('u'), "unbuffered", NO, "")
            .help(rtlat_args::lines!["send every line out at once"])
            .apply(|r: &mut Raw, _| {
                r.unbuffered = true;
                Ok(())
            }),
        Flag::c(Some('v'), "verbose", NO, "")
            .help(rtlat_args::lines![
                "print every sample instead of the live display"
            ])
            .apply(|r: &mut Raw, _| {
                r.verbose = true;
                Ok(())
            }),
        Flag::c(None, "laptop", NO, "")
            .help(rtlat_args::lines![
                "leave /dev/cpu_dma_latency alone (saves battery)"
            ])
            .apply(|r: &mut Raw, _| {
                r.laptop = true;
                Ok(())
            }),
        Flag::c(None, "latency", REQ, "US")
            .help(rtlat_args::lines![
                "value held in /dev/cpu_dma_latency for the run,",
                "0 to 2147483647",
            ])
            .default("0")
            .apply(|r: &mut Raw, v| {
                r.latency = Some(v.text()?);
                Ok(())
            }),
        Flag::c(None, "default-system", NO, "")
            .help(rtlat_args::lines!["leave /dev/cpu_dma_latency alone"])
            .apply(|r: &mut Raw, _| {
                r.default_system = true;
                Ok(())
            }),
        Flag::c(Some('?'), "help", NO, "")
            .help(rtlat_args::lines!["print this help and exit"])
            .shows_help(),
        Flag::c(Some('A'), "aligned", OPT_NUM, "US")
            .help(rtlat_args::lines![
                "start the threads together: thread i's first",
                "deadline is a common time + i*US microseconds",
            ])
            .default("0")
            .apply(|r: &mut Raw, v| {
                r.aligned = Some(v.optional()?);
                Ok(())
            }),
        Flag::c(Some('b'), "breaktrace", REQ, "US")
            .help(rtlat_args::lines![
                "stop the run at the first wake-up later than US",
                "(nanoseconds with -N), 1 to 2147483647, and report",
                "which thread it was",
            ])
            .apply(|r: &mut Raw, v| {
                r.breaktrace = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('F'), "fifo", REQ, "PATH")
            .help(rtlat_args::lines![
                "create a named pipe at PATH that gives the current",
                "status lines to each reader",
            ])
            .apply(|r: &mut Raw, v| {
                r.fifo = Some(v.os());
                Ok(())
            }),
        Flag::c(Some('M'), "refresh_on_max", NO, "")
            .help(rtlat_args::lines![
                "redraw the live display only when a maximum grows"
            ])
            .apply(|r: &mut Raw, _| {
                r.refresh_on_max = true;
                Ok(())
            }),
        Flag::c(Some('o'), "oscope", REQ, "N")
            .help(rtlat_args::lines![
                "with -v: print one line per N samples, the largest",
                "of them, 1 to 2147483647",
            ])
            .default("1")
            .apply(|r: &mut Raw, v| {
                r.oscope = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('R'), "resolution", NO, "")
            .help(rtlat_args::lines![
                "measure how fine the clock reads are before the run"
            ])
            .apply(|r: &mut Raw, _| {
                r.check_resolution = true;
                Ok(())
            }),
        Flag::c(Some('s'), "system", NO, "")
            .help(rtlat_args::lines![
                "sleep with plain nanosleep (always relative)"
            ])
            .apply(|r: &mut Raw, _| {
                r.system = true;
                Ok(())
            }),
        Flag::c(Some('x'), "posix_timers", NO, "")
            .help(rtlat_args::lines![
                "wake up through a per-thread POSIX timer signal;",
                "-s and -x together fall back to clock_nanosleep",
            ])
            .apply(|r: &mut Raw, _| {
                r.posix_timers = true;
                Ok(())
            }),
        Flag::c(None, "secaligned", OPT_NUM, "US")
            .help(rtlat_args::lines![
                "start all threads US microseconds after the next",
                "full second; not together with -A",
            ])
            .default("0")
            .apply(|r: &mut Raw, v| {
                r.secaligned = Some(v.optional()?);
                Ok(())
            }),
        Flag::c(None, "smi", NO, "")
            .help(rtlat_args::lines![
                "count System Management Interrupts on each thread's",
                "CPU (x86, needs -a or -S and access to the MSRs)",
            ])
            .apply(|r: &mut Raw, _| {
                r.smi = true;
                Ok(())
            }),
        Flag::c(None, "spike", REQ, "US")
            .help(rtlat_args::lines![
                "list every wake-up later than US (nanoseconds with",
                "-N) at the end, 1 to 2147483647",
            ])
            .apply(|r: &mut Raw, v| {
                r.spike = Some(v.text()?);
                Ok(())
            }),
        Flag::c(None, "spike-nodes", REQ, "N")
            .help(rtlat_args::lines![
                "keep at most N of those spikes, 1 to 1000000"
            ])
            .default("1024")
            .apply(|r: &mut Raw, v| {
                r.spike_nodes = Some(v.text()?);
                Ok(())
            }),
        Flag::c(None, "tracemark", NO, "")
            .help(rtlat_args::lines![
                "with -b: write a marker to the kernel trace buffer",
                "and stop tracing at the break",
            ])
            .apply(|r: &mut Raw, _| {
                r.tracemark = true;
                Ok(())
            }),
        Flag::c(None, "dbg_cyclictest", NO, "")
            .help(rtlat_args::lines![
                "with -R: print every clock read of that measurement"
            ])
            .apply(|r: &mut Raw, _| {
                r.dbg_cyclictest = true;
                Ok(())
            }),
        // Not in 2.4, not in the help: the deterministic test seam. Being newer,
        // it never changes what a 2.4 abbreviation means (`--sy` is --system).
        shared::synthetic(),
        // The verdict's test seam: disturbances a synthetic run stands in for.
        Flag::new_long("inject-disturbances", REQ, "LIST")
            .hidden()
            .apply(|r: &mut Raw, v| {
                r.inject_disturbances = Some(v.text()?);
                Ok(())
            }),
        // Newer than 2.4 too: `--m`, `--w` keep what they meant in 2.4.
        Flag::new_long("wait", REQ, "METHOD")
            .help(rtlat_args::lines![
                "how the threads wait: abs (clock_nanosleep to an",
                "absolute deadline), rel (-r), nanosleep (-s),",
                "posix-timer (-x), timerfd (a periodic timerfd and",
                "read), std-sleep (std::thread::sleep), busy (spin",
                "on the clock: no system call; use --policy other",
                "or few threads)",
            ])
            .default("abs")
            .apply(|r: &mut Raw, v| {
                r.wait = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("measure", REQ, "METHOD")
            .help(rtlat_args::lines![
                "how the wake-up time is read: clock (the -c clock),",
                "tsc (the x86_64 time-stamp counter, calibrated at",
                "the start), timer (with --wait timerfd: the",
                "timer's own time left)",
            ])
            .default("clock")
            .apply(|r: &mut Raw, v| {
                r.measure = Some(v.text()?);
                Ok(())
            }),
        // No 2.4 name starts with `st`: every 2.4 abbreviation keeps its meaning.
        Flag::new_long("stats-interval", REQ, "TIME")
            .help(rtlat_args::lines![
                "cut the run into intervals of TIME (seconds,",
                "decimals allowed, or with a unit ms, s, m, h or d:",
                "0.5, 100ms, 2s; 10ms to 1d) and write each",
                "thread's cycles, min, avg, max and overruns in",
                "each of them to --stats-file",
            ])
            .apply(|r: &mut Raw, v| {
                r.stats_interval = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("stats-file", REQ, "FILE")
            .help(rtlat_args::lines![
                "where those go: one JSON line per interval and",
                "thread, written while the run goes on",
            ])
            .apply(|r: &mut Raw, v| {
                r.stats_file = Some(v.os());
                Ok(())
            }),
        // New names: a 2.4 prefix (`--b` for --breaktrace, `--h` ambiguous)
        // keeps its meaning; `--bu`, `--pe`, `--hg` reach these.
        Flag::new_long("bucket-width", REQ, "NS")
            .help(rtlat_args::lines![
                "width of the exact buckets, 1 to 1000000 ns [1000];",
                "they cover the larger of -h and 2 ms, then buckets",
                "within 1 % go up to over a minute",
            ])
            .apply(|r: &mut Raw, v| {
                r.bucket_width = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("percentiles", NO, "")
            .help(rtlat_args::lines![
                "print p50 to p99.999 and max of each thread and of",
                "all threads after the summary (also in the JSON);",
                "a value with fewer than 10 samples beyond it is",
                "marked *",
            ])
            .apply(|r: &mut Raw, _| {
                r.percentiles = true;
                Ok(())
            }),
        verdict_options::verdict(),
        // No 2.4 name starts with `no`: `--n` stays --nsecs.
        Flag::new_long("no-progress", NO, "")
            .help(rtlat_args::lines!["with -q: no progress line"])
            .apply(|r: &mut Raw, _| {
                r.no_progress = true;
                Ok(())
            }),
        outputs::hgrm(),
        outputs::hgrm_per_thread(),
    ];
    // `--j` stays --json (2.4), `--f` stays ambiguous: `--fa`, `--ju`.
    flags.extend(shared::gate_and_load_flags());
    // rt-tests 2.8: `--de` stays --default-system (2.4), `--dee` is this.
    flags.push(
        Flag::new_long("deepest-idle-state", REQ, "N")
            .help(rtlat_args::lines![
                "",
                "disable the idle states deeper than N (-1: all) on",
                "the measured CPUs (the -a set, else all) for the",
                "run, instead of setting /dev/cpu_dma_latency; one",
                "such run at a time",
            ])
            .apply(|r: &mut Raw, v| {
                r.deepest_idle_state = Some(v.text()?);
                Ok(())
            }),
    );
    flags.push(crate::cli::rt_tests_options::rt_tests());
    flags.extend(crate::cli::explain::flags());
    flags.extend(monitor::flags());
    flags
});

/// How messages spell the option whose long name is `long`.
pub(super) fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}
