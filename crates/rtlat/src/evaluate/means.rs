//! What this process may do for an evaluation, found before the first
//! phase: SCHED_FIFO at `-p`, locked memory (`-m`), kernel events for
//! `--explain`. Where it may not, and the user did not ask for it by
//! name, the phases go without it and the evaluation says so plainly (in
//! the live view, the answer and the report); where the user asked for
//! it by name, the evaluation refuses with the run's own advice.

use rtlat_core::SchedPolicy;
use rtlat_sys::memory;

use super::Settings;
use crate::rtsetup::{self, CAP_IPC_LOCK, ProcessStatus};

/// The lock limit that `-m` fits in without CAP_IPC_LOCK: a phase's run
/// locks about 75 MiB (its binary, stacks and buffers) with room to spare.
const ENOUGH_TO_LOCK: u64 = 256 << 20;

/// How the phases measure on this machine, and what they go without.
#[derive(Clone, Debug, Default)]
pub struct Means {
    /// SCHED_FIFO at `-p` (else SCHED_OTHER).
    pub realtime: bool,
    /// `-m`.
    pub lock: bool,
    /// `--explain=N`, if explaining can work.
    pub explain: Option<u32>,
    /// What the phases go without and why, one sentence each.
    pub limits: Vec<String>,
}

/// Finds the means; an error when the user asked by name for what
/// cannot be had (`-p`, `--explain`).
pub fn find(settings: &Settings) -> anyhow::Result<Means> {
    let mut means = Means::default();
    match rtsetup::check_realtime_privilege(
        SchedPolicy::Fifo,
        settings.priority,
        Some(&settings.cpu_numbers),
        "leave out -p",
    ) {
        Ok(()) => means.realtime = true,
        Err(e) if settings.priority_given => return Err(e),
        Err(_) => means.limits.push(
            "measured under SCHED_OTHER, not SCHED_FIFO (no privilege for real-time \
             priority): these are not real-time latencies"
                .to_owned(),
        ),
    }
    let status = ProcessStatus::read();
    let limit = memory::memlock_limit();
    means.lock = status.has_capability(CAP_IPC_LOCK) || limit.is_none_or(|l| l >= ENOUGH_TO_LOCK);
    if !means.lock {
        means.limits.push(format!(
            "memory not locked (no -m: RLIMIT_MEMLOCK is {} KiB, without CAP_IPC_LOCK): \
             page faults may add to the latencies",
            limit.unwrap_or(0) / 1024
        ));
    }
    if let Some(n) = settings.explain {
        match crate::explain::preflight() {
            Ok(_) => means.explain = Some(n),
            Err(e) if settings.explain_given => return Err(e),
            Err(e) => means.limits.push(format!(
                "worst samples not explained: {}",
                e.to_string().trim_start_matches("--explain: ")
            )),
        }
    }
    Ok(means)
}
