//! What each of rtlat's tools is for, in one line: the one place that
//! `rtlat --help` lists and that each tool's own `--help` starts with
//! (`rtlat TOOL: SUMMARY`), so that the two cannot drift apart. Here rather
//! than in `rtlat` because the `rtlat-plot` binary's help needs its line
//! too.

/// Each tool's subcommand name and its one-line summary, in the order
/// `rtlat --help` lists them. A summary fits the top help's column (at
/// most 65 characters).
pub const SUMMARIES: [(&str, &str); 12] = [
    (
        "cyclictest",
        "measure how late a periodic timer wakes a thread up",
    ),
    (
        "svsematest",
        "hand-off latency between threads through a SysV semaphore",
    ),
    (
        "pmqtest",
        "hand-off latency between threads through a POSIX message queue",
    ),
    (
        "ptsematest",
        "hand-off latency between threads through a futex semaphore",
    ),
    (
        "sigwaittest",
        "hand-off latency between threads through a signal (sigwait)",
    ),
    (
        "signaltest",
        "how long a signal takes to go round a ring of threads",
    ),
    (
        "latency",
        "Xenomai's `latency` test on Linux: timer wake-up latency",
    ),
    (
        "monitor",
        "cyclictest until stopped: Prometheus metrics, checkpoints",
    ),
    (
        "plot",
        "draw latency plots (SVG or PNG) from cyclictest results",
    ),
    ("compare", "compare two runs' latencies"),
    (
        "load",
        "background load until stopped, with the work it did per second",
    ),
    (
        "audit",
        "how fit this machine is for real-time work, and what to use",
    ),
];

/// The summary of the tool named `name` (empty for an unknown name).
pub fn summary(name: &str) -> &'static str {
    SUMMARIES
        .iter()
        .find(|(tool, _)| *tool == name)
        .map_or("", |(_, summary)| summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_summary_fits_the_top_help() {
        for (tool, summary) in SUMMARIES {
            assert!(summary.chars().count() <= 65, "{tool}: {summary}");
            assert_eq!(super::summary(tool), summary);
        }
        assert_eq!(summary("bogus"), "");
    }
}
