//! How the threads keep time: the wait and measure methods (`-r`, `-s`,
//! `-x`, `--wait`, `--measure`), the clock (`-c`), the intervals (`-i`,
//! `-d`) and the alignment of the first deadlines (`-A`, `--secaligned`).

use rtlat_core::Nanos;
use rtlat_core::{Alignment, ClockKind, MeasureMode, WaitMode};

use super::flags::name;
use super::raw::{MAX_INTERVAL_US, Raw};
use rtlat_args::UsageError;
use rtlat_args::options::Name;
use rtlat_args::values::{OptionName, int, int_in, int_in_or, invalid};

/// How the threads wait and how the wake-up is read. C settles -s with -x
/// first of all.
pub(super) fn wait_and_measure(
    raw: &Raw,
    warnings: &mut Vec<String>,
) -> Result<(WaitMode, MeasureMode), UsageError> {
    let wait = if raw.system && raw.posix_timers {
        warnings.extend(
            [
                "WARN: The system option requires clock_nanosleep",
                "WARN: and is not compatible with posix_timers",
                "WARN: Using clock_nanosleep",
            ]
            .map(str::to_owned),
        );
        if raw.relative {
            WaitMode::Relative
        } else {
            WaitMode::Absolute
        }
    } else if raw.system {
        WaitMode::Nanosleep
    } else if raw.posix_timers {
        WaitMode::PosixTimer {
            armed_relative: raw.relative,
        }
    } else if raw.relative {
        WaitMode::Relative
    } else {
        WaitMode::Absolute
    };
    let wait = match &raw.wait {
        Some(text) => wait_method(raw, text)?,
        None => wait,
    };
    let measure = match &raw.measure {
        Some(text) => measure_method(raw, text, wait)?,
        None => MeasureMode::Clock,
    };
    Ok((wait, measure))
}

/// `-i` (µs) and `-d` as given (µs, checked against the threads later).
pub(super) fn interval_and_distance(raw: &Raw) -> Result<(i64, Option<i64>), UsageError> {
    let interval = int_in_or(
        name("interval"),
        raw.interval.as_deref(),
        1..=MAX_INTERVAL_US,
        "an interval in microseconds",
        1000,
    )?;
    let distance_given = match &raw.distance {
        Some(text) => Some(int::<i64>(text).ok_or_else(|| {
            invalid(
                name("distance"),
                text,
                "expected a whole number of microseconds (may be negative)",
            )
        })?),
        None => None,
    };
    Ok((interval, distance_given))
}

/// The distance between the threads' intervals: 0 with a histogram (as in
/// C, with a warning if `-d` was given), else `-d` or 500 µs, checked.
pub(super) fn distance(
    raw: &Raw,
    interval: i64,
    distance_given: Option<i64>,
    buckets: Option<i64>,
    nthreads: usize,
    warnings: &mut Vec<String>,
) -> Result<i64, UsageError> {
    if buckets.is_some() {
        if distance_given.is_some() {
            warnings
                .push("WARN: distance is ignored and set to 0, if histogram enabled".to_owned());
        }
        return Ok(0);
    }
    let distance = distance_given.unwrap_or(500);
    check_distance(raw, interval, distance, nthreads)?;
    Ok(distance)
}

/// `-c`: the clock of the deadlines.
pub(super) fn clock(raw: &Raw) -> Result<ClockKind, UsageError> {
    let Some(text) = &raw.clock else {
        return Ok(ClockKind::Monotonic);
    };
    match text.trim().to_ascii_lowercase().as_str() {
        "monotonic" => Ok(ClockKind::Monotonic),
        "realtime" => Ok(ClockKind::Realtime),
        t => match int::<i64>(t) {
            Some(0) => Ok(ClockKind::Monotonic),
            Some(1) => Ok(ClockKind::Realtime),
            _ => Err(invalid(
                name("clock"),
                text,
                "expected 0 or monotonic (CLOCK_MONOTONIC), 1 or realtime (CLOCK_REALTIME)",
            )),
        },
    }
}

