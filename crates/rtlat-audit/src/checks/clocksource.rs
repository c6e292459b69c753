//! The clock the timers read: the current clocksource and the TSC's
//! flags.

use super::judge::{Check, Judge, flag, info, ok, unknown};
use crate::{Finding, Status};

/// The checks of this area, in the order the audit lists them.
pub(super) const CHECKS: &[Check] = &[
    Check {
        id: "clocksource.current",
        judges: "`clocksource0/{current,available}_clocksource`",
        flagged_when: "hpet, acpi_pm or jiffies: `bad`",
        judge: |judge| judge.clocksource_current(),
    },
    Check {
        id: "clocksource.tsc",
        judges: "`constant_tsc`, `nonstop_tsc` in `proc/cpuinfo`",
        flagged_when: "either missing on x86: `warn`",
        judge: |judge| judge.clocksource_tsc(),
    },
];

impl Judge<'_> {
    fn clocksource_current(&self) -> Finding {
        const ID: &str = "clocksource.current";
        let available = self
            .facts
            .clocksources_available
            .as_deref()
            .unwrap_or("unreadable");
        match self.facts.clocksource.as_deref() {
            Err(unread) => unknown(ID, unread),
            Ok(source @ ("tsc" | "arch_sys_counter")) => {
                ok(ID, format!("{source} (available: {available})"))
            }
            Ok(source @ ("hpet" | "acpi_pm" | "jiffies" | "refined-jiffies")) => flag(
                ID,
                Status::Bad,
                format!("{source} (available: {available})"),
                format!(
                    "reading {source} is a slow device access, not a vDSO read, so every timestamp costs microseconds"
                ),
                "clocksource=tsc on the kernel command line if the TSC is stable (tsc=reliable), or echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource",
                Vec::new(),
            ),
            Ok(source) => info(ID, format!("{source} (available: {available})")),
        }
    }

    fn clocksource_tsc(&self) -> Finding {
        const ID: &str = "clocksource.tsc";
        match &self.facts.cpuinfo {
            Err(unread) => unknown(ID, unread),
            Ok(info_) if !info_.has_flags => info(ID, "not an x86 CPU: no TSC flags"),
            Ok(cpu) if cpu.constant_tsc && cpu.nonstop_tsc => ok(ID, "constant_tsc nonstop_tsc"),
            Ok(cpu) => {
                let missing: Vec<&str> = [
                    ("constant_tsc", cpu.constant_tsc),
                    ("nonstop_tsc", cpu.nonstop_tsc),
                ]
                .iter()
                .filter(|(_, present)| !present)
                .map(|(name, _)| *name)
                .collect();
                flag(
                    ID,
                    Status::Warn,
                    format!("no {}", missing.join(", no ")),
                    "the TSC changes rate with frequency or stops in deep idle, so the kernel may fall back to a slow clocksource",
                    "use a CPU with an invariant TSC, or keep it out of deep idle (idle.states)",
                    Vec::new(),
                )
            }
        }
    }
}
