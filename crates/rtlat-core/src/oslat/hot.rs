//! The busy loop of an oslat thread and the state it writes.
//!
//! Rules: no allocation, no lock, no system call in [`LoopState::run`]
//! (everything is allocated by [`LoopState::new`] before it; the counter
//! is an instruction or the vDSO's clock; the stop flag one relaxed load);
//! the `-T` marker is written on the way out, once.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rtlat_sys::counter;
use rtlat_sys::tracefs::TraceControl;

use super::{Scale, Workload};
use crate::{DistributionPlan, LatencyHistogram, Nanos};

/// Entries of the table of short gaps, indexed by the gap in ticks: a
/// power of two (the index is masked, so no bounds check is needed).
pub const FINE_TICKS: usize = 4096;

/// A gap of `-T`'s threshold or more: on which CPU, how long (C's µs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trigger {
    /// The CPU of the thread that saw it.
    pub cpu: usize,
    /// The gap in the scale's unit, as C prints it (2.4: `gap / MHz + 1`
    /// µs).
    pub lat: u64,
}

/// Everything an oslat thread's loop touches.
pub struct LoopState {
    cpu: usize,
    /// Ticks per µs, truncated (C's `counter_mhz`); at least 1.
    mhz: u64,
    hz: u64,
    /// Gaps below it are counted in `fine` only.
    fast_limit: u64,
    fine: Box<[u64; FINE_TICKS]>,
    buckets: Vec<u64>,
    bias: u64,
    scale: Scale,
    overflow_sum: u64,
    slow_min_lat: u64,
    slow_max_lat: u64,
    slow_min_ticks: u64,
    slow_max_ticks: u64,
    slow_count: u64,
    slow: LatencyHistogram,
    threshold_us: Option<u64>,
    trigger: Option<Trigger>,
    workload: Workload,
    src: Vec<u8>,
    dst: Vec<u8>,
    start: u64,
    stop: u64,
}

impl std::fmt::Debug for LoopState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopState")
            .field("cpu", &self.cpu)
            .field("mhz", &self.mhz)
            .finish_non_exhaustive()
    }
}

impl LoopState {
    /// The state of a loop on `cpu` with a counter of `hz`, `buckets` C
    /// buckets after a bias of `bias` µs, `-T` at `threshold_us`, and
    /// `workload` over two buffers of `workload_mem` bytes.
    pub fn new(
        cpu: usize,
        hz: u64,
        buckets: usize,
        bias: u64,
        threshold_us: Option<u64>,
        workload: Workload,
        workload_mem: usize,
    ) -> LoopState {
        LoopState::scaled(
            cpu,
            hz,
            (buckets, Scale::DEFAULT),
            bias,
            threshold_us,
            workload,
            workload_mem,
        )
    }

    /// [`LoopState::new`] with `buckets` of the given scale (`-W`, the
    /// dialect's rounding); `bias` in the scale's unit.
    pub fn scaled(
        cpu: usize,
        hz: u64,
        (buckets, scale): (usize, Scale),
        bias: u64,
        threshold_us: Option<u64>,
        workload: Workload,
        workload_mem: usize,
    ) -> LoopState {
        // A measured rate (the TSC) is rounded to the nearest MHz: C
        // truncates a noisier measurement (gettimeofday over half a
        // millisecond), which on a 2.1 GHz TSC mostly gives 2100 too. A
        // stated one (cntfrq_el0) is truncated, as C does.
        let mhz = match counter::stated_hz() {
            Some(_) => hz / 1_000_000,
            None => hz.saturating_add(500_000) / 1_000_000,
        }
        .max(1);
        // A gap below `(bucket_size * width - 1) * mhz / unit` ticks
        // never overflows, whatever the rounding (the bias only lowers
        // it); one below `(threshold - 1) * mhz` never reaches -T.
        let span = (buckets as u64)
            .saturating_mul(scale.width)
            .saturating_sub(1);
        let mut fast_limit =
            (FINE_TICKS as u64).min(mhz.saturating_mul(span) / scale.unit_per_us.max(1));
        if let Some(t) = threshold_us {
            fast_limit = fast_limit.min(mhz.saturating_mul(t.saturating_sub(1)));
        }
        let plan = DistributionPlan::new(1_000, Nanos::ZERO).expect("a 1 us plan is valid");
        let (src, dst) = match workload {
            Workload::Memmove => (vec![0u8; workload_mem], vec![0u8; workload_mem]),
            Workload::None => (Vec::new(), Vec::new()),
        };
        LoopState {
            cpu,
            mhz,
            hz,
            fast_limit,
            fine: Box::new([0; FINE_TICKS]),
            buckets: vec![0; buckets.max(1)],
            bias,
            scale,
            overflow_sum: 0,
            slow_min_lat: u64::MAX,
            slow_max_lat: 0,
            slow_min_ticks: u64::MAX,
            slow_max_ticks: 0,
            slow_count: 0,
            slow: LatencyHistogram::new(plan).expect("a 1 us distribution fits in memory"),
            threshold_us,
            trigger: None,
            workload,
            src,
            dst,
            start: 0,
            stop: 0,
        }
    }

