//! cyclicdeadline's own output formats: the `T:` line (with `I:`, the
//! thread's deadline in µs) and the JSON members.

use std::io::{self, Write};

use rtlat_core::{CompatStats, RunReport, ThreadReport};
use rtlat_results::deadline::DeadlineThreadDto;
use rtlat_stats::blocks::BlockSeries;

use crate::report::RunMeta;
use crate::report::json::{
    Extras, distribution, disturbances, histogram, max_time, percentiles, round_decimals,
    write_thread_document,
};
use crate::report::run_clock::Timeline;

/// Min and max as C shows them: 0 before the first job.
fn shown(s: &CompatStats) -> (i64, i64) {
    if s.cycles == 0 {
        (0, 0)
    } else {
        (s.min, s.max)
    }
}

/// Writes one `T:` line, newline included:
/// `T:%2d (%5d) I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld`.
pub fn write_status_line(
    w: &mut impl Write,
    index: usize,
    tid: i32,
    interval_us: i64,
    s: &CompatStats,
) -> io::Result<()> {
    let (min, max) = shown(s);
    writeln!(
        w,
        "T:{index:2} ({tid:5}) I:{interval_us} C:{:7} Min:{min:7} Act:{:5} Avg:{:5} Max:{max:8}",
        s.cycles,
        s.act,
        s.avg_truncated(),
    )
}

/// The final `T:` line of a thread.
pub fn write_thread_line(w: &mut impl Write, t: &ThreadReport) -> io::Result<()> {
    write_status_line(w, t.index, t.tid, t.interval.as_nanos() / 1000, &t.compat)
}

/// Writes the JSON document: the rt-tests envelope, then cyclicdeadline's
/// `num_threads`, `resolution_in_ns` and `thread` members; per thread ours
/// are added after C's (`min_ns`, `max_ns`, `mean_ns`, `tid`,
/// `interval_us`, `disturbances`, `max_time`), and the run's `verdict`
/// (and its `load` with `--load`).
pub fn write_json(
    w: &mut impl Write,
    report: &RunReport,
    meta: &RunMeta,
    extras: &Extras<'_, '_>,
) -> io::Result<()> {
    write_thread_document(w, report, meta, None, *extras, deadline_thread)
}

fn deadline_thread(
    t: &ThreadReport,
    timeline: Option<&Timeline>,
    _blocks: Option<&BlockSeries>,
) -> DeadlineThreadDto {
    let c = &t.compat;
    let (min, max) = shown(c);
    DeadlineThreadDto {
        histogram: t.histogram.as_ref().map(|h| histogram(Some(h))),
        cycles: c.cycles,
        min,
        max,
        avg: c.avg().map(|a| round_decimals(a, 2)),
        min_ns: t.precise.min.map(|n| n.as_nanos()),
        max_ns: t.precise.max.map(|n| n.as_nanos()),
        mean_ns: t.precise.mean(c.cycles).map(|m| round_decimals(m, 1)),
        tid: t.tid,
        interval_us: t.interval.as_nanos() / 1000,
        percentiles: t.distribution.as_ref().map(percentiles),
        distribution: t.distribution.as_ref().map(distribution),
        disturbances: t.disturbances.map(disturbances),
        max_time: max_time(t, timeline),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(s: CompatStats) -> String {
        let mut out = Vec::new();
        write_status_line(&mut out, 0, 12791, 10000, &s).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn like_c_byte_for_byte() {
        assert_eq!(
            line(CompatStats::default()),
            "T: 0 (12791) I:10000 C:      0 Min:      0 Act:    0 Avg:    0 Max:       0\n"
        );
        let s = CompatStats {
            cycles: 1996,
            min: 3,
            max: 51,
            act: 6,
            sum: 1996 * 7 + 5,
        };
        assert_eq!(
            line(s),
            "T: 0 (12791) I:10000 C:   1996 Min:      3 Act:    6 Avg:    7 Max:      51\n"
        );
    }
}
