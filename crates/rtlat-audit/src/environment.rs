//! The environment record every rtlat result carries: the facts of the
//! machine (not the advice), serialised as the `"environment"` object.
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

use serde::Serialize;

/// The `"environment"` object (see the module documentation for its keys).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Environment {
    // helper A fills in the fields exactly as documented above.
}