    /// Loops until `stop` is set (at least one gap), then, if a gap
    /// reached `-T` and `trace` is given, writes the marker and stops
    /// the kernel trace.
    pub fn run(&mut self, stop: &AtomicBool, trace: Option<&TraceControl>) {
        match self.workload {
            Workload::None => self.spin(stop, |_, _| {}),
            Workload::Memmove => self.spin(stop, |dst, src| dst.copy_from_slice(src)),
        }
        if let (Some(t), Some(trace)) = (self.trigger, trace) {
            let mut line = Line::default();
            let _ = writeln!(
                line,
                "oslat: Trace threshold ({} us) triggered on cpu {} with {} us!",
                self.threshold_us.unwrap_or(0),
                t.cpu,
                Micros(self.scale, t.lat)
            );
            let _ = trace.write_marker(line.bytes());
            let _ = trace.stop_tracing();
        }
    }

    /// The loop itself.
    #[inline(always)]
    fn spin(&mut self, stop: &AtomicBool, work: impl Fn(&mut [u8], &[u8])) {
        let fast_limit = self.fast_limit;
        let mut prev = counter::read();
        self.start = prev;
        loop {
            work(&mut self.dst, &self.src);
            let now = counter::read();
            let gap = now.wrapping_sub(prev);
            prev = now;
            if gap < fast_limit {
                self.fine[(gap as usize) & (FINE_TICKS - 1)] += 1;
            } else if self.slow_path(gap) {
                stop.store(true, Relaxed);
                break;
            }
            if stop.load(Relaxed) {
                break;
            }
        }
        self.stop = prev;
    }

    /// A gap at or above the fast limit: C's `insert_bucket` and the full
    /// distribution. True when it reached `-T`.
    #[cold]
    #[inline(never)]
    fn slow_path(&mut self, gap: u64) -> bool {
        let lat = self.scale.latency(gap, self.mhz);
        self.slow_count += 1;
        self.slow_min_ticks = self.slow_min_ticks.min(gap);
        self.slow_max_ticks = self.slow_max_ticks.max(gap);
        let ns = (u128::from(gap) * 1_000_000_000 / u128::from(self.hz.max(1))) as i64;
        self.slow.record(ns);
        self.slow_max_lat = self.slow_max_lat.max(lat);
        self.slow_min_lat = self.slow_min_lat.min(lat);
        self.bucket(self.scale.bucket(lat, self.bias));
        let unit = self.scale.unit_per_us;
        if self
            .threshold_us
            .is_some_and(|t| lat >= t.saturating_mul(unit))
        {
            self.trigger = Some(Trigger { cpu: self.cpu, lat });
            return true;
        }
        false
    }

    /// Counts a gap in C's bucket `index` (after the bias); beyond the
    /// last one its excess goes to the overflow sum.
    fn bucket(&mut self, index: u64) {
        let last = self.buckets.len() as u64 - 1;
        let place = if index > last {
            let extra = index - self.buckets.len() as u64;
            self.overflow_sum = self.overflow_sum.saturating_add(extra);
            last
        } else {
            index.min(last)
        };
        self.buckets[place as usize] += 1;
    }

