//! Process set-up shared by every tool: the real-time privilege check with
//! its advice (or the note that a run is not real-time), `mlockall` with
//! its advice, the janitor for runs that create named objects, and error
//! texts in C's words, and why the kernel refused SCHED_DEADLINE.

use std::path::Path;

use anyhow::bail;
use rtlat_core::SchedPolicy;
use rtlat_core::sys_policy;
use rtlat_sys::{Errno, memory, sched};

use rtlat_args::stdio::{note, tell};

/// Refuses a real-time run up front, with advice, when the process may not
/// use the real-time policy and priority the threads need. `policy` is
/// the real-time policy the threads use, `priority` the highest one asks
/// for; `on` the CPUs the threads are pinned to, when every one is
/// ([`pinned_cpus`]); `without_realtime` tells how to measure without
/// real-time priority with this tool (for cyclictest: `--policy other,
/// no -p`).
///
/// Probed on a thread of its own, pinned to `on` first: it runs under the
/// policy for a moment, where the run's threads will. Probed on the main
/// thread, which is not pinned (or later), a real-time thread of the run
/// ran for a moment on any CPU, outside the ones it was asked to measure.
pub fn check_realtime_privilege(
    policy: SchedPolicy,
    priority: u8,
    on: Option<&[usize]>,
    without_realtime: &str,
) -> anyhow::Result<()> {
    let on = on.map(<[usize]>::to_vec);
    let (answer, result) = std::sync::mpsc::channel();
    let probe = rtlat_sys::thread::spawn("rtlat-probe", 64 * 1024, move || {
        // A CPU it cannot be pinned to makes the run fail later, with the
        // run's own message: no probe then.
        if let Some(cpus) = &on
            && rtlat_sys::affinity::pin_current_thread(cpus).is_err()
        {
            let _ = answer.send(Ok(()));
            return;
        }
        let try_once = || sched::set_current_thread(sys_policy(policy), i32::from(priority));
        let mut tried = try_once();
        if tried == Err(Errno::PERM) && sched::raise_rtprio_to_hard_limit() {
            tried = try_once();
        }
        if tried.is_ok() {
            let _ = sched::set_current_thread(sched::Policy::Other, 0);
        }
        let _ = answer.send(tried);
    })
    .map_err(|e| anyhow::anyhow!("cannot start a thread: {e}"))?;
    let tried = result
        .recv()
        .map_err(|_| anyhow::anyhow!("the real-time privilege probe ended without an answer"))?;
    let _ = probe.join();
    match tried {
        Ok(()) => Ok(()),
        Err(Errno::PERM) => {
            let (soft, _) = sched::rtprio_limits();
            let limit = soft.map_or("unlimited".to_string(), |l| l.to_string());
            bail!(
                "not allowed to run the measuring threads under SCHED_{} at priority {priority} \
                 (RLIMIT_RTPRIO is {limit}): run as root, give rtlat CAP_SYS_NICE \
                 (setcap cap_sys_nice+ep), raise RLIMIT_RTPRIO to {priority} or more (ulimit -r), \
                 or measure without real-time priority ({without_realtime})",
                policy.name().to_uppercase()
            )
        }
        Err(e) => bail!(
            "cannot set SCHED_{} priority {priority}: {}",
            policy.name().to_uppercase(),
            errno_text(e)
        ),
    }
}

/// The CPUs of threads that are each pinned to one (`cpus`: each
/// thread's), in order, without repeats; `None` when one of them is not
/// pinned.
pub fn pinned_cpus(cpus: impl IntoIterator<Item = Option<usize>>) -> Option<Vec<usize>> {
    let mut all = Vec::new();
    for cpu in cpus {
        let cpu = cpu?;
        if !all.contains(&cpu) {
            all.push(cpu);
        }
    }
    Some(all)
}

/// This very binary, as the program of rtlat's helper processes.
pub const OWN_BINARY: &str = "/proc/self/exe";

/// Starts the janitor that removes the run's named objects (`what`) if the
/// run is killed (`rtlat_core::janitor`). A run goes on without it, after a
/// warning, if it cannot start.
pub fn start_janitor(what: &str) {
    if let Err(e) = rtlat_core::janitor::start(Path::new(OWN_BINARY), |line| note!("{line}")) {
        note!(
            "WARN: cannot start rtlat's janitor process ({e}): if this run is killed, {what} \
             will be left behind"
        );
    }
}

