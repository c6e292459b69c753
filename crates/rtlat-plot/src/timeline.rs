//! The timeline plot (`-k timeline`), OSADL's long-term plot: each
//! interval's maximum, and its p99 where the input has it, against the
//! wall-clock time of the interval's end, two lines per thread, from
//! `--stats-file` lines or a monitor checkpoint's `"timeline"`
//! ([`rtlat_results::timeline`]). This module makes the [`Figure`] (plain
//! data, unit-tested); [`crate::render`] draws it.
//!
//! - The time axis is labelled in the local time zone (`TZ`, through
//!   jiff), named in its description with the first and last time: the
//!   time of day, with dates for spans over a day.
//! - Latency is on a linear axis, as OSADL draws it (its log scales are
//!   for counts of samples), from 0.
//! - Each interval's figure is a step over the interval, from its start
//!   (the previous interval's end) to its end, as OSADL's 5-minute maxima
//!   hold for their 5 minutes; an interval without samples (`null`
//!   figures) is a gap in its thread's lines. (Steps also keep a thick
//!   line's corners square: the bitmap backend draws the joins of
//!   spikes, acute angles, far past their points.)
//! - More points than pixels: each pixel column keeps its largest value,
//!   so no maximum is lost from sight.

use std::ops::Range;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use rtlat_results::timeline::{StatsLine, Timeline};

use crate::render::{Axes, Figure, Line, TITLE_LIMIT, clip, format_us, legend_names};

/// Time-axis steps, ms: the smallest that gives few enough labels is
/// taken.
const STEPS_MS: [i64; 27] = [
    100,
    200,
    500,
    1_000,
    2_000,
    5_000,
    10_000,
    15_000,
    30_000,
    60_000,
    2 * 60_000,
    5 * 60_000,
    10 * 60_000,
    15 * 60_000,
    30 * 60_000,
    HOUR_MS,
    2 * HOUR_MS,
    3 * HOUR_MS,
    6 * HOUR_MS,
    12 * HOUR_MS,
    DAY_MS,
    2 * DAY_MS,
    7 * DAY_MS,
    14 * DAY_MS,
    30 * DAY_MS,
    91 * DAY_MS,
    365 * DAY_MS,
];
const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

