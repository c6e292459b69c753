//! The latency cut into its stages: each component between two anchors,
//! with the causes of its replayed span; the trace window of a latency
//! that began before it; the notes on lost events and a short window; the
//! evidence.

use super::anchors::{Anchors, SwitchSeen, target_cpu_of, untraced_switch_certain};
use super::causes::{Ours, causes_of};
use super::explanation::{
    Component, ComponentName, EVIDENCE_LEAD_NS, ExplainContext, Explanation, SUM_TOLERANCE_NS,
    Sample, TraceWindow, WAKING_LEAD_NS,
};
use super::replay::{Stage, replay_span};
use crate::events::{EventKind, IrqNames, KernelEvent};
use crate::window::{CpuWindows, LostCount};

pub(super) fn build_explanation(
    windows: &CpuWindows,
    names: &IrqNames,
    sample: &Sample,
    ctx: &ExplainContext<'_>,
    anchors: &Anchors,
) -> Explanation {
    let mut notes = Vec::new();
    let mut components = Vec::new();
    let ours = Ours {
        tid: sample.tid,
        timer: anchors.handler.map(|handler| handler.timer),
    };
    let shares = |cpu: u32, from: i64, to: i64, stage: Stage| {
        let replay = replay_span(windows, cpu as usize, from, to);
        causes_of(names, ctx, cpu as usize, &replay, stage, ours)
    };
    match (anchors.waking, anchors.handler) {
        (Some(waking), Some(handler)) => {
            let cpu = waking.cpu;
            components.push(Component {
                name: ComponentName::IrqLatency,
                ns: handler.ts_ns - sample.deadline_ns,
                causes: shares(cpu, sample.deadline_ns, handler.ts_ns, Stage::IrqLatency),
            });
            components.push(Component {
                name: ComponentName::HandlerToWakeup,
                ns: waking.ts_ns - handler.ts_ns,
                causes: shares(cpu, handler.ts_ns, waking.ts_ns, Stage::HandlerToWakeup),
            });
        }
        (Some(_), None) => notes.push(
            "the wake-up did not come from a timer handler: no IRQ latency can be measured"
                .to_owned(),
        ),
        (None, _) => notes.push(format!(
            "no wake-up (sched_waking) of thread {} was found from {} µs before the deadline \
             to its clock read",
            sample.tid,
            WAKING_LEAD_NS / 1_000
        )),
    }
    match (anchors.switch_seen, anchors.switch_in) {
        (SwitchSeen::OwnEvent, Some(first)) => notes.push(format!(
            "the switch into thread {} was not traced (some kernels record none out of idle): \
             thread_latency runs to its first event of its own after the wake-up ({}), so it \
             holds the switch",
            sample.tid,
            first.name()
        )),
        (SwitchSeen::StillRunning, _) => notes.push(format!(
            "thread {} was still on its CPU when its timer fired (it had not switched out \
             yet): no switch into it",
            sample.tid
        )),
        _ => {}
    }
    match (anchors.waking, anchors.switch_in) {
        (Some(waking), Some(switch_in)) => components.push(Component {
            name: ComponentName::ThreadLatency,
            ns: switch_in.ts_ns - waking.ts_ns,
            causes: shares(
                switch_in.cpu,
                waking.ts_ns,
                switch_in.ts_ns,
                Stage::ThreadLatency,
            ),
        }),
        // No switch into the thread traced, and no event of its own
        // before its clock read: it ran from some moment between its
        // wake-up and the clock read, unseen.
        // (Only where the target CPU's events were all read up to the
        // clock read: otherwise the switch may simply not have been read.)
        (Some(waking), None) if untraced_switch_certain(windows, &waking, sample.wake_ns) => {
            let cpu = target_cpu_of(&waking);
            components.push(Component {
                name: ComponentName::ThreadLatency,
                ns: sample.wake_ns - waking.ts_ns,
                causes: shares(cpu, waking.ts_ns, sample.wake_ns, Stage::ThreadLatency),
            });
            notes.push(format!(
                "no switch into thread {} was traced (some kernels record none out of idle): \
                 thread_latency runs from its wake-up to its clock read, the return to user \
                 included",
                sample.tid
            ));
        }
        (Some(_), None) => notes.push(format!(
            "no switch into thread {} was found after its wake-up",
            sample.tid
        )),
        (None, None) => {}
        (None, Some(_)) => {}
    }
    if let Some(switch_in) = anchors.switch_in {
        components.push(Component {
            name: ComponentName::ReturnToUser,
            ns: sample.wake_ns - switch_in.ts_ns,
            causes: shares(
                switch_in.cpu,
                switch_in.ts_ns,
                sample.wake_ns,
                Stage::ReturnToUser,
            ),
        });
    }
    for component in &components {
        if component.ns < -SUM_TOLERANCE_NS {
            notes.push(format!(
                "{} is {} ns, below zero: the trace clock and the thread's clock disagree",
                component.name.as_str(),
                component.ns
            ));
        }
    }
    let unexplained_ns =
        sample.latency_ns - components.iter().map(|component| component.ns).sum::<i64>();

    let mut cpus: Vec<usize> = [anchors.waking, anchors.switch_in]
        .iter()
        .flatten()
        .map(|event| event.cpu as usize)
        .collect();
    if cpus.is_empty() {
        cpus = windows.cpus().collect();
    }
    cpus.sort_unstable();
    cpus.dedup();
    let mut lost = LostCount::default();
    let mut window_short = false;
    for &cpu in &cpus {
        let here = windows.lost_between(cpu, sample.deadline_ns, sample.wake_ns);
        if here.any() {
            notes.push(lost_note(cpu, here));
        }
        lost.known += here.known;
        lost.unknown |= here.unknown;
        let kept_from = windows.kept_from(cpu).unwrap_or(i64::MIN);
        if kept_from > sample.deadline_ns {
            window_short = true;
            notes.push(format!(
                "the latency ({} s) is longer than the trace window: the events of CPU {cpu} \
                 reach back only to {} s after the deadline; what ran before is not known",
                seconds_text(sample.latency_ns),
                seconds_text(kept_from - sample.deadline_ns)
            ));
        } else if let Some(complete_from) = windows.complete_from(cpu)
            && complete_from > sample.deadline_ns
        {
            window_short = true;
            notes.push(format!(
                "the events of CPU {cpu} are complete only from {} ns after the deadline: \
                 what ran before is not known",
                complete_from - sample.deadline_ns
            ));
        }
    }
    let evidence_from = sample.deadline_ns.saturating_sub(EVIDENCE_LEAD_NS);
    let mut evidence: Vec<KernelEvent> = cpus
        .iter()
        .flat_map(|&cpu| windows.events(cpu, evidence_from, sample.wake_ns).copied())
        .collect();
    evidence.sort_by_key(|event| event.ts_ns);
    let cpu = anchors
        .switch_in
        .map(|event| event.cpu as usize)
        .or_else(|| match anchors.waking?.kind {
            EventKind::Waking { target_cpu, .. } => usize::try_from(target_cpu).ok(),
            _ => None,
        });
    // The latency began before the window: what the window shows of the
    // CPU the thread ran on, up to the switch into it.
    let window = cpu.and_then(|cpu| {
        let from_ns = windows.kept_from(cpu)?;
        let to_ns = anchors
            .switch_in
            .map_or(sample.wake_ns, |event| event.ts_ns.min(sample.wake_ns));
        (from_ns > sample.deadline_ns && from_ns < to_ns).then(|| {
            let replay = replay_span(windows, cpu, from_ns, to_ns);
            TraceWindow {
                cpu,
                from_ns,
                to_ns,
                causes: causes_of(names, ctx, cpu, &replay, Stage::Window, ours),
            }
        })
    });
    Explanation {
        thread: sample.thread,
        tid: sample.tid,
        cpu,
        latency_ns: sample.latency_ns,
        deadline_ns: sample.deadline_ns,
        wake_ns: sample.wake_ns,
        components,
        unexplained_ns,
        lost_events: lost.known,
        lost_unknown: lost.unknown,
        window_short,
        window,
        notes,
        evidence,
    }
}

/// ns as seconds with three decimals (`3.026`).
fn seconds_text(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e9)
}

fn lost_note(cpu: usize, lost: LostCount) -> String {
    match (lost.known, lost.unknown) {
        (0, _) => format!(
            "an unknown number of events were lost on CPU {cpu} around this sample: \
             some causes may be missing"
        ),
        (known, false) => format!(
            "{known} events were lost on CPU {cpu} around this sample: some causes may be missing"
        ),
        (known, true) => format!(
            "{known} events and an unknown number more were lost on CPU {cpu} around this \
             sample: some causes may be missing"
        ),
    }
}
