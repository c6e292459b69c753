//! Hand-built [`RunReport`] fixtures shared by the output-format tests.
//!
//! A thread is described either by its raw samples (in whole units of the
//! run's resolution), from which every figure is computed the way the engine
//! computes it, or by setting the figures directly (to mirror a capture).

use rtlat_core::{ClockInstant, Nanos, Resolution};
use rtlat_core::{ClockKind, SchedPolicy};
use rtlat_core::{CompatStats, EndReason, HistogramData, PreciseStats, RunReport, ThreadReport};

use super::run_clock::Timeline;
use super::{RunMeta, SysInfo};

/// Builder for one [`ThreadReport`].
#[derive(Debug, Clone)]
pub struct ThreadFixture {
    thread: ThreadReport,
}

impl ThreadFixture {
    /// Thread `index` with tid `5000 + index`, SCHED_FIFO priority 80, a
    /// 1000 µs interval, not pinned, no samples and no histogram.
    pub fn new(index: usize) -> ThreadFixture {
        ThreadFixture {
            thread: ThreadReport {
                index,
                tid: 5000 + index as i32,
                policy: SchedPolicy::Fifo,
                priority: 80,
                interval: Nanos::from_micros(1000),
                cpu: None,
                node: None,
                smi_count: None,
                compat: CompatStats::default(),
                precise: PreciseStats::default(),
                max_at: None,
                histogram: None,
                signed_histogram: None,
                distribution: None,
                phases: Vec::new(),
                error: None,
                disturbances: None,
                wakeup_latencies: None,
            },
        }
    }

    /// Sets the kernel thread id.
    pub fn tid(mut self, tid: i32) -> ThreadFixture {
        self.thread.tid = tid;
        self
    }

    /// Sets the real-time priority.
    pub fn priority(mut self, priority: u8) -> ThreadFixture {
        self.thread.priority = priority;
        self
    }

    /// Sets the interval in nanoseconds.
    pub fn interval(mut self, interval: Nanos) -> ThreadFixture {
        self.thread.interval = interval;
        self
    }

    /// Pins the thread to `cpu` on NUMA `node`.
    pub fn pinned(mut self, cpu: usize, node: u32) -> ThreadFixture {
        self.thread.cpu = Some(cpu);
        self.thread.node = Some(node);
        self
    }

    /// Sets the C-compatible figures directly.
    pub fn compat(mut self, compat: CompatStats) -> ThreadFixture {
        self.thread.compat = compat;
        self
    }

    /// Sets the histogram directly.
    pub fn histogram(mut self, histogram: HistogramData) -> ThreadFixture {
        self.thread.histogram = Some(histogram);
        self
    }

    /// An empty histogram of `buckets` buckets (a thread without samples).
    pub fn empty_histogram(self, buckets: usize) -> ThreadFixture {
        self.histogram(HistogramData {
            buckets: vec![0; buckets],
            overflows: 0,
            overflow_cycles: Vec::new(),
        })
    }

