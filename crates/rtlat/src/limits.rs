//! Refuses, before anything is measured, a run the machine cannot hold:
//! more memory than the address-space limit (`ulimit -v`), the available
//! memory, the cgroup's memory limit or, with `-m`, the lock limit allow;
//! more threads than the kernel, the user's limit or the cgroup allow.
//!
//! What the run needs comes from [`Footprint`], computed from the
//! configuration; the machine's side from `/proc`, `/sys/fs/cgroup` and the
//! resource limits. A run that does not fit gets one line naming the limit
//! and how to change it (exit 1), instead of an allocation failing (and the
//! process aborting) in the middle of the run.

use std::path::{Path, PathBuf};

use anyhow::bail;
use rtlat_core::Bytes;
use rtlat_core::Footprint;
use rtlat_sys::memory;

use crate::rtsetup::{CAP_IPC_LOCK, CAP_SYS_ADMIN, CAP_SYS_RESOURCE, ProcessStatus};

/// Room kept beyond the footprint for what it does not count: the
/// outputs' text, the live display, the load workers, malloc's own
/// overhead (not for the lock limit, see `refusal`).
const SLACK: Bytes = Bytes(16 << 20);

/// Tasks left free beyond the run's threads, so that the machine can still
/// start a shell.
const SPARE_TASKS: u64 = 64;

/// Refuses the run when `footprint` does not fit the machine. `threads`
/// is the option that sets the number of threads as given (`-t 64`),
/// `locked` says whether the memory will be locked (`-m`).
pub fn check_room(threads: &str, footprint: &Footprint, locked: bool) -> anyhow::Result<()> {
    let machine = Machine::read();
    if let Some(refusal) = refusal(threads, footprint, locked, &machine) {
        bail!(refusal);
    }
    Ok(())
}

/// What the machine allows, as read before the run (`None`: no limit, or
/// not known).
#[derive(Debug, Default, Clone)]
struct Machine {
    /// Address space the process maps now (`VmSize`).
    mapped: Option<Bytes>,
    /// Memory the process holds now (`VmRSS`).
    resident: Option<Bytes>,
    address_space_limit: Option<Bytes>,
    memlock_limit: Option<Bytes>,
    may_lock_beyond_limit: bool,
    available_memory: Option<Bytes>,
    /// The cgroup's `memory.max` less its `memory.current`.
    cgroup_memory_left: Option<Bytes>,
    /// Tasks the kernel may still create (the smaller of kernel.pid_max
    /// and kernel.threads-max, less the tasks that exist).
    kernel_tasks_left: Option<u64>,
    /// RLIMIT_NPROC, where it applies (not to root or CAP_SYS_RESOURCE).
    user_task_limit: Option<u64>,
    /// The cgroup's `pids.max` less its `pids.current`.
    cgroup_tasks_left: Option<u64>,
}

impl Machine {
    fn read() -> Machine {
        let status = ProcessStatus::read();
        let exempt_from_nproc = rtlat_sys::system::effective_uid() == 0
            || status.has_capability(CAP_SYS_RESOURCE)
            || status.has_capability(CAP_SYS_ADMIN);
        let cgroup = own_cgroup();
        let cgroup_left = |max: &str, current: &str| -> Option<u64> {
            let dir = cgroup.as_ref()?;
            let max: u64 = read_trimmed(dir.join(max))?.parse().ok()?;
            let current: u64 = read_trimmed(dir.join(current))?.parse().ok()?;
            Some(max.saturating_sub(current))
        };
        Machine {
            mapped: status.bytes("VmSize:").map(Bytes),
            resident: status.bytes("VmRSS:").map(Bytes),
            address_space_limit: memory::address_space_limit().map(Bytes),
            memlock_limit: memory::memlock_limit().map(Bytes),
            may_lock_beyond_limit: status.has_capability(CAP_IPC_LOCK),
            available_memory: meminfo_field("MemAvailable:"),
            cgroup_memory_left: cgroup_left("memory.max", "memory.current").map(Bytes),
            kernel_tasks_left: kernel_tasks_left(),
            user_task_limit: memory::task_limit().filter(|_| !exempt_from_nproc),
            cgroup_tasks_left: cgroup_left("pids.max", "pids.current"),
        }
    }
}

