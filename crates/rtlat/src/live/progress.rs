//! The progress line of a quiet run on a terminal: with `-q` the run says
//! nothing until its end, which for `-D 24h` is a day of silence. When
//! stderr is a terminal (and `--no-progress` is not given), one line on
//! stderr says how far the run is: time elapsed of the total, the samples
//! taken, the largest latency so far and the time left. It is rewritten in
//! place about once a second (carriage return, erase to the end of the
//! line) and erased before the summary, so what the run prints at its end
//! is what it prints without the line. Never drawn when stderr is a file or
//! a pipe: a script's output is the same as before.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use rtlat_args::stdio;
use rtlat_core::Nanos;

use crate::report::clock_time;

/// How often the line is redrawn.
const REDRAW_PERIOD: Duration = Duration::from_secs(1);

/// Carriage return and "erase to the end of the line" (ECMA-48 EL 0).
const REWIND: &[u8] = b"\r\x1b[K";

/// The figures the line shows, read from the shared slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Time since the measuring threads started.
    pub elapsed: Duration,
    /// Samples of all threads together.
    pub samples: u64,
    /// The largest latency of any thread so far; `None` before the first.
    pub max: Option<Nanos>,
}

/// The line on stderr, once it is known to be a terminal.
#[derive(Debug)]
pub struct ProgressLine {
    total: Option<Duration>,
    last_drawn: Option<Instant>,
}

impl ProgressLine {
    /// The line for a run that is to last `total` (`None`: until stopped),
    /// if `wanted` (`-q` without `--no-progress`) and stderr is a terminal.
    pub fn on_terminal(wanted: bool, total: Option<Duration>) -> Option<ProgressLine> {
        (wanted && std::io::stderr().is_terminal()).then_some(ProgressLine {
            total,
            last_drawn: None,
        })
    }

    /// Redraws the line if a second has passed since it was last drawn
    /// (`progress` is only read when it is due).
    pub fn tick(&mut self, progress: impl FnOnce() -> Progress) {
        let now = Instant::now();
        if self
            .last_drawn
            .is_some_and(|at| now.duration_since(at) < REDRAW_PERIOD)
        {
            return;
        }
        self.last_drawn = Some(now);
        let line = describe(&progress(), self.total);
        stdio::to_stderr(|w| {
            w.write_all(REWIND)?;
            w.write_all(line.as_bytes())?;
            w.flush()
        });
    }

    /// Takes the line away (before the run's last lines are printed).
    pub fn erase(self) {
        if self.last_drawn.is_some() {
            stdio::to_stderr(|w| {
                w.write_all(REWIND)?;
                w.flush()
            });
        }
    }
}

/// `rtlat cyclictest: 00:01:05 of 24:00:00, 65001 samples, max 12.3 us,
/// 23:58:55 left` (without a total: `00:01:05, 65001 samples, ...`).
pub fn describe(progress: &Progress, total: Option<Duration>) -> String {
    let max = progress.max.map_or_else(
        || "no sample yet".to_string(),
        |max| format!("max {:.1} us", max.as_nanos() as f64 / 1000.0),
    );
    let elapsed = clock(progress.elapsed);
    let (of, left) = match total {
        Some(total) => (
            format!(" of {}", clock(total)),
            format!(
                ", {} left",
                clock(round_up(total.saturating_sub(progress.elapsed)))
            ),
        ),
        None => (String::new(), String::new()),
    };
    format!(
        "{}: {elapsed}{of}, {} samples, {max}{left}",
        stdio::program_name(),
        progress.samples
    )
}

/// `d` rounded up to whole seconds: the time left and the time elapsed,
/// both shown in whole seconds, add up to the total.
fn round_up(d: Duration) -> Duration {
    Duration::from_secs(d.as_secs() + u64::from(d.subsec_nanos() > 0))
}

/// `d` as `hh:mm:ss`, whole seconds.
fn clock(d: Duration) -> String {
    clock_time(d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(elapsed_s: u64, samples: u64, max_ns: Option<i64>) -> Progress {
        Progress {
            elapsed: Duration::from_secs(elapsed_s),
            samples,
            max: max_ns.map(Nanos),
        }
    }

    #[test]
    fn the_line_says_elapsed_of_total_samples_max_and_time_left() {
        let line = describe(
            &progress(65, 65_001, Some(12_345)),
            Some(Duration::from_secs(24 * 3600)),
        );
        assert!(
            line.ends_with(": 00:01:05 of 24:00:00, 65001 samples, max 12.3 us, 23:58:55 left"),
            "{line}"
        );
    }

    #[test]
    fn without_a_total_there_is_no_time_left_and_before_a_sample_no_max() {
        let line = describe(&progress(3, 0, None), None);
        assert!(
            line.ends_with(": 00:00:03, 0 samples, no sample yet"),
            "{line}"
        );
    }

    #[test]
    fn elapsed_and_left_add_up_to_the_total() {
        let p = Progress {
            elapsed: Duration::from_millis(10),
            samples: 9,
            max: Some(Nanos(79_600)),
        };
        let line = describe(&p, Some(Duration::from_secs(3)));
        assert!(
            line.ends_with(": 00:00:00 of 00:00:03, 9 samples, max 79.6 us, 00:00:03 left"),
            "{line}"
        );
    }

    #[test]
    fn hours_pass_a_day_and_time_left_never_goes_below_zero() {
        assert_eq!(clock(Duration::from_secs(36 * 3600 + 61)), "36:01:01");
        assert_eq!(clock(Duration::from_secs(100 * 3600)), "100:00:00");
        let line = describe(&progress(5, 1, Some(1_000)), Some(Duration::from_secs(4)));
        assert!(line.ends_with(", 00:00:00 left"), "{line}");
    }
}
