//! The real-time audit of a Linux machine, as a library: [`audit`] reads
//! the facts from a root directory (`/`, or a copied tree in tests) and
//! turns them into findings, each with a status, the fact observed and,
//! where something should change, why and how. It changes nothing.
//!
//! A robot controller can run the same checks at boot; `rtlat audit`
//! prints them, and every rtlat result carries the [`Environment`] and the
//! findings of the run's CPUs.
//!
//! Modules: [`facts`] reads the tree, [`checks`] judges the facts,
//! [`counters`] reads the system-wide counters a run compares at its end,
//! [`suggest`] builds the cyclictest command line for this machine,
//! [`environment`] fills the plain record of the facts that results carry.
//! The serialised types ([`Audit`], [`Finding`], [`Status`],
//! [`Environment`]) are crate `rtlat-results`' (the document's schema),
//! re-exported here.
//!
//! # Reading
//!
//! Everything is read from files under the root, never from a system
//! call, so that a copied tree (`tests/fixtures/tuned-rt`,
//! `tests/fixtures/desktop`) audits like the machine it came from. Each
//! file is read once; per-CPU files only for the measured CPUs. On a
//! 2-CPU VM with about a hundred threads and twenty IRQs, an audit of `/`
//! costs about 4 ms of CPU time, some 300 files (release build, mean of
//! 100: `cargo run --release -p rtlat-audit --example audit_time`).
//!
//! # Statuses
//!
//! `ok`: as a real-time machine should be; `info`: worth knowing, nothing
//! to change; `unknown`: the file could not be read (its path is in the
//! fact); `warn`: can add latency; `bad`: makes results meaningless for
//! real-time work. `warn` and `bad` findings carry `why` and `fix`.
//! A file whose absence means the feature is not built into the kernel
//! (no cpufreq, no KSM, no NUMA balancing, no NMI watchdog) is judged as
//! that, not as `unknown`.
//!
//! # The checks, in order ([`CHECK_IDS`])
//!
//! | id | judges | flagged when |
//! |---|---|---|
//! | `kernel.preemption` | `sys/kernel/realtime`, the version string, the kernel config, `sys/kernel/debug/sched/preempt` | not PREEMPT_RT: `bad` |
//! | `kernel.hz` | `CONFIG_HZ` of `proc/config.gz` or `boot/config-<release>` | below 1000: `info` |
//! | `kernel.nohz_full` | `CONFIG_NO_HZ_FULL` | not built: `warn` |
//! | `kernel.cmdline` | `proc/cmdline` | never (`info`) |
//! | `isolation.isolcpus` | `isolcpus=`, `cpu/isolated` | a measured CPU not isolated: `warn` |
//! | `isolation.nohz_full` | `cpu/nohz_full`, `nohz_full=` | a measured CPU keeps the tick: `warn` |
//! | `isolation.rcu_nocbs` | `rcu_nocbs=` (nohz_full CPUs count as offloaded) | a measured CPU runs its RCU callbacks: `warn` |
//! | `isolation.irqaffinity` | `irqaffinity=` | absent, or includes a measured CPU: `warn` |
//! | `smt.active` | `cpu/smt/active` (else the siblings lists) | never (`info` when on) |
//! | `smt.siblings` | `cpuN/topology/thread_siblings_list` | a measured CPU's sibling neither measured nor isolated: `warn` |
//! | `cpufreq.driver` | `cpuN/cpufreq/scaling_driver` | never (`info`) |
//! | `cpufreq.governor` | `cpuN/cpufreq/scaling_governor` of the measured CPUs | not `performance`: `warn` |
//! | `cpufreq.boost` | `cpufreq/boost`, `intel_pstate/no_turbo` | boost on: `warn` |
//! | `cpufreq.energy_preference` | `cpuN/cpufreq/energy_performance_preference` | not `performance`: `warn` |
//! | `thermal.throttle` | `cpuN/thermal_throttle/*_throttle_count` | any throttling since boot: `warn` |
//! | `idle.driver` | `cpuidle/current_driver` | never (`info`) |
//! | `idle.states` | `cpuN/cpuidle/stateK/{name,latency,disable}` | an enabled state exits slower than a tenth of the interval: `warn` |
//! | `idle.parameters` | `idle=`, `*.max_cstate=`, `cpuidle.off=` | never (`info`) |
//! | `clocksource.current` | `clocksource0/{current,available}_clocksource` | hpet, acpi_pm or jiffies: `bad` |
//! | `clocksource.tsc` | `constant_tsc`, `nonstop_tsc` in `proc/cpuinfo` | either missing on x86: `warn` |
//! | `sched.rt_throttling` | `kernel.sched_rt_runtime_us` | not -1: `warn` |
//! | `sched.timer_migration` | `kernel.timer_migration` | on: `warn` |
//! | `sched.numa_balancing` | `kernel.numa_balancing` | on: `warn` |
//! | `memory.thp` | `transparent_hugepage/enabled` | `always`: `warn` |
//! | `memory.swap` | `proc/swaps` (else `proc/meminfo`) | swap in use: `warn` |
//! | `memory.ksm` | `ksm/run` | on: `warn` |
//! | `watchdog.nmi` | `kernel.nmi_watchdog` | on: `warn` |
//! | `watchdog.soft_lockup` | `kernel.soft_watchdog`, `kernel.watchdog` | on: `warn` |
//! | `irq.affinity` | `proc/interrupts`, `proc/irq/N/effective_affinity_list` (else `smp_affinity_list`) | a device IRQ delivered to a measured CPU: `warn` |
//! | `irq.irqbalance` | an `irqbalance` process | running and a measured CPU not isolated: `warn` |
//! | `competition.rt_threads` | `proc/<pid>/task/<tid>/{stat,status}` of user threads (the invoking process excluded) | FIFO/RR at or above `-p`, or DEADLINE, allowed on a measured CPU: `bad` |
//! | `competition.kernel_threads` | the same, of `ktimers/N`, `ksoftirqd/N`, `rcuc/N`, `irq/*` and other real-time kernel threads (CPU stoppers excluded) | at or above `-p` on a measured CPU: `warn` |
//! | `virt.hypervisor` | the `hypervisor` flag | set: `warn` |
//! | `virt.steal` | the steal column of `proc/stat` | steal time on a measured CPU: `warn` |
//! | `smi.counting` | the CPU vendor, `dev/cpu/0/msr` | never (`ok` when countable, else `info` saying why not) |
//! | `limits.rtprio` | `Max realtime priority` of `proc/self/limits` | below `-p` without CAP_SYS_NICE: `bad` |
//! | `limits.memlock` | `Max locked memory` | limited without CAP_IPC_LOCK: `warn` |
//! | `limits.cap_sys_nice` | bit 23 of `CapEff` in `proc/self/status` | absent and RLIMIT_RTPRIO below `-p`: `warn` |
//! | `limits.cap_ipc_lock` | bit 14 of `CapEff` | absent and RLIMIT_MEMLOCK limited: `warn` |

