//! Power management that slows a wake-up: the frequency (driver,
//! governor, boost, energy preference), thermal throttling and idle states.

use super::judge::{Check, Judge, flag, info, listing, ok, unknown};
use crate::facts::{Fact, cpu_list};
use crate::{Finding, Status};

/// The checks of this area, in the order the audit lists them.
pub(super) const CHECKS: &[Check] = &[
    Check {
        id: "cpufreq.driver",
        judges: "`cpuN/cpufreq/scaling_driver`",
        flagged_when: "never (`info`)",
        judge: |judge| judge.cpufreq_driver(),
    },
    Check {
        id: "cpufreq.governor",
        judges: "`cpuN/cpufreq/scaling_governor` of the measured CPUs",
        flagged_when: "not `performance`: `warn`",
        judge: |judge| judge.cpufreq_governor(),
    },
    Check {
        id: "cpufreq.boost",
        judges: "`cpufreq/boost`, `intel_pstate/no_turbo`",
        flagged_when: "boost on: `warn`",
        judge: |judge| judge.cpufreq_boost(),
    },
    Check {
        id: "cpufreq.energy_preference",
        judges: "`cpuN/cpufreq/energy_performance_preference`",
        flagged_when: "not `performance`: `warn`",
        judge: |judge| judge.cpufreq_energy_preference(),
    },
    Check {
        id: "thermal.throttle",
        judges: "`cpuN/thermal_throttle/*_throttle_count`",
        flagged_when: "any throttling since boot: `warn`",
        judge: |judge| judge.thermal_throttle(),
    },
    Check {
        id: "idle.driver",
        judges: "`cpuidle/current_driver`",
        flagged_when: "never (`info`)",
        judge: |judge| judge.idle_driver(),
    },
    Check {
        id: "idle.states",
        judges: "`cpuN/cpuidle/stateK/{name,latency,disable}`",
        flagged_when: "an enabled state exits slower than a tenth of the interval: `warn`",
        judge: |judge| judge.idle_states(),
    },
    Check {
        id: "idle.parameters",
        judges: "`idle=`, `*.max_cstate=`, `cpuidle.off=`",
        flagged_when: "never (`info`)",
        judge: |judge| judge.idle_parameters(),
    },
];

