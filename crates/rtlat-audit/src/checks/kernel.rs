//! The kernel itself: its preemption model, its tick rate, whether it can
//! stop the tick, and its command line.

use super::judge::{Check, Judge, finding, flag, info, ok, unknown};
use crate::facts::preemption_model;
use crate::{Finding, Status};

/// Why a kernel that is not PREEMPT_RT is `bad` (the summary quotes it).
pub const NOT_PREEMPT_RT: &str =
    "not a PREEMPT_RT kernel, so wake-up latencies of milliseconds are expected under load";

/// What to do about a kernel that is not PREEMPT_RT.
const PREEMPT_RT_FIX: &str =
    "boot a PREEMPT_RT kernel (CONFIG_PREEMPT_RT=y; Debian: linux-image-rt-amd64)";

/// The checks of this area, in the order the audit lists them.
pub(super) const CHECKS: &[Check] = &[
    Check {
        id: "kernel.preemption",
        judges: "`sys/kernel/realtime`, the version string, the kernel config, `sys/kernel/debug/sched/preempt`",
        flagged_when: "not PREEMPT_RT: `bad`",
        judge: |judge| judge.kernel_preemption(),
    },
    Check {
        id: "kernel.hz",
        judges: "`CONFIG_HZ` of `proc/config.gz` or `boot/config-<release>`",
        flagged_when: "below 1000: `info`",
        judge: |judge| judge.kernel_hz(),
    },
    Check {
        id: "kernel.nohz_full",
        judges: "`CONFIG_NO_HZ_FULL`",
        flagged_when: "not built: `warn`",
        judge: |judge| judge.kernel_nohz_full(),
    },
    Check {
        id: "kernel.cmdline",
        judges: "`proc/cmdline`",
        flagged_when: "never (`info`)",
        judge: |judge| judge.kernel_cmdline(),
    },
];

impl Judge<'_> {
    fn kernel_preemption(&self) -> Finding {
        const ID: &str = "kernel.preemption";
        match preemption_model(self.facts) {
            Some(model) if model == "PREEMPT_RT" => ok(ID, model),
            Some(model) => flag(
                ID,
                Status::Bad,
                model,
                NOT_PREEMPT_RT,
                PREEMPT_RT_FIX,
                Vec::new(),
            ),
            None => match &self.facts.version {
                Err(unread) => unknown(ID, unread),
                // The version string names PREEMPT_RT, PREEMPT_DYNAMIC and
                // PREEMPT; without any, the kernel is built without
                // preemption or with voluntary preemption.
                Ok(version) => flag(
                    ID,
                    Status::Bad,
                    format!(
                        "PREEMPT_NONE or PREEMPT_VOLUNTARY (version '{version}' names no preemption model)"
                    ),
                    NOT_PREEMPT_RT,
                    PREEMPT_RT_FIX,
                    Vec::new(),
                ),
            },
        }
    }

    fn kernel_hz(&self) -> Finding {
        const ID: &str = "kernel.hz";
        match &self.facts.config {
            Err(unread) => unknown(ID, unread),
            Ok(config) => match config.hz {
                None => finding(
                    ID,
                    Status::Unknown,
                    format!("no CONFIG_HZ in {}", config.path.display()),
                ),
                Some(hz) if hz >= 1000 => ok(ID, format!("HZ={hz}")),
                Some(hz) => info(
                    ID,
                    format!(
                        "HZ={hz}: the tick comes every {} ms; timers are high-resolution and do not wait for it",
                        1000 / hz.max(1)
                    ),
                ),
            },
        }
    }

    fn kernel_nohz_full(&self) -> Finding {
        const ID: &str = "kernel.nohz_full";
        match &self.facts.config {
            Err(unread) => unknown(ID, unread),
            Ok(config) if config.nohz_full => ok(ID, "CONFIG_NO_HZ_FULL=y"),
            Ok(_) => flag(
                ID,
                Status::Warn,
                "CONFIG_NO_HZ_FULL is not set",
                "the scheduler tick interrupts every CPU, measured ones included, however it is isolated",
                "a kernel built with CONFIG_NO_HZ_FULL=y (then nohz_full= on the command line)",
                Vec::new(),
            ),
        }
    }

    fn kernel_cmdline(&self) -> Finding {
        const ID: &str = "kernel.cmdline";
        match &self.facts.cmdline {
            Err(unread) => unknown(ID, unread),
            Ok(cmdline) => info(ID, cmdline.text.clone()),
        }
    }
}
