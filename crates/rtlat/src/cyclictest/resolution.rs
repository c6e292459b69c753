//! `-R`: estimate the clock's real resolution before the run, as cyclictest
//! does, by reading it many times in a row and taking the smallest non-zero
//! step. The step includes the cost of a read, so it is an upper bound.
//!
//! Output on stderr, in C's words: the two `WARN:` lines when `-v` is given
//! or the measured step is larger than the reported resolution; with
//! `--dbg_cyclictest` every read as an `INFO:` line.

use std::io::{self, Write};

use rtlat_sys::clock::{self, Clock, Timespec};

/// Reads in the probe: about one millisecond's worth, at least 1000 and at
/// most 100000 (cyclictest's bounds).
fn reads_per_probe(clock: Clock) -> usize {
    const CALIBRATION_READS: i64 = 1000;
    let before = clock::now(clock);
    for _ in 0..CALIBRATION_READS {
        std::hint::black_box(clock::now(clock));
    }
    let after = clock::now(clock);
    let per_read = (diff_nanos(&after, &before) / CALIBRATION_READS).max(1);
    usize::try_from(1_000_000 / per_read)
        .unwrap_or(1000)
        .clamp(1000, 100_000)
}

fn diff_nanos(a: &Timespec, b: &Timespec) -> i64 {
    (a.tv_sec - b.tv_sec) * 1_000_000_000 + (a.tv_nsec - b.tv_nsec)
}

/// Runs the probe and writes its lines to `w` (stderr in a run).
pub fn probe(w: &mut impl Write, clock: Clock, verbose: bool, debug: bool) -> io::Result<()> {
    let reported = clock::resolution(clock);
    let reported_ns = reported.tv_sec * 1_000_000_000 + reported.tv_nsec;
    let count = reads_per_probe(clock);
    let times: Vec<Timespec> = (0..count).map(|_| clock::now(clock)).collect();
    if debug {
        writeln!(w, "INFO: For {count} consecutive calls to clock_gettime():")?;
        writeln!(w, "INFO: time, delta time (nsec)")?;
    }
    let mut smallest_step: Option<i64> = None;
    for pair in times.windows(2) {
        let step = diff_nanos(&pair[1], &pair[0]);
        if step > 0 && smallest_step.is_none_or(|s| step < s) {
            smallest_step = Some(step);
        }
        if debug {
            writeln!(
                w,
                "INFO: {}.{:06}  {:5}",
                pair[1].tv_sec, pair[1].tv_nsec, step
            )?;
        }
    }
    let measured = smallest_step.unwrap_or(0);
    if verbose || measured > reported_ns {
        writeln!(w, "WARN: reported clock resolution: {reported_ns} nsec")?;
        writeln!(
            w,
            "WARN: measured clock resolution approximately: {measured} nsec"
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(verbose: bool, debug: bool) -> String {
        let mut out = Vec::new();
        probe(&mut out, Clock::Monotonic, verbose, debug).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn verbose_prints_both_figures() {
        let t = text(true, false);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 2, "{t}");
        assert!(lines[0].starts_with("WARN: reported clock resolution: "));
        assert!(lines[0].ends_with(" nsec"));
        assert!(lines[1].starts_with("WARN: measured clock resolution approximately: "));
    }

    #[test]
    fn debug_lists_every_read() {
        let t = text(false, true);
        let first = t.lines().next().unwrap();
        let count: usize = first
            .strip_prefix("INFO: For ")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect(first);
        assert!((1000..=100_000).contains(&count));
        let deltas = t
            .lines()
            .filter(|l| l.starts_with("INFO: ") && l.contains('.'))
            .count();
        assert_eq!(deltas, count - 1);
    }
}