    /// The gap that reached `-T`, if one did.
    pub fn trigger(&self) -> Option<Trigger> {
        self.trigger
    }

    /// The figures of the loop that ran (C's buckets completed with the
    /// short gaps).
    pub fn figures(mut self, tid: i32) -> super::ThreadFigures {
        let (mut min_lat, mut max_lat) = (self.slow_min_lat, self.slow_max_lat);
        let (mut min_ticks, mut max_ticks) = (self.slow_min_ticks, self.slow_max_ticks);
        let mut fine = Vec::new();
        let mut loops = self.slow_count;
        let ns_of = |ticks: u64, hz: u64| ticks as f64 * 1e9 / hz.max(1) as f64;
        for ticks in 0..self.fast_limit.min(FINE_TICKS as u64) {
            let n = self.fine[ticks as usize];
            if n == 0 {
                continue;
            }
            let lat = self.scale.latency(ticks, self.mhz);
            min_lat = min_lat.min(lat);
            max_lat = max_lat.max(lat);
            min_ticks = min_ticks.min(ticks);
            max_ticks = max_ticks.max(ticks);
            let place = self.scale.bucket(lat, self.bias) as usize;
            let last = self.buckets.len() - 1;
            self.buckets[place.min(last)] += n;
            loops += n;
            fine.push((ns_of(ticks, self.hz), n));
        }
        let any = loops > 0;
        let min_ns = any.then(|| ns_of(min_ticks, self.hz));
        let max_ns = any.then(|| ns_of(max_ticks, self.hz));
        let slow = self.slow.snapshot(
            min_ns.map(|n| Nanos(n as i64)),
            max_ns.map(|n| Nanos(n as i64)),
        );
        super::ThreadFigures {
            cpu: self.cpu,
            tid,
            counter_hz: self.hz,
            counter_mhz: self.mhz,
            buckets: self.buckets,
            overflow_sum: self.overflow_sum,
            min_lat: if any { min_lat } else { 0 },
            max_lat,
            scale: self.scale,
            loops,
            runtime_ticks: self.stop.wrapping_sub(self.start),
            min_ns,
            max_ns,
            fine,
            slow,
        }
    }
}

/// A figure in the scale's unit as C prints it in µs (`%.*f`), written
/// without allocating.
struct Micros(Scale, u64);

impl std::fmt::Display for Micros {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Micros(scale, lat) = *self;
        if scale.unit_per_us == 1 {
            write!(f, "{lat}")
        } else {
            write!(f, "{}.{:03}", lat / 1000, lat % 1000)
        }
    }
}

/// A line built on the stack (the `-T` marker): no allocation.
struct Line {
    buf: [u8; 160],
    len: usize,
}

impl Default for Line {
    fn default() -> Line {
        Line {
            buf: [0; 160],
            len: 0,
        }
    }
}

impl Line {
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl std::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let room = self.buf.len() - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_gaps_and_overflows_land_in_cs_buckets() {
        // 1000 MHz: 1000 ticks per us; 4 buckets.
        let mut s = LoopState::new(3, 1_000_000_000, 4, 0, None, Workload::None, 0);
        assert_eq!(s.fast_limit, 3000);
        s.fine[10] = 5;
        s.fine[1500] = 2;
        assert!(!s.slow_path(4500)); // index 4: overflow, excess 0
        assert!(!s.slow_path(9000)); // index 9: excess 5
        let f = s.figures(1);
        assert_eq!(f.buckets, [5, 2, 0, 2]);
        assert_eq!(f.overflow_sum, 5);
        assert_eq!((f.min_lat, f.max_lat, f.loops), (1, 10, 9));
        assert_eq!(f.min_ns, Some(10.0));
        assert_eq!(f.max_ns, Some(9000.0));
        let avg = f.average(0);
        assert!((avg - (5.0 + 2.0 * 2.0 + 2.0 * 4.0 + 5.0) / 9.0).abs() < 1e-9);
        assert_eq!(f.value_at(0.5), Some(10.0));
        assert_eq!(f.value_at(1.0), Some(9000.0));
        let d = f.distribution();
        assert_eq!(d.count(), 9);
        assert_eq!(d.value_at(0.5), Some(Nanos(10)));
        assert_eq!(d.value_at(1.0), Some(Nanos(9000)));
    }

