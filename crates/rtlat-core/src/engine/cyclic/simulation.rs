//! The measuring loop under a scripted clock, held to cyclictest's rules
//! (rt-tests 2.4, as the behaviour reference states them) in one table:
//! each row is a run of `cyclic::measure` whose wake-ups come when the script
//! says, and the figures the thread publishes are compared with what the
//! C tool computes for the same wake-ups.
//!
//! The rules the rows cover:
//! - absolute deadlines one period apart, the first one period after the
//!   start, and the first sample counts (no warm-up);
//! - a sample is `now − deadline` truncated to whole µs per component,
//!   toward zero, before min, max and sum; the average shown is the sum
//!   divided by the count, truncated again;
//! - a wake-up later than the following deadlines skips them (C skips them
//!   silently; rtlat counts them as overruns);
//! - `-b`: the first sample strictly above the threshold ends the thread,
//!   and counts;
//! - `-D`: the first sample at or after the end counts and ends the thread;
//! - (rtlat's own, C keeps none) the time of the maximum is the deadline of
//!   the largest sample in ns, the first of equal ones.

use rtlat_sys::clock::Timespec;

use super::{LoopParams, measure_alone};
use crate::config::WaitMode;
use crate::engine::source::{TimeSource, WaitError};
use crate::engine::time::{self, Period};
use crate::slot::LoopEnd;
use crate::stats::ThreadChannel;
use crate::units::{ClockInstant, Resolution};

/// The period of every row: 1 ms.
const PERIOD_NS: i64 = 1_000_000;
/// The start of every run: mid-second, so that no deadline of a short run
/// crosses a second (where C's per-component truncation shows too).
const START_NS: i64 = 7_000_200_000;

/// A clock whose absolute sleeps end `late[k]` ns after the k-th deadline
/// (after the current time if that deadline has already passed); negative
/// for a wake-up before it. The script running out ends the loop.
struct ScriptedWakeups {
    now_ns: i64,
    late: &'static [i64],
    wakes: usize,
}

impl TimeSource for ScriptedWakeups {
    fn now(&mut self) -> Timespec {
        time::from_nanos(self.now_ns)
    }

    fn sleep_until(&mut self, deadline: &Timespec) -> Result<(), WaitError> {
        let late = *self.late.get(self.wakes).ok_or(WaitError::Exhausted)?;
        self.wakes += 1;
        self.now_ns = self.now_ns.max(time::to_nanos(deadline)) + late;
        Ok(())
    }

    fn sleep_for(&mut self, _span: Period) -> Result<(), WaitError> {
        unreachable!("the rows sleep to absolute deadlines")
    }
}

/// One scenario and the figures cyclictest gives for it.
struct Row {
    name: &'static str,
    /// How late each wake-up is, ns.
    late: &'static [i64],
    /// `-b`, µs.
    break_us: Option<i64>,
    /// `-D`, ns after the start.
    duration_ns: Option<i64>,
    /// Expected: samples counted, min, max, average shown (µs), periods
    /// skipped, how the loop ended, and the time of the ns maximum (ns
    /// after the start).
    cycles: u64,
    min: i64,
    max: i64,
    avg: i64,
    missed: u64,
    end: LoopEnd,
    max_at: i64,
}