/// The stderr note of a run whose threads need no real-time privilege:
/// `who` (`the pairs`) run under `policy`, so the figures are not
/// real-time latencies.
pub fn note_not_realtime(who: &str, policy: SchedPolicy) {
    tell!(
        "note: {who} run under SCHED_{}, not a real-time policy: these figures are not \
         real-time latencies (use -p PRIO for SCHED_FIFO)",
        policy.name().to_uppercase()
    );
}

/// `mlockall` for `-m/--mlockall`, with advice when the lock limit is too
/// small.
pub fn lock_memory() -> anyhow::Result<()> {
    lock_memory_because("-m/--mlockall: ", ", or leave out -m")
}

/// `mlockall`; a failure is one line: `option` (the option that asked for
/// it, with `: `, or empty), the error, the limit, the advice and `other`
/// (more advice, starting with `, `). A lock that leaves less than
/// [`LOCK_HEADROOM`] under the limit is undone and refused the same way.
pub fn lock_memory_because(option: &str, other: &str) -> anyhow::Result<()> {
    let limit_text =
        |limit: Option<u64>| limit.map_or("unlimited".to_string(), |b| format!("{} KiB", b / 1024));
    memory::lock_all().map_err(|e| {
        anyhow::anyhow!(
            "{option}mlockall failed: {} (RLIMIT_MEMLOCK is {}): run as root or raise the \
             limit (ulimit -l){other}",
            errno_text(e),
            limit_text(memory::memlock_limit())
        )
    })?;
    // Bound by the limit, a process whose memory only just fits cannot
    // map anything later (thread stacks, outputs): say so now rather than
    // fail an allocation in the middle of the run.
    let status = ProcessStatus::read();
    if let (Some(limit), Some(locked), false) = (
        memory::memlock_limit(),
        status.bytes("VmLck:"),
        status.has_capability(CAP_IPC_LOCK),
    ) && limit.saturating_sub(locked) < LOCK_HEADROOM
    {
        let _ = memory::unlock_all();
        bail!(
            "{option}mlockall locked {} KiB of the RLIMIT_MEMLOCK of {}, leaving too little \
             for the run: run as root or raise the limit (ulimit -l){other}",
            locked / 1024,
            limit_text(Some(limit))
        );
    }
    Ok(())
}

/// What a run may still lock after `mlockall`: its threads' stacks, the
/// load's workers and the outputs' buffers.
const LOCK_HEADROOM: u64 = 4 << 20;

/// Capability bits: CAP_IPC_LOCK may lock memory beyond RLIMIT_MEMLOCK;
/// CAP_SYS_ADMIN and CAP_SYS_RESOURCE are not held to RLIMIT_NPROC.
pub const CAP_IPC_LOCK: u32 = 14;
pub const CAP_SYS_ADMIN: u32 = 21;
/// CAP_SYS_NICE may take a real-time or deadline policy.
pub const CAP_SYS_NICE: u32 = 23;
pub const CAP_SYS_RESOURCE: u32 = 24;

/// `/proc/self/status`, read once for the fields asked of it (empty when
/// it cannot be read: every field is then unknown).
#[derive(Debug)]
pub struct ProcessStatus(String);

impl ProcessStatus {
    /// Reads `/proc/self/status` now.
    pub fn read() -> ProcessStatus {
        ProcessStatus(std::fs::read_to_string("/proc/self/status").unwrap_or_default())
    }

    /// A field, after its name (`VmLck:`), trimmed.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.0
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
    }

    /// A memory field (`VmLck:`, `VmRSS:`, given in kB) in bytes.
    pub fn bytes(&self, name: &str) -> Option<u64> {
        let kib: u64 = self.field(name)?.split_whitespace().next()?.parse().ok()?;
        Some(kib * 1024)
    }

    /// Whether capability number `bit` is in effect (`CapEff`).
    pub fn has_capability(&self, bit: u32) -> bool {
        self.field("CapEff:")
            .and_then(|v| u64::from_str_radix(v, 16).ok())
            .is_some_and(|caps| caps & (1 << bit) != 0)
    }
}

/// An errno as C's `strerror` words it.
pub fn errno_text(e: Errno) -> String {
    rtlat_sys::strerror(e.raw_os_error())
}

/// An I/O error as C's `strerror` words it.
pub use rtlat_sys::io_strerror;

