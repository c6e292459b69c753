//! `rtlat queuelat`'s engine: rt-tests' queuelat model of a DPDK-like
//! packet queue. A block of work is a copy of `n` bytes, timed with the
//! counter oslat reads ([`rtlat_sys::counter`]); packets arrive while it
//! runs (`delta_ns * mpps / 1000`) and a fixed number drain per block. The
//! copy size is calibrated first so that the most frequent block time is
//! about half the latency allowed.
//!
//! The arithmetic is C's, in single precision where C's is `float`, so the
//! figures printed (queue lengths, drain counts, fill rates) are the ones C
//! prints for the same inputs. The measured loop allocates nothing and
//! makes no system call (a `trace_marker` write only when asked for).

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

use rtlat_sys::tracefs::TraceControl;

/// Width of a histogram bucket, in nanoseconds.
pub const BUCKET_NS: u64 = 100;
/// Where the last (outlier) bucket starts, in nanoseconds.
pub const LAST_NS: u64 = 70_000;
/// Buckets below the outlier bucket.
pub const BUCKETS: usize = (LAST_NS / BUCKET_NS) as usize;
/// Copies timed per calibration run.
pub const CALIBRATION_LOOPS: u32 = 50_000;
/// The copy size calibration starts from, and its step, in bytes.
pub const START_N: i64 = 100_000;
const STEP_N: i64 = 1000;

/// Block times in 100 ns buckets, the last one everything from 70000 ns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    /// Counts; index [`BUCKETS`] is the outlier bucket.
    pub counts: [u64; BUCKETS + 1],
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: [0; BUCKETS + 1],
        }
    }
}

impl Histogram {
    /// Counts one block time.
    #[inline(always)]
    pub fn add(&mut self, ns: u64) {
        let i = ((ns / BUCKET_NS) as usize).min(BUCKETS);
        self.counts[i] += 1;
    }

    /// All counts.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The first bucket with the highest count (0 when empty).
    pub fn peak(&self) -> usize {
        let mut best = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            if c > self.counts[best] {
                best = i;
            }
        }
        best
    }

    /// The first non-empty bucket (0 when empty).
    pub fn lowest(&self) -> usize {
        self.counts.iter().position(|&c| c != 0).unwrap_or(0)
    }

    /// The last non-empty bucket (0 when empty).
    pub fn highest(&self) -> usize {
        self.counts.iter().rposition(|&c| c != 0).unwrap_or(0)
    }

    /// C's average: each count weighted by its bucket's upper bound,
    /// integer division; `None` when empty.
    pub fn average(&self) -> Option<u64> {
        let hits = self.total();
        let sum: u64 = self
            .counts
            .iter()
            .enumerate()
            .map(|(i, &c)| (i as u64 * BUCKET_NS + BUCKET_NS - 1) * c)
            .sum();
        sum.checked_div(hits)
    }
}

/// The conversions of a run, as C derives them from `-f` (f32 as in C).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rates {
    /// Nanoseconds per cycle of the `-f` frequency (C's `cycles_to_ns`).
    pub cycles_to_ns: f32,
    /// Nanoseconds per counter tick: `cycles_to_ns` where the counter is
    /// the TSC (C's reading), the counter's stated period elsewhere.
    pub ticks_to_ns: f32,
    /// Million packets per second (`-p`).
    pub mpps: f32,
}

impl Rates {
    /// `-f` in MHz gives C's GHz figure and `cycles_to_ns`; `stated_hz` is
    /// the counter's own frequency where the architecture states it.
    pub fn new(freq_mhz: f64, mpps: f32, stated_hz: Option<u64>) -> (Rates, f32) {
        let ghz = (freq_mhz / 1000.0) as f32;
        let cycles_to_ns = 1.0 / ghz;
        let ticks_to_ns = match stated_hz {
            Some(hz) => (1e9 / hz as f64) as f32,
            None => cycles_to_ns,
        };
        (
            Rates {
                cycles_to_ns,
                ticks_to_ns,
                mpps,
            },
            ghz,
        )
    }

    /// Packets that fit in the latency allowed (C's `max_queue_len`).
    pub fn max_queue_len(&self, max_latency_ns: i32, cycles_per_packet: i32) -> i32 {
        (max_latency_ns as f32 / (cycles_per_packet as f32 * self.cycles_to_ns)) as i32
    }

    /// Packets arriving in `ns` nanoseconds (C's fill computation).
    #[inline(always)]
    pub fn fill(&self, ns: u64) -> i64 {
        (ns as f32 * self.mpps * 1_000_000.0 / 1_000_000_000.0) as i64
    }

    #[inline(always)]
    fn ticks_ns(&self, ticks: u64) -> u64 {
        (ticks as f32 * self.ticks_to_ns) as u64
    }
}