/// `-A` or `--secaligned`, never both.
pub(super) fn alignment(raw: &Raw) -> Result<Option<Alignment>, UsageError> {
    let offset = |id: Name, value: &Option<String>| -> Result<Nanos, UsageError> {
        match value {
            Some(text) => Ok(Nanos::from_micros(int_in(
                id,
                text,
                0..=MAX_INTERVAL_US,
                "an offset in microseconds",
            )?)),
            None => Ok(Nanos(0)),
        }
    };
    match (&raw.aligned, &raw.secaligned) {
        (Some(a), None) => Ok(Some(Alignment::Threads {
            offset: offset(name("aligned"), a)?,
        })),
        (None, Some(s)) => Ok(Some(Alignment::NextSecond {
            offset: offset(name("secaligned"), s)?,
        })),
        (Some(a), Some(s)) => {
            offset(name("aligned"), a)?;
            offset(name("secaligned"), s)?;
            Err(UsageError(format!(
                "{} and {} cannot be used together",
                name("aligned").spelling(),
                name("secaligned").spelling()
            )))
        }
        (None, None) => Ok(None),
    }
}

/// `--wait METHOD`, checked against `-r`/`-s`/`-x`: they may repeat what
/// `--wait` says (`--wait rel -r`, `--wait posix-timer -x`, and `-r` with
/// posix-timer arms the timer relatively, as `-x -r` does), never
/// contradict it.
fn wait_method(raw: &Raw, text: &str) -> Result<WaitMode, UsageError> {
    let wait = match text.trim().to_ascii_lowercase().as_str() {
        "abs" | "absolute" => WaitMode::Absolute,
        "rel" | "relative" => WaitMode::Relative,
        "nanosleep" => WaitMode::Nanosleep,
        "posix-timer" | "posix_timer" => WaitMode::PosixTimer {
            armed_relative: raw.relative,
        },
        "timerfd" => WaitMode::Timerfd,
        "std-sleep" | "std_sleep" => WaitMode::StdSleep,
        "busy" => WaitMode::Busy,
        _ => {
            return Err(invalid(
                name("wait"),
                text,
                "expected one of abs, rel, nanosleep, posix-timer, timerfd, std-sleep, busy",
            ));
        }
    };
    let allowed: &[Name] = match wait {
        WaitMode::Relative => &[name("relative")],
        WaitMode::Nanosleep => &[name("system")],
        WaitMode::PosixTimer { .. } => &[name("posix_timers"), name("relative")],
        _ => &[],
    };
    let given = [
        (raw.relative, name("relative")),
        (raw.system, name("system")),
        (raw.posix_timers, name("posix_timers")),
    ];
    if let Some((_, clash)) = given.iter().find(|(set, id)| *set && !allowed.contains(id)) {
        return Err(UsageError(format!(
            "{} {}: cannot be combined with {}",
            name("wait").spelling(),
            wait.name(),
            clash.spelling(),
        )));
    }
    Ok(wait)
}

/// `--measure METHOD`, checked against the wait method and `--synthetic`.
fn measure_method(raw: &Raw, text: &str, wait: WaitMode) -> Result<MeasureMode, UsageError> {
    let measure = match text.trim().to_ascii_lowercase().as_str() {
        "clock" => MeasureMode::Clock,
        "tsc" => MeasureMode::Tsc,
        "timer" => MeasureMode::Timer,
        _ => {
            return Err(invalid(
                name("measure"),
                text,
                "expected one of clock, tsc, timer",
            ));
        }
    };
    let name = || format!("{} {}", name("measure").spelling(), measure.name());
    if measure == MeasureMode::Timer && wait != WaitMode::Timerfd {
        return Err(UsageError(format!(
            "{}: reads the timerfd's own time, so it needs --wait timerfd (not {})",
            name(),
            wait.name()
        )));
    }
    if measure != MeasureMode::Clock && raw.shared.synthetic.is_some() {
        return Err(UsageError(format!(
            "{}: measures real time, not the --synthetic clock",
            name()
        )));
    }
    Ok(measure)
}

/// Every thread's interval (`interval + i * distance`) must stay within
/// 1..=2147483647 µs.
fn check_distance(
    raw: &Raw,
    interval: i64,
    distance: i64,
    nthreads: usize,
) -> Result<(), UsageError> {
    let last = nthreads as i128 - 1;
    let longest = i128::from(interval) + last * i128::from(distance);
    let range = 1..=i128::from(MAX_INTERVAL_US);
    if last == 0 || range.contains(&longest) {
        return Ok(());
    }
    // The distances that keep the last thread in range.
    let lo = -((i128::from(interval) - 1).div_euclid(last));
    let hi = (i128::from(MAX_INTERVAL_US) - i128::from(interval)).div_euclid(last);
    let text = raw.distance.clone().unwrap_or_else(|| distance.to_string());
    Err(invalid(
        name("distance"),
        &text,
        format_args!(
            "thread {last} would get an interval of {longest} us; with an interval of \
             {interval} us and {nthreads} threads the distance must be {lo} to {hi}"
        ),
    ))
}