impl Judge<'_> {
    fn cpufreq_driver(&self) -> Finding {
        const ID: &str = "cpufreq.driver";
        match &self.facts.scaling_driver {
            Ok(driver) => info(ID, format!("scaling driver {driver}")),
            Err(unread) => info(
                ID,
                format!(
                    "no cpufreq driver ({unread}): the frequency is not under the kernel's control"
                ),
            ),
        }
    }

    fn cpufreq_governor(&self) -> Finding {
        const ID: &str = "cpufreq.governor";
        self.per_cpu_setting(
            ID,
            "governor",
            |cpu| &cpu.governor,
            "performance",
            "a governor other than performance changes the frequency with load, and a wake-up at low frequency is slower",
            |cpus| format!("cpupower -c {} frequency-set -g performance", cpu_list(cpus)),
        )
    }

    fn cpufreq_energy_preference(&self) -> Finding {
        const ID: &str = "cpufreq.energy_preference";
        self.per_cpu_setting(
            ID,
            "energy preference",
            |cpu| &cpu.energy_preference,
            "performance",
            "an energy preference other than performance lets the CPU ramp its frequency down and up slowly",
            |cpus| {
                let numbers: Vec<String> = cpus.iter().map(usize::to_string).collect();
                format!(
                    "for c in {}; do echo performance > /sys/devices/system/cpu/cpu$c/cpufreq/energy_performance_preference; done",
                    numbers.join(" ")
                )
            },
        )
    }

    /// A per-CPU cpufreq file that should read `wanted` on every measured CPU.
    fn per_cpu_setting(
        &self,
        id: &'static str,
        what: &str,
        read: impl Fn(&crate::facts::CpuFacts) -> &Fact<String>,
        wanted: &str,
        why: &str,
        fix: impl Fn(&[usize]) -> String,
    ) -> Finding {
        let mut wrong = Vec::new();
        let mut concerned = Vec::new();
        let mut missing = None;
        for cpu in &self.facts.per_cpu {
            match read(cpu) {
                Ok(value) if value == wanted => {}
                Ok(value) => {
                    wrong.push(format!("{value} on CPU {}", cpu.cpu));
                    concerned.push(cpu.cpu);
                }
                Err(unread) => missing = Some(unread),
            }
        }
        if !wrong.is_empty() {
            return flag(
                id,
                Status::Warn,
                format!("{what} {}", listing(&wrong)),
                why,
                fix(&concerned),
                concerned,
            );
        }
        match missing {
            Some(unread) => info(id, format!("no {what} ({unread})")),
            None => ok(id, format!("{what} {wanted} on {}", self.measured_cpus)),
        }
    }

    fn cpufreq_boost(&self) -> Finding {
        const ID: &str = "cpufreq.boost";
        match &self.facts.boost {
            Err(_) => info(
                ID,
                "no boost control (cpufreq/boost, intel_pstate/no_turbo absent)",
            ),
            Ok(boost) if !boost.enabled => ok(ID, format!("boost off ({})", boost.path.display())),
            Ok(boost) => {
                let fix = if boost.path.ends_with("no_turbo") {
                    "echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo"
                } else {
                    "echo 0 > /sys/devices/system/cpu/cpufreq/boost"
                };
                flag(
                    ID,
                    Status::Warn,
                    format!("boost on ({})", boost.path.display()),
                    "the boosted frequency depends on temperature and on the other cores' load, so latencies vary with them",
                    fix,
                    Vec::new(),
                )
            }
        }
    }

    fn thermal_throttle(&self) -> Finding {
        const ID: &str = "thermal.throttle";
        let mut throttled = Vec::new();
        let mut concerned = Vec::new();
        let mut any = false;
        for cpu in &self.facts.per_cpu {
            if let Ok(count) = cpu.throttle_count {
                any = true;
                if count > 0 {
                    throttled.push(format!("{count} on CPU {}", cpu.cpu));
                    concerned.push(cpu.cpu);
                }
            }
        }
        if !throttled.is_empty() {
            return flag(
                ID,
                Status::Warn,
                format!("thermal throttling since boot: {}", listing(&throttled)),
                "a throttled CPU runs slower, and the measuring thread with it",
                "improve cooling or lower the load; watch thermal_throttle/*_throttle_count",
                concerned,
            );
        }
        if any {
            ok(ID, "no thermal throttling since boot on the measured CPUs")
        } else {
            info(
                ID,
                "no thermal_throttle counters (not an Intel CPU, or not exposed)",
            )
        }
    }

    fn idle_driver(&self) -> Finding {
        const ID: &str = "idle.driver";
        match &self.facts.idle_driver {
            Ok(driver) => info(ID, format!("cpuidle driver {driver}")),
            Err(unread) => info(ID, format!("no cpuidle driver ({unread})")),
        }
    }

    fn idle_states(&self) -> Finding {
        const ID: &str = "idle.states";
        let limit_us = self.request.interval_us / 10;
        let mut deep = Vec::new();
        let mut concerned = Vec::new();
        let mut deepest_allowed: Option<usize> = None;
        let mut any = false;
        for cpu in &self.facts.per_cpu {
            let Ok(states) = &cpu.idle_states else {
                continue;
            };
            any = true;
            for state in states {
                if state.exit_latency_us <= limit_us {
                    deepest_allowed =
                        Some(deepest_allowed.map_or(state.index, |d| d.max(state.index)));
                } else if !state.disabled {
                    deep.push(format!(
                        "{} ({} µs) on CPU {}",
                        state.name, state.exit_latency_us, cpu.cpu
                    ));
                    if !concerned.contains(&cpu.cpu) {
                        concerned.push(cpu.cpu);
                    }
                }
            }
        }
        if !deep.is_empty() {
            let cpus = cpu_list(&concerned);
            let deepest = deepest_allowed.map_or_else(|| "-1".to_owned(), |d| d.to_string());
            return flag(
                ID,
                Status::Warn,
                format!(
                    "enabled idle states exit slower than a tenth of the {} µs interval: {}",
                    self.request.interval_us,
                    listing(&deep)
                ),
                "waking from them adds their exit latency to the wake-up (cyclictest holds /dev/cpu_dma_latency at 0 while it runs; an application may not)",
                format!(
                    "cpupower -c {cpus} idle-set -D {limit_us}, or rtlat cyclictest --deepest-idle-state {deepest}"
                ),
                concerned,
            );
        }
        if any {
            ok(
                ID,
                format!(
                    "no enabled idle state of {} exits slower than {limit_us} µs",
                    self.measured_cpus
                ),
            )
        } else {
            info(
                ID,
                "no cpuidle states: the CPUs idle the architecture's default way",
            )
        }
    }

    fn idle_parameters(&self) -> Finding {
        const ID: &str = "idle.parameters";
        if let Err(unread) = &self.facts.cmdline {
            return unknown(ID, unread);
        }
        let given: Vec<String> = [
            "idle",
            "intel_idle.max_cstate",
            "processor.max_cstate",
            "cpuidle.off",
        ]
        .iter()
        .filter_map(|name| Some(format!("{name}={}", self.facts.param(name)?)))
        .collect();
        if given.is_empty() {
            info(
                ID,
                "no idle=, max_cstate or cpuidle.off on the command line",
            )
        } else {
            info(ID, given.join(" "))
        }
    }
}