/// Two copy buffers of one size, allocated before any timed copy.
#[derive(Debug)]
pub struct Buffers {
    src: Vec<u8>,
    dest: Vec<u8>,
}

impl Buffers {
    /// Zeroed buffers of `n` bytes, both touched once.
    pub fn new(n: usize) -> Buffers {
        let src = vec![0u8; n];
        let mut dest = vec![0u8; n];
        dest.copy_from_slice(&src);
        Buffers { src, dest }
    }

    /// One timed block: the copy between two counter reads; in ticks.
    #[inline(always)]
    fn timed_copy(&mut self) -> u64 {
        let before = rtlat_sys::counter::read();
        self.dest.copy_from_slice(std::hint::black_box(&self.src));
        std::hint::black_box(&mut self.dest);
        let after = rtlat_sys::counter::read();
        after.wrapping_sub(before)
    }
}

/// One calibration run: [`CALIBRATION_LOOPS`] timed copies of `n` bytes
/// into `hist` (cleared first). Returns false if `stop` was raised.
pub fn calibration_run(n: usize, rates: &Rates, hist: &mut Histogram, stop: &AtomicBool) -> bool {
    *hist = Histogram::default();
    let mut buffers = Buffers::new(n);
    for _ in 0..CALIBRATION_LOOPS {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let ns = rates.ticks_ns(buffers.timed_copy());
        hist.add(ns);
    }
    true
}

/// How calibration ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Calibration {
    /// The copy size whose most frequent time is within 200 ns of half
    /// the latency allowed.
    Found(usize),
    /// A stop signal or the timeout came first.
    Stopped,
    /// Even the smallest step (1000 bytes) takes longer than half the
    /// latency allowed: C would go on to a negative size and fail.
    TooSlow,
}

/// C's search: from 100000 bytes, runs of 50000 copies until the peak
/// bucket is within 200 ns of `max_latency_ns / 2`, the size moving by
/// [`next_size`]. `hist` holds the last run's histogram after.
pub fn calibrate(
    max_latency_ns: i32,
    rates: &Rates,
    hist: &mut Histogram,
    stop: &AtomicBool,
) -> Calibration {
    let target = i64::from(max_latency_ns / 2);
    let mut n = START_N;
    loop {
        if n < 1 {
            return Calibration::TooSlow;
        }
        if !calibration_run(n as usize, rates, hist, stop) {
            return Calibration::Stopped;
        }
        let time = hist.peak() as i64 * BUCKET_NS as i64;
        let delta = target - time;
        if delta.abs() <= 2 * BUCKET_NS as i64 {
            return Calibration::Found(n as usize);
        }
        n = next_size(n, time, target);
    }
}

/// The next copy size to try: C's 1000-byte step when the peak is within
/// 1 us of the target; farther off, a jump in proportion (copy time grows
/// about linearly with size), rounded to C's step, so that a 20 us target
/// is found in a few runs instead of C's ~300 (tens of seconds).
pub fn next_size(n: i64, time: i64, target: i64) -> i64 {
    let delta = target - time;
    if delta.abs() <= 10 * BUCKET_NS as i64 {
        return if delta > 0 { n + STEP_N } else { n - STEP_N };
    }
    let scaled = if time == 0 {
        n.saturating_mul(2)
    } else {
        (n as i128 * target as i128 / time as i128).min(i64::MAX as i128 / 2) as i64
    };
    let rounded = (scaled + STEP_N / 2) / STEP_N * STEP_N;
    // Always move, towards the target.
    if delta > 0 {
        rounded.max(n + STEP_N)
    } else {
        rounded.min(n - STEP_N)
    }
}

/// C's drain count: the first bucket past the peak holding fewer than a
/// 40th of the samples, its upper bound in packets of
/// `cycles_per_packet`. `None` when no bucket qualifies.
pub fn drain_per_block(hist: &Histogram, rates: &Rates, cycles_per_packet: i32) -> Option<i64> {
    let limit = hist.total() / 40;
    let bucket = (hist.peak() + 1..=BUCKETS).find(|&i| hist.counts[i] < limit)?;
    let time = bucket as u64 * BUCKET_NS + BUCKET_NS - 1;
    Some((time as f32 / (cycles_per_packet as f32 * rates.cycles_to_ns)) as i64)
}

/// What the queue loop is given.
#[derive(Debug)]
pub struct QueueConfig<'a> {
    /// The calibrated copy size.
    pub n: usize,
    /// Packets drained per block.
    pub drain: i64,
    /// Longest queue allowed.
    pub max_queue_len: i32,
    /// Conversions.
    pub rates: Rates,
    /// `-q`: marker lines for queues longer than this, when `trace` is set.
    pub min_queue_to_trace: i64,
    /// The opened `trace_marker`, when markers were asked for.
    pub trace: Option<&'a TraceControl>,
}

