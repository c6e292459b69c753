//! `--stats-interval SECONDS --stats-file FILE`: the main thread drains each
//! measuring thread's ring of sealed intervals (filled by the engine, see
//! [`rtlat_core::interval`]) and appends one line per thread and interval
//! to FILE, in the format of [`crate::report::stats_stream`].
//!
//! Nothing per interval is kept here: each thread has a reader position and
//! the number of its next interval, and one batch buffer the size of a
//! drain is reused, so a run of days uses what a run of seconds does.
//!
//! Interval `k` of a thread covers `[start + k·L, start + (k+1)·L)` of its
//! deadlines, `start` being the thread's own start; its line carries the
//! time of its end. A number the thread skipped (no sample in that
//! interval) gets a line with `"cycles":0` and null figures, unless the
//! reader lost intervals in the same batch (then it cannot tell an empty
//! interval from a lost one, and writes none). The last interval of a
//! thread, cut short by the end of the run, ends at its last deadline. The
//! engine gives each interval's end on the run's clock; one reading of that
//! clock and of the wall clock at the start maps it to the line's times.
//!
//! A real run is drained while it goes on, and the file flushed after each
//! batch. A synthetic run (`--synthetic`) is written once its threads have
//! stopped, thread after thread, with times counted from the Unix epoch, so
//! that the file is the same every time; its ring holds the whole run.
//!
//! The `p99` of a line is read here, never in the measuring loop, from the
//! thread's full distribution ([`rtlat_core::distribution`]): when a drain
//! finds sealed intervals of a thread, it takes one snapshot of that
//! thread's distribution and subtracts the one taken at the thread's
//! previous such drain ([`Distribution::delta_since`]); the p99 of that
//! difference is the lines'. It is an approximation, on two counts:
//! - the samples are those between two drains, not those between the
//!   interval's exact bounds: the boundary between two intervals' p99 is
//!   the drain that found the first sealed, up to [`DRAIN_PERIOD`] (and
//!   the time a drain takes) after its end, so the first samples of the
//!   next interval count in the earlier one's p99 and not in their own;
//! - the intervals of a thread sealed in one drain (intervals shorter than
//!   [`DRAIN_PERIOD`], a drain late, a synthetic run drained once at its
//!   end) share one p99, that of their samples together.
//!
//! Each line's p99 is then kept within the interval's own exact `min` and
//! `max` (which stay exact), and is otherwise what `--percentiles` would
//! say of those samples: the lower bound of the bucket holding the sample
//! of rank ⌈0.99 × n⌉, 1 µs wide by default. The cost is bounded: one
//! snapshot of a thread's distribution (and one difference) per drain
//! that sealed one of its intervals, and one snapshot per thread kept in
//! between, about 32 KiB each with the default buckets
//! ([`rtlat_core::footprint`] counts them).

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::anyhow;
use rtlat_core::Shared;
use rtlat_core::{ClockInstant, Nanos};
use rtlat_core::{CyclicConfig, TimeSourceKind};
use rtlat_core::{Distribution, LatencyHistogram};
use rtlat_core::{IntervalReader, IntervalRecord};

use crate::report::run_clock::Timeline;
use crate::report::stats_stream::{IntervalEnd, write_empty_interval, write_interval};
use crate::rtsetup::io_strerror;
use rtlat_args::stdio::tell;

/// How often a real run's intervals are written (the main thread wakes
/// every 10 ms for the live display and writes every fifth time).
pub const DRAIN_PERIOD: std::time::Duration = std::time::Duration::from_millis(50);

/// The open `--stats-file` and each thread's position in its ring.
pub struct StatsFile {
    path: PathBuf,
    out: BufWriter<rtlat_args::output_file::Bounded>,
    length: Nanos,
    synthetic: bool,
    threads: Vec<Cursor>,
    /// One drain's records, reused.
    batch: Vec<IntervalRecord>,
    timeline: Option<Timeline>,
    last_drain: Option<Instant>,
    /// The first write error; nothing more is written after it.
    error: Option<io::Error>,
}

/// One thread's reader.
struct Cursor {
    reader: IntervalReader,
    /// The number of the interval the next line is about.
    next_index: u64,
    /// Intervals were lost since the last line: the numbers missing before
    /// the next record may be lost ones, not empty ones.
    gap_unknown: bool,
    /// The thread's distribution at the last drain that sealed one of its
    /// intervals; `None` before that drain (or without a distribution).
    seen: Option<Distribution>,
}

