//! Xenomai `latency`'s text output, byte for byte where Xenomai defines
//! it: the `==` banner, the `RTT|` time line and `RTH|` column header, one
//! `RTD|` line per second, the `HSD|` histogram lines, the `HSH|`/`HSS|`
//! statistics and the `RTS|` summary. All figures in microseconds with
//! three decimals, computed from nanoseconds.
//!
//! Where we differ on purpose: samples outside the histogram range are
//! counted on `HSO|` lines (Xenomai adds them to its last bucket), negative
//! bucket numbers appear as such (Xenomai folds them onto positive ones),
//! and the HSS average and deviation come from the exact samples in µs
//! (Xenomai's are bucket numbers).

use std::io::{self, Write};

use rtlat_core::Nanos;
use rtlat_core::{SignedHistogramData, sample_stddev};

use crate::report::clock_time;

/// The name Xenomai gives its test mode 0, the only one on Linux.
pub const TEST_MODE_NAME: &str = "periodic user-mode task";

/// The three `==` lines printed before anything else.
pub fn write_banner(w: &mut impl Write, period: Nanos) -> io::Result<()> {
    write!(
        w,
        "== Sampling period: {} us\n== Test mode: {TEST_MODE_NAME}\n\
         == All results in microseconds\n",
        period.as_micros_truncated()
    )
}

/// `RTT|` with the time since the warm-up, then the `RTH|` column header.
pub fn write_header(
    w: &mut impl Write,
    elapsed_secs: u64,
    period: Nanos,
    priority: u8,
) -> io::Result<()> {
    writeln!(
        w,
        "RTT|  {}  ({TEST_MODE_NAME}, {} us period, priority {priority})",
        clock_time(elapsed_secs),
        period.as_micros_truncated()
    )?;
    writeln!(
        w,
        "RTH|{:>11}|{:>11}|{:>11}|{:>8}|{:>6}|{:>11}|{:>11}",
        "----lat min",
        "----lat avg",
        "----lat max",
        "-overrun",
        "---msw",
        "---lat best",
        "--lat worst"
    )
}

/// One second of figures, as an `RTD|` line shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SecondFigures {
    /// This second's smallest sample.
    pub min: Nanos,
    /// This second's mean, truncated to whole ns (as Xenomai's integer
    /// division does).
    pub avg: Nanos,
    /// This second's largest sample.
    pub max: Nanos,
    /// Overruns since the warm-up.
    pub overruns: u64,
    /// Smallest sample since the warm-up.
    pub best: Nanos,
    /// Largest sample since the warm-up.
    pub worst: Nanos,
}

/// One `RTD|` line. The `msw` column (Xenomai's switches to secondary
/// mode) is always 0: Linux has no such mode.
pub fn write_data_line(w: &mut impl Write, s: &SecondFigures) -> io::Result<()> {
    writeln!(
        w,
        "RTD|{:11.3}|{:11.3}|{:11.3}|{:8}|{:6}|{:11.3}|{:11.3}",
        micros(s.min),
        micros(s.avg),
        micros(s.max),
        s.overruns,
        0,
        micros(s.best),
        micros(s.worst)
    )
}

/// The figures of the `RTS|` summary.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Smallest sample since the warm-up; `None` without samples.
    pub min: Option<Nanos>,
    /// Mean of all samples since the warm-up, in ns.
    pub avg_ns: Option<f64>,
    /// Largest sample since the warm-up.
    pub max: Option<Nanos>,
    /// Overruns since the warm-up.
    pub overruns: u64,
    /// Whole seconds measured after the warm-up.
    pub actual_secs: u64,
    /// Seconds asked for with `-T` (the actual ones without `-T`).
    pub requested_secs: u64,
}