/// How the queue loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueEnd {
    /// The queue grew past the maximum: its length then.
    Exceeded(i64),
    /// Stopped by a signal or the timeout.
    Stopped,
}

/// The queue loop: timed copies, the queue filled by the time each took
/// and drained by `drain`, until the queue exceeds the maximum or `stop`
/// is raised. `hist` (cleared first) gets every block time.
pub fn queue_loop(config: &QueueConfig, hist: &mut Histogram, stop: &AtomicBool) -> QueueEnd {
    *hist = Histogram::default();
    let mut buffers = Buffers::new(config.n);
    let mut queue: i64 = 0;
    let mut line = [0u8; 160];
    loop {
        if stop.load(Ordering::Relaxed) {
            return QueueEnd::Stopped;
        }
        let ns = config.rates.ticks_ns(buffers.timed_copy());
        hist.add(ns);
        let fill = config.rates.fill(ns);
        queue = (queue + fill - config.drain).max(0);
        if let Some(trace) = config.trace
            && queue > config.min_queue_to_trace
        {
            let mut cursor = &mut line[..];
            let _ = writeln!(
                cursor,
                "memmove block queue_size={queue} queue_dec={} queue_inc={fill} delta={ns} ns",
                config.drain
            );
            let left = cursor.len();
            let _ = trace.write_marker(&line[..line.len() - left]);
        }
        if queue > i64::from(config.max_queue_len) {
            if let Some(trace) = config.trace {
                let mut cursor = &mut line[..];
                let _ = writeln!(
                    cursor,
                    "queue length exceeded: queue_size={queue} max_queue_len={}",
                    config.max_queue_len
                );
                let left = cursor.len();
                let _ = trace.write_marker(&line[..line.len() - left]);
            }
            return QueueEnd::Exceeded(queue);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_cs() {
        let (r, ghz) = Rates::new(2100.0, 3.0, None);
        assert_eq!(
            format!("{:.6} {:.6}", ghz, r.cycles_to_ns),
            "2.100000 0.476191"
        );
        assert_eq!(r.max_queue_len(20000, 300), 140);
        assert_eq!(r.max_queue_len(2000, 300), 14);
        assert_eq!(r.fill(1000), 3);
    }

    #[test]
    fn histogram_figures() {
        let mut h = Histogram::default();
        for ns in [5, 50, 150, 80_000] {
            h.add(ns);
        }
        assert_eq!((h.lowest(), h.highest(), h.peak()), (0, BUCKETS, 0));
        assert_eq!(h.average(), Some((99 * 2 + 199 + 70_099) / 4));
        // Peak 0 (2 of 4): the next bucket holding fewer than 4/40 = 0 is none.
        let r = Rates::new(1000.0, 1.0, None).0;
        assert_eq!(drain_per_block(&h, &r, 1), None);
        let mut h = Histogram::default();
        for _ in 0..100 {
            h.add(10);
        }
        assert_eq!(drain_per_block(&h, &r, 1), Some(199));
    }

    #[test]
    fn sizes_step_near_the_target_and_jump_far_from_it() {
        assert_eq!(next_size(100_000, 9_500, 10_000), 101_000);
        assert_eq!(next_size(100_000, 10_600, 10_000), 99_000);
        assert_eq!(next_size(100_000, 2_700, 10_000), 370_000);
        assert_eq!(next_size(100_000, 2_700, 200), 7_000);
        assert_eq!(next_size(100_000, 0, 10_000), 200_000);
        assert_eq!(next_size(1_000, 5_000, 200), 0);
    }

    #[test]
    fn a_stop_ends_the_loops() {
        let stop = AtomicBool::new(true);
        let r = Rates::new(1000.0, 1.0, None).0;
        let mut h = Histogram::default();
        assert_eq!(calibrate(1000, &r, &mut h, &stop), Calibration::Stopped);
        let config = QueueConfig {
            n: 10,
            drain: 1,
            max_queue_len: 10,
            rates: r,
            min_queue_to_trace: 0,
            trace: None,
        };
        assert_eq!(queue_loop(&config, &mut h, &stop), QueueEnd::Stopped);
    }

    #[test]
    fn a_queue_that_never_drains_exceeds() {
        let stop = AtomicBool::new(false);
        let r = Rates::new(1000.0, 1000.0, None).0;
        let mut h = Histogram::default();
        let config = QueueConfig {
            n: 100_000,
            drain: 0,
            max_queue_len: 10,
            rates: r,
            min_queue_to_trace: 0,
            trace: None,
        };
        assert!(matches!(queue_loop(&config, &mut h, &stop), QueueEnd::Exceeded(q) if q > 10));
    }
}