impl StatsFile {
    /// Makes `path` anew and empty before the run starts (a regular file
    /// replaces what was there, a symbolic link included, see
    /// [`rtlat_args::output_file::create_stream`]). A file that cannot be made is
    /// an error naming it and the cause.
    pub fn create(path: &Path, config: &CyclicConfig) -> anyhow::Result<StatsFile> {
        let file = rtlat_args::output_file::create_stream(path).map_err(|e| {
            anyhow!(
                "--stats-file: cannot create '{}': {}",
                path.display(),
                io_strerror(&e)
            )
        })?;
        let plan = config.intervals.ok_or_else(|| {
            anyhow!("--stats-file: the run was prepared without --stats-interval")
        })?;
        Ok(StatsFile {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
            length: plan.length,
            synthetic: matches!(config.run.source, TimeSourceKind::Synthetic { .. }),
            threads: config
                .threads
                .iter()
                .map(|_| Cursor {
                    reader: IntervalReader::new(),
                    next_index: 0,
                    gap_unknown: false,
                    seen: None,
                })
                .collect(),
            batch: Vec::with_capacity(plan.ring),
            timeline: None,
            last_drain: None,
            error: None,
        })
    }

    /// Sets the time base, read once the measuring threads have passed
    /// their start barrier ([`crate::host::Host::timeline`]); the lines'
    /// elapsed times count from thread 0's start, once it has begun (its
    /// first interval: the common start with `-A`/`--secaligned`).
    pub fn start(&mut self, timeline: Timeline) {
        self.timeline = Some(timeline);
    }

    /// During a real run: writes what the threads sealed, at most every
    /// [`DRAIN_PERIOD`]. A synthetic run is written at the end only.
    pub fn drain_if_due(&mut self, shared: &Shared) {
        if self.synthetic || self.last_drain.is_some_and(|t| t.elapsed() < DRAIN_PERIOD) {
            return;
        }
        self.last_drain = Some(Instant::now());
        self.drain(shared);
    }

    /// After the threads have stopped: writes the rest (the last, partial
    /// intervals included) and flushes. Prints one warning if intervals
    /// were overwritten before they could be written. An error names the
    /// file and the cause of the first failed write.
    pub fn finish(mut self, shared: &Shared) -> anyhow::Result<()> {
        self.drain(shared);
        let lost: u64 = self.threads.iter().map(|c| c.reader.lost()).sum();
        if lost > 0 {
            tell!(
                "--stats-file: {lost} intervals were overwritten before they could be \
                 written to '{}'",
                self.path.display()
            );
        }
        match self.error {
            Some(e) => Err(anyhow!(
                "--stats-file: cannot write '{}': {}",
                self.path.display(),
                io_strerror(&e)
            )),
            None => Ok(()),
        }
    }

    /// Writes every interval sealed since the last drain, thread by
    /// thread, then flushes.
    fn drain(&mut self, shared: &Shared) {
        if self.error.is_some() {
            return;
        }
        let Some(timeline) = self.timeline.as_mut() else {
            return;
        };
        if timeline.start.is_none() {
            timeline.start = shared
                .channels
                .first()
                .and_then(|c| c.intervals.as_ref())
                .and_then(|log| log.origin_ns())
                .map(ClockInstant);
        }
        let timeline = *timeline;
        let result = (|| {
            for (thread, (cursor, channel)) in self
                .threads
                .iter_mut()
                .zip(shared.channels.iter())
                .enumerate()
            {
                let Some(log) = channel.intervals.as_ref() else {
                    continue;
                };
                let lost_before = cursor.reader.lost();
                self.batch.clear();
                let batch = &mut self.batch;
                cursor.reader.drain(log, |r| batch.push(r));
                // A loss may sit anywhere in this batch, or after its last
                // record: no empty-interval line until a lossless batch
                // has written a record.
                let lossless = cursor.reader.lost() == lost_before;
                cursor.gap_unknown |= !lossless;
                let p99 = match channel.distribution.as_deref() {
                    Some(histogram) if !self.batch.is_empty() => cursor.p99_since_seen(histogram),
                    _ => None,
                };
                let origin = log.origin_ns().unwrap_or(timeline.clock.as_nanos());
                for record in self.batch.iter() {
                    if !cursor.gap_unknown {
                        for index in cursor.next_index..record.index {
                            let end = interval_end(origin, index, self.length);
                            write_empty_interval(&mut self.out, thread, index, at(&timeline, end))?;
                        }
                    }
                    let end = at(&timeline, record.end_ns);
                    write_interval(&mut self.out, thread, record, p99, end)?;
                    cursor.next_index = record.index + 1;
                    cursor.gap_unknown &= !lossless;
                }
            }
            self.out.flush()
        })();
        if let Err(e) = result {
            self.error = Some(e);
        }
    }
}

