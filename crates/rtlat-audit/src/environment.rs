//! The environment record every rtlat result carries, filled from the
//! facts read: [`from_facts`]. Its types (the `"environment"` object's
//! keys) are crate `rtlat-results`' ([`rtlat_results::environment`]),
//! re-exported here.

pub use rtlat_results::environment::{
    CpuEnvironment, Environment, IdleStateEnvironment, Isolation, KernelEnvironment, Limits,
    MeasuredCpu, Virtualization,
};

use crate::facts::{Facts, Limit, preemption_model};

/// The record of `facts`.
pub fn from_facts(facts: &Facts) -> Environment {
    let param = |name: &str| facts.param(name).map(str::to_owned);
    let limit = |limit: &crate::facts::Fact<Limit>| limit.as_ref().ok().map(Limit::to_string);
    Environment {
        rtlat_version: env!("CARGO_PKG_VERSION").to_owned(),
        kernel: KernelEnvironment {
            release: facts.release.clone().ok(),
            version: facts.version.clone().ok(),
            preemption: preemption_model(facts),
            hz: facts.config.as_ref().ok().and_then(|config| config.hz),
            nohz_full: facts.config.as_ref().ok().map(|config| config.nohz_full),
            cmdline: facts
                .cmdline
                .as_ref()
                .ok()
                .map(|cmdline| cmdline.text.clone()),
        },
        cpu: CpuEnvironment {
            model: facts
                .cpuinfo
                .as_ref()
                .ok()
                .and_then(|info| info.model.clone()),
            count: facts.online.as_ref().ok().map(Vec::len),
            smt: facts.smt_active.clone().ok(),
        },
        measured_cpus: facts.measured.clone(),
        cpus: facts
            .per_cpu
            .iter()
            .map(|cpu| MeasuredCpu {
                cpu: cpu.cpu,
                governor: cpu.governor.clone().ok(),
                idle_states: cpu
                    .idle_states
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .map(|state| IdleStateEnvironment {
                        name: state.name.clone(),
                        exit_latency_us: state.exit_latency_us,
                        disabled: state.disabled,
                    })
                    .collect(),
            })
            .collect(),
        clocksource: facts.clocksource.clone().ok(),
        isolation: Isolation {
            isolated: facts.isolated.clone().ok(),
            nohz_full: facts.nohz_full.clone().ok(),
            isolcpus: param("isolcpus"),
            rcu_nocbs: param("rcu_nocbs"),
            irqaffinity: param("irqaffinity"),
        },
        sched_rt_runtime_us: facts.sched_rt_runtime_us.clone().ok(),
        virtualization: Virtualization {
            hypervisor: facts
                .cpuinfo
                .as_ref()
                .ok()
                .filter(|info| info.has_flags)
                .map(|info| info.hypervisor),
            steal_time_seen: facts.steal_total.as_ref().ok().map(|&steal| steal > 0),
        },
        limits: Limits {
            rlimit_rtprio: limit(&facts.privileges.rtprio),
            rlimit_memlock: limit(&facts.privileges.memlock),
            cap_sys_nice: facts.privileges.cap_sys_nice.clone().ok(),
            cap_ipc_lock: facts.privileges.cap_ipc_lock.clone().ok(),
        },
    }
}