/// The line of a measuring thread (`who`: "measuring thread 0") that could
/// not be pinned to `cpu`; `why`: the errno in C's words.
pub fn pin_failure(who: &str, cpu: impl std::fmt::Display, why: &str) -> String {
    format!("{who}: cannot pin to CPU {cpu}: {why}")
}

/// The line of a measuring thread (`who`) that could not get `policy` at
/// `priority`; `why`: the errno in C's words.
pub fn policy_failure(who: &str, policy: SchedPolicy, priority: u8, why: &str) -> String {
    format!(
        "{who}: cannot set SCHED_{} priority {priority}: {why}",
        policy.name().to_uppercase()
    )
}

/// Why the kernel refused SCHED_DEADLINE (sched_setattr's `errno`) and
/// what to do about it, for any tool: `allowed` is the CPUs the thread
/// was allowed on; `fewer` says how to ask for less bandwidth, `change`
/// which options set the parameters.
pub fn setattr_cause(errno: i32, allowed: &[usize], fewer: &str, change: &str) -> String {
    match Errno::from_raw_os_error(errno) {
        Errno::PERM => eperm_cause(allowed),
        Errno::BUSY => ebusy_cause(fewer),
        Errno::INVAL => format!(
            "the kernel refused these parameters: a runtime of at least 1.024 µs, no longer than \
             the deadline, a period within sched_deadline_period_min_us ({}) and \
             sched_deadline_period_max_us ({}); {change}",
            sysctl("sched_deadline_period_min_us").unwrap_or_else(|| "?".into()),
            sysctl("sched_deadline_period_max_us").unwrap_or_else(|| "?".into()),
        ),
        _ => "sched_setattr failed".to_owned(),
    }
}

fn sysctl(name: &str) -> Option<String> {
    std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
        .ok()
        .map(|s| s.trim().to_owned())
}

/// Why the kernel said EPERM: no CAP_SYS_NICE, an affinity narrower than
/// the root domain (taskset, a cpuset), or no deadline bandwidth at all.
fn eperm_cause(allowed: &[usize]) -> String {
    let status = ProcessStatus::read();
    // Unknown (no /proc/self/status): the other causes are looked at.
    if status.field("CapEff:").is_some() && !status.has_capability(CAP_SYS_NICE) {
        return "SCHED_DEADLINE needs CAP_SYS_NICE: run as root, or give rtlat the capability \
                (setcap cap_sys_nice+ep)"
            .to_owned();
    }
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let allowed_text = rtlat_core::format_cpu_list(allowed);
    if !allowed.is_empty() && !online.is_empty() && allowed_text != online {
        let cpuset = std::fs::read_to_string("/proc/self/cpuset")
            .map(|s| s.trim().to_owned())
            .unwrap_or_default();
        return format!(
            "this process may run on CPUs {allowed_text} only (taskset, or the cpuset \
             '{cpuset}'), but a SCHED_DEADLINE task must be allowed on every CPU of its root \
             domain ({online}): run rtlat without taskset, or in an exclusive cpuset partition \
             of the CPUs you want"
        );
    }
    if sysctl("sched_rt_runtime_us").as_deref() == Some("0") {
        return "/proc/sys/kernel/sched_rt_runtime_us is 0, which leaves deadline tasks no \
                bandwidth: echo 950000 > /proc/sys/kernel/sched_rt_runtime_us"
            .to_owned();
    }
    "the kernel refused the policy (an RT group scheduling or cgroup rule?)".to_owned()
}

/// EBUSY: admission control.
fn ebusy_cause(fewer: &str) -> String {
    let runtime = sysctl("sched_rt_runtime_us").unwrap_or_else(|| "?".into());
    let period = sysctl("sched_rt_period_us").unwrap_or_else(|| "?".into());
    format!(
        "the kernel's admission control refused the bandwidth: deadline tasks may hold at most \
         sched_rt_runtime_us/sched_rt_period_us ({runtime}/{period}) of each CPU of the root \
         domain, together with the deadline tasks already running; {fewer} or \
         leave room (other deadline tasks, sched_rt_runtime_us)"
    )
}

#[cfg(test)]
mod tests {
    use super::pinned_cpus;

    #[test]
    fn pinned_cpus_are_each_threads_once_or_none_when_one_is_free() {
        assert_eq!(pinned_cpus([Some(1), Some(0), Some(1)]), Some(vec![1, 0]));
        assert_eq!(pinned_cpus([Some(1), None]), None);
        assert_eq!(pinned_cpus([]), Some(vec![]));
    }
}
