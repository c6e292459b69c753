//! The `"environment"` object every rtlat result carries, and `rtlat audit
//! --json` too: the facts of the machine (not the advice), as serde types.
//! Crate `rtlat-audit` reads the machine and fills them.
//!
//! CONTRACT (fixed; other modules and `rtlat compare`/`plot` read these keys):
//! ```json
//! "environment": {
//!   "rtlat_version": "0.1.0",
//!   "kernel": {"release": "6.1.0-rt", "version": "#1 SMP PREEMPT_RT ...",
//!              "preemption": "PREEMPT_RT", "hz": 1000, "nohz_full": true,
//!              "cmdline": "..."},
//!   "cpu": {"model": "Intel(R) ...", "count": 8, "smt": false},
//!   "measured_cpus": [2, 3],
//!   "cpus": [{"cpu": 2, "governor": "performance",
//!             "idle_states": [{"name": "POLL", "exit_latency_us": 0, "disabled": false}]}],
//!   "clocksource": "tsc",
//!   "isolation": {"isolated": "2-3", "nohz_full": "2-3", "isolcpus": "2-3",
//!                 "rcu_nocbs": "2-3", "irqaffinity": "0-1"},
//!   "sched_rt_runtime_us": -1,
//!   "virtualization": {"hypervisor": false, "steal_time_seen": false},
//!   "limits": {"rlimit_rtprio": "unlimited", "rlimit_memlock": "8388608",
//!              "cap_sys_nice": true, "cap_ipc_lock": true}
//! }
//! ```
//! `null` where a fact could not be read; `isolated`/`nohz_full` are the
//! sysfs lists (`""` for none), `isolcpus`/`rcu_nocbs`/`irqaffinity` the
//! kernel parameters (`null` when absent). `preemption` is one of
//! `PREEMPT_RT`, `PREEMPT_DYNAMIC (full)` (mode in parentheses: none,
//! voluntary, full, lazy; `PREEMPT_DYNAMIC` alone when the mode is not
//! readable), `PREEMPT`, `PREEMPT_VOLUNTARY`, `PREEMPT_NONE`, or `null`.

use serde::{Deserialize, Serialize};

/// The `"environment"` object (see the module documentation for its keys).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    /// The version of rtlat that made the record.
    pub rtlat_version: String,
    /// The kernel.
    pub kernel: KernelEnvironment,
    /// The processor.
    pub cpu: CpuEnvironment,
    /// The CPUs measured (or judged as measured).
    pub measured_cpus: Vec<usize>,
    /// Frequency and idle settings of each measured CPU.
    pub cpus: Vec<MeasuredCpu>,
    /// The current clocksource.
    pub clocksource: Option<String>,
    /// How CPUs are isolated.
    pub isolation: Isolation,
    /// `kernel.sched_rt_runtime_us` (-1: no RT throttling).
    pub sched_rt_runtime_us: Option<i64>,
    /// Whether this is a virtual machine.
    pub virtualization: Virtualization,
    /// The invoking process's limits.
    pub limits: Limits,
}

/// `"kernel"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelEnvironment {
    /// `osrelease`.
    pub release: Option<String>,
    /// `version`.
    pub version: Option<String>,
    /// The preemption model (see the module documentation).
    pub preemption: Option<String>,
    /// `CONFIG_HZ`.
    pub hz: Option<u32>,
    /// `CONFIG_NO_HZ_FULL=y`.
    pub nohz_full: Option<bool>,
    /// The kernel command line.
    pub cmdline: Option<String>,
}

/// `"cpu"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuEnvironment {
    /// `model name` of `/proc/cpuinfo`.
    pub model: Option<String>,
    /// Online CPUs.
    pub count: Option<usize>,
    /// SMT active.
    pub smt: Option<bool>,
}

/// One entry of `"cpus"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeasuredCpu {
    /// The CPU.
    pub cpu: usize,
    /// Its cpufreq governor.
    pub governor: Option<String>,
    /// Its idle states, shallowest first (empty without cpuidle).
    pub idle_states: Vec<IdleStateEnvironment>,
}

/// One idle state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleStateEnvironment {
    /// Its name (`POLL`, `C1E`, ...).
    pub name: String,
    /// Its exit latency in µs.
    pub exit_latency_us: u64,
    /// Disabled through its `disable` file.
    pub disabled: bool,
}

/// `"isolation"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Isolation {
    /// `/sys/devices/system/cpu/isolated`.
    pub isolated: Option<String>,
    /// `/sys/devices/system/cpu/nohz_full`.
    pub nohz_full: Option<String>,
    /// The `isolcpus=` parameter.
    pub isolcpus: Option<String>,
    /// The `rcu_nocbs=` parameter.
    pub rcu_nocbs: Option<String>,
    /// The `irqaffinity=` parameter.
    pub irqaffinity: Option<String>,
}

/// `"virtualization"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Virtualization {
    /// The `hypervisor` CPU flag.
    pub hypervisor: Option<bool>,
    /// Some steal time since boot (the `cpu` line of `/proc/stat`).
    pub steal_time_seen: Option<bool>,
}

/// `"limits"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// RLIMIT_RTPRIO: `unlimited` or a number.
    pub rlimit_rtprio: Option<String>,
    /// RLIMIT_MEMLOCK in bytes: `unlimited` or a number.
    pub rlimit_memlock: Option<String>,
    /// CAP_SYS_NICE is effective.
    pub cap_sys_nice: Option<bool>,
    /// CAP_IPC_LOCK is effective.
    pub cap_ipc_lock: Option<bool>,
}

impl Environment {
    /// A one-line summary for titles: `6.1.0-rt, PREEMPT_RT, Intel(R) ...`
    /// (what is known of the three).
    pub fn one_line(&self) -> String {
        [
            &self.kernel.release,
            &self.kernel.preemption,
            &self.cpu.model,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect::<Vec<_>>()
        .join(", ")
    }
}
