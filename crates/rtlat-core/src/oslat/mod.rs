//! `rtlat oslat`'s engine: busy loops on chosen CPUs reading a fast
//! counter ([`rtlat_sys::counter`]) and counting the gaps between two
//! consecutive reads, as rt-tests' oslat 2.4 does.
//!
//! A run is two phases, each with its own threads (as C): a one-second
//! pre-heat, whose figures only give `--bias` its minimum, then the
//! measurement. Each thread pins itself, takes SCHED_FIFO if asked,
//! measures its counter's frequency (as C: until two one-million-tick
//! measurements agree within 0.1 %), allocates everything its loop
//! touches, waits until every thread is ready, then loops until the main
//! thread says stop.
//!
//! The loop ([`hot`]) follows the house rules: no allocation, no lock, no
//! system call (the counter is an instruction, or the vDSO's clock). Its
//! common case is cheaper than C's: a gap shorter than the fast limit
//! (at most [`FINE_TICKS`] ticks, less than the first overflow and the
//! `-T` threshold) is counted in a table indexed by the gap in ticks, one
//! increment and no division; the C buckets are made from that table
//! after the loop. Any other gap takes the slow path, which does what C's
//! `insert_bucket` does (bias, overflow excess, `-T`), and records it in
//! a full distribution, so that the extended figures are exact to the
//! tick below the fast limit and to the microsecond above it.

pub mod hot;
mod threads;

pub use hot::{FINE_TICKS, LoopState, Trigger};
pub use threads::{OslatError, OslatRun, PhaseOutcome, Stop, run_phase};

use crate::Nanos;

/// What the threads do between two counter reads (`-w`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Nothing (`-w no`, the default).
    None,
    /// Copy a buffer of `-m` bytes into another (`-w memmove`).
    Memmove,
}

impl Workload {
    /// Its name, as `-w` takes it and the header shows it.
    pub fn name(self) -> &'static str {
        match self {
            Workload::None => "no",
            Workload::Memmove => "memmove",
        }
    }
}

/// How a gap becomes C's latency figure and bucket: the unit (µs, or ns
/// with a `-W` width that is not a whole µs), the bucket width in that
/// unit, and the rounding of the release being imitated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    /// 1 (figures in µs) or 1000 (in ns: C's `unit_per_us`).
    pub unit_per_us: u64,
    /// A bucket's width in the unit (`-W`; 1 µs by default).
    pub width: u64,
    /// The release's rounding of a gap.
    pub rule: LatencyRule,
}

/// How each release turns a gap of ticks into its latency figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatencyRule {
    /// 2.4: the whole units below the gap, plus one (`index + 1`); the
    /// bucket is the whole units less the bias, at least 0.
    NextUnit,
    /// 2.5 and 2.6: the gap rounded up to the unit; the bucket from the
    /// figure less the bias (a zero made 1 when there is a bias).
    RoundUp,
    /// From 2.7: the gap truncated to the unit; buckets as 2.5's.
    Truncate,
}

impl Scale {
    /// 2.4's: 1 µs buckets.
    pub const DEFAULT: Scale = Scale {
        unit_per_us: 1,
        width: 1,
        rule: LatencyRule::NextUnit,
    };

    /// The decimals of the figures and labels: 3 in ns, else 0.
    pub fn precision(self) -> usize {
        if self.unit_per_us == 1 { 0 } else { 3 }
    }

    /// A gap of `ticks` at `mhz` ticks per µs, in the unit.
    #[inline]
    pub fn latency(self, ticks: u64, mhz: u64) -> u64 {
        let scaled = u128::from(ticks) * u128::from(self.unit_per_us);
        let mhz = u128::from(mhz.max(1));
        let lat = match self.rule {
            LatencyRule::NextUnit => scaled / mhz + 1,
            LatencyRule::RoundUp => scaled.div_ceil(mhz),
            LatencyRule::Truncate => scaled / mhz,
        };
        lat.min(u128::from(u64::MAX)) as u64
    }

