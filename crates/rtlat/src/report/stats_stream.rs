//! The `--stats-file` lines: one JSON object per line for each thread and
//! interval of `--stats-interval`, written while the run goes on (JSON
//! Lines, so `tail -f` and `jq` read it as it grows). The line's type,
//! [`StatsLine`], is rtlat-results', which readers (`rtlat plot --kind
//! timeline`) share.
//!
//! ```text
//! {"time":1763776000.5,"elapsed":0.5,"thread":0,"interval":0,"cycles":500,"min":1.234,"avg":2.345,"max":13.456,"p99":3.0,"overruns":0}
//! ```
//!
//! - `time`: wall clock at the interval's end, Unix seconds (ms precision);
//! - `elapsed`: seconds from the start of the run to the interval's end;
//! - `thread`, `interval`: the thread's index and the interval's number,
//!   counted from 0 at the thread's start;
//! - `cycles`, `overruns`: samples taken and periods skipped in it;
//! - `min`, `avg`, `max`: µs with 3 decimals from the ns samples, exact,
//!   `null` for an interval without samples (a thread that did not wake up);
//! - `p99`: the 99th percentile, µs with 3 decimals, `null` without
//!   samples; approximate: `cyclictest::stats_file` says from which samples
//!   it comes; it is kept within the line's `min` and `max`;
//! - `"partial":true` only on a thread's last interval when the run ended
//!   before it did.
//!
//! This module only formats lines; `cyclictest::stats_file` decides when
//! they are written and what time and p99 they carry.

use std::io::{self, Write};

use rtlat_core::IntervalRecord;
use rtlat_core::Nanos;
use rtlat_results::timeline::StatsLine;

use super::json::round_decimals;

/// When an interval ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntervalEnd {
    /// Wall-clock time, nanoseconds since the Unix epoch.
    pub unix_ns: i128,
    /// Time since the run started.
    pub elapsed: Nanos,
}

/// The line of interval `interval` of thread `thread`, ended at `end`,
/// without samples.
fn empty_line(thread: usize, interval: u64, end: IntervalEnd) -> StatsLine {
    StatsLine {
        time: round_decimals(end.unix_ns as f64 / 1e9, 3),
        elapsed: round_decimals(end.elapsed.as_nanos() as f64 / 1e9, 6),
        thread,
        interval,
        cycles: 0,
        min: None,
        avg: None,
        max: None,
        p99: None,
        overruns: 0,
        partial: false,
    }
}

fn write_line(w: &mut impl Write, line: &StatsLine) -> io::Result<()> {
    serde_json::to_writer(&mut *w, line)?;
    w.write_all(b"\n")
}

fn micros(ns: f64) -> f64 {
    round_decimals(ns / 1000.0, 3)
}

/// Writes the line of the sealed interval `record` of thread `thread`;
/// `p99` is the 99th percentile the caller found for it (`None` without
/// a distribution), kept here within the interval's exact minimum and
/// maximum.
pub fn write_interval(
    w: &mut impl Write,
    thread: usize,
    record: &IntervalRecord,
    p99: Option<Nanos>,
    end: IntervalEnd,
) -> io::Result<()> {
    let any = record.cycles > 0;
    let p99 = p99
        .filter(|_| any)
        .map(|p| p.max(record.min).min(record.max));
    write_line(
        w,
        &StatsLine {
            cycles: record.cycles,
            min: any.then(|| micros(record.min.as_nanos() as f64)),
            avg: record.mean_ns().map(micros),
            max: any.then(|| micros(record.max.as_nanos() as f64)),
            p99: p99.map(|p| micros(p.as_nanos() as f64)),
            overruns: record.overruns,
            partial: record.partial,
            ..empty_line(thread, record.index, end)
        },
    )
}

