//! What the monitor has seen, second by second: the rolling windows and
//! the timeline, fed from the shared slots by the main thread (never by a
//! measuring thread, never by a scrape).
//!
//! Once a second the main thread gives [`Tracker::tick`] the run's figures
//! so far. From each thread's full distribution it takes the samples since
//! the last tick ([`Distribution::delta_since`], kept sparse), and from its
//! interval log the exact maximum of every second sealed since. Each
//! window keeps about 60 segments of its length (a 1 h window: one per
//! minute), so it covers its length to within a sixtieth, at a memory cost
//! that does not grow with the run. The timeline keeps one entry per
//! thread and 5 minutes (OSADL's period; the shape of a `--stats-file`
//! line, with `p99`), the last day of them: what a checkpoint written
//! every minute can carry (a longer history is Prometheus' job).

use std::collections::VecDeque;

use rtlat_core::Nanos;
use rtlat_core::{Distribution, DistributionPlan, SparseCounts};
use rtlat_core::{IntervalReader, IntervalRecord};

use super::settings::Window;

/// The percentiles every window reports, as (label, fraction).
pub const WINDOW_QUANTILES: [(&str, f64); 3] = [("99", 0.99), ("99.9", 0.999), ("99.99", 0.9999)];
/// Segments per window.
const SEGMENTS: u64 = 60;
/// Length of a timeline entry, seconds.
pub const TIMELINE_PERIOD_S: u64 = 300;
/// Timeline entries kept per thread: a day of them.
pub const TIMELINE_KEPT: usize = 24 * 3600 / TIMELINE_PERIOD_S as usize;

/// One thread's samples over a stretch of time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stretch {
    /// The exact largest sample (from the sealed intervals).
    pub max: Option<Nanos>,
    /// The exact smallest sample.
    pub min: Option<Nanos>,
    /// Sum of the sealed intervals' samples, ns.
    pub sum_ns: i128,
    /// Samples of the sealed intervals.
    pub cycles: u64,
    /// Periods missed.
    pub overruns: u64,
    /// The samples as counted by the distribution since the last tick.
    pub counts: SparseCounts,
}

impl Stretch {
    fn add_record(&mut self, record: &IntervalRecord) {
        self.overruns += record.overruns;
        if record.cycles == 0 {
            return;
        }
        self.cycles += record.cycles;
        self.sum_ns += i128::from(record.sum_ns);
        self.max = Some(self.max.map_or(record.max, |m| m.max(record.max)));
        self.min = Some(self.min.map_or(record.min, |m| m.min(record.min)));
    }

    fn add(&mut self, other: &Stretch) {
        self.overruns += other.overruns;
        self.cycles += other.cycles;
        self.sum_ns += other.sum_ns;
        self.max = self.max.max(other.max);
        self.min = match (self.min, other.min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.counts.add(&other.counts);
    }
}

/// One window's figures for one thread.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowFigures {
    /// The window's label (`1m`).
    pub label: String,
    /// The largest sample in it.
    pub max: Option<Nanos>,
    /// [`WINDOW_QUANTILES`], in order.
    pub quantiles: Vec<Option<Nanos>>,
    /// Samples in it.
    pub samples: u64,
}

/// A window: its segments, oldest first, each a stretch per thread.
#[derive(Debug)]
struct RollingWindow {
    window: Window,
    /// Seconds per segment.
    segment_s: u64,
    /// (first second, per-thread stretches).
    segments: VecDeque<(u64, Vec<Stretch>)>,
}

impl RollingWindow {
    fn new(window: Window) -> RollingWindow {
        let segment_s = (window.length.as_secs() / SEGMENTS).max(1);
        RollingWindow {
            window,
            segment_s,
            segments: VecDeque::new(),
        }
    }

    /// Adds second `second`'s stretches and drops what fell out.
    fn add(&mut self, second: u64, stretches: &[Stretch]) {
        let start = second - second % self.segment_s;
        match self.segments.back_mut() {
            Some((first, threads)) if *first == start => {
                for (kept, new) in threads.iter_mut().zip(stretches) {
                    kept.add(new);
                }
            }
            _ => self.segments.push_back((start, stretches.to_vec())),
        }
        // The window is the seconds (second + 1 - length ..= second]: a
        // segment goes once its last second is before them.
        let length = self.window.length.as_secs().max(1);
        while let Some(&(first, _)) = self.segments.front() {
            if second + 1 >= length + first + self.segment_s {
                self.segments.pop_front();
            } else {
                break;
            }
        }
    }

    /// The window's figures for `thread`, summed in `total` (whose cell
    /// list is reused from one call to the next).
    fn figures(&self, thread: usize, plan: DistributionPlan, total: &mut Stretch) -> WindowFigures {
        let mut cells = std::mem::take(&mut total.counts.cells);
        cells.clear();
        *total = Stretch::default();
        total.counts.cells = cells;
        for (_, threads) in &self.segments {
            if let Some(s) = threads.get(thread) {
                total.add(s);
            }
        }
        WindowFigures {
            label: self.window.label.clone(),
            max: total.max,
            quantiles: WINDOW_QUANTILES
                .iter()
                .map(|&(_, q)| clamp_to(total.counts.value_at(plan, q), total.min, total.max))
                .collect(),
            samples: total.counts.count(),
        }
    }
}

