//! A replay turned into the causes of one stage: interrupts, softirqs,
//! vectors and timer callbacks by name, tasks with their policy and
//! priority, idle states with their exit latency. What a task's time
//! means depends on the stage (interrupts off before the handler, the
//! measured thread's own timer and its exit to user named as such); equal
//! causes are merged, largest first, the time before the window last.

use super::explanation::{Cause, CauseKind, ExplainContext};
use super::replay::{Activity, Replay, Stage, TaskSeen};
use crate::events::{IrqNames, softirq_name};

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
pub(super) struct Ours {
    pub(super) tid: i32,
    pub(super) timer: Option<u64>,
}

/// Turns a replay into the causes of one stage, largest first.
pub(super) fn causes_of(
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