/// Writes the line of interval `index` of thread `thread`, in which the
/// thread took no sample.
pub fn write_empty_interval(
    w: &mut impl Write,
    thread: usize,
    index: u64,
    end: IntervalEnd,
) -> io::Result<()> {
    write_line(w, &empty_line(thread, index, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::render;
    use serde_json::Value;

    fn end(unix_ms: i128, elapsed_ms: i64) -> IntervalEnd {
        IntervalEnd {
            unix_ns: unix_ms * 1_000_000,
            elapsed: Nanos(elapsed_ms * 1_000_000),
        }
    }

    fn record(index: u64, samples_ns: &[i64], overruns: u64, partial: bool) -> IntervalRecord {
        IntervalRecord {
            index,
            cycles: samples_ns.len() as u64,
            min: Nanos(samples_ns.iter().copied().min().unwrap_or(i64::MAX)),
            max: Nanos(samples_ns.iter().copied().max().unwrap_or(i64::MIN)),
            sum_ns: samples_ns.iter().sum(),
            overruns,
            partial,
            // Not part of the line: its times come separately.
            end_ns: 0,
        }
    }

    #[test]
    fn lines() {
        let text = render(|w| {
            write_interval(
                w,
                0,
                &record(0, &[1_234, 13_456, 2_000, 2_001], 0, false),
                Some(Nanos(2_000)),
                end(1_763_776_000_500, 500),
            )?;
            write_empty_interval(w, 1, 3, end(1_763_776_002_000, 2_000))?;
            write_interval(
                w,
                1,
                &record(4, &[-1_500, 7], 2, true),
                Some(Nanos(0)),
                end(1_763_776_002_123, 2_123),
            )?;
            // No distribution: no p99.
            write_interval(
                w,
                1,
                &record(5, &[900], 0, false),
                None,
                end(1_763_776_002_623, 2_623),
            )
        });
        insta::assert_snapshot!(text, @r#"
        {"time":1763776000.5,"elapsed":0.5,"thread":0,"interval":0,"cycles":4,"min":1.234,"avg":4.673,"max":13.456,"p99":2.0,"overruns":0}
        {"time":1763776002.0,"elapsed":2.0,"thread":1,"interval":3,"cycles":0,"min":null,"avg":null,"max":null,"p99":null,"overruns":0}
        {"time":1763776002.123,"elapsed":2.123,"thread":1,"interval":4,"cycles":2,"min":-1.5,"avg":-0.747,"max":0.007,"p99":0.0,"overruns":2,"partial":true}
        {"time":1763776002.623,"elapsed":2.623,"thread":1,"interval":5,"cycles":1,"min":0.9,"avg":0.9,"max":0.9,"p99":null,"overruns":0}
        "#);
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).expect("one JSON object per line");
            assert!(v.is_object());
        }
    }

    #[test]
    fn p99_stays_within_the_intervals_extremes() {
        // An interval's samples shared a p99 with the samples around them
        // (the next interval's first ones): never above its max, nor below
        // its min.
        let p99 = |p99_ns| {
            let text = render(|w| {
                let r = record(0, &[3_000, 5_000], 0, false);
                write_interval(w, 0, &r, Some(Nanos(p99_ns)), end(0, 0))
            });
            let v: Value = serde_json::from_str(text.trim_end()).unwrap();
            v["p99"].as_f64().unwrap()
        };
        assert_eq!(p99(90_000), 5.0);
        assert_eq!(p99(1_000), 3.0);
        assert_eq!(p99(4_000), 4.0);
    }

    #[test]
    fn time_keeps_milliseconds_and_elapsed_microseconds() {
        let at = IntervalEnd {
            unix_ns: 1_763_776_000_123_456_789,
            elapsed: Nanos(10_012_345_678),
        };
        let text = render(|w| write_empty_interval(w, 0, 0, at));
        let v: Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(v["time"], serde_json::json!(1_763_776_000.123));
        assert_eq!(v["elapsed"], serde_json::json!(10.012346));
    }
}