    #[test]
    fn the_threshold_lowers_the_fast_limit_and_triggers() {
        let mut s = LoopState::new(0, 2_000_000_000, 32, 0, Some(3), Workload::None, 0);
        assert_eq!(s.fast_limit, 4000);
        assert!(s.slow_path(4000)); // index 2: C's us 3 reaches 3
        assert_eq!(s.trigger(), Some(Trigger { cpu: 0, lat: 3 }));
        let s = LoopState::new(0, 2_000_000_000, 32, 0, Some(1), Workload::None, 0);
        assert_eq!(s.fast_limit, 0);
    }

    #[test]
    fn the_bias_shifts_the_buckets() {
        let mut s = LoopState::new(0, 1_000_000_000, 4, 2, None, Workload::None, 0);
        s.fine[2500] = 1; // index 2 -> 0
        s.fine[500] = 1; // index 0 -> 0
        assert!(!s.slow_path(5500)); // index 5 -> 3
        let f = s.figures(0);
        assert_eq!(f.buckets, [2, 0, 0, 1]);
        assert_eq!((f.min_lat, f.max_lat), (1, 6));
    }

    #[test]
    fn each_release_rounds_a_gap_its_way() {
        use super::super::{LatencyRule, Scale};
        let at = |rule, unit_per_us, width| Scale {
            unit_per_us,
            width,
            rule,
        };
        // 1000 MHz: a gap of 500 ticks is 0.5 us.
        let old = at(LatencyRule::NextUnit, 1, 1);
        let up = at(LatencyRule::RoundUp, 1, 1);
        let down = at(LatencyRule::Truncate, 1, 1);
        assert_eq!(old, Scale::DEFAULT);
        assert_eq!((old.latency(500, 1000), old.bucket(1, 0)), (1, 0));
        assert_eq!((up.latency(500, 1000), up.bucket(1, 0)), (1, 1));
        assert_eq!((down.latency(500, 1000), down.bucket(0, 0)), (0, 0));
        // The bias: 2.4 from the index, 2.5 on from the figure, 0 -> 1.
        assert_eq!(old.bucket(3, 2), 0);
        assert_eq!(down.bucket(2, 2), 1);
        assert_eq!(down.bucket(1, 2), 1);
        // 250 ns buckets, figures in ns.
        let ns = at(LatencyRule::Truncate, 1000, 250);
        assert_eq!(ns.latency(1234, 1000), 1234);
        assert_eq!(ns.bucket(1234, 0), 4);
        assert_eq!(ns.label_text(0, 0, true), "0.250");
        assert_eq!(ns.label_text(0, 7, false), "2.000");
        assert_eq!(ns.text(38), "0.038");
        assert_eq!(old.label_text(2, 0, true), "003");
        assert_eq!(old.label_text(2, 0, false), "3");
        let mut s = LoopState::scaled(0, 1_000_000_000, (8, ns), 0, Some(2), Workload::None, 0);
        assert_eq!(s.fast_limit, 1000);
        assert!(!s.slow_path(1999));
        assert!(s.slow_path(2000));
        assert_eq!(s.trigger(), Some(Trigger { cpu: 0, lat: 2000 }));
        assert_eq!(Micros(ns, 2000).to_string(), "2.000");
        let f = s.figures(0);
        assert_eq!(f.buckets[7], 2);
        assert_eq!(f.overflow_sum, 0);
        assert_eq!((f.min_lat, f.max_lat), (1999, 2000));
    }

    #[test]
    fn a_loop_runs_until_stopped() {
        let stop = AtomicBool::new(false);
        let mut s = LoopState::new(0, 1_000_000_000, 32, 0, None, Workload::Memmove, 64);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(20));
                stop.store(true, Relaxed);
            });
            s.run(&stop, None);
        });
        let f = s.figures(0);
        assert!(f.loops > 10);
        assert_eq!(f.buckets.iter().sum::<u64>(), f.loops);
    }
}
