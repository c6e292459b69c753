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

use std::collections::HashMap;

use crate::events::{Comm, EventKind, IrqNames, KernelEvent, LEAVING_IDLE, Vector, softirq_name};
use crate::symbols::{KernelSymbols, NO_SYMBOLS};
use crate::window::{CpuWindows, KeptWaking, LostCount};

/// How far the components' sum may miss the latency, and how far below
/// zero a component may be, when every anchor was found: two clock reads
/// of different code paths. An explanation is complete and consistent when
/// `|unexplained_ns| <= SUM_TOLERANCE_NS` and every component is at least
/// `-SUM_TOLERANCE_NS`.
pub const SUM_TOLERANCE_NS: i64 = 2_000;

/// How long before the deadline a wake-up (or the timer's handler) may be
/// stamped and still be this sample's.
pub const WAKING_LEAD_NS: i64 = 10_000;

/// How long before the deadline the evidence begins.
pub const EVIDENCE_LEAD_NS: i64 = 100_000;

/// How far before a stage the CPU's state (task, idle, interrupts) is
/// replayed from.
const REPLAY_LEAD_NS: i64 = 10_000_000;

/// How far after a stage an NMI that overlaps it may be stamped (NMIs are
/// stamped when they end).
const NMI_LAG_NS: i64 = 1_000_000;

/// A candidate sample of a measuring thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// The thread's index in the run.
    pub thread: usize,
    /// Its kernel thread id.
    pub tid: i32,
    /// The programmed expiry, CLOCK_MONOTONIC ns.
    pub deadline_ns: i64,
    /// The thread's clock read after its wait returned, ns.
    pub wake_ns: i64,
    /// `wake_ns - deadline_ns`.
    pub latency_ns: i64,
}

/// The result of trying to explain a sample.
#[derive(Debug, Clone, PartialEq)]
pub enum Attribution {
    /// Explained with what the windows hold.
    Explained(Explanation),
    /// The events up to the wake-up have not all been read yet on the CPUs
    /// concerned: try again later.
    NotYet,
}

/// The four stages of a timer wake-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComponentName {
    /// From the programmed expiry to the timer's handler starting.
    IrqLatency,
    /// From the handler starting to it waking the thread.
    HandlerToWakeup,
    /// From the waking to the switch into the thread.
    ThreadLatency,
    /// From the switch to the thread reading its clock.
    ReturnToUser,
}

impl ComponentName {
    /// The name in outputs (`irq_latency`).
    pub fn as_str(self) -> &'static str {
        match self {
            ComponentName::IrqLatency => "irq_latency",
            ComponentName::HandlerToWakeup => "handler_to_wakeup",
            ComponentName::ThreadLatency => "thread_latency",
            ComponentName::ReturnToUser => "return_to_user",
        }
    }
}

/// What kind of thing took a cause's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CauseKind {
    /// A task that ran.
    Task,
    /// A hardware interrupt handler.
    Irq,
    /// A softirq.
    Softirq,
    /// A non-maskable interrupt.
    Nmi,
    /// An x86 interrupt vector.
    Vector,
    /// An inter-processor interrupt.
    Ipi,
    /// The CPU in an idle state.
    Idle,
    /// An hrtimer callback.
    TimerHandler,
    /// Time no traced event accounts for.
    Unattributed,
    /// Time before the trace window: its events were no longer kept.
    Untraced,
}

impl CauseKind {
    /// The name in outputs (`softirq`).
    pub fn as_str(self) -> &'static str {
        match self {
            CauseKind::Task => "task",
            CauseKind::Irq => "irq",
            CauseKind::Softirq => "softirq",
            CauseKind::Nmi => "nmi",
            CauseKind::Vector => "vector",
            CauseKind::Ipi => "ipi",
            CauseKind::Idle => "idle",
            CauseKind::TimerHandler => "timer_handler",
            CauseKind::Unattributed => "unattributed",
            CauseKind::Untraced => "untraced",
        }
    }
}

/// One thing that took part of a component's time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// What kind of thing.
    pub kind: CauseKind,
    /// Its name: a task's comm, an IRQ's handler name, a softirq vector,
    /// an idle state with its exit latency.
    pub name: String,
    /// Its time in the component, ns.
    pub ns: i64,
    /// A task's pid.
    pub pid: Option<i32>,
    /// A task's scheduling policy (`fifo`, `other`, ...).
    pub policy: Option<String>,
    /// A task's priority: real-time priority, or nice for `other`.
    pub priority: Option<i32>,
}

impl Cause {
    fn named(kind: CauseKind, name: impl Into<String>, ns: i64) -> Cause {
        Cause {
            kind,
            name: name.into(),
            ns,
            pid: None,
            policy: None,
            priority: None,
        }
    }
}

/// One stage of the latency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    /// Which stage.
    pub name: ComponentName,
    /// Its length, ns (may be slightly negative: see [`SUM_TOLERANCE_NS`]).
    pub ns: i64,
    /// What took its time, largest first.
    pub causes: Vec<Cause>,
}

/// A sample's latency explained.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The thread's index.
    pub thread: usize,
    /// Its tid.
    pub tid: i32,
    /// The CPU it was switched in on (else the one it was woken for).
    pub cpu: Option<usize>,
    /// The sample's latency, ns.
    pub latency_ns: i64,
    /// The programmed expiry, ns.
    pub deadline_ns: i64,
    /// The thread's clock after the wait, ns.
    pub wake_ns: i64,
    /// The stages found, in order; a missing anchor leaves some out.
    pub components: Vec<Component>,
    /// The latency minus the components' sum.
    pub unexplained_ns: i64,
    /// Events the kernel lost on the CPUs concerned around the sample.
    pub lost_events: u64,
    /// Some of them in an unknown number.
    pub lost_unknown: bool,
    /// A window did not reach back to the deadline.
    pub window_short: bool,
    /// When the latency began before the trace window: what the window
    /// shows of the thread's CPU up to the switch into it.
    pub window: Option<TraceWindow>,
    /// What could not be found, and why, in plain sentences.
    pub notes: Vec<String>,
    /// The events of the CPUs concerned from [`EVIDENCE_LEAD_NS`] before
    /// the deadline to the wake-up, in time order.
    pub evidence: Vec<KernelEvent>,
}

/// What the trace window shows of a CPU when a latency began before it:
/// everything that ran there from the window's start to the switch into
/// the thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceWindow {
    /// The CPU.
    pub cpu: usize,
    /// The window's start (its oldest events kept), ns.
    pub from_ns: i64,
    /// The switch into the thread (else its clock read), ns.
    pub to_ns: i64,
    /// What ran, largest first: tasks with their policy and priority,
    /// interrupts, idle.
    pub causes: Vec<Cause>,
}

impl TraceWindow {
    /// How long the window shows, ns.
    pub fn span_ns(&self) -> i64 {
        self.to_ns - self.from_ns
    }
}

