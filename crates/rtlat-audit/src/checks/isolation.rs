//! The measured CPUs kept apart: `isolcpus=`, `nohz_full=`, `rcu_nocbs=`,
//! `irqaffinity=`, and their SMT siblings.

use super::judge::{Check, Judge, finding, flag, info, listing, ok, unknown};
use crate::facts::{cpu_list, cpus_phrase, ranges_text};
use crate::suggest::{Housekeeping, ONE_CPU, Suggestion};
use crate::{Finding, Status};

/// The checks of this area, in the order the audit lists them.
pub(super) const CHECKS: &[Check] = &[
    Check {
        id: "isolation.isolcpus",
        judges: "`isolcpus=`, `cpu/isolated`",
        flagged_when: "a measured CPU not isolated: `warn`",
        judge: |judge| judge.isolation_isolcpus(judge.suggestion),
    },
    Check {
        id: "isolation.nohz_full",
        judges: "`cpu/nohz_full`, `nohz_full=`",
        flagged_when: "a measured CPU keeps the tick: `warn`",
        judge: |judge| judge.isolation_nohz_full(),
    },
    Check {
        id: "isolation.rcu_nocbs",
        judges: "`rcu_nocbs=` (nohz_full CPUs count as offloaded)",
        flagged_when: "a measured CPU runs its RCU callbacks: `warn`",
        judge: |judge| judge.isolation_rcu_nocbs(),
    },
    Check {
        id: "isolation.irqaffinity",
        judges: "`irqaffinity=`",
        flagged_when: "absent, or includes a measured CPU: `warn`",
        judge: |judge| judge.isolation_irqaffinity(),
    },
    Check {
        id: "smt.active",
        judges: "`cpu/smt/active` (else the siblings lists)",
        flagged_when: "never (`info` when on)",
        judge: |judge| judge.smt_active(),
    },
    Check {
        id: "smt.siblings",
        judges: "`cpuN/topology/thread_siblings_list`",
        flagged_when: "a measured CPU's sibling neither measured nor isolated: `warn`",
        judge: |judge| judge.smt_siblings(),
    },
];