    /// The bucket (unclamped) of a latency `lat` after the bias `bias`.
    /// From 2.5, C's unsigned subtraction wraps a latency below the bias
    /// round to a huge one; rtlat counts it as 2.5's smallest, 1.
    #[inline]
    pub fn bucket(self, lat: u64, bias: u64) -> u64 {
        let width = self.width.max(1);
        match self.rule {
            LatencyRule::NextUnit => (lat - 1).saturating_sub(bias) / width,
            LatencyRule::RoundUp | LatencyRule::Truncate => {
                let lat = if bias > 0 {
                    lat.saturating_sub(bias).max(1)
                } else {
                    lat
                };
                lat / width
            }
        }
    }

    /// Bucket `j`'s label, in µs: `(bias + (j + 1) * width) / unit`.
    pub fn label(self, bias: u64, j: usize) -> f64 {
        (bias as f64 + (j as f64 + 1.0) * self.width as f64) / self.unit_per_us as f64
    }

    /// A figure in the unit as C prints it (`%.*f` of µs).
    pub fn text(self, lat: u64) -> String {
        format!(
            "{:.*}",
            self.precision(),
            lat as f64 / self.unit_per_us as f64
        )
    }

    /// A bucket's label as the text (`%03.*f`) and the JSON (`%.*f`)
    /// write it.
    pub fn label_text(self, bias: u64, j: usize, zero_pad: bool) -> String {
        let v = self.label(bias, j);
        if zero_pad {
            format!("{:03.*}", self.precision(), v)
        } else {
            format!("{:.*}", self.precision(), v)
        }
    }
}

/// The validated configuration of an oslat run's threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OslatConfig {
    /// One measuring thread per CPU, in this order.
    pub cpus: Vec<usize>,
    /// SCHED_FIFO priority (`-f`); 0 for the default policy.
    pub rtprio: u8,
    /// Buckets of the histogram (`-b`), 1 µs each unless `scale` says.
    pub bucket_size: usize,
    /// The unit, bucket width and rounding (`-W`, the dialect).
    pub scale: Scale,
    /// `-w`.
    pub workload: Workload,
    /// `-m`: bytes of each of a thread's two buffers (memmove only).
    pub workload_mem: usize,
    /// `-T`: stop at the first gap of this many µs or more (C's
    /// `index + 1 >= threshold`).
    pub trace_threshold_us: Option<u64>,
    /// How long the measurement runs (`-D`).
    pub duration: Nanos,
}

/// One thread's figures after a phase, as C oslat computes them, plus the
/// extended ones.
#[derive(Clone, Debug)]
pub struct ThreadFigures {
    /// Its CPU.
    pub cpu: usize,
    /// Its kernel thread id.
    pub tid: i32,
    /// The counter's frequency as measured, in Hz.
    pub counter_hz: u64,
    /// The same, truncated to whole MHz: C's ticks per µs.
    pub counter_mhz: u64,
    /// C's buckets (`scale.width` each, labelled from `bias + width`),
    /// the last one with the overflows.
    pub buckets: Vec<u64>,
    /// The overflow excess in bucket widths beyond the last bucket (C's
    /// `overflow_sum`).
    pub overflow_sum: u64,
    /// C's minimum and maximum in the scale's unit, before the bias
    /// (2.4: `gap / MHz + 1` µs).
    pub min_lat: u64,
    /// See `min_lat`.
    pub max_lat: u64,
    /// The scale of the figures and buckets.
    pub scale: Scale,
    /// Gaps counted (loop iterations).
    pub loops: u64,
    /// Counter ticks from the first read to the last.
    pub runtime_ticks: u64,
    /// The smallest and largest gap in ns (from ticks, exact).
    pub min_ns: Option<f64>,
    /// See `min_ns`.
    pub max_ns: Option<f64>,
    /// The gaps below the fast limit: (ns, count), ascending, non-zero.
    pub fine: Vec<(f64, u64)>,
    /// The gaps at or above the fast limit (1 µs buckets to 2 ms).
    pub slow: crate::Distribution,
}