/// Why `footprint` does not fit `machine`, in one line; `None` when it
/// fits.
fn refusal(
    threads: &str,
    footprint: &Footprint,
    locked: bool,
    machine: &Machine,
) -> Option<String> {
    let count = footprint.threads as u64;
    let option = threads.split_whitespace().next().unwrap_or(threads);
    let advice = format!("use fewer threads ({option})");
    let tasks = |left: Option<u64>, what: &str, fix: &str| -> Option<String> {
        let left = left?;
        (count.saturating_add(SPARE_TASKS) > left).then(|| {
            format!(
                "{threads}: {count} threads do not fit: {what} leaves room for {} more tasks \
                 ({SPARE_TASKS} kept spare): {fix}, or {advice}",
                left.saturating_sub(SPARE_TASKS)
            )
        })
    };
    let memory = |left: Option<Bytes>, slack: Bytes, what: &str, fix: &str| -> Option<String> {
        let left = left?;
        let need = footprint.total().plus(slack);
        (need > left).then(|| {
            format!(
                "{threads}: the run needs about {need} of memory for {count} thread{} ({} heap, \
                 {} of stacks, {slack} spare) and {what} leaves {left}: {fix}, or {advice}",
                if count == 1 { "" } else { "s" },
                footprint.heap,
                footprint.stacks(),
            )
        })
    };
    let after = |used: Option<Bytes>, limit: Option<Bytes>| -> Option<Bytes> {
        Some(Bytes(limit?.0.saturating_sub(used.unwrap_or_default().0)))
    };
    memory(
        after(machine.mapped, machine.address_space_limit),
        SLACK,
        "RLIMIT_AS",
        "raise it (ulimit -v)",
    )
    .or_else(|| {
        memory(
            machine.cgroup_memory_left,
            SLACK,
            "the cgroup's memory.max",
            "raise it",
        )
    })
    .or_else(|| {
        memory(
            machine.available_memory,
            SLACK,
            "the available memory (MemAvailable)",
            "free some memory",
        )
    })
    .or_else(|| {
        memory(
            after(machine.resident, machine.memlock_limit)
                .filter(|_| locked && !machine.may_lock_beyond_limit),
            // What is locked beyond the threads' memory is the process's
            // own, which mlockall's own check (rtsetup) holds to a margin.
            Bytes(0),
            "RLIMIT_MEMLOCK (-m locks it all)",
            "raise it (ulimit -l), run as root",
        )
    })
    .or_else(|| {
        tasks(
            machine.kernel_tasks_left,
            "the kernel (kernel.pid_max, kernel.threads-max)",
            "raise them (sysctl)",
        )
    })
    .or_else(|| {
        tasks(
            machine.user_task_limit,
            "RLIMIT_NPROC",
            "raise it (ulimit -u)",
        )
    })
    .or_else(|| {
        tasks(
            machine.cgroup_tasks_left,
            "the cgroup's pids.max",
            "raise it",
        )
    })
}

/// A field of `/proc/meminfo` in bytes.
fn meminfo_field(name: &str) -> Option<Bytes> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix(name))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(Bytes(kib * 1024))
}

/// How many more tasks (processes and threads) the kernel may create.
fn kernel_tasks_left() -> Option<u64> {
    let limit = |name: &str| -> Option<u64> { read_trimmed(name)?.parse().ok() };
    let max = limit("/proc/sys/kernel/pid_max")?.min(limit("/proc/sys/kernel/threads-max")?);
    // The fourth field of /proc/loadavg: running/existing tasks.
    let loadavg = read_trimmed("/proc/loadavg")?;
    let existing: u64 = loadavg
        .split_whitespace()
        .nth(3)?
        .split_once('/')?
        .1
        .parse()
        .ok()?;
    Some(max.saturating_sub(existing))
}