impl Judge<'_> {
    /// `PARAMS on the kernel command line` for the CPUs to isolate (those
    /// of the suggested command, which leaves housekeeping room; the
    /// measured ones when it names none), saying which CPUs stay for the
    /// housekeeping; on a machine of one CPU, that nothing can be.
    fn isolating(&self, params: &[&str]) -> String {
        let list = if self.suggestion.cpus.is_empty() {
            self.measured_text.clone()
        } else {
            cpu_list(&self.suggestion.cpus)
        };
        let params: Vec<String> = params.iter().map(|p| format!("{p}={list}")).collect();
        let params = params.join(" ");
        match &self.suggestion.housekeeping {
            Housekeeping::OneCpu => format!("none: {ONE_CPU}"),
            Housekeeping::Kept(kept) => format!(
                "{params} on the kernel command line, keeping {} for housekeeping (then measure with -a {list})",
                cpus_phrase(kept)
            ),
            Housekeeping::Outside | Housekeeping::Unknown => {
                format!("{params} on the kernel command line")
            }
        }
    }

    /// The parameter string a fix names for the CPUs to isolate.
    fn isolation_fix(&self) -> String {
        self.isolating(&["isolcpus", "nohz_full", "rcu_nocbs"])
    }

    fn isolation_isolcpus(&self, suggestion: &Suggestion) -> Finding {
        const ID: &str = "isolation.isolcpus";
        let note = match &suggestion.no_main_cpu {
            Some(note) => format!("; {note}"),
            None => String::new(),
        };
        if let (Err(unread), Err(_)) = (&self.facts.isolated, &self.facts.cmdline) {
            return finding(ID, Status::Unknown, format!("{unread}{note}"));
        }
        let isolated = self.facts.isolated_cpus();
        let param = self.facts.param("isolcpus").map_or_else(
            || "no isolcpus=".to_owned(),
            |v| format!("isolcpus={}", clip_value(v)),
        );
        // CPUs beyond the possible ones are said, not walked through.
        let beyond = match self.facts.isolcpus_list() {
            Some(list) if !list.beyond.is_empty() => format!(
                "; isolcpus= names CPUs beyond the possible 0-{}: {}",
                self.facts.cpu_limit() - 1,
                clip_value(&ranges_text(&list.beyond))
            ),
            _ => String::new(),
        };
        let note = format!("{beyond}{note}");
        let sysfs = match &self.facts.isolated {
            Ok(text) if text.is_empty() => "isolated: none".to_owned(),
            Ok(text) => format!("isolated: {text}"),
            Err(_) => "isolated: unreadable".to_owned(),
        };
        let outside = self.measured_outside(&isolated);
        if outside.is_empty() {
            return ok(
                ID,
                format!(
                    "{param} ({sysfs}); measured {} isolated{note}",
                    self.measured_cpus
                ),
            );
        }
        flag(
            ID,
            Status::Warn,
            format!(
                "{param} ({sysfs}); measured {} not isolated{note}",
                cpus_phrase(&outside)
            ),
            "the scheduler puts other tasks on the measured CPUs, delaying the measuring threads",
            self.isolation_fix(),
            outside,
        )
    }

    fn isolation_nohz_full(&self) -> Finding {
        const ID: &str = "isolation.nohz_full";
        if let (Err(_), Err(unread)) = (&self.facts.nohz_full, &self.facts.cmdline) {
            return unknown(ID, unread);
        }
        let tickless = self.facts.nohz_full_cpus();
        let outside = self.measured_outside(&tickless);
        let have = if tickless.is_empty() {
            "no nohz_full CPUs".to_owned()
        } else {
            format!("nohz_full: {}", cpu_list(&tickless))
        };
        if outside.is_empty() {
            return ok(
                ID,
                format!("{have}; measured {} tickless", self.measured_cpus),
            );
        }
        flag(
            ID,
            Status::Warn,
            format!(
                "{have}; measured {} {} the tick",
                cpus_phrase(&outside),
                if outside.len() == 1 { "keeps" } else { "keep" }
            ),
            "the periodic tick interrupts the measured CPUs even when one task runs there",
            self.isolating(&["nohz_full"]),
            outside,
        )
    }

    fn isolation_rcu_nocbs(&self) -> Finding {
        const ID: &str = "isolation.rcu_nocbs";
        let Err(unread) = &self.facts.cmdline else {
            // nohz_full CPUs are offloaded too, whether rcu_nocbs= says so or not.
            let mut offloaded = self.facts.param_cpus("rcu_nocbs").unwrap_or_default();
            offloaded.extend(self.facts.nohz_full_cpus());
            offloaded.sort_unstable();
            offloaded.dedup();
            let param = self
                .facts
                .param("rcu_nocbs")
                .map_or_else(|| "no rcu_nocbs=".to_owned(), |v| format!("rcu_nocbs={v}"));
            let outside = self.measured_outside(&offloaded);
            if outside.is_empty() {
                return ok(
                    ID,
                    format!(
                        "{param}; RCU callbacks of measured {} offloaded",
                        self.measured_cpus
                    ),
                );
            }
            return flag(
                ID,
                Status::Warn,
                format!(
                    "{param}; measured {} {} RCU callbacks",
                    cpus_phrase(&outside),
                    if outside.len() == 1 {
                        "runs its own"
                    } else {
                        "run their own"
                    }
                ),
                "RCU callbacks run in softirq on the measured CPUs, in bursts",
                self.isolating(&["rcu_nocbs"]),
                outside,
            );
        };
        unknown(ID, unread)
    }

    fn isolation_irqaffinity(&self) -> Finding {
        const ID: &str = "isolation.irqaffinity";
        if let Err(unread) = &self.facts.cmdline {
            return unknown(ID, unread);
        }
        let fix = match self.suggestion.housekeeping {
            Housekeeping::OneCpu => format!("none: {ONE_CPU}"),
            _ => format!(
                "irqaffinity={} on the kernel command line",
                self.housekeeping_target()
            ),
        };
        match self.facts.param_cpus("irqaffinity") {
            None => flag(
                ID,
                Status::Warn,
                "no irqaffinity=: device interrupts may be routed to every CPU",
                "new interrupts may be routed to the measured CPUs",
                fix,
                self.measured.to_vec(),
            ),
            Some(default) => {
                let inside: Vec<usize> = self
                    .measured
                    .iter()
                    .copied()
                    .filter(|cpu| default.contains(cpu))
                    .collect();
                let param = format!("irqaffinity={}", cpu_list(&default));
                if inside.is_empty() {
                    ok(ID, format!("{param}: excludes the measured CPUs"))
                } else {
                    flag(
                        ID,
                        Status::Warn,
                        format!("{param} includes measured {}", cpus_phrase(&inside)),
                        "new interrupts may be routed to the measured CPUs",
                        fix,
                        inside,
                    )
                }
            }
        }
    }

    fn smt_active(&self) -> Finding {
        const ID: &str = "smt.active";
        match &self.facts.smt_active {
            Err(unread) => unknown(ID, unread),
            Ok(false) => ok(ID, "SMT off"),
            Ok(true) => info(
                ID,
                "SMT on: cores run two or more hardware threads (see smt.siblings)",
            ),
        }
    }

    fn smt_siblings(&self) -> Finding {
        const ID: &str = "smt.siblings";
        if self.facts.siblings.is_empty() {
            return match &self.facts.online {
                Err(unread) => unknown(ID, unread),
                Ok(_) => finding(
                    ID,
                    Status::Unknown,
                    "no cpuN/topology/thread_siblings_list readable".to_owned(),
                ),
            };
        }
        let isolated = self.facts.isolated_cpus();
        let mut busy_pairs = Vec::new();
        let mut concerned = Vec::new();
        for &cpu in self.measured {
            let busy: Vec<usize> = self
                .facts
                .siblings_of(cpu)
                .into_iter()
                .filter(|sibling| !self.measured.contains(sibling) && !isolated.contains(sibling))
                .collect();
            if !busy.is_empty() {
                busy_pairs.push(format!("CPU {cpu} shares a core with {}", cpu_list(&busy)));
                concerned.push(cpu);
            }
        }
        if busy_pairs.is_empty() {
            return ok(
                ID,
                "no measured CPU shares its core with a CPU that runs other work",
            );
        }
        flag(
            ID,
            Status::Warn,
            listing(&busy_pairs),
            "work on a sibling hardware thread takes the core's execution units from the measuring thread",
            "nosmt on the kernel command line, or isolate the siblings too (isolcpus=)",
            concerned,
        )
    }
}

/// A kernel parameter's value for a message: at most 200 characters, the
/// rest counted (a copied tree's command line may be megabytes long).
fn clip_value(value: &str) -> String {
    const LIMIT: usize = 200;
    match value.char_indices().nth(LIMIT) {
        Some((at, _)) => format!("{}... ({} bytes)", &value[..at], value.len()),
        None => value.to_owned(),
    }
}