impl Cursor {
    /// The p99 of the samples `histogram` (the thread's distribution) counted
    /// since the last call (since the start for the first), which takes a
    /// snapshot of it and keeps it for the next call. `None` without
    /// samples.
    fn p99_since_seen(&mut self, histogram: &LatencyHistogram) -> Option<Nanos> {
        let now = histogram.snapshot(None, None);
        let p99 = match &self.seen {
            Some(seen) => now.delta_since(seen).value_at(0.99),
            None => now.value_at(0.99),
        };
        self.seen = Some(now);
        p99
    }
}

/// Where interval `index` of `length` ends, ns on the run's clock, for
/// intervals starting at `origin`.
fn interval_end(origin: i64, index: u64, length: Nanos) -> i64 {
    let intervals = i64::try_from(index).unwrap_or(i64::MAX).saturating_add(1);
    origin.saturating_add(intervals.saturating_mul(length.as_nanos()))
}

/// The line times of `clock_ns`, a time on the run's clock.
fn at(timeline: &Timeline, clock_ns: i64) -> IntervalEnd {
    let at = ClockInstant(clock_ns);
    IntervalEnd {
        unix_ns: timeline.unix_ns(at),
        elapsed: timeline.elapsed(at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prepared (not started) synthetic engine of one thread whose
    /// interval log keeps `ring` intervals of 1 s, and a stats file on it.
    fn prepared(ring: usize, dir: &Path) -> (rtlat_core::Engine, StatsFile, PathBuf) {
        use rtlat_core::{IntervalPlan, SchedPolicy, ThreadPlan};
        let mut config = CyclicConfig::new(vec![ThreadPlan {
            index: 0,
            interval: Nanos::from_micros(1000),
            policy: SchedPolicy::Other,
            priority: 0,
            cpu: None,
        }]);
        config.run.source = TimeSourceKind::Synthetic { seed: 1 };
        config.run.distribution =
            Some(rtlat_core::DistributionPlan::new(1000, Nanos::ZERO).unwrap());
        config.intervals = Some(IntervalPlan {
            length: Nanos::from_secs(1),
            ring,
        });
        let engine = rtlat_core::Engine::new(config.clone()).unwrap();
        let path = dir.join("s.jsonl");
        let mut file = StatsFile::create(&path, &config).unwrap();
        file.timeline = Some(Timeline {
            clock: ClockInstant(0),
            unix_ns: 0,
            start: None,
        });
        (engine, file, path)
    }

    fn intervals(path: &Path) -> Vec<(u64, u64)> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (
                    v["interval"].as_u64().unwrap(),
                    v["cycles"].as_u64().unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn empty_intervals_get_lines_lost_ones_do_not() {
        use rtlat_core::IntervalWriter;
        let dir = tempfile::tempdir().unwrap();
        let (engine, mut file, path) = prepared(4, dir.path());
        let shared = engine.shared();
        let log = shared.channels[0].intervals.as_ref().unwrap();
        let second = 1_000_000_000;
        let mut w = IntervalWriter::new(log, 0, second);
        // Samples in intervals 0 and 2: 1 is empty.
        w.add(0, 5, 0);
        w.add(2 * second, 5, 0);
        w.add(3 * second, 5, 0);
        file.drain(shared);
        assert_eq!(intervals(&path), [(0, 1), (1, 0), (2, 1)]);
        // Ten more sealed (3, 8, 10, .., 24), with empty intervals between
        // them, and a ring of 4: the reader loses six and cannot tell lost
        // from empty, so it writes only what it got.
        for k in 4..14 {
            w.add(2 * k * second, 5, 0);
        }
        file.drain(shared);
        let got = intervals(&path);
        assert_eq!(got[3..], [(18, 1), (20, 1), (22, 1), (24, 1)]);
        assert_eq!(file.threads[0].reader.lost(), 6);
        // Once a lossless batch has written a record, empty intervals get
        // their lines again.
        w.add(29 * second, 5, 0);
        w.add(31 * second, 5, 0);
        file.drain(shared);
        let got = intervals(&path);
        // 25 may have been lost or empty: no line; 27 and 28 were empty.
        assert_eq!(got[7..], [(26, 1), (27, 0), (28, 0), (29, 1)]);
    }

    /// (interval, p99) of each line, in file order.
    fn p99s(path: &Path) -> Vec<(u64, Option<f64>)> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (v["interval"].as_u64().unwrap(), v["p99"].as_f64())
            })
            .collect()
    }

    /// The p99 of `samples` (ns, below 2 ms) as a line gives it: the sample
    /// of rank ⌈0.99 n⌉ down to its 1 µs bucket, in µs, kept within
    /// `[min, max]` (ns) of the interval.
    fn expected_p99(samples: &[i64], (min, max): (i64, i64)) -> f64 {
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        let rank = (0.99 * sorted.len() as f64).ceil() as usize;
        let floor = sorted[rank - 1] / 1000 * 1000;
        floor.clamp(min, max) as f64 / 1000.0
    }

    #[test]
    fn p99_is_that_of_the_samples_since_the_last_drain_that_sealed() {
        use rtlat_core::IntervalWriter;
        let dir = tempfile::tempdir().unwrap();
        let (engine, mut file, path) = prepared(64, dir.path());
        let shared = engine.shared();
        let channel = &shared.channels[0];
        let log = channel.intervals.as_ref().unwrap();
        let histogram = channel.distribution.as_deref().unwrap();
        let second = 1_000_000_000;
        let mut w = IntervalWriter::new(log, 0, second);
        // What the measuring loop does: each sample into the distribution,
        // then into its interval (which it may seal).
        let mut take = |deadline: i64, ns: i64| {
            histogram.record(ns);
            w.add(deadline, ns, 0);
        };
        // Interval 0: 1.5, 2.5, .. 200.5 µs; the first sample of interval
        // 1 (0.7 µs) seals it before the drain, and counts in its p99.
        let first: Vec<i64> = (1..=200).map(|k| k * 1000 + 500).collect();
        for (i, &ns) in first.iter().enumerate() {
            take(i as i64 * 1_000_000, ns);
        }
        take(second, 700);
        file.drain(shared);
        let both: Vec<i64> = first.iter().copied().chain([700]).collect();
        let p99_0 = expected_p99(&both, (1_500, 200_500));
        assert_eq!(p99_0, 198.0);
        assert_eq!(p99s(&path), [(0, Some(p99_0))]);

        // A drain that seals nothing takes no snapshot: interval 1's
        // samples after the first drain all count in its p99, the 0.7 µs
        // one (before that drain) not.
        let second_half: Vec<i64> = (0..300).map(|k| 5_000 + (k % 100) * 1000).collect();
        for (i, &ns) in second_half[..100].iter().enumerate() {
            take(second + 1_000_000 * (i as i64 + 1), ns);
        }
        file.drain(shared);
        assert_eq!(p99s(&path).len(), 1);
        for (i, &ns) in second_half[100..].iter().enumerate() {
            take(second + 1_000_000 * (i as i64 + 101), ns);
        }
        // A spike seals interval 1 (it counts in 1's p99, not its max).
        take(2 * second, 1_500_000);
        file.drain(shared);
        let with_spike: Vec<i64> = second_half.iter().copied().chain([1_500_000]).collect();
        let p99_1 = expected_p99(&with_spike, (700, 104_000));
        assert_eq!(p99_1, 104.0);
        assert_eq!(p99s(&path)[1], (1, Some(p99_1)));

        // Intervals 2 and 3 sealed in one drain share the p99 of their
        // samples together, each kept within its own min and max.
        let low: Vec<i64> = (0..100).map(|k| 10_000 + k * 10).collect();
        let high: Vec<i64> = (0..100).map(|k| 50_000 + k * 100).collect();
        for (i, &ns) in low.iter().enumerate() {
            take(2 * second + 1 + i as i64, ns);
        }
        for (i, &ns) in high.iter().enumerate() {
            take(3 * second + i as i64, ns);
        }
        take(4 * second, 20_000);
        file.drain(shared);
        let together: Vec<i64> = low.iter().chain(&high).copied().chain([20_000]).collect();
        let shared_p99 = expected_p99(&together, (i64::MIN, i64::MAX));
        assert_eq!(shared_p99, 59.0);
        assert_eq!(
            p99s(&path)[2..],
            [
                (2, Some(expected_p99(&together, (10_000, 1_500_000)))),
                (3, Some(expected_p99(&together, (50_000, 59_900)))),
            ]
        );
        assert_eq!(p99s(&path)[2].1, Some(59.0));
        assert_eq!(p99s(&path)[3].1, Some(59.0));
        // The max stays exact: the spike is interval 2's.
        let text = std::fs::read_to_string(&path).unwrap();
        let third: serde_json::Value = serde_json::from_str(text.lines().nth(2).unwrap()).unwrap();
        assert_eq!(third["max"], serde_json::json!(1500.0));
    }

    #[test]
    fn intervals_end_one_length_after_they_start() {
        let half = Nanos(500_000_000);
        assert_eq!(interval_end(7, 0, half), 500_000_007);
        assert_eq!(interval_end(7, 3, half), 2_000_000_007);
        let timeline = Timeline {
            clock: ClockInstant(1_000),
            unix_ns: 5_000_000_000,
            start: Some(ClockInstant(800)),
        };
        let end = at(&timeline, 1_500);
        assert_eq!((end.elapsed, end.unix_ns), (Nanos(700), 5_000_000_500));
    }
}
