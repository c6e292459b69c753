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

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::anyhow;
use rtlat_core::config::{CyclicConfig, TimeSourceKind};
use rtlat_core::engine::source::SYNTHETIC_START;
use rtlat_core::engine::{Running, Shared, sys_clock, time};
use rtlat_core::interval::{IntervalReader, IntervalRecord};
use rtlat_core::units::Nanos;

use crate::host::Host;
use crate::report::stats_stream::{IntervalEnd, write_empty_interval, write_interval};
use crate::rtsetup::io_strerror;
use rtlat_args::stdio::tell;

/// How often a real run's intervals are written (the main thread wakes
/// every 10 ms for the live display and writes every fifth time).
pub const DRAIN_PERIOD: std::time::Duration = std::time::Duration::from_millis(50);

/// The open `--stats-file` and each thread's position in its ring.
pub struct StatsFile {
    path: PathBuf,
    out: BufWriter<File>,
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
}

/// How the run's clock maps to the lines' times: one reading of the run's
/// clock with the wall clock at that moment, and the run's start (thread
/// 0's first interval, the common start with `-A`/`--secaligned`).
#[derive(Clone, Copy, Debug)]
struct Timeline {
    /// A moment, ns on the run's clock...
    clock_ns: i64,
    /// ...and the wall clock then, ns since the Unix epoch.
    unix_ns: i128,
    /// The run's start, ns on the run's clock, once thread 0 has begun.
    start_ns: Option<i64>,
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
                })
                .collect(),
            batch: Vec::with_capacity(plan.ring),
            timeline: None,
            last_drain: None,
            error: None,
        })
    }

    /// Sets the time base once the measuring threads have passed their
    /// start barrier (call right after [`rtlat_core::engine::Engine::start`]):
    /// a synthetic clock's origin is the Unix epoch; a real run reads both
    /// clocks now.
    pub fn start(&mut self, running: &Running, host: Host) {
        let clock_ns = if self.synthetic {
            time::to_nanos(&SYNTHETIC_START)
        } else {
            time::to_nanos(&rtlat_sys::clock::now(sys_clock(running.config().clock)))
        };
        self.timeline = Some(Timeline {
            clock_ns,
            unix_ns: host.unix_time_ns(),
            start_ns: None,
        });
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
        if timeline.start_ns.is_none() {
            timeline.start_ns = shared
                .channels
                .first()
                .and_then(|c| c.intervals.as_ref())
                .and_then(|log| log.origin_ns());
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
                let origin = log.origin_ns().unwrap_or(timeline.clock_ns);
                for record in self.batch.iter() {
                    if !cursor.gap_unknown {
                        for index in cursor.next_index..record.index {
                            let end = interval_end(origin, index, self.length);
                            write_empty_interval(&mut self.out, thread, index, timeline.at(end))?;
                        }
                    }
                    write_interval(&mut self.out, thread, record, timeline.at(record.end_ns))?;
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

/// Where interval `index` of `length` ends, ns on the run's clock, for
/// intervals starting at `origin`.
fn interval_end(origin: i64, index: u64, length: Nanos) -> i64 {
    let intervals = i64::try_from(index).unwrap_or(i64::MAX).saturating_add(1);
    origin.saturating_add(intervals.saturating_mul(length.as_nanos()))
}

impl Timeline {
    /// The line times of `clock_ns`, a time on the run's clock.
    fn at(&self, clock_ns: i64) -> IntervalEnd {
        IntervalEnd {
            unix_ns: self.unix_ns + i128::from(clock_ns - self.clock_ns),
            elapsed: Nanos(clock_ns - self.start_ns.unwrap_or(self.clock_ns)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prepared (not started) synthetic engine of one thread whose
    /// interval log keeps `ring` intervals of 1 s, and a stats file on it.
    fn prepared(ring: usize, dir: &Path) -> (rtlat_core::engine::Engine, StatsFile, PathBuf) {
        use rtlat_core::config::{IntervalPlan, SchedPolicy, ThreadPlan};
        let mut config = CyclicConfig::new(vec![ThreadPlan {
            index: 0,
            interval: Nanos::from_micros(1000),
            policy: SchedPolicy::Other,
            priority: 0,
            cpu: None,
        }]);
        config.run.source = TimeSourceKind::Synthetic { seed: 1 };
        config.intervals = Some(IntervalPlan {
            length: Nanos::from_secs(1),
            ring,
        });
        let engine = rtlat_core::engine::Engine::new(config.clone()).unwrap();
        let path = dir.join("s.jsonl");
        let mut file = StatsFile::create(&path, &config).unwrap();
        file.timeline = Some(Timeline {
            clock_ns: 0,
            unix_ns: 0,
            start_ns: None,
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
        use rtlat_core::interval::IntervalWriter;
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

    #[test]
    fn intervals_end_one_length_after_they_start() {
        let half = Nanos(500_000_000);
        assert_eq!(interval_end(7, 0, half), 500_000_007);
        assert_eq!(interval_end(7, 3, half), 2_000_000_007);
        let timeline = Timeline {
            clock_ns: 1_000,
            unix_ns: 5_000_000_000,
            start_ns: Some(800),
        };
        let end = timeline.at(1_500);
        assert_eq!((end.elapsed, end.unix_ns), (Nanos(700), 5_000_000_500));
    }
}