/// The rule line and the `RTS|` summary line.
pub fn write_summary(w: &mut impl Write, s: &Summary) -> io::Result<()> {
    writeln!(
        w,
        "---|-----------|-----------|-----------|--------|------|-------------------------"
    )?;
    writeln!(
        w,
        "RTS|{}|{}|{}|{:8}|{:6}|    {}/{}",
        figure(s.min.map(micros)),
        figure(s.avg_ns.map(|ns| ns / 1000.0)),
        figure(s.max.map(micros)),
        s.overruns,
        0,
        clock_time(s.actual_secs),
        clock_time(s.requested_secs)
    )
}

/// Which of the three histograms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Per-second minima.
    Min,
    /// All samples.
    Avg,
    /// Per-second maxima.
    Max,
}

impl Kind {
    /// Xenomai's order: min, avg, then max "where it is visible without
    /// scrolling".
    pub const ALL: [Kind; 3] = [Kind::Min, Kind::Avg, Kind::Max];

    fn name(self) -> &'static str {
        match self {
            Kind::Min => "min",
            Kind::Avg => "avg",
            Kind::Max => "max",
        }
    }
}

/// Count, sum and sum of squares of a set of ns values, for the HSS line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Moments {
    /// How many values.
    pub count: u64,
    /// Their sum, ns.
    pub sum_ns: i128,
    /// The sum of their squares, ns².
    pub sum_sq_ns: u128,
}

impl Moments {
    /// Adds one value.
    pub fn add(&mut self, ns: i64) {
        self.count += 1;
        self.sum_ns += i128::from(ns);
        self.sum_sq_ns += u128::from(ns.unsigned_abs()).pow(2);
    }
}

/// One histogram with the moments of the values it counts.
#[derive(Clone, Debug, PartialEq)]
pub struct HistogramReport {
    /// The buckets.
    pub data: SignedHistogramData,
    /// The exact values' moments.
    pub moments: Moments,
}

/// With `-h` each histogram's `HSD|` lines (and `HSO|` lines for samples
/// outside its range), then the `HSH|` header and one `HSS|` line per
/// histogram. `histograms` is in [`Kind::ALL`] order.
pub fn write_histograms(
    w: &mut impl Write,
    histograms: &[(Kind, HistogramReport)],
    print_buckets: bool,
) -> io::Result<()> {
    if print_buckets {
        for (kind, h) in histograms {
            writeln!(w, "---|--param|----range-|--samples")?;
            for (number, count) in h.data.numbered().filter(|&(_, c)| c > 0) {
                writeln!(
                    w,
                    "HSD|    {}| {:3} -{:3} | {:8}",
                    kind.name(),
                    number,
                    number + 1,
                    count
                )?;
            }
            let first = h.data.first;
            let end = first + h.data.buckets.len() as i64;
            for (range, count) in [
                (format!("< {first}"), h.data.below),
                (format!(">= {end}"), h.data.above),
            ] {
                if count > 0 {
                    writeln!(w, "HSO|    {}| {range:<9} | {count:8}", kind.name())?;
                }
            }
        }
    }
    writeln!(w, "HSH|--param|--samples-|--average--|---stddev--")?;
    for (kind, h) in histograms {
        let m = &h.moments;
        let mean = (m.count > 0).then(|| m.sum_ns as f64 / m.count as f64 / 1000.0);
        let stddev = sample_stddev(m.count, m.sum_ns, m.sum_sq_ns).map(|ns| ns / 1000.0);
        writeln!(
            w,
            "HSS|    {}| {:9}| {}| {}",
            kind.name(),
            m.count,
            figure_width(mean, 10),
            figure_width(stddev, 10)
        )?;
    }
    Ok(())
}

fn micros(ns: Nanos) -> f64 {
    ns.as_nanos() as f64 / 1000.0
}

/// `%11.3f`, or a right-aligned `-` when there is no value.
fn figure(value: Option<f64>) -> String {
    figure_width(value, 11)
}

