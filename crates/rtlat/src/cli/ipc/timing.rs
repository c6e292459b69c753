//! Each pair's interval and real-time priority: `-i`, `-d` and `-p`,
//! turned into the pairs' plans.

use rtlat_args::UsageError;
use rtlat_args::values::{int, int_in, invalid};
use rtlat_core::Nanos;
use rtlat_core::SchedPolicy;
use rtlat_core::ipc::PairPlan;

use super::flags::name;
use super::pairs::Pinning;
use super::raw::{MAX_US, Raw};
use crate::ipc::PairTool;

/// The plans of `npairs` pairs: pair i pauses `-i` plus i times `-d`
/// microseconds; pair 0 runs at `-p`, each further pair one less down to 1
/// (sigwaittest: down to 0), all at `-p` with `-S`.
pub(super) fn plans(
    tool: PairTool,
    raw: &Raw,
    npairs: usize,
    pinning: &Pinning,
    allowed: &[usize],
) -> Result<Vec<PairPlan>, UsageError> {
    let (interval, distance) = intervals(raw, npairs)?;
    let priority = match &raw.priority {
        Some(text) => int_in(
            name("priority"),
            text,
            0..=99,
            "a real-time priority (0: none)",
        )?,
        None => 0,
    };
    let same_priority = raw.smp && raw.priority.is_some();
    let floor = if tool == PairTool::Sigwaittest { 0 } else { 1 };
    let mut prio = priority;
    let mut plans = Vec::with_capacity(npairs);
    for i in 0..npairs {
        plans.push(PairPlan {
            index: i,
            interval: Nanos::from_micros(interval + i as i64 * distance),
            policy: if prio > 0 {
                SchedPolicy::Fifo
            } else {
                SchedPolicy::Other
            },
            priority: prio as u8,
            cpu: pinning.cpu_of(i, allowed),
        });
        if !same_priority && prio > floor {
            prio -= 1;
        }
    }
    Ok(plans)
}

/// `-i` and `-d` (µs), checked so that the last pair's interval stays
/// within 0 to [`MAX_US`].
fn intervals(raw: &Raw, npairs: usize) -> Result<(i64, i64), UsageError> {
    let interval = match &raw.interval {
        Some(text) => int_in(
            name("interval"),
            text,
            0..=MAX_US,
            "a pause between hand-offs in microseconds (0: none)",
        )?,
        None => 1000,
    };
    let distance = match &raw.distance {
        Some(text) => int::<i64>(text).ok_or_else(|| {
            invalid(
                name("distance"),
                text,
                "expected a whole number of microseconds (may be negative)",
            )
        })?,
        None => 500,
    };
    let last = npairs as i128 - 1;
    let longest = i128::from(interval) + last * i128::from(distance);
    if last > 0 && !(0..=i128::from(MAX_US)).contains(&longest) {
        let text = raw.distance.clone().unwrap_or_else(|| distance.to_string());
        return Err(invalid(
            name("distance"),
            &text,
            format_args!(
                "pair {last} would get an interval of {longest} us; with an interval of \
                 {interval} us and {npairs} pairs each pair's interval must stay within 0 to {MAX_US}"
            ),
        ));
    }
    Ok((interval, distance))
}
