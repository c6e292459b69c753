//! What the measuring process may do: its real-time priority and locked
//! memory limits, and the capabilities that lift them.

use super::judge::{Check, Judge, flag, info, ok, unknown};
use crate::facts::Limit;
use crate::{Finding, Status};

/// The checks of this area, in the order the audit lists them.
pub(super) const CHECKS: &[Check] = &[
    Check {
        id: "limits.rtprio",
        judges: "`Max realtime priority` of `proc/self/limits`",
        flagged_when: "below `-p` without CAP_SYS_NICE: `bad`",
        judge: |judge| judge.limits_rtprio(),
    },
    Check {
        id: "limits.memlock",
        judges: "`Max locked memory`",
        flagged_when: "limited without CAP_IPC_LOCK: `warn`",
        judge: |judge| judge.limits_memlock(),
    },
    Check {
        id: "limits.cap_sys_nice",
        judges: "bit 23 of `CapEff` in `proc/self/status`",
        flagged_when: "absent and RLIMIT_RTPRIO below `-p`: `warn`",
        judge: |judge| judge.limits_cap_sys_nice(),
    },
    Check {
        id: "limits.cap_ipc_lock",
        judges: "bit 14 of `CapEff`",
        flagged_when: "absent and RLIMIT_MEMLOCK limited: `warn`",
        judge: |judge| judge.limits_cap_ipc_lock(),
    },
];

impl Judge<'_> {
    /// Whether RLIMIT_RTPRIO allows the requested priority.
    fn rtprio_covers(&self, limit: Limit) -> bool {
        match limit {
            Limit::Unlimited => true,
            Limit::Value(value) => value >= u64::from(self.priority()),
        }
    }

    fn limits_rtprio(&self) -> Finding {
        const ID: &str = "limits.rtprio";
        let privileges = &self.facts.privileges;
        let limit = match privileges.rtprio {
            Err(ref unread) => return unknown(ID, unread),
            Ok(limit) => limit,
        };
        if self.rtprio_covers(limit) {
            ok(
                ID,
                format!("RLIMIT_RTPRIO {limit}, enough for {}", self.priority_text()),
            )
        } else if privileges.cap_sys_nice == Ok(true) {
            ok(
                ID,
                format!("RLIMIT_RTPRIO {limit}, but CAP_SYS_NICE allows any priority"),
            )
        } else {
            flag(
                ID,
                Status::Bad,
                format!("RLIMIT_RTPRIO {limit}, below {}", self.priority_text()),
                "the measuring threads cannot get their real-time priority, so the run fails",
                "run as root, or raise rtprio in /etc/security/limits.conf (ulimit -r)",
                Vec::new(),
            )
        }
    }

    fn limits_memlock(&self) -> Finding {
        const ID: &str = "limits.memlock";
        let privileges = &self.facts.privileges;
        match privileges.memlock {
            Err(ref unread) => unknown(ID, unread),
            Ok(Limit::Unlimited) => ok(ID, "RLIMIT_MEMLOCK unlimited"),
            Ok(limit) if privileges.cap_ipc_lock == Ok(true) => ok(
                ID,
                format!("RLIMIT_MEMLOCK {limit} bytes, but CAP_IPC_LOCK allows locking any amount"),
            ),
            Ok(limit) => flag(
                ID,
                Status::Warn,
                format!("RLIMIT_MEMLOCK {limit} bytes"),
                "-m (mlockall) fails once the process's memory exceeds the limit",
                "run as root, or raise memlock in /etc/security/limits.conf (ulimit -l unlimited)",
                Vec::new(),
            ),
        }
    }

    fn limits_cap_sys_nice(&self) -> Finding {
        const ID: &str = "limits.cap_sys_nice";
        let privileges = &self.facts.privileges;
        match privileges.cap_sys_nice {
            Err(ref unread) => unknown(ID, unread),
            Ok(true) => ok(ID, "CAP_SYS_NICE held: any real-time priority and affinity"),
            Ok(false) => {
                if privileges
                    .rtprio
                    .as_ref()
                    .is_ok_and(|&limit| self.rtprio_covers(limit))
                {
                    info(
                        ID,
                        format!(
                            "no CAP_SYS_NICE; RLIMIT_RTPRIO covers {}",
                            self.priority_text()
                        ),
                    )
                } else {
                    flag(
                        ID,
                        Status::Warn,
                        "no CAP_SYS_NICE",
                        "without it the real-time priority is bounded by RLIMIT_RTPRIO",
                        "run as root, or setcap cap_sys_nice,cap_ipc_lock+ep on the rtlat binary",
                        Vec::new(),
                    )
                }
            }
        }
    }

    fn limits_cap_ipc_lock(&self) -> Finding {
        const ID: &str = "limits.cap_ipc_lock";
        let privileges = &self.facts.privileges;
        match privileges.cap_ipc_lock {
            Err(ref unread) => unknown(ID, unread),
            Ok(true) => ok(ID, "CAP_IPC_LOCK held: -m may lock any amount of memory"),
            Ok(false) if privileges.memlock == Ok(Limit::Unlimited) => {
                info(ID, "no CAP_IPC_LOCK; RLIMIT_MEMLOCK is unlimited")
            }
            Ok(false) => flag(
                ID,
                Status::Warn,
                "no CAP_IPC_LOCK",
                "without it -m may lock only RLIMIT_MEMLOCK bytes",
                "run as root, or setcap cap_sys_nice,cap_ipc_lock+ep on the rtlat binary",
                Vec::new(),
            ),
        }
    }
}
