//! The attribution of scenarios built event by event.

use super::*;
use crate::events::{EventKind, KernelEvent, Vector};
use crate::scenario::{SPIN, SWAPPER, Scenario, THREAD, Task, US};
use crate::symbols::{KernelSymbols, NO_SYMBOLS};
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
    let names: Vec<(CauseKind, String, i64)> = causes(&explanation, ComponentName::ThreadLatency);
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
