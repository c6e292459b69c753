//! rt-migrate-test's own text: the progress bar (stderr), the table of
//! every interval, each task's summary and the `Passed!`/`Failed!` line
//! (stdout), byte for byte as 2.4 prints them; and its JSON members.

use std::collections::BTreeMap;
use std::io::{self, Write};

use rtlat_core::migrate::TaskInterval;
use rtlat_results::passfail::{MigrateMembers, MigrateThread};

/// The width of the progress bar, in characters.
const PROGRESS_CHARS: usize = 70;

/// The progress bar at `percent` (C's `print_progress_bar`): drawn over
/// itself with carriage returns.
pub fn write_progress(w: &mut impl Write, percent: usize) -> io::Result<()> {
    let filled = PROGRESS_CHARS * percent.min(100) / 100;
    let mut line = Vec::with_capacity(2 * PROGRESS_CHARS + 6);
    line.extend_from_slice(b"\r|");
    line.extend(std::iter::repeat_n(b' ', PROGRESS_CHARS));
    line.extend_from_slice(b"|\r|");
    line.extend(std::iter::repeat_n(b'-', filled));
    w.write_all(&line)?;
    w.flush()
}

/// One task's figures over the intervals run, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskSummary {
    /// The latest start.
    pub max: u64,
    /// The earliest start.
    pub min: u64,
    /// The starts summed.
    pub total: u64,
}

/// Each task's summary over `intervals` (task order).
pub fn summaries(intervals: &[Vec<TaskInterval>], tasks: usize) -> Vec<TaskSummary> {
    (0..tasks)
        .map(|t| {
            let starts = || intervals.iter().map(move |row| row[t].start);
            TaskSummary {
                max: starts().max().unwrap_or(0),
                min: starts().min().unwrap_or(u64::MAX),
                total: starts().sum(),
            }
        })
        .collect()
}

/// What the report shows besides the intervals.
pub struct Report<'a> {
    /// Each interval run, each task's figures.
    pub intervals: &'a [Vec<TaskInterval>],
    /// Each task's priority.
    pub priorities: &'a [u8],
    /// Each task's thread id.
    pub tids: &'a [i32],
    /// The process id.
    pub pid: i32,
    /// With `-c`: whether the check failed.
    pub check: Option<bool>,
}

/// The tables, the summaries and, with `-c`, the verdict line.
pub fn write_report(w: &mut impl Write, r: &Report<'_>) -> io::Result<()> {
    let tasks = r.priorities.len();
    write!(w, "Iter: ")?;
    for t in 0..tasks {
        write!(w, "{t:6}  ")?;
    }
    writeln!(w)?;
    for (i, row) in r.intervals.iter().enumerate() {
        write!(w, "{i:4}:   ")?;
        for task in row {
            write!(w, "{:6}  ", task.start / 1000)?;
        }
        write!(w, "\n len:   ")?;
        for task in row {
            write!(w, "{:6}  ", task.end / 1000)?;
        }
        write!(w, "\n loops: ")?;
        for task in row {
            write!(w, "{:6}  ", task.loops)?;
        }
        write!(w, "\n\n")?;
    }
    writeln!(w, "Parent pid: {}", r.pid)?;
    let runs = r.intervals.len().max(1) as u64;
    for (t, s) in summaries(r.intervals, tasks).iter().enumerate() {
        writeln!(
            w,
            " Task {t} (prio {}) (pid {}):",
            r.priorities[t],
            r.tids.get(t).copied().unwrap_or(0)
        )?;
        writeln!(w, "   Max: {} us", s.max / 1000)?;
        writeln!(w, "   Min: {} us", s.min / 1000)?;
        writeln!(w, "   Tot: {} us", s.total / 1000)?;
        writeln!(w, "   Avg: {} us", s.total / runs / 1000)?;
        writeln!(w)?;
    }
    match r.check {
        Some(true) => writeln!(w, " Failed!"),
        Some(false) => writeln!(w, " Passed!"),
        None => Ok(()),
    }
}

/// The JSON members (C's `write_stats`: the average is the µs total
/// divided, not the ns one).
pub fn members(intervals: &[Vec<TaskInterval>], priorities: &[u8]) -> MigrateMembers {
    let runs = intervals.len().max(1) as u64;
    let thread: BTreeMap<usize, MigrateThread> = summaries(intervals, priorities.len())
        .iter()
        .enumerate()
        .map(|(t, s)| {
            (
                t,
                MigrateThread {
                    prio: i64::from(priorities[t]),
                    min: s.min / 1000,
                    avg: s.total / 1000 / runs,
                    max: s.max / 1000,
                    total: s.total / 1000,
                },
            )
        })
        .collect();
    MigrateMembers {
        num_threads: priorities.len(),
        thread,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(start_us: u64, end_us: u64, loops: u64) -> TaskInterval {
        TaskInterval {
            start: start_us * 1000 + 999,
            end: end_us * 1000 + 999,
            loops,
        }
    }

    #[test]
    fn the_report_is_cs_text() {
        let intervals = vec![
            vec![t(20045, 40045, 594439), t(28, 20028, 620078)],
            vec![t(20034, 40034, 663255), t(26, 20026, 592557)],
        ];
        let mut text = Vec::new();
        write_report(
            &mut text,
            &Report {
                intervals: &intervals,
                priorities: &[2, 3],
                tids: &[101, 102],
                pid: 100,
                check: Some(false),
            },
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "Iter:      0       1  \n\
             \x20  0:    20045      28  \n len:    40045   20028  \n loops: 594439  620078  \n\n\
             \x20  1:    20034      26  \n len:    40034   20026  \n loops: 663255  592557  \n\n\
             Parent pid: 100\n\
             \x20Task 0 (prio 2) (pid 101):\n   Max: 20045 us\n   Min: 20034 us\n   Tot: 40080 us\n   Avg: 20040 us\n\n\
             \x20Task 1 (prio 3) (pid 102):\n   Max: 28 us\n   Min: 26 us\n   Tot: 55 us\n   Avg: 27 us\n\n\
             \x20Passed!\n"
        );
        let m = members(&intervals, &[2, 3]);
        assert_eq!(
            m.thread[&1],
            MigrateThread {
                prio: 3,
                min: 26,
                avg: 27,
                max: 28,
                total: 55
            }
        );
    }

    #[test]
    fn the_progress_bar_is_cs() {
        let mut bar = Vec::new();
        write_progress(&mut bar, 50).unwrap();
        let text = String::from_utf8(bar).unwrap();
        assert_eq!(text, format!("\r|{}|\r|{}", " ".repeat(70), "-".repeat(35)));
    }
}