/// The stage a sample's latency mostly went to and its largest traced
/// cause: see [`Explanation::dominant_cause`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dominant<'a> {
    /// The component's name (`thread_latency`), or `trace_window` when
    /// the window, shorter than the latency, is longer than every
    /// component found.
    pub stage: &'static str,
    /// Its time, ns.
    pub ns: i64,
    /// Its largest cause the trace saw.
    pub cause: Option<&'a Cause>,
    /// The trace window's span when the latency began before it.
    pub window_ns: Option<i64>,
}

impl Explanation {
    /// Every stage found, adding up to the latency within
    /// [`SUM_TOLERANCE_NS`] with none below `-SUM_TOLERANCE_NS`.
    pub fn is_consistent(&self) -> bool {
        !self.components.is_empty()
            && self.unexplained_ns.abs() <= SUM_TOLERANCE_NS
            && self
                .components
                .iter()
                .all(|component| component.ns >= -SUM_TOLERANCE_NS)
    }

    /// The largest component and its largest cause the trace saw (time
    /// before the trace window is no cause). When the latency began before
    /// the window and the window is longer than every component found
    /// (its wake-up was not seen), the window and what mostly ran in it:
    /// a small component never stands for the whole.
    pub fn dominant_cause(&self) -> Option<Dominant<'_>> {
        let window_ns = self.window.as_ref().map(TraceWindow::span_ns);
        let component = self.components.iter().max_by_key(|component| component.ns);
        match (component, &self.window) {
            (Some(component), window)
                if window
                    .as_ref()
                    .is_none_or(|window| component.ns >= window.span_ns()) =>
            {
                Some(Dominant {
                    stage: component.name.as_str(),
                    ns: component.ns,
                    cause: first_traced(&component.causes)
                        .or_else(|| window.as_ref().and_then(|w| first_traced(&w.causes))),
                    window_ns,
                })
            }
            (_, Some(window)) => Some(Dominant {
                stage: "trace_window",
                ns: window.span_ns(),
                cause: first_traced(&window.causes),
                window_ns,
            }),
            // No component and no window.
            _ => None,
        }
    }
}

/// Facts about the system the events do not carry.
pub struct ExplainContext<'a> {
    /// An idle state of a CPU: its name and exit latency in ns.
    pub idle_exit_latency: &'a dyn Fn(usize, u32) -> Option<(String, i64)>,
    /// A task's scheduling policy and user priority.
    pub task_policy: &'a dyn Fn(i32) -> Option<(String, i32)>,
    /// The kernel's function names (hrtimer callbacks, NMI handlers).
    pub symbols: &'a KernelSymbols,
}

impl std::fmt::Debug for ExplainContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExplainContext").finish_non_exhaustive()
    }
}

fn no_idle_state(_cpu: usize, _state: u32) -> Option<(String, i64)> {
    None
}

fn no_task_policy(_pid: i32) -> Option<(String, i32)> {
    None
}

impl ExplainContext<'static> {
    /// A context that knows nothing beyond the events: idle states by
    /// number, policies from the kernel priorities, functions by address.
    pub fn events_only() -> ExplainContext<'static> {
        ExplainContext {
            idle_exit_latency: &no_idle_state,
            task_policy: &no_task_policy,
            symbols: &NO_SYMBOLS,
        }
    }
}

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

/// The anchors of one wake-up found in the windows.
#[derive(Debug, Clone, Copy)]
struct Anchors {
    waking: Option<KernelEvent>,
    handler: Option<TimerEntry>,
    switch_in: Option<KernelEvent>,
    /// What `switch_in` is.
    switch_seen: SwitchSeen,
}

/// How the moment the thread runs again was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SwitchSeen {
    /// The traced switch into it.
    Traced,
    /// Its first event of its own after its wake-up (an interrupt while it
    /// ran in the kernel): the switch was not traced.
    OwnEvent,
    /// Its waking itself: it was still current when its timer fired.
    StillRunning,
}

/// The CPU a waking sends its task to.
fn target_cpu_of(waking: &KernelEvent) -> u32 {
    match waking.kind {
        EventKind::Waking { target_cpu, .. } => u32::try_from(target_cpu).unwrap_or(waking.cpu),
        _ => waking.cpu,
    }
}

/// Whether the switch after `waking` was surely not traced: its target
/// CPU's events were read past the clock read `wake_ns`, none lost since
/// the waking.
fn untraced_switch_certain(windows: &CpuWindows, waking: &KernelEvent, wake_ns: i64) -> bool {
    let cpu = target_cpu_of(waking) as usize;
    windows
        .latest_ns(cpu)
        .is_some_and(|latest| latest >= wake_ns)
        && !windows.lost_between(cpu, waking.ts_ns, wake_ns).any()
}

/// Our timer's callback starting.
#[derive(Debug, Clone, Copy)]
struct TimerEntry {
    ts_ns: i64,
    timer: u64,
}

fn find_anchors(windows: &CpuWindows, sample: &Sample) -> Anchors {
    let earliest = sample.deadline_ns.saturating_sub(WAKING_LEAD_NS);
    let waking = windows
        .cpus()
        .filter_map(|cpu| {
            windows.events(cpu, earliest, sample.wake_ns).rev().find(
                |event| matches!(event.kind, EventKind::Waking { pid, .. } if pid == sample.tid),
            )
        })
        .max_by_key(|event| event.ts_ns)
        .copied();
    // A wake-up older than the window (the thread waited longer than the
    // span for a CPU) was kept past the trims, with its timer callback.
    let kept = windows.kept_waking(sample.tid, earliest, sample.wake_ns);
    let (waking, handler) = match (waking, kept) {
        (Some(waking), _) => (
            Some(waking),
            enclosing_timer_handler(windows, &waking, earliest),
        ),
        (None, Some(kept)) => (Some(kept.waking), kept.handler),
        (None, None) => (None, None),
    };
    let handler = handler.map(timer_entry);
    let switch_from = waking.map_or(earliest, |waking| waking.ts_ns);
    let switch_to = sample.wake_ns.saturating_add(SUM_TOLERANCE_NS);
    let switch_in = windows
        .cpus()
        .filter_map(|cpu| {
            windows.events(cpu, switch_from, switch_to).find(|event| {
                matches!(event.kind, EventKind::Switch { next_pid, .. } if next_pid == sample.tid)
            })
        })
        .min_by_key(|event| event.ts_ns)
        .copied();
    let (switch_in, switch_seen) = match (switch_in, waking) {
        (Some(switch), _) => (Some(switch), SwitchSeen::Traced),
        // Woken while still current (its timer fired before it had
        // switched out): no switch to wait for.
        (None, Some(waking)) if waking.pid == sample.tid => {
            (Some(waking), SwitchSeen::StillRunning)
        }
        // Without a traced switch, the thread's first event of its own
        // after the wake-up and before its clock read shows it running.
        (None, Some(waking)) => {
            let own = windows
                .events(target_cpu_of(&waking) as usize, switch_from, sample.wake_ns)
                .find(|event| {
                    event.pid == sample.tid && event.ts_ns >= waking.ts_ns && **event != waking
                })
                .copied();
            (own, SwitchSeen::OwnEvent)
        }
        (None, None) => (None, SwitchSeen::Traced),
    };
    Anchors {
        waking,
        handler,
        switch_in,
        switch_seen,
    }
}

