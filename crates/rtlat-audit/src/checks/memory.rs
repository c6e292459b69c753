//! Memory management that stalls a thread: transparent huge pages, swap
//! and KSM.

use super::judge::{Check, Judge, flag, ok, unknown};
use crate::{Finding, Status};

/// The checks of this area, in the order the audit lists them.
pub(super) const CHECKS: &[Check] = &[
    Check {
        id: "memory.thp",
        judges: "`transparent_hugepage/enabled`",
        flagged_when: "`always`: `warn`",
        judge: |judge| judge.memory_thp(),
    },
    Check {
        id: "memory.swap",
        judges: "`proc/swaps` (else `proc/meminfo`)",
        flagged_when: "swap in use: `warn`",
        judge: |judge| judge.memory_swap(),
    },
    Check {
        id: "memory.ksm",
        judges: "`ksm/run`",
        flagged_when: "on: `warn`",
        judge: |judge| judge.memory_ksm(),
    },
];

impl Judge<'_> {
    fn memory_thp(&self) -> Finding {
        const ID: &str = "memory.thp";
        match self.facts.thp.as_deref() {
            Err(unread) if unread.reason == "not found" => {
                ok(ID, "no transparent huge pages in this kernel")
            }
            Err(unread) => unknown(ID, unread),
            Ok("always") => flag(
                ID,
                Status::Warn,
                "transparent huge pages: always",
                "huge-page faults and khugepaged's compaction can stall the measuring threads",
                "transparent_hugepage=madvise on the kernel command line, or echo madvise > /sys/kernel/mm/transparent_hugepage/enabled",
                Vec::new(),
            ),
            Ok(mode) => ok(ID, format!("transparent huge pages: {mode}")),
        }
    }

    fn memory_swap(&self) -> Finding {
        const ID: &str = "memory.swap";
        match self.facts.swap {
            Err(ref unread) => unknown(ID, unread),
            Ok(swap) if swap.total_kib == 0 => ok(ID, "no swap"),
            Ok(swap) if swap.used_kib == 0 => {
                ok(ID, format!("{} KiB of swap, none in use", swap.total_kib))
            }
            Ok(swap) => flag(
                ID,
                Status::Warn,
                format!(
                    "{} KiB of {} KiB swap in use",
                    swap.used_kib, swap.total_kib
                ),
                "pages not locked in memory can be swapped out, and a major fault costs milliseconds",
                "run with -m (mlockall), and swapoff -a",
                Vec::new(),
            ),
        }
    }

    fn memory_ksm(&self) -> Finding {
        self.sysctl_off(
            "memory.ksm",
            "ksm/run",
            &self.facts.ksm_run,
            "no KSM in this kernel",
            "KSM merges pages in the background; writing a merged page faults to copy it",
            "echo 0 > /sys/kernel/mm/ksm/run",
        )
    }
}