    /// Computes every figure from `samples` given in whole units of
    /// `resolution`; each sample's precise value is the unit value plus
    /// `extra_ns` (sub-unit remainder, < 1 unit). With `buckets`, also fills a
    /// histogram of that many buckets, logging at most `buckets` overflow
    /// cycle numbers as the engine does. The time of the maximum is the
    /// deadline of the first largest sample, the first deadline one
    /// interval after 0 on the run's clock.
    pub fn samples(
        mut self,
        samples: &[i64],
        resolution: Resolution,
        extra_ns: i64,
        buckets: Option<usize>,
    ) -> ThreadFixture {
        let mut compat = CompatStats::default();
        let mut precise = PreciseStats {
            overruns: self.thread.precise.overruns,
            ..PreciseStats::default()
        };
        let mut max_at = None;
        let mut hist = buckets.map(|n| HistogramData {
            buckets: vec![0; n],
            overflows: 0,
            overflow_cycles: Vec::new(),
        });
        for (cycle, &v) in samples.iter().enumerate() {
            if compat.cycles == 0 || v < compat.min {
                compat.min = v;
            }
            if compat.cycles == 0 || v > compat.max {
                compat.max = v;
            }
            compat.act = v;
            compat.sum += v;
            compat.cycles += 1;

            let ns = Nanos(v * resolution.nanos_per_unit() + extra_ns);
            if precise.max.is_none_or(|m| ns > m) {
                let deadline = (cycle as i64 + 1) * self.thread.interval.as_nanos();
                max_at = Some(ClockInstant(deadline));
            }
            precise.min = Some(precise.min.map_or(ns, |m| m.min(ns)));
            precise.max = Some(precise.max.map_or(ns, |m| m.max(ns)));
            precise.sum_ns += i128::from(ns.as_nanos());
            let square = u128::from(ns.as_nanos().unsigned_abs()).pow(2);
            precise.sum_sq_ns = Some(precise.sum_sq_ns.unwrap_or(0) + square);

            if let Some(h) = hist.as_mut() {
                match usize::try_from(v).ok().filter(|&b| b < h.buckets.len()) {
                    Some(b) => h.buckets[b] += 1,
                    None => {
                        h.overflows += 1;
                        if h.overflow_cycles.len() < h.buckets.len() {
                            h.overflow_cycles.push(cycle as u64);
                        }
                    }
                }
            }
        }
        self.thread.compat = compat;
        self.thread.precise = precise;
        self.thread.max_at = max_at;
        self.thread.histogram = hist;
        self
    }

    /// Sets the overrun count.
    pub fn overruns(mut self, overruns: u64) -> ThreadFixture {
        self.thread.precise.overruns = overruns;
        self
    }

    /// Sets the full distribution to that of `samples_ns` (1 µs exact
    /// buckets, the default plan).
    pub fn distribution(mut self, samples_ns: &[i64]) -> ThreadFixture {
        use rtlat_core::{DistributionPlan, LatencyHistogram};
        let plan = DistributionPlan::new(1000, Nanos::ZERO).expect("the default plan");
        let histogram = LatencyHistogram::new(plan).expect("memory");
        for &ns in samples_ns {
            histogram.record(ns);
        }
        self.thread.distribution = Some(histogram.snapshot(
            samples_ns.iter().min().map(|&v| Nanos(v)),
            samples_ns.iter().max().map(|&v| Nanos(v)),
        ));
        self
    }

    /// The finished thread report.
    pub fn build(self) -> ThreadReport {
        self.thread
    }
}

/// A finished run on CLOCK_MONOTONIC that ended on its loop count.
pub fn run(resolution: Resolution, threads: Vec<ThreadReport>) -> RunReport {
    RunReport {
        resolution,
        clock: ClockKind::Monotonic,
        end: EndReason::Loops,
        threads,
        break_info: None,
        spikes: None,
    }
}

/// Pinned run metadata with the given command line.
pub fn meta(cmdline: &str) -> RunMeta {
    RunMeta {
        cmdline: cmdline.to_owned(),
        start_time: "Sun, 22 Nov 2026 01:44:57 +0000".to_owned(),
        end_time: "Sun, 22 Nov 2026 01:44:58 +0000".to_owned(),
        return_code: 0,
        sysinfo: SysInfo {
            sysname: "Linux".to_owned(),
            nodename: "vm".to_owned(),
            release: "6.18.44-fc-v669".to_owned(),
            version: "#1 SMP PREEMPT_DYNAMIC @0".to_owned(),
            machine: "x86_64".to_owned(),
            realtime: false,
        },
        audit: None,
        blocks: Vec::new(),
        projection: rtlat_stats::projection::Request::default(),
        rt_tests: Default::default(),
    }
}

/// The run's clock of [`run`] against the wall clock: its 0 (the threads'
/// start) at [`meta`]'s start time, Sun, 22 Nov 2026 01:44:57 UTC.
pub fn timeline() -> Timeline {
    Timeline {
        clock: ClockInstant(0),
        unix_ns: 1_795_311_897_000_000_000,
        start: None,
    }
}

/// Runs `f` on an in-memory writer and returns what it wrote as text.
pub fn render(f: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut out = Vec::new();
    f(&mut out).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("output is UTF-8")
}
