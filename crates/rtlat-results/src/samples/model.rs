//! The bucketed samples a result is read into, per thread, whatever
//! wrote it: the types alone, which the readers fill (rtlat's and C's
//! `--json` in [`super`], the histogram block in
//! [`crate::histogram_text`]).

use crate::read::Format;

/// Samples from `from` (inclusive) to `to` (exclusive), µs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bucket {
    /// Lower bound, µs.
    pub from: f64,
    /// Upper bound, µs.
    pub to: f64,
    /// Samples in it.
    pub count: u64,
}

/// One measuring thread's samples.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadSamples {
    /// Its index in the run (`T: n`, the JSON key).
    pub index: usize,
    /// The CPU it was pinned to, when it was.
    pub cpu: Option<u32>,
    /// Non-empty buckets, lowest first.
    pub buckets: Vec<Bucket>,
    /// Its smallest latency, µs, when the input says it.
    pub min_us: Option<f64>,
    /// Its largest latency, µs, when the input says it.
    pub max_us: Option<f64>,
    /// Samples beyond the histogram (not in `buckets`).
    pub overflows: u64,
}

impl ThreadSamples {
    /// `CPU n` when pinned, else `thread n`.
    pub fn name(&self) -> String {
        match self.cpu {
            Some(cpu) => format!("CPU {cpu}"),
            None => format!("thread {}", self.index),
        }
    }

    /// Every sample: those in buckets and the overflows (at most
    /// `u64::MAX`: the readers refuse a file whose counts add up beyond,
    /// [`crate::bounds`]).
    pub fn count(&self) -> u64 {
        self.buckets
            .iter()
            .fold(self.overflows, |total, b| total.saturating_add(b.count))
    }

    /// The value at `fraction` (0 < fraction <= 1) by the nearest-rank
    /// rule, as rtlat's distribution answers it: the lower bound of the
    /// bucket holding the sample of rank ⌈fraction × count⌉, µs, kept
    /// within the known minimum and maximum. The rank of the largest
    /// sample is the maximum; any other rank among the overflows is not
    /// known (`None`), nor is any without samples.
    pub fn value_at(&self, fraction: f64) -> Option<f64> {
        let count = self.count();
        if count == 0 {
            return None;
        }
        let rank = ((fraction * count as f64).ceil() as u64).clamp(1, count);
        let mut seen = 0;
        let found = self.buckets.iter().find(|b| {
            seen += b.count;
            seen >= rank
        });
        let value = match found {
            Some(bucket) => bucket.from,
            None if rank == count => return self.max_us,
            None => return None,
        };
        let value = self.min_us.map_or(value, |min| value.max(min));
        Some(self.max_us.map_or(value, |max| value.min(max)))
    }
}

/// One input, read.
#[derive(Clone, Debug, PartialEq)]
pub struct Samples {
    /// How messages and titles name it: the path as given, `stdin` for `-`.
    pub name: String,
    /// The file name without directory and extension, for legends.
    pub stem: String,
    /// What wrote it.
    pub format: Format,
    /// The tool that wrote it (`cyclictest`, `ptsematest`): the first
    /// word of the command line, without its directory and an `rtlat `
    /// before it.
    pub tool: Option<String>,
    /// `sysinfo.nodename`.
    pub host: Option<String>,
    /// `sysinfo.release`.
    pub kernel: Option<String>,
    /// From rtlat's `"environment"`, where the result has one: the kernel
    /// release, preemption model and CPU model, in one line
    /// (`kernel 6.1.0-rt, PREEMPT_RT, Intel(R) Xeon(R) E-2278G`).
    pub environment: Option<String>,
    /// `start_time`.
    pub date: Option<String>,
    /// `cmdline:`.
    pub cmdline: Option<String>,
    /// The threads with at least one sample in a bucket, by index.
    pub threads: Vec<ThreadSamples>,
}

impl Samples {
    /// Nothing yet, written by `format`.
    pub(crate) fn empty(format: Format) -> Samples {
        Samples {
            name: String::new(),
            stem: String::new(),
            format,
            tool: None,
            host: None,
            kernel: None,
            environment: None,
            date: None,
            cmdline: None,
            threads: Vec::new(),
        }
    }
}

/// `1 overflow`, `2 overflows`.
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