/// A quantile read from buckets, kept within the exact extremes.
fn clamp_to(value: Option<Nanos>, min: Option<Nanos>, max: Option<Nanos>) -> Option<Nanos> {
    let v = value?;
    let v = min.map_or(v, |m| v.max(m));
    Some(max.map_or(v, |m| v.min(m)))
}

/// One timeline entry: a thread's 5 minutes.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineEntry {
    /// Thread number.
    pub thread: usize,
    /// The entry's number since the monitor's first start.
    pub index: u64,
    /// Its end, Unix seconds.
    pub time_s: f64,
    /// Its end, seconds since the run started.
    pub elapsed_s: f64,
    /// Its samples.
    pub stretch_cycles: u64,
    /// Smallest, mean, largest, p99 (µs figures are made when written).
    pub min: Option<Nanos>,
    /// Mean, ns.
    pub mean_ns: Option<f64>,
    /// Largest.
    pub max: Option<Nanos>,
    /// p99 of its samples (bucket resolution).
    pub p99: Option<Nanos>,
    /// Periods missed.
    pub overruns: u64,
    /// Whether it ended before its minute did (the run stopped).
    pub partial: bool,
}

/// Where the run's clock and the wall clock were at the monitor's start.
#[derive(Clone, Copy, Debug)]
pub struct Origin {
    /// Unix seconds at the start.
    pub unix_s: f64,
    /// Seconds of the whole monitored run (earlier segments included) at
    /// the start: 0 unless resumed.
    pub elapsed_s: f64,
}

/// The monitor's memory of the run.
#[derive(Debug)]
pub struct Tracker {
    plan: DistributionPlan,
    readers: Vec<IntervalReader>,
    previous: Vec<Option<Distribution>>,
    windows: Vec<RollingWindow>,
    /// Where a window's segments are summed (its cells kept for the next).
    window_total: Stretch,
    /// The current timeline entry's stretch per thread, and its number.
    minute: (u64, Vec<Stretch>),
    timeline: VecDeque<TimelineEntry>,
    origin: Origin,
    /// Intervals the reader fell too far behind to read.
    pub lost_intervals: u64,
}

impl Tracker {
    /// A tracker of `threads` threads of `plan`'s distributions, with
    /// `windows`, whose timeline goes on from `timeline` (a resumed run's).
    pub fn new(
        plan: DistributionPlan,
        threads: usize,
        windows: &[Window],
        origin: Origin,
        timeline: Vec<TimelineEntry>,
    ) -> Tracker {
        // A resumed timeline's numbers are checked (at most MAX_COUNT);
        // saturating keeps any other from wrapping to 0 all the same.
        let next_minute = timeline
            .iter()
            .map(|e| e.index.saturating_add(1))
            .max()
            .unwrap_or(0);
        Tracker {
            plan,
            readers: (0..threads).map(|_| IntervalReader::new()).collect(),
            previous: vec![None; threads],
            windows: windows.iter().cloned().map(RollingWindow::new).collect(),
            window_total: Stretch::default(),
            minute: (next_minute, vec![Stretch::default(); threads]),
            timeline: timeline.into(),
            origin,
            lost_intervals: 0,
        }
    }

