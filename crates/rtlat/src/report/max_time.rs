//! `--percentiles`, `--verdict`: when each thread's largest sample was
//! taken, one line per thread after the closing lines:
//! `# Thread 0: max 42.317 us at 2026-11-25 14:03:22.123 UTC, 00:01:05 into the run`
//! (`# Thread 1: no samples, no maximum` for a thread without any).
//! The value is the exact maximum (µs, three decimals, as the `max` column
//! of `--percentiles`); the time is the wall-clock time (UTC, to the
//! millisecond, truncated) of that sample's deadline (cyclictest, latency)
//! or reception (signaltest), the first of equal maxima; then the whole
//! hours, minutes and seconds since the threads started. Every line starts
//! with `#`, as the other comment lines, so that scripts that read the
//! `T:` lines are not disturbed; `# Thread N:` as the verdict's sentences
//! about a thread, not `# T:N` as the rows of the percentile table.

use std::io::{self, Write};

use rtlat_core::report::RunReport;

use super::clock_time;
use super::run_clock::Timeline;

/// Writes one line per thread: its maximum and when it was taken, or that
/// it has none.
pub fn write_max_times(
    w: &mut impl Write,
    report: &RunReport,
    timeline: &Timeline,
) -> io::Result<()> {
    for t in &report.threads {
        let index = t.index;
        match (t.precise.max, t.max_at) {
            (Some(max), Some(at)) => {
                let into = timeline.elapsed(at).as_nanos() / 1_000_000_000;
                writeln!(
                    w,
                    "# Thread {index}: max {:.3} us at {}, {} into the run",
                    max.as_nanos() as f64 / 1000.0,
                    wall_clock_text(timeline.unix_ns(at)),
                    clock_time(u64::try_from(into).unwrap_or(0)),
                )?;
            }
            _ => writeln!(w, "# Thread {index}: no samples, no maximum")?,
        }
    }
    Ok(())
}

/// `unix_ns` as `2026-11-25 14:03:22.123 UTC` (to the millisecond,
/// truncated).
fn wall_clock_text(unix_ns: i128) -> String {
    match jiff::Timestamp::from_nanosecond(unix_ns) {
        Ok(t) => t.strftime("%Y-%m-%d %H:%M:%S%.3f UTC").to_string(),
        // Beyond year 9999 either way: no calendar date.
        Err(_) => format!("{:.3} s after the Unix epoch", unix_ns as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{ThreadFixture, run};
    use rtlat_core::units::{ClockInstant, Resolution};

    /// A run whose clock read 1_000 s when the wall clock read
    /// 2026-11-25 14:02:17 UTC, the threads starting then.
    fn timeline() -> Timeline {
        Timeline {
            clock: ClockInstant(1_000_000_000_000),
            unix_ns: 1_795_615_337_000_000_000,
            start: None,
        }
    }

    #[test]
    fn one_line_per_thread_with_its_maximum_and_when() {
        let mut busy = ThreadFixture::new(0)
            .samples(&[7, 42, 9], Resolution::Micros, 317, None)
            .build();
        busy.max_at = Some(ClockInstant(1_065_123_456_789));
        let idle = ThreadFixture::new(1).build();
        let report = run(Resolution::Micros, vec![busy, idle]);
        let mut out = Vec::new();
        write_max_times(&mut out, &report, &timeline()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "# Thread 0: max 42.317 us at 2026-11-25 14:03:22.123 UTC, 00:01:05 into the run\n\
             # Thread 1: no samples, no maximum\n"
        );
    }

    #[test]
    fn a_maximum_before_the_reading_is_zero_seconds_into_the_run() {
        let mut t = ThreadFixture::new(0)
            .samples(&[5], Resolution::Micros, 0, None)
            .build();
        t.max_at = Some(ClockInstant(999_999_000_000));
        let report = run(Resolution::Micros, vec![t]);
        let mut out = Vec::new();
        write_max_times(&mut out, &report, &timeline()).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.ends_with("at 2026-11-25 14:02:16.999 UTC, 00:00:00 into the run\n"),
            "{text}"
        );
    }

    #[test]
    fn wall_clock_times_are_utc_to_the_millisecond() {
        assert_eq!(wall_clock_text(0), "1970-01-01 00:00:00.000 UTC");
        assert_eq!(
            wall_clock_text(1_795_615_402_123_999_999),
            "2026-11-25 14:03:22.123 UTC"
        );
        assert_eq!(wall_clock_text(-1), "1969-12-31 23:59:59.999 UTC");
        assert_eq!(
            wall_clock_text(i128::MAX),
            format!("{:.3} s after the Unix epoch", i128::MAX as f64 / 1e9)
        );
    }
}