fn figure_width(value: Option<f64>, width: usize) -> String {
    match value {
        Some(v) => format!("{v:width$.3}"),
        None => format!("{:>width$}", "-"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(f: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        f(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn banner_header_and_data_lines_are_xenomais() {
        let out = text(|w| {
            write_banner(w, Nanos::from_micros(100))?;
            write_header(w, 1, Nanos::from_micros(100), 99)?;
            write_data_line(
                w,
                &SecondFigures {
                    min: Nanos(174),
                    avg: Nanos(464),
                    max: Nanos(1780),
                    overruns: 0,
                    best: Nanos(174),
                    worst: Nanos(1780),
                },
            )
        });
        assert_eq!(
            out,
            "== Sampling period: 100 us\n\
             == Test mode: periodic user-mode task\n\
             == All results in microseconds\n\
             RTT|  00:00:01  (periodic user-mode task, 100 us period, priority 99)\n\
             RTH|----lat min|----lat avg|----lat max|-overrun|---msw|---lat best|--lat worst\n\
             RTD|      0.174|      0.464|      1.780|       0|     0|      0.174|      1.780\n"
        );
    }

    #[test]
    fn summary_line_is_xenomais() {
        let out = text(|w| {
            write_summary(
                w,
                &Summary {
                    min: Some(Nanos(4374)),
                    avg_ns: Some(6187.2),
                    max: Some(Nanos(49833)),
                    overruns: 0,
                    actual_secs: 4,
                    requested_secs: 4,
                },
            )
        });
        assert_eq!(
            out,
            "---|-----------|-----------|-----------|--------|------|-------------------------\n\
             RTS|      4.374|      6.187|     49.833|       0|     0|    00:00:04/00:00:04\n"
        );
    }

    #[test]
    fn negative_values_keep_their_sign() {
        let out = text(|w| {
            write_data_line(
                w,
                &SecondFigures {
                    min: Nanos(-1500),
                    avg: Nanos(-20),
                    max: Nanos(3000),
                    overruns: 12,
                    best: Nanos(-1500),
                    worst: Nanos(3000),
                },
            )
        });
        assert_eq!(
            out,
            "RTD|     -1.500|     -0.020|      3.000|      12|     0|     -1.500|      3.000\n"
        );
    }

    #[test]
    fn histogram_lines_count_outside_samples_and_keep_negative_buckets() {
        let data = SignedHistogramData {
            width_ns: 1000,
            first: -3,
            buckets: vec![0, 0, 2, 5, 1, 0],
            below: 1,
            above: 4,
        };
        let mut moments = Moments::default();
        for ns in [1000, 2000, 3000] {
            moments.add(ns);
        }
        let report = HistogramReport { data, moments };
        let out = text(|w| write_histograms(w, &[(Kind::Avg, report.clone())], true));
        assert_eq!(
            out,
            "---|--param|----range-|--samples\n\
             HSD|    avg|  -1 -  0 |        2\n\
             HSD|    avg|   0 -  1 |        5\n\
             HSD|    avg|   1 -  2 |        1\n\
             HSO|    avg| < -3      |        1\n\
             HSO|    avg| >= 3      |        4\n\
             HSH|--param|--samples-|--average--|---stddev--\n\
             HSS|    avg|         3|      2.000|      1.000\n"
        );
        let stats_only = text(|w| write_histograms(w, &[(Kind::Avg, report)], false));
        assert!(stats_only.starts_with("HSH|"), "{stats_only}");
    }

    #[test]
    fn empty_figures_are_dashes() {
        let out = text(|w| {
            write_summary(
                w,
                &Summary {
                    min: None,
                    avg_ns: None,
                    max: None,
                    overruns: 0,
                    actual_secs: 0,
                    requested_secs: 3,
                },
            )
        });
        assert!(
            out.ends_with(
                "RTS|          -|          -|          -|       0|     0|    00:00:00/00:00:03\n"
            ),
            "{out}"
        );
    }
}