    /// Takes second `second` (since the monitor started): each thread's
    /// distribution now (`distributions`) and its interval log.
    pub fn tick<'a>(
        &mut self,
        second: u64,
        distributions: impl Iterator<Item = Option<&'a Distribution>>,
        logs: impl Iterator<Item = Option<&'a rtlat_core::IntervalLog>>,
    ) {
        let mut stretches = Vec::with_capacity(self.readers.len());
        for ((thread, now), log) in distributions.enumerate().zip(logs) {
            let mut stretch = Stretch::default();
            if let (Some(log), Some(reader)) = (log, self.readers.get_mut(thread)) {
                reader.drain(log, |record| stretch.add_record(&record));
            }
            if let Some(now) = now {
                // The last snapshot is kept in place: no copy is made.
                match &mut self.previous[thread] {
                    Some(before) => {
                        stretch.counts = now.sparse_delta_since(before);
                        before.assign_from(now);
                    }
                    empty => {
                        stretch.counts = now.to_sparse();
                        *empty = Some(now.clone());
                    }
                }
            }
            stretches.push(stretch);
        }
        self.lost_intervals = self.readers.iter().map(IntervalReader::lost).sum();
        for window in &mut self.windows {
            window.add(second, &stretches);
        }
        for (kept, new) in self.minute.1.iter_mut().zip(&stretches) {
            kept.add(new);
        }
        if (second + 1).is_multiple_of(TIMELINE_PERIOD_S) {
            self.close_minute(second + 1, false);
        }
    }

    /// Ends the current minute at `seconds` since the start (`partial`:
    /// before its end, when the run stops).
    pub fn close_minute(&mut self, seconds: u64, partial: bool) {
        let threads = self.minute.1.len();
        let index = self.minute.0;
        let stretches = std::mem::replace(&mut self.minute.1, vec![Stretch::default(); threads]);
        self.minute.0 = self.minute.0.saturating_add(1);
        if partial
            && stretches
                .iter()
                .all(|s| s.counts.count() == 0 && s.cycles == 0)
        {
            return;
        }
        for (thread, s) in stretches.into_iter().enumerate() {
            let p99 = s.counts.value_at(self.plan, 0.99);
            self.timeline.push_back(TimelineEntry {
                thread,
                index,
                time_s: self.origin.unix_s + seconds as f64,
                elapsed_s: self.origin.elapsed_s + seconds as f64,
                stretch_cycles: s.cycles,
                min: s.min,
                mean_ns: (s.cycles > 0).then(|| s.sum_ns as f64 / s.cycles as f64),
                max: s.max,
                p99: clamp_to(p99, s.min, s.max),
                overruns: s.overruns,
                partial,
            });
        }
        while self.timeline.len() > TIMELINE_KEPT * threads.max(1) {
            self.timeline.pop_front();
        }
    }

    /// Every window's figures for `thread`, shortest window first.
    pub fn window_figures(&mut self, thread: usize) -> Vec<WindowFigures> {
        let total = &mut self.window_total;
        self.windows
            .iter()
            .map(|w| w.figures(thread, self.plan, total))
            .collect()
    }

    /// The timeline, oldest first.
    pub fn timeline(&self) -> impl Iterator<Item = &TimelineEntry> + Clone {
        self.timeline.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_core::LatencyHistogram;
    use std::time::Duration;

    fn plan() -> DistributionPlan {
        DistributionPlan::new(1000, Nanos::ZERO).unwrap()
    }

    fn window(label: &str, secs: u64) -> Window {
        Window {
            label: label.into(),
            length: Duration::from_secs(secs),
        }
    }

    fn tracker(windows: &[Window]) -> Tracker {
        let origin = Origin {
            unix_s: 1_700_000_000.0,
            elapsed_s: 0.0,
        };
        Tracker::new(plan(), 1, windows, origin, Vec::new())
    }

    /// Records `samples` (µs) into `h` and ticks second `second`.
    fn second_of(t: &mut Tracker, h: &LatencyHistogram, second: u64, samples_us: &[i64]) {
        for &us in samples_us {
            h.record(us * 1000);
        }
        let now = h.snapshot(None, None);
        t.tick(second, std::iter::once(Some(&now)), std::iter::once(None));
    }

    #[test]
    fn a_window_forgets_what_is_older_than_its_length() {
        let mut t = tracker(&[window("10s", 10), window("1m", 60)]);
        let h = LatencyHistogram::new(plan()).unwrap();
        second_of(&mut t, &h, 0, &[500]);
        for s in 1..10 {
            second_of(&mut t, &h, s, &[10]);
        }
        let [short, long] = &t.window_figures(0)[..] else {
            panic!()
        };
        assert_eq!((short.samples, long.samples), (10, 10));
        assert_eq!(short.quantiles[2], Some(Nanos(500_000)));
        second_of(&mut t, &h, 10, &[10]);
        let figures = t.window_figures(0);
        assert_eq!(figures[0].samples, 10, "second 0 has left the 10 s window");
        assert_eq!(figures[0].quantiles[2], Some(Nanos(10_000)));
        assert_eq!(figures[1].samples, 11);
        assert_eq!(figures[1].quantiles[2], Some(Nanos(500_000)));
    }

    #[test]
    fn a_long_window_keeps_about_sixty_segments() {
        let mut t = tracker(&[window("1h", 3600)]);
        let h = LatencyHistogram::new(plan()).unwrap();
        for s in 0..7200 {
            second_of(&mut t, &h, s, &[1]);
        }
        assert!(t.windows[0].segments.len() <= 61);
        let samples = t.window_figures(0)[0].samples;
        assert!((3540..=3600).contains(&samples), "{samples}");
    }

    #[test]
    fn the_timeline_has_one_entry_per_thread_and_period() {
        let mut t = tracker(&[]);
        let h = LatencyHistogram::new(plan()).unwrap();
        let period = TIMELINE_PERIOD_S;
        for s in 0..period * 2 + period / 2 {
            // Two samples of 900 µs in the second period: below its p99's
            // rank, the rest 3 µs.
            let spike = s == period + 10 || s == period + 20;
            second_of(&mut t, &h, s, &[if spike { 900 } else { 3 }, 3, 3, 3]);
        }
        t.close_minute(period * 2 + period / 2, true);
        let entries: Vec<_> = t.timeline().collect();
        assert_eq!(entries.len(), 3);
        assert_eq!(
            entries.iter().map(|e| e.index).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(entries[0].p99, Some(Nanos(3_000)));
        assert_eq!(entries[1].p99, Some(Nanos(3_000)));
        assert_eq!(entries[1].time_s, 1_700_000_000.0 + (2 * period) as f64);
        assert!(entries[2].partial && !entries[1].partial);
    }
}
