//! What else runs on the measured CPUs: the watchdogs, device
//! interrupts and irqbalance, real-time user and kernel threads.

use super::judge::{Check, Judge, flag, info, listing, ok, unknown};
use crate::facts::{Policy, ThreadInfo, cpu_list};
use crate::suggest::{Housekeeping, ONE_CPU};
use crate::{Finding, Status};

/// The checks of this area, in the order the audit lists them.
pub(super) const CHECKS: &[Check] = &[
    Check {
        id: "watchdog.nmi",
        judges: "`kernel.nmi_watchdog`",
        flagged_when: "on: `warn`",
        judge: |judge| judge.watchdog_nmi(),
    },
    Check {
        id: "watchdog.soft_lockup",
        judges: "`kernel.soft_watchdog`, `kernel.watchdog`",
        flagged_when: "on: `warn`",
        judge: |judge| judge.watchdog_soft_lockup(),
    },
    Check {
        id: "irq.affinity",
        judges: "`proc/interrupts`, `proc/irq/N/effective_affinity_list` (else `smp_affinity_list`)",
        flagged_when: "a device IRQ delivered to a measured CPU: `warn`",
        judge: |judge| judge.irq_affinity(),
    },
    Check {
        id: "irq.irqbalance",
        judges: "an `irqbalance` process",
        flagged_when: "running and a measured CPU not isolated: `warn`",
        judge: |judge| judge.irq_irqbalance(),
    },
    Check {
        id: "competition.rt_threads",
        judges: "`proc/<pid>/task/<tid>/{stat,status}` of user threads (the invoking process excluded)",
        flagged_when: "FIFO/RR at or above `-p`, or DEADLINE, allowed on a measured CPU: `bad`",
        judge: |judge| judge.competition_rt_threads(),
    },
    Check {
        id: "competition.kernel_threads",
        judges: "the same, of `ktimers/N`, `ksoftirqd/N`, `rcuc/N`, `irq/*` and other real-time kernel threads (CPU stoppers excluded)",
        flagged_when: "at or above `-p` on a measured CPU: `warn`",
        judge: |judge| judge.competition_kernel_threads(),
    },
];

