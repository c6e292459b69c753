//! One late sample explained: its latency cut into the four stages of a
//! timer wake-up, each with what the CPU did meanwhile.
//!
//! The stages telescope between anchors found in the windows:
//!
//! ```text
//! deadline ── irq_latency ──> timer handler starts ── handler_to_wakeup ──>
//! sched_waking ── thread_latency ──> sched_switch into the thread ──
//! return_to_user ──> the thread reads its clock (wake)
//! ```
//!
//! so that with every anchor found they add up to the sample's latency
//! (within [`SUM_TOLERANCE_NS`]: the trace clock and the thread's clock are
//! the same CLOCK_MONOTONIC, read at slightly different instants). Within a
//! stage, each instant is given to what was innermost on the CPU then: an
//! NMI, else the innermost interrupt handler, softirq, vector or timer
//! callback, else the running task or the idle state.
//!
//! A latency that began before the trace window (the windows keep about a
//! second) is explained with what there is: the thread's wake-up, kept past
//! the trims while it waited for a CPU, still gives the stages; the time
//! before the window goes to no cause (`untraced`); and the window itself,
//! what ran on the thread's CPU up to the switch into it, is the
//! explanation's [`TraceWindow`], the cause the verdict names when no stage
//! found is longer ([`Explanation::dominant_cause`]).
//!
//! This file holds the entry points ([`explain`], [`explain_final`]),
//! `explanation` the explanation's types. The work is in four parts:
//! `anchors` finds the wake-up's anchors in the windows, `replay` replays
//! a CPU's events over a span into the time each activity had, `causes`
//! turns a replay into one stage's causes, and `stages` cuts the latency
//! between the anchors into its components and assembles the explanation.

use crate::events::IrqNames;
use crate::window::CpuWindows;

mod anchors;
mod causes;
mod explanation;
mod replay;
mod stages;
#[cfg(test)]
mod tests;

pub use anchors::waking_to_keep;
pub use causes::policy_from_kernel_prio;
pub use explanation::{
    Attribution, Cause, CauseKind, Component, ComponentName, Dominant, EVIDENCE_LEAD_NS,
    ExplainContext, Explanation, SUM_TOLERANCE_NS, Sample, TraceWindow, WAKING_LEAD_NS,
};

use anchors::find_anchors;
use stages::build_explanation;

/// Explains `sample` with the events the windows hold, or says to wait
/// while a CPU's events up to the wake-up have not been read yet.
pub fn explain(
    windows: &CpuWindows,
    names: &IrqNames,
    sample: &Sample,
    ctx: &ExplainContext<'_>,
) -> Attribution {
    attribute(windows, names, sample, ctx, false)
}

/// Explains `sample` with whatever the windows hold (never
/// [`Attribution::NotYet`]): for a sample whose events are late or lost.
pub fn explain_final(
    windows: &CpuWindows,
    names: &IrqNames,
    sample: &Sample,
    ctx: &ExplainContext<'_>,
) -> Explanation {
    match attribute(windows, names, sample, ctx, true) {
        Attribution::Explained(explanation) => explanation,
        Attribution::NotYet => never_explained(sample),
    }
}

/// `attribute` with `final_attempt` never answers `NotYet`; should it ever,
/// the sample is still reported, as unexplained.
fn never_explained(sample: &Sample) -> Explanation {
    Explanation {
        thread: sample.thread,
        tid: sample.tid,
        cpu: None,
        latency_ns: sample.latency_ns,
        deadline_ns: sample.deadline_ns,
        wake_ns: sample.wake_ns,
        components: Vec::new(),
        unexplained_ns: sample.latency_ns,
        lost_events: 0,
        lost_unknown: false,
        window_short: false,
        window: None,
        notes: vec!["the events of this sample could not be read".to_owned()],
        evidence: Vec::new(),
    }
}

fn attribute(
    windows: &CpuWindows,
    names: &IrqNames,
    sample: &Sample,
    ctx: &ExplainContext<'_>,
    final_attempt: bool,
) -> Attribution {
    let anchors = find_anchors(windows, sample);
    let read_up_to = |cpu: u32, ts_ns: i64| {
        windows
            .latest_ns(cpu as usize)
            .is_some_and(|latest| latest >= ts_ns)
    };
    let all_found = match (anchors.waking, anchors.switch_in) {
        (Some(waking), Some(switch_in)) => {
            read_up_to(switch_in.cpu, sample.wake_ns) && read_up_to(waking.cpu, switch_in.ts_ns)
        }
        _ => false,
    };
    let some_cpu_behind = windows.cpus().any(|cpu| {
        windows
            .latest_ns(cpu)
            .is_none_or(|latest| latest < sample.wake_ns)
    });
    if !final_attempt && !all_found && some_cpu_behind {
        return Attribution::NotYet;
    }
    Attribution::Explained(build_explanation(windows, names, sample, ctx, &anchors))
}
