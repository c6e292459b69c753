//! signaltest's own output formats: the `T:` line (cyclictest's without
//! `I:`), the `-v` sample line and the JSON members. The histogram block is
//! cyclictest's ([`crate::report::histogram`]).

use std::io::{self, Write};

use rtlat_core::Resolution;
use rtlat_core::{CompatStats, RunReport, ThreadReport};
use rtlat_results::signaltest::SignalThreadDto;
use rtlat_stats::blocks::BlockSeries;

use crate::report::RunMeta;
use crate::report::json::{
    Extras, disturbances, histogram, max_time, round_decimals, write_thread_document,
};
use crate::report::run_clock::Timeline;

/// Min as signaltest shows it before the first sample.
const MIN_BEFORE_FIRST: i64 = 1_000_000;
/// Max as signaltest shows it before the first sample (its initial value).
const MAX_BEFORE_FIRST: i64 = -1_000_000;

fn min_shown(s: &CompatStats) -> i64 {
    if s.cycles == 0 {
        MIN_BEFORE_FIRST
    } else {
        s.min
    }
}

fn max_shown(s: &CompatStats) -> i64 {
    if s.cycles == 0 {
        MAX_BEFORE_FIRST
    } else {
        s.max
    }
}

/// Writes one `T:` line, newline included:
/// `T:%2d (%5d) P:%2d C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld`
/// (`Act:%8ld Avg:%8ld` with `--nsecs`). Before the first sample Min shows
/// 1000000 and Max -1000000, as in C.
pub fn write_status_line(
    w: &mut impl Write,
    index: usize,
    tid: i32,
    priority: u8,
    s: &CompatStats,
    resolution: Resolution,
) -> io::Result<()> {
    write!(
        w,
        "T:{index:2} ({tid:5}) P:{priority:2} C:{:7} Min:{:7} ",
        s.cycles,
        min_shown(s)
    )?;
    match resolution {
        Resolution::Micros => writeln!(
            w,
            "Act:{:5} Avg:{:5} Max:{:8}",
            s.act,
            s.avg_truncated(),
            max_shown(s)
        ),
        Resolution::Nanos => writeln!(
            w,
            "Act:{:8} Avg:{:8} Max:{:8}",
            s.act,
            s.avg_truncated(),
            max_shown(s)
        ),
    }
}

/// The final `T:` line of a thread.
pub fn write_thread_line(
    w: &mut impl Write,
    t: &ThreadReport,
    resolution: Resolution,
) -> io::Result<()> {
    write_status_line(w, t.index, t.tid, t.priority, &t.compat, resolution)
}

/// One `-v` line: thread, sample number (0-based), value.
pub fn write_sample_line(
    w: &mut impl Write,
    thread: usize,
    cycle: u64,
    value: i64,
) -> io::Result<()> {
    writeln!(w, "{thread:8}:{cycle:8}:{value:8}")
}

/// Writes the JSON document: the rt-tests envelope, then signaltest's
/// `num_threads` and `thread` members. Ours are added: `resolution_in_ns`,
/// and per thread `min_ns`, `max_ns`, `mean_ns`, `tid`, `priority`, with
/// `--histogram` `histogram`, `disturbances` and last `max_time` (as
/// cyclictest's); and the run's `verdict` (and its `load` with `--load`).
pub fn write_json(
    w: &mut impl Write,
    report: &RunReport,
    meta: &RunMeta,
    extras: &Extras<'_, '_>,
) -> io::Result<()> {
    write_thread_document(w, report, meta, None, *extras, signal_thread)
}

/// One thread's object: signaltest's threads seal no intervals, it has
/// no blocks.
fn signal_thread(
    t: &ThreadReport,
    timeline: Option<&Timeline>,
    _blocks: Option<&BlockSeries>,
) -> SignalThreadDto {
    let c = &t.compat;
    SignalThreadDto {
        cycles: c.cycles,
        min: min_shown(c),
        max: max_shown(c),
        avg: c.avg().map(|a| round_decimals(a, 2)),
        cpu: t.cpu.and_then(|c| i64::try_from(c).ok()).unwrap_or(-1),
        min_ns: t.precise.min.map(|n| n.as_nanos()),
        max_ns: t.precise.max.map(|n| n.as_nanos()),
        mean_ns: t.precise.mean(c.cycles).map(|m| round_decimals(m, 1)),
        tid: t.tid,
        priority: t.priority,
        histogram: t.histogram.as_ref().map(|h| histogram(Some(h))),
        disturbances: t.disturbances.map(disturbances),
        max_time: max_time(t, timeline),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(s: CompatStats, resolution: Resolution) -> String {
        let mut out = Vec::new();
        write_status_line(&mut out, 0, 21380, 80, &s, resolution).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn before_the_first_sample_like_c() {
        assert_eq!(
            line(CompatStats::default(), Resolution::Micros),
            "T: 0 (21380) P:80 C:      0 Min:1000000 Act:    0 Avg:    0 Max:-1000000\n"
        );
    }

    #[test]
    fn reference_capture_byte_for_byte() {
        let s = CompatStats {
            cycles: 2000,
            min: 28,
            max: 669,
            act: 63,
            sum: 2000 * 68 + 5,
        };
        assert_eq!(
            line(s, Resolution::Micros),
            "T: 0 (21380) P:80 C:   2000 Min:     28 Act:   63 Avg:   68 Max:     669\n"
        );
        let mut out = Vec::new();
        write_status_line(
            &mut out,
            1,
            9498,
            80,
            &CompatStats {
                cycles: 1,
                min: 10106,
                max: 10106,
                act: 10106,
                sum: 10106,
            },
            Resolution::Micros,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "T: 1 ( 9498) P:80 C:      1 Min:  10106 Act:10106 Avg:10106 Max:   10106\n"
        );
    }

    #[test]
    fn nanoseconds_widen_act_and_avg() {
        let s = CompatStats {
            cycles: 2,
            min: 12_345,
            max: 54_321,
            act: 54_321,
            sum: 66_666,
        };
        assert_eq!(
            line(s, Resolution::Nanos),
            "T: 0 (21380) P:80 C:      2 Min:  12345 Act:   54321 Avg:   33333 Max:   54321\n"
        );
    }

    #[test]
    fn sample_line() {
        let mut out = Vec::new();
        write_sample_line(&mut out, 0, 4, 14).unwrap();
        assert_eq!(out, b"       0:       4:      14\n");
    }
}