impl Judge<'_> {
    fn watchdog_nmi(&self) -> Finding {
        self.sysctl_off(
            "watchdog.nmi",
            "nmi_watchdog",
            &self.facts.nmi_watchdog,
            "no NMI watchdog in this kernel",
            "the NMI watchdog interrupts every CPU periodically with a non-maskable interrupt",
            "nmi_watchdog=0 on the kernel command line, or sysctl kernel.nmi_watchdog=0",
        )
    }

    fn watchdog_soft_lockup(&self) -> Finding {
        const ID: &str = "watchdog.soft_lockup";
        // `watchdog=0` turns both watchdogs off.
        if self.facts.watchdog == Ok(0) {
            return ok(ID, "watchdog=0");
        }
        self.sysctl_off(
            ID,
            "soft_watchdog",
            &self.facts.soft_watchdog,
            "no soft-lockup watchdog in this kernel",
            "the soft-lockup watchdog runs a timer and a thread on every CPU it watches",
            "nowatchdog on the kernel command line, or sysctl kernel.soft_watchdog=0",
        )
    }

    fn irq_affinity(&self) -> Finding {
        const ID: &str = "irq.affinity";
        let irqs = match &self.facts.irqs {
            Err(unread) => return unknown(ID, unread),
            Ok(irqs) => irqs,
        };
        let mut on_measured = Vec::new();
        let mut concerned: Vec<usize> = Vec::new();
        for irq in irqs {
            let Ok(cpus) = &irq.cpus else {
                continue;
            };
            let inside: Vec<usize> = cpus
                .iter()
                .copied()
                .filter(|cpu| self.measured.contains(cpu))
                .collect();
            if !inside.is_empty() {
                on_measured.push(format!(
                    "{} {} on CPU {}",
                    irq.number,
                    irq.name,
                    cpu_list(&inside)
                ));
                concerned.extend(inside);
            }
        }
        if on_measured.is_empty() {
            return ok(
                ID,
                format!("no device interrupt is delivered to {}", self.measured_cpus),
            );
        }
        concerned.sort_unstable();
        concerned.dedup();
        let target = self.housekeeping_target();
        let fix = match self.suggestion.housekeeping {
            Housekeeping::OneCpu => format!("none: {ONE_CPU}"),
            _ => format!(
                "echo {target} > /proc/irq/N/smp_affinity_list for each, or irqaffinity={target} on the kernel command line"
            ),
        };
        flag(
            ID,
            Status::Warn,
            format!("IRQs on measured CPUs: {}", listing(&on_measured)),
            "their handlers run on the measured CPUs and delay the measuring threads",
            fix,
            concerned,
        )
    }

    fn irq_irqbalance(&self) -> Finding {
        const ID: &str = "irq.irqbalance";
        match &self.facts.threads {
            Err(unread) => unknown(ID, unread),
            Ok(threads) => match threads.irqbalance {
                None => ok(ID, "irqbalance not running"),
                Some(pid) => {
                    let outside = self.measured_outside(&self.facts.isolated_cpus());
                    if outside.is_empty() {
                        info(
                            ID,
                            format!(
                                "irqbalance running (pid {pid}); it leaves the isolated measured CPUs alone"
                            ),
                        )
                    } else {
                        flag(
                            ID,
                            Status::Warn,
                            format!("irqbalance running (pid {pid})"),
                            "it moves interrupts onto the measured CPUs every few seconds",
                            format!(
                                "systemctl stop irqbalance, or IRQBALANCE_BANNED_CPULIST={} in its configuration",
                                cpu_list(&outside)
                            ),
                            outside,
                        )
                    }
                }
            },
        }
    }

    /// Whether `thread` preempts a measuring thread at the requested priority.
    fn outranks(&self, thread: &ThreadInfo) -> bool {
        match thread.policy {
            Policy::Deadline => true,
            Policy::Fifo | Policy::RoundRobin => thread.rt_priority >= self.priority(),
            Policy::Normal => false,
        }
    }

    /// The measured CPUs `thread` may run on.
    fn measured_cpus_of(&self, thread: &ThreadInfo) -> Vec<usize> {
        match &thread.allowed {
            Ok(allowed) => self
                .measured
                .iter()
                .copied()
                .filter(|cpu| allowed.contains(cpu))
                .collect(),
            Err(_) => self.measured.to_vec(),
        }
    }

    fn competition_rt_threads(&self) -> Finding {
        const ID: &str = "competition.rt_threads";
        let threads = match &self.facts.threads {
            Err(unread) => return unknown(ID, unread),
            Ok(threads) => threads,
        };
        let on_measured: Vec<&ThreadInfo> = threads
            .realtime_user
            .iter()
            .filter(|t| t.may_run_on(self.measured))
            .collect();
        let (above, below): (Vec<&ThreadInfo>, Vec<&ThreadInfo>) =
            on_measured.iter().partition(|t| self.outranks(t));
        if above.is_empty() {
            return ok(
                ID,
                format!(
                    "no user real-time thread at or above {} on {}{}",
                    self.priority_text(),
                    self.measured_cpus,
                    if below.is_empty() {
                        String::new()
                    } else {
                        format!(" ({} below it)", below.len())
                    }
                ),
            );
        }
        let mut concerned: Vec<usize> = above
            .iter()
            .flat_map(|t| self.measured_cpus_of(t))
            .collect();
        concerned.sort_unstable();
        concerned.dedup();
        let described: Vec<String> = above.iter().map(|t| t.describe()).collect();
        flag(
            ID,
            Status::Bad,
            format!(
                "at or above {} on the measured CPUs: {}",
                self.priority_text(),
                listing(&described)
            ),
            "these threads preempt the measuring threads, whose latency then includes their run time",
            "stop them, move them off the measured CPUs (taskset -p), or measure with a higher -p (suggested command)",
            concerned,
        )
    }

    fn competition_kernel_threads(&self) -> Finding {
        const ID: &str = "competition.kernel_threads";
        let threads = match &self.facts.threads {
            Err(unread) => return unknown(ID, unread),
            Ok(threads) => threads,
        };
        let on_measured: Vec<&ThreadInfo> = threads
            .kernel
            .iter()
            .filter(|t| t.may_run_on(self.measured))
            .collect();
        let above: Vec<&ThreadInfo> = on_measured
            .iter()
            .copied()
            .filter(|t| self.outranks(t))
            .collect();
        let described = |threads: &[&ThreadInfo]| {
            listing(&threads.iter().map(|t| t.describe()).collect::<Vec<_>>())
        };
        if above.is_empty() {
            let fact = if on_measured.is_empty() {
                format!(
                    "no ktimers/ksoftirqd/rcuc/irq thread on {}",
                    self.measured_cpus
                )
            } else {
                format!(
                    "below {}: {}",
                    self.priority_text(),
                    described(&on_measured)
                )
            };
            return ok(ID, fact);
        }
        let mut concerned: Vec<usize> = above
            .iter()
            .flat_map(|t| self.measured_cpus_of(t))
            .collect();
        concerned.sort_unstable();
        concerned.dedup();
        let highest = above.iter().map(|t| t.rt_priority).max().unwrap_or(0);
        flag(
            ID,
            Status::Warn,
            format!(
                "at or above {} on the measured CPUs: {}",
                self.priority_text(),
                described(&above)
            ),
            "these kernel threads (timers, softirqs, threaded interrupts) preempt the measuring threads",
            format!(
                "measure with -p {} or higher, or move the interrupts off the measured CPUs",
                (highest + 1).min(99)
            ),
            concerned,
        )
    }
}