/// The standard percentiles the JSON lists.
pub const PERCENTILES: [(&str, f64); 6] = [
    ("p50", 0.5),
    ("p90", 0.9),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
    ("p99.999", 0.99999),
];

impl ThreadFigures {
    /// C's average: every bucket's count times its label, plus the
    /// overflow excess (this thread's own: C adds thread 0's to every
    /// thread), over the count.
    /// In µs; the bias in the scale's unit. (C 2.5 and later add the
    /// excess in the unit, ns with a fractional `-W`, to µs: rtlat adds
    /// it in µs.)
    pub fn average(&self, bias: u64) -> f64 {
        let mut sum = 0.0;
        let mut count = 0u64;
        for (j, &n) in self.buckets.iter().enumerate() {
            sum += n as f64 * self.scale.label(bias, j);
            count += n;
        }
        sum += self.overflow_sum as f64 * self.scale.width as f64 / self.scale.unit_per_us as f64;
        sum / count as f64
    }

    /// The seconds the loop ran, from the counter (C: a `float`).
    pub fn duration_secs(&self) -> f64 {
        f64::from(self.runtime_ticks as f32 / (self.counter_mhz as f32 * 1e6))
    }

    /// The loop's cost: ns per iteration (one gap), from the counter.
    pub fn ns_per_loop(&self) -> Option<f64> {
        (self.loops > 0 && self.counter_hz > 0)
            .then(|| self.runtime_ticks as f64 * 1e9 / self.counter_hz as f64 / self.loops as f64)
    }

    /// The mean gap in ns.
    pub fn mean_ns(&self) -> Option<f64> {
        self.ns_per_loop()
    }

    /// All the gaps as the house's distribution (1 µs buckets to 2 ms,
    /// log-linear above), with the exact extremes: what `--fail-if`'s
    /// percentiles read.
    pub fn distribution(&self) -> crate::Distribution {
        let mut cells: Vec<(u64, u64)> = Vec::new();
        for &(ns, n) in &self.fine {
            let place = ns as u64 / 1000;
            match cells.last_mut() {
                Some(last) if last.0 == place => last.1 += n,
                _ => cells.push((place, n)),
            }
        }
        let mut d = self.slow.clone();
        let fine = crate::SparseCounts {
            cells,
            ..crate::SparseCounts::default()
        };
        // The fine gaps are below 4096 ticks, far inside the exact range.
        let _ = d.add_sparse(&fine);
        // Whole ns, rounded as the JSON's `min_ns` and `max_ns`.
        d.set_extremes(
            self.min_ns.map(|n| Nanos(n.round() as i64)),
            self.max_ns.map(|n| Nanos(n.round() as i64)),
        );
        d
    }

    /// The gap at `fraction` of the gaps (nearest rank), in ns: exact to
    /// the tick below the fast limit, the lower bound of its 1 µs (or
    /// log-linear) bucket above it, never beyond the extremes.
    pub fn value_at(&self, fraction: f64) -> Option<f64> {
        let count = self.loops;
        if count == 0 {
            return None;
        }
        let rank = ((fraction * count as f64).ceil() as u64).clamp(1, count);
        let mut seen = 0;
        for &(ns, n) in &self.fine {
            seen += n;
            if seen >= rank {
                return Some(ns);
            }
        }
        let rest = rank - seen;
        let mut seen_slow = 0;
        for bucket in self.slow.buckets() {
            seen_slow += bucket.count;
            if seen_slow >= rest {
                let v = bucket.lower.max(0) as f64;
                let lo = self.min_ns.unwrap_or(v);
                let hi = self.max_ns.unwrap_or(v);
                return Some(v.clamp(lo, hi));
            }
        }
        self.max_ns
    }
}
