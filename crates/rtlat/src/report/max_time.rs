//! `--percentiles`, `--verdict`: when each thread's largest sample was
//! taken, one line per thread after the closing lines:
//! `# Thread 0: max 42.317 us, due 65.123456 s into the run, woke
//! 65.123498 s; due at 2026-11-25 14:03:22.123 UTC`
//! (`# Thread 1: no samples, no maximum` for a thread without any).
//! The value is the exact maximum (µs, three decimals, as the `max` column
//! of `--percentiles`); the sample is placed in the run as every line that
//! places one does ([`SampleInstants`]): its deadline and its wake-up
//! (cyclictest, latency), or its sending and its reception (signaltest),
//! the first of equal maxima; then the wall-clock time (UTC, to the
//! millisecond, truncated) of the instant the run keeps, the deadline or
//! the reception (the JSON's `max_time`). Every line starts with `#`, as
//! the other comment lines, so that scripts that read the `T:` lines are
//! not disturbed; `# Thread N:` as the verdict's sentences about a thread,
//! not `# T:N` as the rows of the percentile table.

use std::io::{self, Write};

use rtlat_core::RunReport;

use super::run_clock::Timeline;
use super::sample_time::SampleInstants;

/// Writes one line per thread: its maximum and when it was taken, or that
/// it has none. `instants` says what the kept time of a maximum is: its
/// deadline ([`SampleInstants::DueWoke`]) or its reception
/// ([`SampleInstants::SentReceived`]).
pub fn write_max_times(
    w: &mut impl Write,
    report: &RunReport,
    timeline: &Timeline,
    instants: SampleInstants,
) -> io::Result<()> {
    for t in &report.threads {
        let index = t.index;
        match (t.precise.max, t.max_at) {
            (Some(max), Some(at)) => {
                let kept_ns = timeline.elapsed(at).as_nanos();
                let max_ns = max.as_nanos();
                let (start_ns, end_ns, kept) = match instants {
                    SampleInstants::DueWoke => (kept_ns, kept_ns.saturating_add(max_ns), "due"),
                    SampleInstants::SentReceived => {
                        (kept_ns.saturating_sub(max_ns), kept_ns, "received")
                    }
                };
                writeln!(
                    w,
                    "# Thread {index}: max {:.3} us, {}; {kept} at {}",
                    max_ns as f64 / 1000.0,
                    instants.text(start_ns, end_ns),
                    wall_clock_text(timeline.unix_ns(at)),
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
    use rtlat_core::{ClockInstant, Resolution};

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
        write_max_times(&mut out, &report, &timeline(), SampleInstants::DueWoke).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "# Thread 0: max 42.317 us, due 65.123456 s into the run, woke 65.123499 s; \
             due at 2026-11-25 14:03:22.123 UTC\n\
             # Thread 1: no samples, no maximum\n"
        );
        // A signal's maximum is kept at its reception.
        let mut out = Vec::new();
        write_max_times(&mut out, &report, &timeline(), SampleInstants::SentReceived).unwrap();
        assert!(String::from_utf8(out).unwrap().starts_with(
            "# Thread 0: max 42.317 us, sent 65.123414 s into the run, received \
             65.123456 s; received at 2026-11-25 14:03:22.123 UTC\n"
        ));
    }

    #[test]
    fn a_maximum_due_before_the_reading_is_due_zero_seconds_into_the_run() {
        let mut t = ThreadFixture::new(0)
            .samples(&[5], Resolution::Micros, 0, None)
            .build();
        t.max_at = Some(ClockInstant(999_999_000_000));
        let report = run(Resolution::Micros, vec![t]);
        let mut out = Vec::new();
        write_max_times(&mut out, &report, &timeline(), SampleInstants::DueWoke).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.ends_with(
                "due 0.000000 s into the run, woke 0.000000 s; \
                 due at 2026-11-25 14:02:16.999 UTC\n"
            ),
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
