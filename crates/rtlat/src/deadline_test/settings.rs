//! The validated settings of one `rtlat deadline_test` run.

use rtlat_core::Nanos;

/// Everything `rtlat deadline_test` needs to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `-t`: deadline threads.
    pub threads: usize,
    /// `-i`: the first thread's deadline and period, µs.
    pub interval_us: u64,
    /// `-s`: how much longer each next thread's is, µs.
    pub step_us: u64,
    /// Each thread's runtime, % of its period (from `-p`, the CPUs and
    /// the threads, at most 90).
    pub percent: u64,
    /// `-P`: how much of its runtime a job works, %.
    pub run_percent: u64,
    /// The CPUs the threads share.
    pub nr_cpus: usize,
    /// `-r`: the spinner's SCHED_FIFO priority.
    pub rt_prio: Option<u8>,
    /// How long the threads work (C: 10 s).
    pub duration: Nanos,
}