pub mod checks;
pub mod counters;
pub mod environment;
pub mod facts;
pub mod suggest;

use std::path::{Path, PathBuf};

pub use environment::Environment;
pub use rtlat_results::audit::{Audit, Finding, Status};

/// Every check's id, in the order [`Audit::checks`] lists them.
pub const CHECK_IDS: &[&str] = &checks::IDS;

/// What is to be measured, which the checks judge the machine against.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// The CPUs to be measured; `None`: every CPU the process may use
    /// (read from `proc/self/status` under the root).
    pub cpus: Option<Vec<usize>>,
    /// The real-time priority the measuring threads will use (`-p`);
    /// `None`: none given (cyclictest's default, 0).
    pub priority: Option<u8>,
    /// The interval between wake-ups in µs (`-i`; cyclictest's default
    /// 1000), against which idle-state exit latencies are judged.
    pub interval_us: u64,
}

/// Why an audit could not be made at all (a check that cannot read its
/// file is a finding with status `unknown`, not an error).
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The root directory does not exist or is not a directory.
    #[error("{}: {reason}", path.display())]
    Root {
        /// The root given.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A requested CPU is not present on the machine audited.
    #[error("CPU {cpu} is not present (present: {present})")]
    CpuNotPresent {
        /// The CPU asked for.
        cpu: usize,
        /// The present CPUs, as a list (`0-3`).
        present: String,
    },
}

/// Reads the machine under `root` and judges it for `request`.
///
/// Reads only files under `root`; changes nothing.
pub fn audit(root: &Path, request: &Request) -> Result<Audit, AuditError> {
    let facts = facts::gather(root, request)?;
    let suggestion = suggest::command(&facts, request);
    let checks = checks::run(&facts, request, &suggestion);
    Ok(Audit {
        measured_cpus: facts.measured.clone(),
        checks,
        environment: environment::from_facts(&facts),
        suggested_command: suggestion.command,
    })
}
