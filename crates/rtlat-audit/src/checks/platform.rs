//! What sits below the kernel: a hypervisor and its steal time, and
//! whether SMIs can be counted.

use super::judge::{Check, Judge, flag, info, listing, ok, unknown};
use crate::{Finding, Status};

/// The checks of this area, in the order the audit lists them.
pub(super) const CHECKS: &[Check] = &[
    Check {
        id: "virt.hypervisor",
        judges: "the `hypervisor` flag",
        flagged_when: "set: `warn`",
        judge: |judge| judge.virt_hypervisor(),
    },
    Check {
        id: "virt.steal",
        judges: "the steal column of `proc/stat`",
        flagged_when: "steal time on a measured CPU: `warn`",
        judge: |judge| judge.virt_steal(),
    },
    Check {
        id: "smi.counting",
        judges: "the CPU vendor, `dev/cpu/0/msr`",
        flagged_when: "never (`ok` when countable, else `info` saying why not)",
        judge: |judge| judge.smi_counting(),
    },
];

impl Judge<'_> {
    fn virt_hypervisor(&self) -> Finding {
        const ID: &str = "virt.hypervisor";
        match &self.facts.cpuinfo {
            Err(unread) => unknown(ID, unread),
            Ok(cpu) if !cpu.has_flags => info(ID, "not x86: no hypervisor flag to read"),
            Ok(cpu) if !cpu.hypervisor => ok(ID, "bare metal (no hypervisor flag)"),
            Ok(_) => flag(
                ID,
                Status::Warn,
                "running under a hypervisor",
                "the host can stop this virtual CPU at any time; latencies include the host's",
                "measure on bare metal, or give the guest dedicated, isolated host CPUs and an RT host kernel",
                Vec::new(),
            ),
        }
    }

    fn virt_steal(&self) -> Finding {
        const ID: &str = "virt.steal";
        let steal = match &self.facts.steal {
            Err(unread) => return unknown(ID, unread),
            Ok(steal) => steal,
        };
        let stolen: Vec<(usize, u64)> = self
            .measured
            .iter()
            .filter_map(|cpu| steal.get(cpu).map(|&ticks| (*cpu, ticks)))
            .filter(|&(_, ticks)| ticks > 0)
            .collect();
        if stolen.is_empty() {
            return ok(
                ID,
                format!("no steal time since boot on {}", self.measured_cpus),
            );
        }
        let described: Vec<String> = stolen
            .iter()
            .map(|(cpu, ticks)| format!("{ticks} ticks on CPU {cpu}"))
            .collect();
        flag(
            ID,
            Status::Warn,
            format!("steal time since boot: {}", listing(&described)),
            "the host has run other work on these virtual CPUs' time",
            "give the guest dedicated host CPUs (vCPU pinning) and an idle host",
            stolen.iter().map(|(cpu, _)| *cpu).collect(),
        )
    }

    fn smi_counting(&self) -> Finding {
        const ID: &str = "smi.counting";
        match &self.facts.cpuinfo {
            Err(unread) => unknown(ID, unread),
            Ok(cpu) => match cpu.vendor.as_deref() {
                Some("GenuineIntel") if self.facts.msr_device => ok(
                    ID,
                    "SMIs can be counted (--smi): Intel CPU, /dev/cpu/0/msr present",
                ),
                Some("GenuineIntel") => info(
                    ID,
                    "SMI counting needs the msr module (modprobe msr): /dev/cpu/0/msr absent",
                ),
                Some(vendor) => info(
                    ID,
                    format!("SMI counting needs an Intel CPU (MSR_SMI_COUNT); this is {vendor}"),
                ),
                None => info(ID, "SMI counting needs an Intel x86 CPU (MSR_SMI_COUNT)"),
            },
        }
    }
}
