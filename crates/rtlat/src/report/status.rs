//! The cyclictest `T:` status line: one line per measuring thread with its
//! index, tid, priority, interval and the C-compatible min/act/avg/max.
//!
//! The same line is printed by the live display (about 100 times a second),
//! the `-q` summary at the end of a run, and later the SIGUSR1 block and the
//! `-F` FIFO, so it is written straight to the writer without allocating.
//!
//! The layout is that of rt-tests 2.4 (printf widths are minimums: longer or
//! negative numbers just widen the field):
//! - µs: `T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld`
//! - `-N`: `T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%8ld Avg:%8ld Max:%8ld`
//! - with `--smi`, ` SMI:%8ld` follows.

use std::io::{self, Write};

use rtlat_core::Resolution;
use rtlat_core::{CompatStats, RunReport, ThreadReport};

/// The figures one `T:` line shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatusLine {
    /// Thread number, 0-based.
    pub index: usize,
    /// Kernel thread id (0 before the thread started).
    pub tid: i32,
    /// Real-time priority.
    pub priority: u8,
    /// Interval in whole microseconds (also in `-N` mode).
    pub interval_us: i64,
    /// The C-compatible figures, in units of the run's resolution.
    pub stats: CompatStats,
    /// SMIs counted (`--smi`), shown as a last column.
    pub smi: Option<u64>,
}

impl StatusLine {
    /// The status line of a finished thread.
    pub fn from_thread(t: &ThreadReport) -> StatusLine {
        StatusLine {
            index: t.index,
            tid: t.tid,
            priority: t.priority,
            interval_us: t.interval.as_micros_truncated(),
            stats: t.compat,
            smi: t.smi_count,
        }
    }
}

/// Writes one `T:` line, newline included, in the layout of `resolution`.
///
/// Min shows 1000000 and max 0 before the first sample, as cyclictest does;
/// avg is truncated toward zero.
pub fn write_status_line(
    w: &mut impl Write,
    line: &StatusLine,
    resolution: Resolution,
) -> io::Result<()> {
    let s = &line.stats;
    write!(
        w,
        "T:{:2} ({:5}) P:{:2} I:{} C:{:7} Min:{:7} ",
        line.index,
        line.tid,
        line.priority,
        line.interval_us,
        s.cycles,
        s.min_shown(),
    )?;
    match resolution {
        Resolution::Micros => write!(
            w,
            "Act:{:5} Avg:{:5} Max:{:8}",
            s.act,
            s.avg_truncated(),
            s.max_shown()
        )?,
        Resolution::Nanos => write!(
            w,
            "Act:{:8} Avg:{:8} Max:{:8}",
            s.act,
            s.avg_truncated(),
            s.max_shown()
        )?,
    }
    if let Some(smi) = line.smi {
        write!(w, " SMI:{smi:8}")?;
    }
    writeln!(w)
}

/// Writes the `-q` summary: one `T:` line per thread, in thread order.
pub fn write_quiet_summary(w: &mut impl Write, report: &RunReport) -> io::Result<()> {
    for t in &report.threads {
        write_status_line(w, &StatusLine::from_thread(t), report.resolution)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{ThreadFixture, render, run};
    use rtlat_core::Nanos;

    fn line(t: &ThreadReport, resolution: Resolution) -> String {
        render(|w| write_status_line(w, &StatusLine::from_thread(t), resolution))
    }

    #[test]
    fn reference_capture_micros_byte_for_byte() {
        let t = ThreadFixture::new(0)
            .tid(5423)
            .priority(80)
            .interval(Nanos::from_micros(200))
            .compat(CompatStats {
                cycles: 2000,
                min: 16,
                max: 4990,
                act: 21,
                sum: 56_000,
            })
            .build();
        assert_eq!(
            line(&t, Resolution::Micros),
            "T: 0 ( 5423) P:80 I:200 C:   2000 Min:     16 Act:   21 Avg:   28 Max:    4990\n"
        );
    }

    #[test]
    fn reference_capture_nanos_byte_for_byte() {
        let t = ThreadFixture::new(1)
            .tid(5567)
            .priority(49)
            .interval(Nanos::from_micros(1500))
            .compat(CompatStats {
                cycles: 344,
                min: 12_178,
                max: 1_209_189,
                act: 14_588,
                sum: 21_866 * 344,
            })
            .build();
        assert_eq!(
            line(&t, Resolution::Nanos),
            "T: 1 ( 5567) P:49 I:1500 C:    344 Min:  12178 Act:   14588 Avg:   21866 Max: 1209189\n"
        );
    }

    #[test]
    fn before_first_sample_matches_first_live_frame() {
        let t = ThreadFixture::new(0)
            .tid(0)
            .interval(Nanos::from_micros(500))
            .build();
        assert_eq!(
            line(&t, Resolution::Micros),
            "T: 0 (    0) P:80 I:500 C:      0 Min:1000000 Act:    0 Avg:    0 Max:       0\n"
        );
    }

    #[test]
    fn quiet_summary_micros_three_threads() {
        let r = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .tid(5528)
                    .interval(Nanos::from_micros(500))
                    .samples(&[18, 24, 4841, 36, 24], Resolution::Micros, 0, None)
                    .build(),
                ThreadFixture::new(1)
                    .tid(5529)
                    .priority(79)
                    .interval(Nanos::from_micros(1000))
                    .samples(&[13, 56, 26], Resolution::Micros, 0, None)
                    .build(),
                ThreadFixture::new(2)
                    .tid(123_456)
                    .priority(0)
                    .interval(Nanos::from_micros(1500))
                    .build(),
            ],
        );
        insta::assert_snapshot!(render(|w| write_quiet_summary(w, &r)));
    }

    #[test]
    fn quiet_summary_nanos_one_thread() {
        let r = run(
            Resolution::Nanos,
            vec![
                ThreadFixture::new(0)
                    .tid(5566)
                    .priority(50)
                    .interval(Nanos::from_micros(1000))
                    .samples(&[18_065, 50_053, 36_308], Resolution::Nanos, 0, None)
                    .build(),
            ],
        );
        insta::assert_snapshot!(render(|w| write_quiet_summary(w, &r)));
    }

    #[test]
    fn negative_latency_keeps_its_sign() {
        let r = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .tid(42)
                    .samples(&[-1_234_567, 5, -3], Resolution::Micros, 0, None)
                    .build(),
            ],
        );
        insta::assert_snapshot!(render(|w| write_quiet_summary(w, &r)));
    }

    #[test]
    fn wide_values_widen_the_field() {
        let t = ThreadFixture::new(12)
            .tid(4_194_303)
            .interval(Nanos::from_micros(10_000_000))
            .compat(CompatStats {
                cycles: 123_456_789,
                min: 12_345_678,
                max: 987_654_321,
                act: 123_456,
                sum: 123_456_789 * 654_321,
            })
            .build();
        assert_eq!(
            line(&t, Resolution::Micros),
            "T:12 (4194303) P:80 I:10000000 C:123456789 Min:12345678 Act:123456 Avg:654321 Max:987654321\n"
        );
    }
}