/// The hrtimer callback the waking happened in: the latest one started
/// before it on its CPU and not ended before it (its entry event).
fn enclosing_timer_handler(
    windows: &CpuWindows,
    waking: &KernelEvent,
    earliest: i64,
) -> Option<KernelEvent> {
    let mut open: Option<KernelEvent> = None;
    for event in windows.events(waking.cpu as usize, earliest, waking.ts_ns) {
        if event == waking {
            return open;
        }
        match event.kind {
            EventKind::HrtimerExpireEntry { .. } => open = Some(*event),
            EventKind::HrtimerExpireExit { timer }
                if open.is_some_and(|o| timer_of(&o) == timer) =>
            {
                open = None;
            }
            _ => {}
        }
    }
    open
}

/// The timer of an `hrtimer_expire_entry` (0 for another event).
fn timer_of(event: &KernelEvent) -> u64 {
    match event.kind {
        EventKind::HrtimerExpireEntry { timer, .. } => timer,
        _ => 0,
    }
}

fn timer_entry(event: KernelEvent) -> TimerEntry {
    TimerEntry {
        ts_ns: event.ts_ns,
        timer: timer_of(&event),
    }
}

/// The wake-up of `tid` at `waking_ns`, found in the windows, with the
/// timer callback it happened in: to keep past the trims while the thread
/// waits for a CPU (see [`CpuWindows::keep_waking`]).
pub fn waking_to_keep(windows: &CpuWindows, tid: i32, waking_ns: i64) -> Option<KeptWaking> {
    let waking = windows.cpus().find_map(|cpu| {
        windows
            .events(cpu, waking_ns, waking_ns)
            .find(|event| matches!(event.kind, EventKind::Waking { pid, .. } if pid == tid))
            .copied()
    })?;
    let handler =
        enclosing_timer_handler(windows, &waking, waking_ns.saturating_sub(EVIDENCE_LEAD_NS));
    Some(KeptWaking { waking, handler })
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

fn build_explanation(
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

/// The largest of `causes` (largest first) the trace saw.
fn first_traced(causes: &[Cause]) -> Option<&Cause> {
    causes
        .iter()
        .find(|cause| cause.kind != CauseKind::Untraced)
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

/// Which stage a span is: it decides what a running task's time means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    IrqLatency,
    HandlerToWakeup,
    ThreadLatency,
    ReturnToUser,
    /// The trace window of a latency that began before it.
    Window,
}

/// What a CPU can be doing, as far as the events tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Activity {
    Task(i32),
    Idle(u32),
    Irq(i32),
    Softirq(u32),
    Vector(Vector),
    Ipi,
    TimerCallback {
        timer: u64,
        function: u64,
    },
    Nmi(u64),
    /// Before the window: its events were trimmed away.
    BeforeWindow,
}

/// A task as the switches name it.
#[derive(Debug, Clone, Copy)]
struct TaskSeen {
    comm: Comm,
    prio: i32,
}

/// The time each activity had in a span, and the tasks' names.
#[derive(Debug, Default)]
struct Replay {
    time: HashMap<Activity, i64>,
    tasks: HashMap<i32, TaskSeen>,
    /// The first activity in the order time went to it (for stable ties).
    order: Vec<Activity>,
}

impl Replay {
    fn add(&mut self, activity: Activity, ns: i64) {
        if ns <= 0 {
            return;
        }
        let entry = self.time.entry(activity).or_insert_with(|| {
            self.order.push(activity);
            0
        });
        *entry += ns;
    }
}

/// The CPU's state while replaying its events.
#[derive(Debug)]
struct CpuState {
    task: Option<i32>,
    idle: Option<u32>,
    /// Interrupt contexts and timer callbacks, innermost last.
    nested: Vec<Activity>,
}

impl CpuState {
    fn current(&self) -> Activity {
        if let Some(&innermost) = self.nested.last() {
            return innermost;
        }
        match (self.idle, self.task) {
            (Some(state), _) => Activity::Idle(state),
            (None, Some(pid)) => Activity::Task(pid),
            (None, None) => Activity::Task(-1),
        }
    }

    /// Ends the innermost context matching `ended` and any left open
    /// inside it (their exits were not seen); an exit without an entry is
    /// ignored.
    fn leave(&mut self, ended: impl Fn(&Activity) -> bool) {
        if let Some(position) = self.nested.iter().rposition(ended) {
            self.nested.truncate(position);
        }
    }

    fn apply(&mut self, event: &KernelEvent, tasks: &mut HashMap<i32, TaskSeen>) {
        // An event's pid is the task current on its CPU, interrupts
        // included: a switch the kernel did not trace (some kernels record
        // none out of idle) shows in the pids that follow it.
        if event.pid >= 0 && self.task != Some(event.pid) {
            self.task = Some(event.pid);
            if event.pid != 0 {
                self.idle = None;
            }
        }
        match event.kind {
            EventKind::IrqEntry { irq } => self.nested.push(Activity::Irq(irq)),
            EventKind::IrqExit { irq } => self.leave(|a| *a == Activity::Irq(irq)),
            EventKind::SoftirqEntry { vec } => self.nested.push(Activity::Softirq(vec)),
            EventKind::SoftirqExit { vec } => self.leave(|a| *a == Activity::Softirq(vec)),
            EventKind::VectorEntry { vector } => self.nested.push(Activity::Vector(vector)),
            EventKind::VectorExit { vector } => self.leave(|a| *a == Activity::Vector(vector)),
            EventKind::IpiEntry => self.nested.push(Activity::Ipi),
            EventKind::IpiExit => self.leave(|a| *a == Activity::Ipi),
            EventKind::HrtimerExpireEntry {
                timer, function, ..
            } => self
                .nested
                .push(Activity::TimerCallback { timer, function }),
            EventKind::HrtimerExpireExit { timer } => {
                self.leave(|a| matches!(a, Activity::TimerCallback { timer: t, .. } if *t == timer))
            }
            EventKind::Switch {
                prev_comm,
                prev_pid,
                prev_prio,
                next_comm,
                next_pid,
                next_prio,
                ..
            } => {
                // A switch happens in task context: whatever is open
                // ended unseen.
                self.nested.clear();
                self.idle = None;
                self.task = Some(next_pid);
                tasks.entry(prev_pid).or_insert(TaskSeen {
                    comm: prev_comm,
                    prio: prev_prio,
                });
                tasks.insert(
                    next_pid,
                    TaskSeen {
                        comm: next_comm,
                        prio: next_prio,
                    },
                );
            }
            EventKind::CpuIdle { state } => {
                self.idle = (state != LEAVING_IDLE).then_some(state);
            }
            EventKind::Waking {
                pid, comm, prio, ..
            } => {
                tasks.entry(pid).or_insert(TaskSeen { comm, prio });
            }
            EventKind::HrtimerStart { .. } | EventKind::Nmi { .. } => {}
        }
    }
}

/// The state of `cpu` just before `at_ns`, from the events before it: the
/// task of the last switch (else the current pid of the last event), idle
/// if the last idle event after that switch entered a state.
fn state_before(windows: &CpuWindows, cpu: usize, at_ns: i64) -> CpuState {
    let mut state = CpuState {
        task: None,
        idle: None,
        nested: Vec::new(),
    };
    let mut idle_known = false;
    let mut newest_pid = None;
    for event in windows.events_before(cpu, at_ns) {
        newest_pid.get_or_insert(event.pid);
        match event.kind {
            EventKind::Switch { next_pid, .. } => {
                state.task = Some(next_pid);
                break;
            }
            EventKind::CpuIdle { state: idle } if !idle_known => {
                idle_known = true;
                state.idle = (idle != LEAVING_IDLE).then_some(idle);
            }
            _ => {}
        }
    }
    if state.task.is_none() {
        state.task = newest_pid;
    }
    state
}

/// Replays `cpu`'s events to give each instant of `[from, to]` to what was
/// innermost then.
fn replay_span(windows: &CpuWindows, cpu: usize, from: i64, to: i64) -> Replay {
    let mut replay = Replay::default();
    if to <= from {
        return replay;
    }
    // What is older than the window's events is not known.
    let kept_from = windows.kept_from(cpu).unwrap_or(i64::MIN);
    let from = if kept_from > from {
        replay.add(Activity::BeforeWindow, kept_from.min(to) - from);
        if kept_from >= to {
            return replay;
        }
        kept_from
    } else {
        from
    };
    let replay_from = from.saturating_sub(REPLAY_LEAD_NS).max(kept_from);
    let mut state = state_before(windows, cpu, replay_from);
    let nmis: Vec<(i64, i64, u64)> = windows
        .events(cpu, from, to.saturating_add(NMI_LAG_NS))
        .filter_map(|event| match event.kind {
            EventKind::Nmi { handler, delta_ns } => Some((
                event.ts_ns.saturating_sub(delta_ns.max(0)),
                event.ts_ns,
                handler,
            )),
            _ => None,
        })
        .collect();
    let give = |replay: &mut Replay, activity: Activity, start: i64, end: i64| {
        let start = start.max(from);
        let end = end.min(to);
        if end <= start {
            return;
        }
        let mut in_nmis = 0;
        for &(nmi_start, nmi_end, handler) in &nmis {
            let overlap = end.min(nmi_end) - start.max(nmi_start);
            if overlap > 0 {
                replay.add(Activity::Nmi(handler), overlap);
                in_nmis += overlap;
            }
        }
        replay.add(activity, end - start - in_nmis);
    };
    let mut since = replay_from;
    for event in windows.events(cpu, replay_from, to) {
        let mut running = state.current();
        // An event of another task (its own, or an interrupt's in its
        // context) while the replay still saw the idle task: the switch
        // out of idle into it was not traced (some kernels record none),
        // so it ran since the last event.
        if running == Activity::Task(0) && event.pid > 0 {
            running = Activity::Task(event.pid);
        }
        // At the window's start nothing tells the task yet: the first
        // event's current pid does.
        if running == Activity::Task(-1) && event.pid >= 0 {
            running = Activity::Task(event.pid);
        }
        give(&mut replay, running, since, event.ts_ns);
        since = event.ts_ns;
        state.apply(event, &mut replay.tasks);
    }
    give(&mut replay, state.current(), since, to);
    // Name the tasks the replay met only by their pid.
    let unnamed = replay
        .time
        .keys()
        .any(|activity| matches!(activity, Activity::Task(pid) if !replay.tasks.contains_key(pid)));
    if !unnamed {
        return replay;
    }
    for event in windows.events_before(cpu, replay_from).take(10_000) {
        if let EventKind::Switch {
            prev_comm,
            prev_pid,
            prev_prio,
            next_comm,
            next_pid,
            next_prio,
            ..
        } = event.kind
        {
            for (pid, comm, prio) in [
                (prev_pid, prev_comm, prev_prio),
                (next_pid, next_comm, next_prio),
            ] {
                replay.tasks.entry(pid).or_insert(TaskSeen { comm, prio });
            }
        }
    }
    replay
}

/// Policy and priority from a kernel priority: below 0 deadline, below
/// 100 real-time (user priority 99 - prio), else normal (nice prio - 120).
pub fn policy_from_kernel_prio(prio: i32) -> (String, Option<i32>) {
    if prio < 0 {
        ("deadline".to_owned(), None)
    } else if prio < 100 {
        ("fifo/rr".to_owned(), Some(99 - prio))
    } else {
        ("other".to_owned(), Some(prio - 120))
    }
}

fn micros_text(ns: i64) -> String {
    if ns % 1_000 == 0 {
        format!("{}", ns / 1_000)
    } else {
        format!("{:.1}", ns as f64 / 1_000.0)
    }
}

/// The measured thread and its timer, as the stages name them.
#[derive(Debug, Clone, Copy)]
struct Ours {
    tid: i32,
    timer: Option<u64>,
}

/// Turns a replay into the causes of one stage, largest first.
fn causes_of(
    names: &IrqNames,
    ctx: &ExplainContext<'_>,
    cpu: usize,
    replay: &Replay,
    stage: Stage,
    ours: Ours,
) -> Vec<Cause> {
    let mut merged: Vec<Cause> = Vec::new();
    for activity in &replay.order {
        let ns = replay.time[activity];
        let cause = match *activity {
            Activity::Task(0) => match stage {
                // The idle task, its idle state not traced (no cpu_idle
                // event: some kernels record none from their idle loop).
                Stage::IrqLatency => Cause::named(
                    CauseKind::Idle,
                    format!("swapper/{cpu}, state not traced (or interrupts off)"),
                    ns,
                ),
                Stage::HandlerToWakeup => {
                    Cause::named(CauseKind::TimerHandler, "our timer's handler", ns)
                }
                Stage::ThreadLatency | Stage::ReturnToUser => Cause::named(
                    CauseKind::Idle,
                    format!("swapper/{cpu} leaving idle, switching"),
                    ns,
                ),
                Stage::Window => Cause::named(CauseKind::Idle, format!("swapper/{cpu}"), ns),
            },
            Activity::Task(pid) => match stage {
                Stage::IrqLatency => Cause::named(
                    CauseKind::Unattributed,
                    "interrupts off, hardware or not traced",
                    ns,
                ),
                Stage::HandlerToWakeup => {
                    Cause::named(CauseKind::TimerHandler, "our timer's handler", ns)
                }
                Stage::ReturnToUser if pid == ours.tid => {
                    Cause::named(CauseKind::Unattributed, "kernel exit to user", ns)
                }
                Stage::ThreadLatency | Stage::ReturnToUser | Stage::Window => {
                    task_cause(ctx, cpu, pid, replay.tasks.get(&pid), ns)
                }
            },
            Activity::Idle(state) => {
                let name = match (ctx.idle_exit_latency)(cpu, state) {
                    Some((state_name, exit_ns)) => {
                        format!("{state_name} (exit latency {} µs)", micros_text(exit_ns))
                    }
                    None => format!("idle state {state}"),
                };
                Cause::named(CauseKind::Idle, name, ns)
            }
            Activity::Irq(irq) => {
                let name = match names.lookup(irq) {
                    Some(handler) => format!("{handler} (irq {irq})"),
                    None => format!("irq {irq}"),
                };
                Cause::named(CauseKind::Irq, name, ns)
            }
            Activity::Softirq(vec) => {
                let name =
                    softirq_name(vec).map_or_else(|| format!("softirq {vec}"), str::to_owned);
                Cause::named(CauseKind::Softirq, name, ns)
            }
            Activity::Vector(vector) => Cause::named(CauseKind::Vector, vector.as_str(), ns),
            Activity::Ipi => Cause::named(CauseKind::Ipi, "ipi", ns),
            Activity::Nmi(handler) => Cause::named(
                CauseKind::Nmi,
                format!("nmi handler {}", ctx.symbols.describe(handler)),
                ns,
            ),
            Activity::BeforeWindow => {
                Cause::named(CauseKind::Untraced, "before the trace window", ns)
            }
            Activity::TimerCallback { timer, function } => {
                if ours.timer == Some(timer) {
                    Cause::named(CauseKind::TimerHandler, "our timer's handler", ns)
                } else {
                    Cause::named(
                        CauseKind::TimerHandler,
                        format!("hrtimer {}", ctx.symbols.describe(function)),
                        ns,
                    )
                }
            }
        };
        match merged.iter_mut().find(|known| {
            known.kind == cause.kind && known.name == cause.name && known.pid == cause.pid
        }) {
            Some(known) => known.ns += cause.ns,
            None => merged.push(cause),
        }
    }
    merged.retain(|cause| cause.ns > 0);
    // Largest first; time before the trace window, no cause, last.
    merged.sort_by_key(|cause| {
        (
            cause.kind == CauseKind::Untraced,
            std::cmp::Reverse(cause.ns),
        )
    });
    merged
}

fn task_cause(
    ctx: &ExplainContext<'_>,
    cpu: usize,
    pid: i32,
    seen: Option<&TaskSeen>,
    ns: i64,
) -> Cause {
    let name = match (seen, pid) {
        (Some(task), _) => task.comm.to_string(),
        (None, 0) => format!("swapper/{cpu}"),
        (None, _) => format!("pid {pid}"),
    };
    let (policy, priority) = match (ctx.task_policy)(pid) {
        Some((policy, priority)) => (Some(policy), Some(priority)),
        None => match seen {
            Some(task) => {
                let (policy, priority) = policy_from_kernel_prio(task.prio);
                (Some(policy), priority)
            }
            None => (None, None),
        },
    };
    Cause {
        kind: CauseKind::Task,
        name,
        ns,
        pid: Some(pid),
        policy,
        priority,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{SPIN, SWAPPER, Scenario, THREAD, Task, US};
    use crate::trace::LostEvents;

    const D: i64 = 1_000_000_000;
    const TIMER: u64 = 0xffff_8000_0000_1000;

    fn windows_of(scenario: &Scenario, cpus: &[usize]) -> CpuWindows {
        let mut windows = CpuWindows::new(cpus, 1_000_000_000);
        for event in scenario.sorted() {
            windows.push(event);
        }
        windows
    }

    fn sample(wake_ns: i64) -> Sample {
        Sample {
            thread: 0,
            tid: THREAD.pid,
            deadline_ns: D,
            wake_ns,
            latency_ns: wake_ns - D,
        }
    }

    fn explained(windows: &CpuWindows, names: &IrqNames, sample: &Sample) -> Explanation {
        match explain(windows, names, sample, &ExplainContext::events_only()) {
            Attribution::Explained(explanation) => explanation,
            Attribution::NotYet => panic!("not explained"),
        }
    }

    /// (kind, name, ns) of a component's causes.
    fn causes(explanation: &Explanation, name: ComponentName) -> Vec<(CauseKind, String, i64)> {
        explanation
            .components
            .iter()
            .find(|component| component.name == name)
            .unwrap_or_else(|| panic!("no {name:?} in {explanation:#?}"))
            .causes
            .iter()
            .map(|cause| (cause.kind, cause.name.clone(), cause.ns))
            .collect()
    }

    fn component_ns(explanation: &Explanation) -> Vec<(ComponentName, i64)> {
        explanation
            .components
            .iter()
            .map(|component| (component.name, component.ns))
            .collect()
    }

    fn cause(kind: CauseKind, name: &str, ns: i64) -> (CauseKind, String, i64) {
        (kind, name.to_owned(), ns)
    }

    /// A task running when the timer expires, preempting it, then an IRQ
    /// and a softirq inside it before the thread gets the CPU.
    fn busy_cpu() -> Scenario {
        let mut scenario = Scenario::new();
        scenario
            .switch(D - 500 * US, 0, THREAD, 1, SPIN)
            .vector(0, Vector::LocalTimer, D + 3 * US, D + 8 * US)
            .timer_fires(0, TIMER, D + 5 * US, D + 7 * US, Some(THREAD))
            .irq(0, 40, D + 100 * US, D + 120 * US)
            .softirq(0, 3, D + 120 * US, D + 150 * US)
            .switch(D + 306 * US, 0, SPIN, 1, THREAD)
            .switch(D + 315 * US, 0, THREAD, 1, SPIN);
        scenario
    }

    #[test]
    fn a_busy_cpu_explained_stage_by_stage() {
        let windows = windows_of(&busy_cpu(), &[0]);
        let mut names = IrqNames::new();
        names.insert(40, "eth0");
        let explanation = explained(&windows, &names, &sample(D + 310 * US));
        assert_eq!(
            component_ns(&explanation),
            [
                (ComponentName::IrqLatency, 5 * US),
                (ComponentName::HandlerToWakeup, US),
                (ComponentName::ThreadLatency, 300 * US),
                (ComponentName::ReturnToUser, 4 * US),
            ]
        );
        assert_eq!(explanation.unexplained_ns, 0);
        assert!(explanation.is_consistent());
        assert_eq!(explanation.cpu, Some(0));
        assert_eq!(
            causes(&explanation, ComponentName::IrqLatency),
            [
                cause(
                    CauseKind::Unattributed,
                    "interrupts off, hardware or not traced",
                    3 * US
                ),
                cause(CauseKind::Vector, "local_timer", 2 * US),
            ]
        );
        assert_eq!(
            causes(&explanation, ComponentName::HandlerToWakeup),
            [cause(CauseKind::TimerHandler, "our timer's handler", US)]
        );
        assert_eq!(
            causes(&explanation, ComponentName::ThreadLatency),
            [
                cause(CauseKind::Task, "spin", 248 * US),
                cause(CauseKind::Softirq, "NET_RX", 30 * US),
                cause(CauseKind::Irq, "eth0 (irq 40)", 20 * US),
                cause(CauseKind::TimerHandler, "our timer's handler", US),
                cause(CauseKind::Vector, "local_timer", US),
            ]
        );
        let spin = &explanation.components[2].causes[0];
        assert_eq!(
            (spin.pid, spin.policy.as_deref(), spin.priority),
            (Some(4242), Some("fifo/rr"), Some(90))
        );
        assert_eq!(
            causes(&explanation, ComponentName::ReturnToUser),
            [cause(
                CauseKind::Unattributed,
                "kernel exit to user",
                4 * US
            )]
        );
        let dominant = explanation.dominant_cause().expect("a cause");
        assert_eq!(
            (dominant.stage, dominant.cause.map(|c| c.name.as_str())),
            ("thread_latency", Some("spin"))
        );
        assert!(explanation.notes.is_empty(), "{:?}", explanation.notes);
        // The evidence: from 100 µs before the deadline to the wake-up.
        assert_eq!(
            explanation.evidence.first().map(|e| e.ts_ns),
            Some(D + 3 * US)
        );
        assert_eq!(explanation.evidence.len(), 10);
        assert!(explanation.evidence.iter().all(|e| e.ts_ns <= D + 310 * US));
    }

    #[test]
    fn the_policy_comes_from_the_context_when_it_knows() {
        let windows = windows_of(&busy_cpu(), &[0]);
        let policy = |pid: i32| (pid == 4242).then(|| ("fifo".to_owned(), 90));
        let ctx = ExplainContext {
            idle_exit_latency: &|_, _| None,
            task_policy: &policy,
            symbols: &NO_SYMBOLS,
        };
        let Attribution::Explained(explanation) =
            explain(&windows, &IrqNames::new(), &sample(D + 310 * US), &ctx)
        else {
            panic!("not explained");
        };
        let spin = &explanation.components[2].causes[0];
        assert_eq!(
            (spin.name.as_str(), spin.policy.as_deref(), spin.priority),
            ("spin", Some("fifo"), Some(90))
        );
        // Without a name for IRQ 40, its number.
        assert!(
            explanation.components[2]
                .causes
                .iter()
                .any(|cause| cause.name == "irq 40")
        );
    }

    #[test]
    fn other_timers_callbacks_and_nmi_handlers_are_named_from_kallsyms() {
        const TICK: u64 = 0xffff_ffff_8143_32e0;
        const TIMERFD: u64 = 0xffff_ffff_8173_3b90;
        const PERF_NMI: u64 = 0xffff_ffff_8100_4a10;
        let mut scenario = busy_cpu();
        for (entry, exit, function) in [
            (D + 200 * US, D + 206 * US, TICK),
            (D + 250 * US, D + 253 * US, TIMERFD),
            (D + 270 * US, D + 271 * US, 0xffff_ffff_8999_0000),
        ] {
            let timer = 0xffff_9000_0000_0000 + function % 4096;
            scenario.push(
                entry,
                0,
                EventKind::HrtimerExpireEntry {
                    timer,
                    now_ns: entry,
                    function,
                },
            );
            scenario.push(exit, 0, EventKind::HrtimerExpireExit { timer });
        }
        scenario.push(
            D + 290 * US,
            0,
            EventKind::Nmi {
                handler: PERF_NMI,
                delta_ns: 2_000,
            },
        );
        let windows = windows_of(&scenario, &[0]);
        let symbols = KernelSymbols::parse(
            "ffffffff81004a10 t perf_event_nmi_handler\n\
             ffffffff814332e0 t tick_nohz_handler\n\
             ffffffff81733b90 t timerfd_tmrproc\n",
        );
        let ctx = ExplainContext {
            idle_exit_latency: &|_, _| None,
            task_policy: &|_| None,
            symbols: &symbols,
        };
        let Attribution::Explained(explanation) =
            explain(&windows, &IrqNames::new(), &sample(D + 310 * US), &ctx)
        else {
            panic!("not explained");
        };
        let names: Vec<(CauseKind, String, i64)> =
            causes(&explanation, ComponentName::ThreadLatency);
        for expected in [
            cause(
                CauseKind::TimerHandler,
                "hrtimer tick_nohz_handler (the scheduler tick)",
                6 * US,
            ),
            cause(
                CauseKind::TimerHandler,
                "hrtimer timerfd_tmrproc (a timerfd)",
                3 * US,
            ),
            // Far past every symbol known: the address, as before.
            cause(CauseKind::TimerHandler, "hrtimer 0xffffffff89990000", US),
            cause(
                CauseKind::Nmi,
                "nmi handler perf_event_nmi_handler (perf's hardware counters)",
                2 * US,
            ),
        ] {
            assert!(names.contains(&expected), "{expected:?} in {names:#?}");
        }
        // Without the table, addresses.
        let bare = explained(&windows, &IrqNames::new(), &sample(D + 310 * US));
        assert!(
            causes(&bare, ComponentName::ThreadLatency)
                .iter()
                .any(|(_, name, _)| name == "hrtimer 0xffffffff814332e0")
        );
    }

    #[test]
    fn an_untraced_switch_out_of_idle_ends_at_the_threads_own_event() {
        // The kernel records no switch out of idle and no idle state; an
        // interrupt while the thread is back in the kernel carries its pid.
        let mut scenario = untraced_switch();
        for (ts_ns, kind) in [
            (D + 21 * US, EventKind::IrqEntry { irq: 40 }),
            (D + 21 * US + 500, EventKind::IrqExit { irq: 40 }),
        ] {
            scenario.events.push(KernelEvent {
                ts_ns,
                cpu: 0,
                pid: THREAD.pid,
                kind,
            });
        }
        let windows = windows_of(&scenario, &[0]);
        let explanation = explained(&windows, &IrqNames::new(), &sample(D + 23 * US));
        assert!(explanation.is_consistent(), "{explanation:?}");
        assert_eq!(explanation.unexplained_ns, 0);
        let names: Vec<ComponentName> = explanation.components.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                ComponentName::IrqLatency,
                ComponentName::HandlerToWakeup,
                ComponentName::ThreadLatency,
                ComponentName::ReturnToUser
            ]
        );
        assert_eq!(
            explanation.components[3].ns,
            2 * US,
            "own event to clock read"
        );
        assert!(
            explanation
                .notes
                .iter()
                .any(|n| n.contains("was not traced") && n.contains("irq_handler_entry")),
            "{:?}",
            explanation.notes
        );
        // The idle task before the timer, and leaving idle after the
        // wake-up, are named as such.
        assert_eq!(
            causes(&explanation, ComponentName::IrqLatency)[0].0,
            CauseKind::Idle
        );
        assert!(
            causes(&explanation, ComponentName::ThreadLatency)
                .iter()
                .any(|(kind, name, _)| *kind == CauseKind::Idle && name.contains("leaving idle"))
        );
    }

    #[test]
    fn a_task_switched_in_from_idle_untraced_is_named_by_its_switch_out() {
        // The CPU idles; our timer wakes us, but SPIN (also woken) runs
        // first: the switch from idle into SPIN is not traced, the one from
        // SPIN to us is.
        let mut scenario = Scenario::new();
        scenario
            .switch(D - 1_001 * US, 0, THREAD, 1, SWAPPER)
            .timer_fires(0, TIMER, D + 10 * US, D + 12 * US, Some(THREAD))
            .softirq(0, 7, D + 13 * US, D + 14 * US)
            .switch(D + 300 * US, 0, SPIN, 0, THREAD);
        if let Some(last) = scenario.events.last_mut() {
            last.pid = SPIN.pid;
        }
        scenario.timer_start(D + 320 * US, 0, TIMER, D + 1_000 * US);
        let windows = windows_of(&scenario, &[0]);
        let explanation = explained(&windows, &IrqNames::new(), &sample(D + 303 * US));
        assert!(explanation.is_consistent(), "{explanation:?}");
        let thread_causes = causes(&explanation, ComponentName::ThreadLatency);
        assert_eq!(
            thread_causes[0],
            cause(CauseKind::Task, "spin", 286 * US),
            "{thread_causes:?}"
        );
    }

    #[test]
    fn a_thread_woken_while_still_current_needs_no_switch() {
        // The thread is still on the CPU (held on its way to sleep) when
        // its timer fires: the waking carries its own pid.
        let mut scenario = Scenario::new();
        scenario
            .switch(D - 100 * US, 0, SWAPPER, 0, THREAD)
            .timer_fires(0, TIMER, D + 4 * US, D + 6 * US, Some(THREAD))
            .timer_start(D + 30 * US, 0, TIMER, D + 1_000 * US);
        let windows = windows_of(&scenario, &[0]);
        let explanation = explained(&windows, &IrqNames::new(), &sample(D + 9 * US));
        assert!(explanation.is_consistent(), "{explanation:?}");
        let thread_latency = explanation
            .components
            .iter()
            .find(|c| c.name == ComponentName::ThreadLatency)
            .unwrap();
        assert_eq!(thread_latency.ns, 0);
        assert!(
            explanation
                .notes
                .iter()
                .any(|n| n.contains("still on its CPU")),
            "{:?}",
            explanation.notes
        );
    }

    #[test]
    fn without_a_traced_switch_thread_latency_runs_to_the_clock_read() {
        let scenario = untraced_switch();
        let windows = windows_of(&scenario, &[0]);
        let explanation = explained(&windows, &IrqNames::new(), &sample(D + 23 * US));
        assert!(explanation.is_consistent(), "{explanation:?}");
        let names: Vec<ComponentName> = explanation.components.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                ComponentName::IrqLatency,
                ComponentName::HandlerToWakeup,
                ComponentName::ThreadLatency
            ]
        );
        // Waking 1 µs into the handler (13 µs), clock read at 23 µs.
        assert_eq!(explanation.components[2].ns, 10 * US);
        assert_eq!(explanation.unexplained_ns, 0);
        assert!(
            explanation
                .notes
                .iter()
                .any(|n| n.contains("no switch into thread") && n.contains("return to user")),
            "{:?}",
            explanation.notes
        );
    }

    /// The thread asleep on CPU 0 from before the deadline, its timer
    /// firing at D + 12 µs out of idle, no switch into it traced; its next
    /// timer armed after its clock read (at D + 25 µs), so the window
    /// reaches past it.
    fn untraced_switch() -> Scenario {
        let mut scenario = Scenario::new();
        scenario
            .switch(D - 1_001 * US, 0, THREAD, 1, SWAPPER)
            .vector(0, Vector::LocalTimer, D + 10 * US, D + 15 * US)
            .timer_fires(0, TIMER, D + 12 * US, D + 14 * US, Some(THREAD))
            .softirq(0, 7, D + 16 * US, D + 18 * US);
        scenario.events.push(KernelEvent {
            ts_ns: D + 30 * US,
            cpu: 0,
            pid: THREAD.pid,
            kind: EventKind::HrtimerStart {
                timer: TIMER,
                function: 0xffff_0001,
                expires_ns: D + 1_000 * US,
                softexpires_ns: D + 1_000 * US,
            },
        });
        scenario
    }

    #[test]
    fn an_idle_cpu_leaving_its_state() {
        let mut scenario = Scenario::new();
        scenario
            .switch(D - 1_001 * US, 0, THREAD, 1, SWAPPER)
            .idle(D - 1_000 * US, 0, 2)
            .vector(0, Vector::LocalTimer, D + 40 * US, D + 45 * US)
            .timer_fires(0, TIMER, D + 42 * US, D + 44 * US, Some(THREAD))
            .leave_idle(D + 46 * US, 0)
            .switch(D + 48 * US, 0, SWAPPER, 0, THREAD)
            .switch(D + 60 * US, 0, THREAD, 1, SWAPPER);
        let windows = windows_of(&scenario, &[0]);
        let idle_states =
            |cpu: usize, state: u32| (cpu == 0 && state == 2).then(|| ("C6".to_owned(), 40_000));
        let ctx = ExplainContext {
            idle_exit_latency: &idle_states,
            task_policy: &|_| None,
            symbols: &NO_SYMBOLS,
        };
        let Attribution::Explained(explanation) =
            explain(&windows, &IrqNames::new(), &sample(D + 50 * US), &ctx)
        else {
            panic!("not explained");
        };
        assert!(explanation.is_consistent());
        assert_eq!(
            causes(&explanation, ComponentName::IrqLatency),
            [
                cause(CauseKind::Idle, "C6 (exit latency 40 µs)", 40 * US),
                cause(CauseKind::Vector, "local_timer", 2 * US),
            ]
        );
        assert_eq!(
            causes(&explanation, ComponentName::ThreadLatency),
            [
                cause(CauseKind::Idle, "swapper/0 leaving idle, switching", 2 * US),
                cause(CauseKind::TimerHandler, "our timer's handler", US),
                cause(CauseKind::Vector, "local_timer", US),
                cause(CauseKind::Idle, "C6 (exit latency 40 µs)", US),
            ]
        );
        // Without the context, the state by number.
        let plain = explained(&windows, &IrqNames::new(), &sample(D + 50 * US));
        assert_eq!(
            causes(&plain, ComponentName::IrqLatency)[0],
            cause(CauseKind::Idle, "idle state 2", 40 * US)
        );
    }

    #[test]
    fn an_irq_and_an_nmi_delaying_the_timer() {
        let stress = Task {
            comm: "stress",
            pid: 300,
            prio: 120,
        };
        let mut scenario = Scenario::new();
        scenario
            .switch(D - 900 * US, 0, SWAPPER, 0, stress)
            .irq(0, 33, D - 20 * US, D + 30 * US)
            .push(
                D + 20 * US,
                0,
                EventKind::Nmi {
                    handler: 0xabc,
                    delta_ns: 5 * US,
                },
            )
            .vector(0, Vector::LocalTimer, D + 31 * US, D + 36 * US)
            .timer_fires(0, TIMER, D + 33 * US, D + 35 * US, Some(THREAD))
            .switch(D + 37 * US, 0, stress, 0, THREAD)
            .switch(D + 45 * US, 0, THREAD, 1, stress);
        let windows = windows_of(&scenario, &[0]);
        let mut names = IrqNames::new();
        names.insert(33, "nvme0q1");
        let explanation = explained(&windows, &names, &sample(D + 40 * US));
        assert!(explanation.is_consistent());
        assert_eq!(
            causes(&explanation, ComponentName::IrqLatency),
            [
                cause(CauseKind::Irq, "nvme0q1 (irq 33)", 25 * US),
                cause(CauseKind::Nmi, "nmi handler 0xabc", 5 * US),
                cause(CauseKind::Vector, "local_timer", 2 * US),
                cause(
                    CauseKind::Unattributed,
                    "interrupts off, hardware or not traced",
                    US
                ),
            ]
        );
        let stress_cause = explanation.components[2]
            .causes
            .iter()
            .find(|cause| cause.name == "stress")
            .expect("stress ran");
        assert_eq!(
            (
                stress_cause.ns,
                stress_cause.policy.as_deref(),
                stress_cause.priority
            ),
            (US, Some("other"), Some(0))
        );
    }

    #[test]
    fn a_wake_up_read_on_one_cpu_waits_for_the_others() {
        let mut scenario = busy_cpu();
        scenario.idle(D - 50 * US, 1, 1);
        let windows = windows_of(&scenario, &[0, 1]);
        // CPU 1's last event is before the wake-up, but the anchors and
        // the events after them on CPU 0 are all there.
        let explanation = explained(&windows, &IrqNames::new(), &sample(D + 310 * US));
        assert!(explanation.is_consistent());

        // Cut CPU 0 just after the waking: the switch is not read yet.
        let mut cut = CpuWindows::new(&[0, 1], 1_000_000_000);
        for event in scenario.sorted() {
            if event.cpu == 1 || event.ts_ns <= D + 7 * US {
                cut.push(event);
            }
        }
        let wake = sample(D + 310 * US);
        let ctx = ExplainContext::events_only();
        assert_eq!(
            explain(&cut, &IrqNames::new(), &wake, &ctx),
            Attribution::NotYet
        );
        let last_try = explain_final(&cut, &IrqNames::new(), &wake, &ctx);
        assert_eq!(
            component_ns(&last_try),
            [
                (ComponentName::IrqLatency, 5 * US),
                (ComponentName::HandlerToWakeup, US)
            ]
        );
        assert_eq!(last_try.unexplained_ns, 304 * US);
        assert!(!last_try.is_consistent());
        assert_eq!(last_try.cpu, Some(0));
        assert!(
            last_try
                .notes
                .iter()
                .any(|note| note.contains("no switch into thread 100")),
            "{:?}",
            last_try.notes
        );
    }

    #[test]
    fn a_wake_up_not_from_a_timer_and_one_not_found() {
        let mut scenario = Scenario::new();
        scenario
            .switch(D - 10 * US, 0, THREAD, 1, SWAPPER)
            .waking(D + 20 * US, 0, THREAD, 0)
            .switch(D + 25 * US, 0, SWAPPER, 0, THREAD)
            .switch(D + 40 * US, 0, THREAD, 1, SWAPPER);
        let windows = windows_of(&scenario, &[0]);
        let explanation = explained(&windows, &IrqNames::new(), &sample(D + 30 * US));
        assert_eq!(
            component_ns(&explanation),
            [
                (ComponentName::ThreadLatency, 5 * US),
                (ComponentName::ReturnToUser, 5 * US)
            ]
        );
        assert_eq!(explanation.unexplained_ns, 20 * US);
        assert!(explanation.notes[0].contains("did not come from a timer handler"));

        let other_thread = Sample {
            tid: 555,
            ..sample(D + 30 * US)
        };
        let nothing = explained(&windows, &IrqNames::new(), &other_thread);
        assert!(nothing.components.is_empty());
        assert_eq!(nothing.unexplained_ns, 30 * US);
        assert!(nothing.notes[0].contains("no wake-up (sched_waking) of thread 555"));
        assert_eq!(nothing.cpu, None);
    }

    #[test]
    fn losses_and_a_short_window_are_reported() {
        let scenario = busy_cpu();
        let mut windows = CpuWindows::new(&[0], 1_000_000_000);
        for event in scenario.sorted() {
            if event.ts_ns == D + 100 * US {
                windows.record_lost(0, event.ts_ns, LostEvents::Count(12));
            }
            windows.push(event);
        }
        let explanation = explained(&windows, &IrqNames::new(), &sample(D + 310 * US));
        assert_eq!(
            (explanation.lost_events, explanation.lost_unknown),
            (12, false)
        );
        assert!(explanation.window_short);
        assert!(
            explanation
                .notes
                .iter()
                .any(|n| n.contains("12 events were lost on CPU 0"))
        );
        assert!(
            explanation
                .notes
                .iter()
                .any(|n| n.contains("complete only from 100000 ns"))
        );

        let mut trimmed = windows_of(&scenario, &[0]);
        trimmed.trim(D + 1_000_000_000 + 4 * US);
        let explanation = explained(&trimmed, &IrqNames::new(), &sample(D + 310 * US));
        assert!(explanation.window_short);
        assert_eq!(
            (explanation.lost_events, explanation.lost_unknown),
            (0, false)
        );
    }

    #[test]
    fn a_clock_disagreement_beyond_the_tolerance_is_a_note() {
        let mut scenario = Scenario::new();
        scenario
            .switch(D - 100 * US, 0, THREAD, 1, SWAPPER)
            .timer_fires(0, TIMER, D - 5 * US, D - 3 * US, Some(THREAD))
            .switch(D + 2 * US, 0, SWAPPER, 0, THREAD)
            .switch(D + 9 * US, 0, THREAD, 1, SWAPPER);
        let windows = windows_of(&scenario, &[0]);
        let explanation = explained(&windows, &IrqNames::new(), &sample(D + 4 * US));
        assert_eq!(explanation.components[0].ns, -5 * US);
        assert!(explanation.components[0].causes.is_empty());
        assert_eq!(explanation.unexplained_ns, 0);
        assert!(!explanation.is_consistent());
        assert!(
            explanation
                .notes
                .iter()
                .any(|n| n.contains("irq_latency is -5000 ns"))
        );
    }

    #[test]
    fn kernel_priorities_name_the_policy() {
        assert_eq!(policy_from_kernel_prio(-1), ("deadline".to_owned(), None));
        assert_eq!(policy_from_kernel_prio(0), ("fifo/rr".to_owned(), Some(99)));
        assert_eq!(policy_from_kernel_prio(99), ("fifo/rr".to_owned(), Some(0)));
        assert_eq!(
            policy_from_kernel_prio(100),
            ("other".to_owned(), Some(-20))
        );
        assert_eq!(policy_from_kernel_prio(139), ("other".to_owned(), Some(19)));
    }
}