/// The directory of this process's cgroup (v2) under /sys/fs/cgroup.
fn own_cgroup() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(PathBuf::from("/sys/fs/cgroup").join(path.trim_start_matches('/')))
}

fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    Some(std::fs::read_to_string(path).ok()?.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn footprint(threads: usize) -> Footprint {
        Footprint {
            threads,
            heap: Bytes(threads as u64 * (60 << 10)),
            stack_per_thread: Bytes(28 << 10),
        }
    }

    fn roomy() -> Machine {
        Machine {
            mapped: Some(Bytes(10 << 20)),
            resident: Some(Bytes(4 << 20)),
            address_space_limit: None,
            memlock_limit: Some(Bytes(8 << 20)),
            may_lock_beyond_limit: false,
            available_memory: Some(Bytes(8 << 30)),
            cgroup_memory_left: None,
            kernel_tasks_left: Some(30_000),
            user_task_limit: None,
            cgroup_tasks_left: None,
        }
    }

    #[test]
    fn a_run_that_fits_is_not_refused() {
        assert_eq!(refusal("-t 1", &footprint(1024), false, &roomy()), None);
    }

    #[test]
    fn each_limit_refuses_with_its_name_and_fix() {
        /// A limit set on a roomy machine, whether -m is on, and what the
        /// line must say.
        type Case = (fn(&mut Machine), bool, &'static str);
        let cases: [Case; 7] = [
            (
                |m| m.address_space_limit = Some(Bytes(1 << 30)),
                false,
                "RLIMIT_AS leaves 1014.0 MiB: raise it (ulimit -v)",
            ),
            (
                |m| m.cgroup_memory_left = Some(Bytes(100 << 20)),
                false,
                "the cgroup's memory.max leaves 100.0 MiB",
            ),
            (
                |m| m.available_memory = Some(Bytes(500 << 20)),
                false,
                "the available memory (MemAvailable) leaves 500.0 MiB",
            ),
            (
                |m| m.memlock_limit = Some(Bytes(64 << 20)),
                true,
                "RLIMIT_MEMLOCK",
            ),
            (
                |m| m.kernel_tasks_left = Some(20_000),
                false,
                "the kernel (kernel.pid_max, kernel.threads-max) leaves room for 19936 more tasks",
            ),
            (|m| m.user_task_limit = Some(4096), false, "RLIMIT_NPROC"),
            (|m| m.cgroup_tasks_left = Some(100), false, "pids.max"),
        ];
        for (limit, locked, expected) in cases {
            let mut machine = roomy();
            limit(&mut machine);
            let line = refusal("-t 20000", &footprint(20_000), locked, &machine)
                .unwrap_or_else(|| panic!("not refused: {machine:?}"));
            assert!(line.contains(expected), "{line}");
            assert!(line.starts_with("-t 20000: "), "{line}");
            assert!(line.ends_with("or use fewer threads (-t)"), "{line}");
            assert!(!line.contains('\n'));
        }
    }

    #[test]
    fn the_lock_limit_counts_only_with_m_and_without_cap_ipc_lock() {
        let mut machine = roomy();
        machine.memlock_limit = Some(Bytes(64 << 20));
        assert_eq!(refusal("-t 1", &footprint(2000), false, &machine), None);
        machine.may_lock_beyond_limit = true;
        assert_eq!(refusal("-t 1", &footprint(2000), true, &machine), None);
    }

    #[test]
    fn this_machine_can_be_read() {
        let machine = Machine::read();
        assert!(machine.mapped.is_some() && machine.resident.is_some());
        assert!(machine.available_memory.is_some());
        assert!(machine.kernel_tasks_left.is_some());
    }
}