const ROWS: &[Row] = &[
    Row {
        name: "the first sample counts",
        late: &[4_000, 6_000, 5_000],
        break_us: None,
        duration_ns: None,
        cycles: 3,
        min: 4,
        max: 6,
        avg: 5,
        missed: 0,
        end: LoopEnd::Loops,
        max_at: 2 * PERIOD_NS,
    },
    Row {
        name: "each sample truncated to whole us before the sum",
        // 1.999 + 1.999 + 2.999 us: 1 + 1 + 2 = 4 (not 6.997).
        late: &[1_999, 1_999, 2_999],
        break_us: None,
        duration_ns: None,
        cycles: 3,
        min: 1,
        max: 2,
        avg: 1,
        missed: 0,
        end: LoopEnd::Loops,
        max_at: 3 * PERIOD_NS,
    },
    Row {
        name: "the average truncated, not rounded",
        // 10 + 10 + 11 = 31 us over 3: 10.33 shows as 10.
        late: &[10_500, 10_999, 11_000],
        break_us: None,
        duration_ns: None,
        cycles: 3,
        min: 10,
        max: 11,
        avg: 10,
        missed: 0,
        end: LoopEnd::Loops,
        max_at: 3 * PERIOD_NS,
    },
    Row {
        name: "an early wake-up truncated toward zero",
        // -1.5 us is -1 (toward zero, not -2).
        late: &[-1_500, 3_700],
        break_us: None,
        duration_ns: None,
        cycles: 2,
        min: -1,
        max: 3,
        avg: 1,
        missed: 0,
        end: LoopEnd::Loops,
        max_at: 2 * PERIOD_NS,
    },
    Row {
        name: "missed periods skipped and counted",
        // The second wake-up, 2.3 periods late, passes two deadlines: the
        // third sample is taken at the deadline after them.
        late: &[10_000, 2_300_000, 10_000, 10_000],
        break_us: None,
        duration_ns: None,
        cycles: 4,
        min: 10,
        max: 2_300,
        avg: 582,
        missed: 2,
        end: LoopEnd::Loops,
        max_at: 2 * PERIOD_NS,
    },
    Row {
        name: "a wake-up exactly one period late skips nothing",
        // now == the next deadline: not after it, so it is still waited for.
        late: &[1_000_000, 0],
        break_us: None,
        duration_ns: None,
        cycles: 2,
        min: 0,
        max: 1_000,
        avg: 500,
        missed: 0,
        end: LoopEnd::Loops,
        max_at: PERIOD_NS,
    },
    Row {
        name: "-b: the first sample above the threshold stops the thread",
        late: &[5_000, 30_000, 7_000, 8_000],
        break_us: Some(25),
        duration_ns: None,
        cycles: 2,
        min: 5,
        max: 30,
        avg: 17,
        missed: 0,
        end: LoopEnd::Break(30),
        max_at: 2 * PERIOD_NS,
    },
    Row {
        name: "-b: a sample at the threshold does not",
        late: &[25_000, 25_999, 3_000],
        break_us: Some(25),
        duration_ns: None,
        cycles: 3,
        min: 3,
        max: 25,
        avg: 17,
        missed: 0,
        end: LoopEnd::Loops,
        max_at: 2 * PERIOD_NS,
    },
    Row {
        name: "-D: the sample at the end counts and ends the thread",
        late: &[10_000, 10_000, 10_000, 10_000, 10_000],
        break_us: None,
        duration_ns: Some(3 * PERIOD_NS),
        cycles: 3,
        min: 10,
        max: 10,
        avg: 10,
        missed: 0,
        end: LoopEnd::Duration,
        max_at: PERIOD_NS,
    },
    Row {
        name: "equal maxima: the first one's deadline is the time",
        late: &[5_000, 9_000, 3_000, 9_000],
        break_us: None,
        duration_ns: None,
        cycles: 4,
        min: 3,
        max: 9,
        avg: 6,
        missed: 0,
        end: LoopEnd::Loops,
        max_at: 2 * PERIOD_NS,
    },
    Row {
        name: "the time follows the ns maximum, not the first equal us one",
        // All three show as 7 us; the second, 7.9 us, is the maximum.
        late: &[7_500, 7_900, 7_000],
        break_us: None,
        duration_ns: None,
        cycles: 3,
        min: 7,
        max: 7,
        avg: 7,
        missed: 0,
        end: LoopEnd::Loops,
        max_at: 2 * PERIOD_NS,
    },
    Row {
        name: "the time of the maximum counts the skipped periods",
        // The second wake-up skips the deadlines at 3 and 4 ms; the fourth
        // sample, the largest, is the one of the deadline at 6 ms (and
        // skips two more).
        late: &[10_000, 2_300_000, 10_000, 3_000_000],
        break_us: None,
        duration_ns: None,
        cycles: 4,
        min: 10,
        max: 3_000,
        avg: 1_330,
        missed: 4,
        end: LoopEnd::Loops,
        max_at: 6 * PERIOD_NS,
    },
];

/// Runs `row` and returns the figures its thread published.
fn run(row: &Row) -> (u64, i64, i64, i64, u64, LoopEnd, Option<i64>) {
    let mut source = ScriptedWakeups {
        now_ns: START_NS,
        late: row.late,
        wakes: 0,
    };
    let channel = ThreadChannel::default();
    let params = LoopParams {
        thread: 0,
        interval: Period::from_nanos(PERIOD_NS),
        wait: WaitMode::Absolute,
        resolution: Resolution::Micros,
        loops: Some(row.late.len() as u64),
        duration: row.duration_ns.map(Period::from_nanos),
        start: None,
        break_threshold: row.break_us,
        spike_trigger: None,
        warmup: None,
        interval_length: None,
        explain: None,
    };
    let end = measure_alone(&mut source, &params, &channel);
    let compat = channel.slot.compat();
    (
        compat.cycles,
        compat.min,
        compat.max,
        compat.avg_truncated(),
        channel.slot.precise().overruns,
        end,
        channel
            .slot
            .max_at()
            .map(|at| at.since(ClockInstant(START_NS)).as_nanos()),
    )
}

#[test]
fn the_loop_follows_cyclictest_rules() {
    let mut wrong = Vec::new();
    for row in ROWS {
        let expected = (
            row.cycles,
            row.min,
            row.max,
            row.avg,
            row.missed,
            row.end,
            Some(row.max_at),
        );
        let got = run(row);
        if got != expected {
            wrong.push(format!(
                "{}: got {got:?}, expected {expected:?} \
                 (cycles, min, max, avg, missed, end, max_at)",
                row.name
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