/// The timeline figure of `inputs`, titled `title` or after the inputs,
/// times in `tz`; `width` is the picture's width in pixels.
pub fn figure(inputs: &[Timeline], title: Option<&str>, width: u32, tz: &TimeZone) -> Figure {
    let named: Vec<(&str, &str)> = inputs
        .iter()
        .map(|i| (i.stem.as_str(), i.name.as_str()))
        .collect();
    let prefixes = legend_names(&named);
    let several = inputs.len() > 1;
    let all = || inputs.iter().flat_map(|i| &i.lines);
    let (first_end, last) = all().fold((f64::MAX, f64::MIN), |(lo, hi), l| {
        (lo.min(l.time), hi.max(l.time))
    });
    let length = interval_length(inputs);
    // The time shown starts where the first interval did.
    let first = all()
        .map(|l| l.time - interval_span(l, length))
        .fold(first_end, f64::min);
    let x = time_range(first, last);
    // One pixel of the plotting area (about 85 % of the picture).
    let column = (x.end - x.start) / (f64::from(width) * 0.85);
    // The end of a largest maximum's interval: the time of day, the date
    // too over days, tenths of seconds for intervals under a second.
    let day = |t: f64| clock(t, tz, "%Y-%m-%d");
    let when_format = match (day(first) == day(last), length) {
        (true, Some(s)) if s < 1.0 => "%H:%M:%S%.1f",
        (true, _) => "%H:%M:%S",
        (false, _) => "%Y-%m-%d %H:%M:%S",
    };

    let mut lines = Vec::new();
    let mut top: Option<(f64, String)> = None;
    for (input, prefix) in inputs.iter().zip(&prefixes) {
        for thread in input.threads() {
            let mut mine: Vec<&StatsLine> =
                input.lines.iter().filter(|l| l.thread == thread).collect();
            mine.sort_by(|a, b| a.time.total_cmp(&b.time).then(a.interval.cmp(&b.interval)));
            let name = match several {
                true => format!("{prefix} thread {thread}"),
                false => format!("thread {thread}"),
            };
            let largest = mine
                .iter()
                .filter_map(|l| l.max.map(|m| (m, l.time)))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            let label = match largest {
                Some((max, at)) => {
                    let when = clock(at, tz, when_format);
                    if top.as_ref().is_none_or(|t| max > t.0) {
                        top = Some((max, name.clone()));
                    }
                    format!(
                        "{name} max (largest {} µs, interval ending {when})",
                        format_us(max)
                    )
                }
                None => format!("{name} max (no samples)"),
            };
            let colour = lines.iter().filter(|l: &&Line| !l.faint).count();
            // The first interval's start: its step is drawn from there,
            // a line even when it is the only one.
            let start = mine
                .first()
                .map_or(0.0, |l| l.time - interval_span(l, length));
            let series = |value: fn(&StatsLine) -> Option<f64>| {
                let points: Vec<(f64, f64)> = mine
                    .iter()
                    .map(|l| (l.time, value(l).unwrap_or(f64::NAN)))
                    .collect();
                steps(&on_time_columns(&points, x.start, column), start)
            };
            lines.push(Line {
                label,
                points: series(|l| l.max),
                colour,
                faint: false,
            });
            if mine.iter().any(|l| l.p99.is_some()) {
                lines.push(Line {
                    label: format!("{name} p99"),
                    points: series(|l| l.p99),
                    colour,
                    faint: true,
                });
            }
        }
    }
    let y = latency_range(&lines);

    let most = (f64::from(width) / 120.0).clamp(3.0, 12.0) as i64;
    let ticks = time_ticks(&x, tz, most);
    let zone = Timestamp::from_millisecond((first * 1000.0).round() as i64)
        .map(|t| t.to_zoned(tz.clone()).strftime("%Z").to_string())
        .unwrap_or_default();
    let from = clock(first, tz, "%Y-%m-%d %H:%M:%S");
    let to = clock(last, tz, "%Y-%m-%d %H:%M:%S");
    let to = match (from.split_once(' '), to.split_once(' ')) {
        (Some((day, _)), Some((same, time))) if day == same => time.to_string(),
        _ => to,
    };
    let mut x_desc = format!("Time ({zone}), {from} to {to}");
    if first == last {
        x_desc = format!("Time ({zone}), {from}");
    }
    let y_desc = match &top {
        Some((max, _)) => format!("Latency (µs), maximum {} µs", format_us(*max)),
        None => "Latency (µs)".to_string(),
    };
    let title = match title {
        Some(t) => t.to_string(),
        None => clip(
            &format!(
                "Latency over time: {}",
                inputs
                    .iter()
                    .map(|i| i.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            TITLE_LIMIT,
        ),
    };
    Figure {
        title,
        subtitle: Some(subtitle(inputs)),
        x_desc,
        y_desc,
        axes: Axes::Timeline { x, ticks, y },
        lines,
    }
    .displayable()
}

/// What was drawn: the figures of each interval, their length, the
/// threads, and the lines cut short that were skipped.
fn subtitle(inputs: &[Timeline]) -> String {
    let with_p99 = inputs
        .iter()
        .flat_map(|i| &i.lines)
        .any(|l| l.p99.is_some());
    let figures = if with_p99 {
        "maximum and p99"
    } else {
        "maximum"
    };
    let length = match interval_length(inputs) {
        Some(s) => format!(" {}", format_length(s)),
        None => String::new(),
    };
    let threads: usize = inputs.iter().map(|i| i.threads().len()).sum();
    // Intervals, not lines: the threads measure the same ones.
    let intervals: usize = inputs
        .iter()
        .map(|i| {
            let numbers: std::collections::BTreeSet<u64> =
                i.lines.iter().map(|l| l.interval).collect();
            numbers.len()
        })
        .sum();
    let mut text = format!(
        "{figures} of each{length} interval: {intervals} {}, {threads} {}",
        if intervals == 1 {
            "interval"
        } else {
            "intervals"
        },
        if threads == 1 { "thread" } else { "threads" },
    );
    let cut = inputs.iter().filter(|i| i.cut_last_line.is_some()).count();
    if cut > 0 {
        text.push_str(&format!(", {cut} last line cut short not drawn"));
    }
    text
}

/// The usual interval length, s: the median step of `elapsed` between a
/// thread's successive whole intervals, or, where no thread has two, the
/// median of the whole intervals' elapsed time shared by the intervals up
/// to theirs (intervals count from 0 at the start).
fn interval_length(inputs: &[Timeline]) -> Option<f64> {
    let mut steps = Vec::new();
    let mut shares = Vec::new();
    for input in inputs {
        for thread in input.threads() {
            let mut mine: Vec<&StatsLine> = input
                .lines
                .iter()
                .filter(|l| l.thread == thread && !l.partial)
                .collect();
            mine.sort_by_key(|l| l.interval);
            shares.extend(mine.iter().map(|l| l.elapsed / (l.interval as f64 + 1.0)));
            for pair in mine.windows(2) {
                let intervals = pair[1].interval.saturating_sub(pair[0].interval);
                if intervals > 0 {
                    steps.push((pair[1].elapsed - pair[0].elapsed) / intervals as f64);
                }
            }
        }
    }
    if steps.is_empty() {
        steps = shares;
    }
    steps.sort_by(f64::total_cmp);
    steps.get(steps.len() / 2).copied().filter(|s| *s > 0.0)
}

/// How long `line`'s interval lasted, s, up to its end: `length` (the
/// usual length), or less for a last interval cut short (`partial`: the
/// elapsed time past the whole intervals before it). Without a usual
/// length (no thread has two whole intervals in a row: a run shorter than
/// two of them, such as a minute of `rtlat monitor` with its 5-minute
/// intervals), the elapsed time shared evenly by the intervals up to this
/// one: a run's only interval lasted the whole run.
fn interval_span(line: &StatsLine, length: Option<f64>) -> f64 {
    let even = line.elapsed / (line.interval as f64 + 1.0);
    match length {
        Some(l) if line.partial => {
            let past = line.elapsed - line.interval as f64 * l;
            if past > 0.0 && past <= l { past } else { l }
        }
        Some(l) => l,
        None => even,
    }
}

/// An interval's length for a label: whole hours or minutes as such,
/// else seconds with up to 3 decimals.
fn format_length(s: f64) -> String {
    let whole = |unit: f64| s >= unit && (s / unit).fract().abs() < 1e-9;
    if whole(3600.0) {
        format!("{} h", s / 3600.0)
    } else if whole(60.0) {
        format!("{} min", s / 60.0)
    } else {
        let text = format!("{s:.3}");
        format!("{} s", text.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// `unix_s` in `tz` as `format` (jiff's strftime).
fn clock(unix_s: f64, tz: &TimeZone, format: &str) -> String {
    Timestamp::from_millisecond((unix_s * 1000.0).round() as i64)
        .map(|t| t.to_zoned(tz.clone()).strftime(format).to_string())
        .unwrap_or_else(|_| format!("{unix_s}"))
}

/// The time axis from `first` to `last` (Unix s): 2 % more on each side,
/// a minute around a single time.
pub fn time_range(first: f64, last: f64) -> Range<f64> {
    let span = last - first;
    if span <= 0.0 {
        return first - 30.0..last + 30.0;
    }
    first - span * 0.02..last + span * 0.02
}

/// The latency axis over every point of `lines`: from 0 (or below, for
/// negative latencies) up to a third more than the largest, room for the
/// legend.
fn latency_range(lines: &[Line]) -> Range<f64> {
    let values = || {
        lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .filter(|v| v.is_finite())
    };
    let hi = values().fold(f64::MIN, f64::max);
    let lo = values().fold(0.0, f64::min) * 1.1;
    let hi = if hi > lo {
        hi + (hi - lo) / 3.0
    } else {
        lo + 10.0
    };
    lo..hi
}

/// `points` (sorted by x) on columns `column` wide from `origin`:
/// unchanged when there are no more points than twice the columns they
/// span; otherwise each column keeps its largest value (a gap, NaN, only
/// where all of its points are gaps), at that point's x.
pub fn on_time_columns(points: &[(f64, f64)], origin: f64, column: f64) -> Vec<(f64, f64)> {
    let Some(&(last, _)) = points.last() else {
        return Vec::new();
    };
    let columns = ((last - points[0].0) / column).ceil().max(1.0);
    if column <= 0.0 || points.len() as f64 <= 2.0 * columns {
        return points.to_vec();
    }
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut current = None;
    for &(x, y) in points {
        let k = ((x - origin) / column).floor() as i64;
        match out.last_mut() {
            Some(kept) if current == Some(k) => {
                if kept.1.is_nan() || y > kept.1 {
                    *kept = (x, y);
                }
            }
            _ => {
                out.push((x, y));
                current = Some(k);
            }
        }
    }
    out
}

/// The step line of `points` (interval ends, sorted; NaN for a gap): each
/// point's value from the previous point's x (from `start` for the first)
/// to its own, two points per interval so that the step lines of two
/// figures of the same intervals have the same x's.
pub fn steps(points: &[(f64, f64)], start: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    let mut start = start;
    for &(x, y) in points {
        if y.is_nan() {
            out.push((x, f64::NAN));
        } else {
            out.push((start, y));
            out.push((x, y));
        }
        start = x;
    }
    out
}

/// Where to label the time axis `x` (Unix s) in `tz`, and how: at most
/// about `most` labels, on round times of day (whole seconds, minutes,
/// hours, local midnights); the time of day within a day, dates beside it
/// over longer spans, dates alone for steps of days.
pub fn time_ticks(x: &Range<f64>, tz: &TimeZone, most: i64) -> Vec<(f64, String)> {
    let start = (x.start * 1000.0).floor() as i64;
    let end = (x.end * 1000.0).ceil() as i64;
    let span = (end - start).max(1);
    let step = STEPS_MS
        .iter()
        .copied()
        .find(|s| span / s < most)
        .unwrap_or(STEPS_MS[STEPS_MS.len() - 1]);
    let offset_ms = |ms: i64| {
        Timestamp::from_millisecond(ms)
            .map(|t| i64::from(tz.to_offset(t).seconds()) * 1000)
            .unwrap_or(0)
    };
    // Round in local time: the first multiple of the step after the start.
    let offset = offset_ms(start);
    let first = (start + offset).div_euclid(step) * step + step - offset;
    let same_day = {
        let day = |ms: i64| (ms + offset_ms(ms)).div_euclid(DAY_MS);
        day(start) == day(end)
    };
    let format = match step {
        s if s >= DAY_MS => "%Y-%m-%d",
        s if s < 1_000 => "%H:%M:%S%.1f",
        s if s < 60_000 => "%H:%M:%S",
        _ if same_day => "%H:%M",
        _ => "%m-%d %H:%M",
    };
    let mut ticks = Vec::new();
    let mut t = if first - step >= start {
        first - step
    } else {
        first
    };
    while t <= end {
        let at = t as f64 / 1000.0;
        ticks.push((at, clock(at, tz, format)));
        t += step;
    }
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_results::timeline::TimelineFormat;

    fn line(
        thread: usize,
        interval: u64,
        time: f64,
        max: Option<f64>,
        p99: Option<f64>,
    ) -> StatsLine {
        StatsLine {
            time,
            elapsed: (interval + 1) as f64 * 0.5,
            thread,
            interval,
            cycles: if max.is_some() { 500 } else { 0 },
            min: max.map(|m| m / 10.0),
            avg: max.map(|m| m / 5.0),
            max,
            p99,
            overruns: 0,
            partial: false,
        }
    }

    fn timeline(stem: &str, lines: Vec<StatsLine>) -> Timeline {
        Timeline {
            name: format!("dir/{stem}.jsonl"),
            stem: stem.to_string(),
            format: TimelineFormat::StatsFile,
            lines,
            cut_last_line: None,
        }
    }

    /// 2026-11-25 14:00:00 UTC.
    const T0: f64 = 1_795_615_200.0;

    fn two_threads() -> Timeline {
        let mut lines = Vec::new();
        for k in 0..4 {
            let t = T0 + 0.5 * (k + 1) as f64;
            lines.push(line(0, k, t, Some(10.0 + k as f64), Some(5.0)));
            lines.push(line(1, k, t, Some(20.0 - k as f64), Some(7.5)));
        }
        // Thread 1 took no sample in interval 4.
        lines.push(line(1, 4, T0 + 2.5, None, None));
        lines.push(line(1, 5, T0 + 3.0, Some(90.25), Some(8.0)));
        timeline("stats", lines)
    }

    #[test]
    fn two_lines_a_thread_with_gaps_where_no_sample_was_taken() {
        let f = figure(&[two_threads()], None, 1000, &TimeZone::UTC);
        assert_eq!(f.title, "Latency over time: dir/stats.jsonl");
        assert_eq!(
            f.subtitle.as_deref(),
            Some("maximum and p99 of each 0.5 s interval: 6 intervals, 2 threads")
        );
        assert_eq!(f.x_desc, "Time (UTC), 2026-11-25 14:00:00 to 14:00:03");
        assert_eq!(f.y_desc, "Latency (µs), maximum 90.2 µs");
        let labels: Vec<(&str, usize, bool)> = f
            .lines
            .iter()
            .map(|l| (l.label.as_str(), l.colour, l.faint))
            .collect();
        assert_eq!(
            labels,
            [
                (
                    "thread 0 max (largest 13 µs, interval ending 14:00:02.0)",
                    0,
                    false
                ),
                ("thread 0 p99", 0, true),
                (
                    "thread 1 max (largest 90.2 µs, interval ending 14:00:03.0)",
                    1,
                    false
                ),
                ("thread 1 p99", 1, true),
            ]
        );
        // Steps over each interval, from its start (half a second before
        // the first end) to its end.
        assert_eq!(
            f.lines[0].points,
            [
                (T0, 10.0),
                (T0 + 0.5, 10.0),
                (T0 + 0.5, 11.0),
                (T0 + 1.0, 11.0),
                (T0 + 1.0, 12.0),
                (T0 + 1.5, 12.0),
                (T0 + 1.5, 13.0),
                (T0 + 2.0, 13.0)
            ]
        );
        let gap = &f.lines[2].points[8];
        assert!(gap.1.is_nan() && gap.0 == T0 + 2.5, "{gap:?}");
        assert_eq!(
            f.lines[2].points[9..],
            [(T0 + 2.5, 90.25), (T0 + 3.0, 90.25)]
        );
        assert_eq!(f.lines[3].points[9..], [(T0 + 2.5, 8.0), (T0 + 3.0, 8.0)]);
        // The p99 steps share the max's x's.
        let xs = |l: &Line| l.points.iter().map(|p| p.0).collect::<Vec<f64>>();
        assert_eq!(xs(&f.lines[0]), xs(&f.lines[1]));
        assert_eq!(xs(&f.lines[2]), xs(&f.lines[3]));
        let Axes::Timeline { x, ticks, y } = &f.axes else {
            panic!("{:?}", f.axes)
        };
        assert!(x.start < T0 && x.end > T0 + 3.0, "{x:?}");
        assert_eq!(y.start, 0.0);
        assert!(y.end > 90.25 * 1.3, "{y:?}");
        let labels: Vec<&str> = ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(
            labels,
            [
                "14:00:00.0",
                "14:00:00.5",
                "14:00:01.0",
                "14:00:01.5",
                "14:00:02.0",
                "14:00:02.5",
                "14:00:03.0"
            ]
        );
    }

    #[test]
    fn without_p99_one_line_a_thread() {
        let mut old = two_threads();
        for l in &mut old.lines {
            l.p99 = None;
        }
        let f = figure(&[old], Some("mine"), 1000, &TimeZone::UTC);
        assert_eq!(f.title, "mine");
        assert_eq!(f.lines.len(), 2);
        assert!(f.lines.iter().all(|l| !l.faint));
        assert_eq!((f.lines[0].colour, f.lines[1].colour), (0, 1));
        assert!(
            f.subtitle
                .unwrap()
                .starts_with("maximum of each 0.5 s interval")
        );
        // Negative latencies (a clock stepped back) stay on the axis.
        let mut negative = two_threads();
        negative.lines[0].max = Some(-4.0);
        let f = figure(&[negative], None, 1000, &TimeZone::UTC);
        let Axes::Timeline { y, .. } = &f.axes else {
            panic!("{:?}", f.axes)
        };
        assert!(y.start <= -4.0, "{y:?}");
    }

    #[test]
    fn several_inputs_are_named_in_the_legend() {
        let a = two_threads();
        let mut b = two_threads();
        b.stem = "other".into();
        b.cut_last_line = Some(11);
        let f = figure(&[a, b], None, 1000, &TimeZone::UTC);
        assert_eq!(f.lines.len(), 8);
        assert!(
            f.lines[4].label.starts_with("other thread 0 max"),
            "{:?}",
            f.lines[4]
        );
        assert_eq!(f.lines[7].colour, 3);
        assert!(
            f.subtitle
                .unwrap()
                .ends_with(", 1 last line cut short not drawn")
        );
    }

    #[test]
    fn ticks_fall_on_round_local_times_with_dates_over_days() {
        let utc = TimeZone::UTC;
        let labels = |from: f64, to: f64, tz: &TimeZone| -> Vec<String> {
            time_ticks(&(from..to), tz, 8)
                .into_iter()
                .map(|t| t.1)
                .collect()
        };
        // Two hours: every half hour, the time of day.
        assert_eq!(
            labels(T0 - 60.0, T0 + 7_200.0, &utc),
            ["14:00", "14:30", "15:00", "15:30", "16:00"]
        );
        // Past midnight: dates beside the times.
        let across = labels(T0 + 6.0 * 3_600.0, T0 + 16.0 * 3_600.0, &utc);
        assert_eq!(across.first().unwrap(), "11-25 20:00");
        assert!(across.contains(&"11-26 00:00".to_string()), "{across:?}");
        // Weeks: dates alone, at midnight.
        let weeks = labels(T0, T0 + 40.0 * 86_400.0, &utc);
        assert_eq!(weeks.first().unwrap(), "2026-11-26");
        assert!(weeks.iter().all(|l| l.len() == 10), "{weeks:?}");
        // A zone an hour ahead of UTC (CET): the ticks on its
        // round hours.
        let cet = TimeZone::fixed(jiff::tz::offset(1));
        let local = time_ticks(&(T0 + 1_800.0..T0 + 6.0 * 3_600.0), &cet, 8);
        assert_eq!(local[0].1, "16:00");
        assert_eq!(local[0].0, T0 + 3_600.0);
    }

    /// What `rtlat monitor` records of a run shorter than its 5-minute
    /// intervals: one partial interval per thread.
    fn one_partial_interval(seconds: f64) -> Timeline {
        let lines = (0..2)
            .map(|thread| StatsLine {
                elapsed: seconds,
                partial: true,
                ..line(
                    thread,
                    0,
                    T0 + seconds,
                    Some(40.0 + thread as f64),
                    Some(9.0),
                )
            })
            .collect();
        timeline("monitor", lines)
    }

    #[test]
    fn a_run_shorter_than_two_intervals_is_a_line_from_its_start() {
        // A minute's monitor run: each thread's one (partial) interval is a
        // step over the whole minute, not a dot at its end.
        let f = figure(&[one_partial_interval(60.0)], None, 1000, &TimeZone::UTC);
        assert_eq!(f.lines.len(), 4);
        assert_eq!(f.lines[0].points, [(T0, 40.0), (T0 + 60.0, 40.0)]);
        assert_eq!(f.lines[1].points, [(T0, 9.0), (T0 + 60.0, 9.0)]);
        assert_eq!(f.lines[2].points, [(T0, 41.0), (T0 + 60.0, 41.0)]);
        let Axes::Timeline { x, .. } = &f.axes else {
            panic!("{:?}", f.axes)
        };
        assert!(x.start < T0 && x.start > T0 - 5.0, "{x:?}");
        assert!(x.end > T0 + 60.0 && x.end < T0 + 65.0, "{x:?}");
        assert_eq!(f.x_desc, "Time (UTC), 2026-11-25 14:00:00 to 14:01:00");
        // One interval, which both threads measured.
        assert_eq!(
            f.subtitle.as_deref(),
            Some("maximum and p99 of each interval: 1 interval, 2 threads")
        );
    }

    #[test]
    fn the_first_interval_is_a_step_whatever_follows() {
        // One whole interval and a partial one (6 minutes of a monitor):
        // no two whole intervals give the usual length, the whole one's
        // elapsed time does.
        let whole = StatsLine {
            elapsed: 300.0,
            ..line(0, 0, T0 + 300.0, Some(30.0), None)
        };
        let partial = StatsLine {
            elapsed: 360.0,
            partial: true,
            ..line(0, 1, T0 + 360.0, Some(50.0), None)
        };
        let f = figure(
            &[timeline("m", vec![whole, partial])],
            None,
            1000,
            &TimeZone::UTC,
        );
        assert_eq!(
            f.subtitle.as_deref(),
            Some("maximum of each 5 min interval: 2 intervals, 1 thread")
        );
        assert_eq!(
            f.lines[0].points,
            [
                (T0, 30.0),
                (T0 + 300.0, 30.0),
                (T0 + 300.0, 50.0),
                (T0 + 360.0, 50.0)
            ]
        );
        // A partial first interval after whole ones of a known length
        // lasted what the elapsed time says past them.
        let l = |interval: u64, elapsed: f64, partial: bool| StatsLine {
            elapsed,
            partial,
            ..line(0, interval, 0.0, None, None)
        };
        assert_eq!(interval_span(&l(3, 1.75, true), Some(0.5)), 0.25);
        assert_eq!(interval_span(&l(3, 2.0, false), Some(0.5)), 0.5);
        assert_eq!(interval_span(&l(0, 60.0, true), None), 60.0);
        assert_eq!(interval_span(&l(1, 360.0, true), None), 180.0);
    }

    #[test]
    fn interval_lengths() {
        assert_eq!(format_length(0.1), "0.1 s");
        assert_eq!(format_length(2.0), "2 s");
        assert_eq!(format_length(90.0), "90 s");
        assert_eq!(format_length(300.0), "5 min");
        assert_eq!(format_length(7200.0), "2 h");
    }

    #[test]
    fn dense_points_keep_each_columns_largest() {
        let points: Vec<(f64, f64)> = (0..1000)
            .map(|k| (k as f64, if k == 437 { 500.0 } else { (k % 7) as f64 }))
            .collect();
        let kept = on_time_columns(&points, 0.0, 10.0);
        assert_eq!(kept.len(), 100);
        assert!(kept.contains(&(437.0, 500.0)), "{kept:?}");
        assert!(
            kept.iter()
                .all(|p| p.1 >= 6.0 || p.0 >= 990.0 || p.1 == 500.0)
        );
        // Few points: unchanged, gaps included.
        let few = [(0.0, 1.0), (10.0, f64::NAN), (20.0, 3.0)];
        let kept = on_time_columns(&few, 0.0, 1.0);
        assert_eq!(kept.len(), 3);
        assert!(kept[1].1.is_nan());
        // A column of gaps stays a gap; a gap beside a value gives way.
        let mut gappy: Vec<(f64, f64)> = (0..100).map(|k| (k as f64, 1.0)).collect();
        for p in &mut gappy[40..60] {
            p.1 = f64::NAN;
        }
        let kept = on_time_columns(&gappy, 0.0, 10.0);
        assert_eq!(kept.len(), 10);
        assert!(kept[4].1.is_nan() && kept[5].1.is_nan(), "{kept:?}");
        assert_eq!(kept[3].1, 1.0);
    }
}
