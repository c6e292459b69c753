//! An explanation and what it is made of: the sample, its stages
//! (components) with their causes, the trace window, the dominant cause;
//! the tolerances the stages are found and checked with; the facts about
//! the system the events do not carry ([`ExplainContext`]).

use crate::events::KernelEvent;
use crate::symbols::{KernelSymbols, NO_SYMBOLS};

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
    pub(super) fn named(kind: CauseKind, name: impl Into<String>, ns: i64) -> Cause {
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

/// The largest of `causes` (largest first) the trace saw.
fn first_traced(causes: &[Cause]) -> Option<&Cause> {
    causes
        .iter()
        .find(|cause| cause.kind != CauseKind::Untraced)
}
