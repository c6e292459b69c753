//! Judging the facts: one function per check, each turning what
//! [`facts`](crate::facts) read into a [`Finding`] with a status, the fact
//! observed and, for `warn` and `bad`, why it matters and what to do.
//!
//! [`run`] returns them in the order of [`CHECK_IDS`](crate::CHECK_IDS).
//! A file that could not be read makes its check `unknown` (the path is in
//! the fact); a file whose absence means the feature is not in this kernel
//! (no cpufreq, no KSM, no NUMA balancing) is judged as that.

use crate::facts::{
    Fact, Facts, Limit, Policy, ThreadInfo, Unread, cpu_list, cpus_phrase, preemption_model,
    ranges_text,
};
use crate::suggest::{Housekeeping, ONE_CPU, Suggestion};
use crate::{Finding, Request, Status};

/// At most this many items are named in one fact; the rest are counted.
const LISTED: usize = 6;

/// Judges `facts` for `request`; `suggestion` is the command line
/// suggested, whose caveats some findings carry.
pub fn run(facts: &Facts, request: &Request, suggestion: &Suggestion) -> Vec<Finding> {
    let judge = Judge {
        facts,
        request,
        suggestion,
        measured: &facts.measured,
        measured_text: cpu_list(&facts.measured),
        measured_cpus: cpus_phrase(&facts.measured),
    };
    vec![
        judge.kernel_preemption(),
        judge.kernel_hz(),
        judge.kernel_nohz_full(),
        judge.kernel_cmdline(),
        judge.isolation_isolcpus(suggestion),
        judge.isolation_nohz_full(),
        judge.isolation_rcu_nocbs(),
        judge.isolation_irqaffinity(),
        judge.smt_active(),
        judge.smt_siblings(),
        judge.cpufreq_driver(),
        judge.cpufreq_governor(),
        judge.cpufreq_boost(),
        judge.cpufreq_energy_preference(),
        judge.thermal_throttle(),
        judge.idle_driver(),
        judge.idle_states(),
        judge.idle_parameters(),
        judge.clocksource_current(),
        judge.clocksource_tsc(),
        judge.sched_rt_throttling(),
        judge.sched_timer_migration(),
        judge.sched_numa_balancing(),
        judge.memory_thp(),
        judge.memory_swap(),
        judge.memory_ksm(),
        judge.watchdog_nmi(),
        judge.watchdog_soft_lockup(),
        judge.irq_affinity(),
        judge.irq_irqbalance(),
        judge.competition_rt_threads(),
        judge.competition_kernel_threads(),
        judge.virt_hypervisor(),
        judge.virt_steal(),
        judge.smi_counting(),
        judge.limits_rtprio(),
        judge.limits_memlock(),
        judge.limits_cap_sys_nice(),
        judge.limits_cap_ipc_lock(),
    ]
}

/// Why a kernel that is not PREEMPT_RT is `bad` (the summary quotes it).
pub const NOT_PREEMPT_RT: &str =
    "not a PREEMPT_RT kernel, so wake-up latencies of milliseconds are expected under load";

/// What to do about a kernel that is not PREEMPT_RT.
const PREEMPT_RT_FIX: &str =
    "boot a PREEMPT_RT kernel (CONFIG_PREEMPT_RT=y; Debian: linux-image-rt-amd64)";

fn finding(id: &'static str, status: Status, fact: String) -> Finding {
    Finding {
        id,
        status,
        fact,
        why: None,
        fix: None,
        cpus: Vec::new(),
    }
}

fn ok(id: &'static str, fact: impl Into<String>) -> Finding {
    finding(id, Status::Ok, fact.into())
}

fn info(id: &'static str, fact: impl Into<String>) -> Finding {
    finding(id, Status::Info, fact.into())
}

fn unknown(id: &'static str, unread: &Unread) -> Finding {
    finding(id, Status::Unknown, unread.to_string())
}

/// A `warn` or `bad` finding about `cpus` (empty: the whole machine).
fn flag(
    id: &'static str,
    status: Status,
    fact: impl Into<String>,
    why: impl Into<String>,
    fix: impl Into<String>,
    cpus: Vec<usize>,
) -> Finding {
    Finding {
        id,
        status,
        fact: fact.into(),
        why: Some(why.into()),
        fix: Some(fix.into()),
        cpus,
    }
}

/// `a, b, c and 4 more`.
fn listing(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > LISTED {
        text.push_str(&format!(" and {} more", items.len() - LISTED));
    }
    text
}

struct Judge<'a> {
    facts: &'a Facts,
    request: &'a Request,
    /// The command line suggested: the isolation fixes name its CPUs.
    suggestion: &'a Suggestion,
    measured: &'a [usize],
    /// The measured CPUs as a list (`0-1`), for fixes.
    measured_text: String,
    /// The measured CPUs in a sentence (`CPU 1`, `CPUs 0-1`).
    measured_cpus: String,
}

impl Judge<'_> {
    /// The measured CPUs not in `cpus`.
    fn measured_outside(&self, cpus: &[usize]) -> Vec<usize> {
        self.measured
            .iter()
            .copied()
            .filter(|cpu| !cpus.contains(cpu))
            .collect()
    }

    /// Online CPUs where housekeeping can go: those not measured, else
    /// those the suggested command leaves out (never none but on a
    /// machine of one CPU).
    fn housekeeping(&self) -> Vec<usize> {
        match &self.facts.online {
            Ok(online) => {
                let outside = self.measured_outside_of(online);
                if outside.is_empty() {
                    online
                        .iter()
                        .copied()
                        .filter(|cpu| !self.suggestion.cpus.contains(cpu))
                        .collect()
                } else {
                    outside
                }
            }
            Err(_) => Vec::new(),
        }
    }

    /// Where a fix sends interrupts: the housekeeping CPUs, or a
    /// placeholder when they are unknown.
    fn housekeeping_target(&self) -> String {
        let housekeeping = self.housekeeping();
        if housekeeping.is_empty() {
            "<a CPU you do not measure>".to_owned()
        } else {
            cpu_list(&housekeeping)
        }
    }

    fn measured_outside_of(&self, cpus: &[usize]) -> Vec<usize> {
        cpus.iter()
            .copied()
            .filter(|cpu| !self.measured.contains(cpu))
            .collect()
    }

    /// The lowest priority a thread must have to delay the measuring
    /// threads: `-p`, or 0 (every real-time thread) without one.
    fn priority(&self) -> u32 {
        self.request.priority.map_or(0, u32::from)
    }

    fn priority_text(&self) -> String {
        match self.request.priority {
            Some(priority) => format!("-p {priority}"),
            None => "the measuring threads (no -p: SCHED_OTHER)".to_owned(),
        }
    }

    /// `PARAMS on the kernel command line` for the CPUs to isolate (those
    /// of the suggested command, which leaves housekeeping room; the
    /// measured ones when it names none), saying which CPUs stay for the
    /// housekeeping; on a machine of one CPU, that nothing can be.
    fn isolating(&self, params: &[&str]) -> String {
        let list = if self.suggestion.cpus.is_empty() {
            self.measured_text.clone()
        } else {
            cpu_list(&self.suggestion.cpus)
        };
        let params: Vec<String> = params.iter().map(|p| format!("{p}={list}")).collect();
        let params = params.join(" ");
        match &self.suggestion.housekeeping {
            Housekeeping::OneCpu => format!("none: {ONE_CPU}"),
            Housekeeping::Kept(kept) => format!(
                "{params} on the kernel command line, keeping {} for housekeeping (then measure with -a {list})",
                cpus_phrase(kept)
            ),
            Housekeeping::Outside | Housekeeping::Unknown => {
                format!("{params} on the kernel command line")
            }
        }
    }

    /// The parameter string a fix names for the CPUs to isolate.
    fn isolation_fix(&self) -> String {
        self.isolating(&["isolcpus", "nohz_full", "rcu_nocbs"])
    }

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

    fn isolation_isolcpus(&self, suggestion: &Suggestion) -> Finding {
        const ID: &str = "isolation.isolcpus";
        let note = match &suggestion.no_main_cpu {
            Some(note) => format!("; {note}"),
            None => String::new(),
        };
        if let (Err(unread), Err(_)) = (&self.facts.isolated, &self.facts.cmdline) {
            return finding(ID, Status::Unknown, format!("{unread}{note}"));
        }
        let isolated = self.facts.isolated_cpus();
        let param = self.facts.param("isolcpus").map_or_else(
            || "no isolcpus=".to_owned(),
            |v| format!("isolcpus={}", clip_value(v)),
        );
        // CPUs beyond the possible ones are said, not walked through.
        let beyond = match self.facts.isolcpus_list() {
            Some(list) if !list.beyond.is_empty() => format!(
                "; isolcpus= names CPUs beyond the possible 0-{}: {}",
                self.facts.cpu_limit() - 1,
                clip_value(&ranges_text(&list.beyond))
            ),
            _ => String::new(),
        };
        let note = format!("{beyond}{note}");
        let sysfs = match &self.facts.isolated {
            Ok(text) if text.is_empty() => "isolated: none".to_owned(),
            Ok(text) => format!("isolated: {text}"),
            Err(_) => "isolated: unreadable".to_owned(),
        };
        let outside = self.measured_outside(&isolated);
        if outside.is_empty() {
            return ok(
                ID,
                format!(
                    "{param} ({sysfs}); measured {} isolated{note}",
                    self.measured_cpus
                ),
            );
        }
        flag(
            ID,
            Status::Warn,
            format!(
                "{param} ({sysfs}); measured {} not isolated{note}",
                cpus_phrase(&outside)
            ),
            "the scheduler puts other tasks on the measured CPUs, delaying the measuring threads",
            self.isolation_fix(),
            outside,
        )
    }

    fn isolation_nohz_full(&self) -> Finding {
        const ID: &str = "isolation.nohz_full";
        if let (Err(_), Err(unread)) = (&self.facts.nohz_full, &self.facts.cmdline) {
            return unknown(ID, unread);
        }
        let tickless = self.facts.nohz_full_cpus();
        let outside = self.measured_outside(&tickless);
        let have = if tickless.is_empty() {
            "no nohz_full CPUs".to_owned()
        } else {
            format!("nohz_full: {}", cpu_list(&tickless))
        };
        if outside.is_empty() {
            return ok(
                ID,
                format!("{have}; measured {} tickless", self.measured_cpus),
            );
        }
        flag(
            ID,
            Status::Warn,
            format!(
                "{have}; measured {} {} the tick",
                cpus_phrase(&outside),
                if outside.len() == 1 { "keeps" } else { "keep" }
            ),
            "the periodic tick interrupts the measured CPUs even when one task runs there",
            self.isolating(&["nohz_full"]),
            outside,
        )
    }

    fn isolation_rcu_nocbs(&self) -> Finding {
        const ID: &str = "isolation.rcu_nocbs";
        let Err(unread) = &self.facts.cmdline else {
            // nohz_full CPUs are offloaded too, whether rcu_nocbs= says so or not.
            let mut offloaded = self.facts.param_cpus("rcu_nocbs").unwrap_or_default();
            offloaded.extend(self.facts.nohz_full_cpus());
            offloaded.sort_unstable();
            offloaded.dedup();
            let param = self
                .facts
                .param("rcu_nocbs")
                .map_or_else(|| "no rcu_nocbs=".to_owned(), |v| format!("rcu_nocbs={v}"));
            let outside = self.measured_outside(&offloaded);
            if outside.is_empty() {
                return ok(
                    ID,
                    format!(
                        "{param}; RCU callbacks of measured {} offloaded",
                        self.measured_cpus
                    ),
                );
            }
            return flag(
                ID,
                Status::Warn,
                format!(
                    "{param}; measured {} {} RCU callbacks",
                    cpus_phrase(&outside),
                    if outside.len() == 1 {
                        "runs its own"
                    } else {
                        "run their own"
                    }
                ),
                "RCU callbacks run in softirq on the measured CPUs, in bursts",
                self.isolating(&["rcu_nocbs"]),
                outside,
            );
        };
        unknown(ID, unread)
    }

    fn isolation_irqaffinity(&self) -> Finding {
        const ID: &str = "isolation.irqaffinity";
        if let Err(unread) = &self.facts.cmdline {
            return unknown(ID, unread);
        }
        let fix = match self.suggestion.housekeeping {
            Housekeeping::OneCpu => format!("none: {ONE_CPU}"),
            _ => format!(
                "irqaffinity={} on the kernel command line",
                self.housekeeping_target()
            ),
        };
        match self.facts.param_cpus("irqaffinity") {
            None => flag(
                ID,
                Status::Warn,
                "no irqaffinity=: device interrupts may be routed to every CPU",
                "new interrupts may be routed to the measured CPUs",
                fix,
                self.measured.to_vec(),
            ),
            Some(default) => {
                let inside: Vec<usize> = self
                    .measured
                    .iter()
                    .copied()
                    .filter(|cpu| default.contains(cpu))
                    .collect();
                let param = format!("irqaffinity={}", cpu_list(&default));
                if inside.is_empty() {
                    ok(ID, format!("{param}: excludes the measured CPUs"))
                } else {
                    flag(
                        ID,
                        Status::Warn,
                        format!("{param} includes measured {}", cpus_phrase(&inside)),
                        "new interrupts may be routed to the measured CPUs",
                        fix,
                        inside,
                    )
                }
            }
        }
    }

    fn smt_active(&self) -> Finding {
        const ID: &str = "smt.active";
        match &self.facts.smt_active {
            Err(unread) => unknown(ID, unread),
            Ok(false) => ok(ID, "SMT off"),
            Ok(true) => info(
                ID,
                "SMT on: cores run two or more hardware threads (see smt.siblings)",
            ),
        }
    }

    fn smt_siblings(&self) -> Finding {
        const ID: &str = "smt.siblings";
        if self.facts.siblings.is_empty() {
            return match &self.facts.online {
                Err(unread) => unknown(ID, unread),
                Ok(_) => finding(
                    ID,
                    Status::Unknown,
                    "no cpuN/topology/thread_siblings_list readable".to_owned(),
                ),
            };
        }
        let isolated = self.facts.isolated_cpus();
        let mut busy_pairs = Vec::new();
        let mut concerned = Vec::new();
        for &cpu in self.measured {
            let busy: Vec<usize> = self
                .facts
                .siblings_of(cpu)
                .into_iter()
                .filter(|sibling| !self.measured.contains(sibling) && !isolated.contains(sibling))
                .collect();
            if !busy.is_empty() {
                busy_pairs.push(format!("CPU {cpu} shares a core with {}", cpu_list(&busy)));
                concerned.push(cpu);
            }
        }
        if busy_pairs.is_empty() {
            return ok(
                ID,
                "no measured CPU shares its core with a CPU that runs other work",
            );
        }
        flag(
            ID,
            Status::Warn,
            listing(&busy_pairs),
            "work on a sibling hardware thread takes the core's execution units from the measuring thread",
            "nosmt on the kernel command line, or isolate the siblings too (isolcpus=)",
            concerned,
        )
    }

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

    fn clocksource_current(&self) -> Finding {
        const ID: &str = "clocksource.current";
        let available = self
            .facts
            .clocksources_available
            .as_deref()
            .unwrap_or("unreadable");
        match self.facts.clocksource.as_deref() {
            Err(unread) => unknown(ID, unread),
            Ok(source @ ("tsc" | "arch_sys_counter")) => {
                ok(ID, format!("{source} (available: {available})"))
            }
            Ok(source @ ("hpet" | "acpi_pm" | "jiffies" | "refined-jiffies")) => flag(
                ID,
                Status::Bad,
                format!("{source} (available: {available})"),
                format!(
                    "reading {source} is a slow device access, not a vDSO read, so every timestamp costs microseconds"
                ),
                "clocksource=tsc on the kernel command line if the TSC is stable (tsc=reliable), or echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource",
                Vec::new(),
            ),
            Ok(source) => info(ID, format!("{source} (available: {available})")),
        }
    }

    fn clocksource_tsc(&self) -> Finding {
        const ID: &str = "clocksource.tsc";
        match &self.facts.cpuinfo {
            Err(unread) => unknown(ID, unread),
            Ok(info_) if !info_.has_flags => info(ID, "not an x86 CPU: no TSC flags"),
            Ok(cpu) if cpu.constant_tsc && cpu.nonstop_tsc => ok(ID, "constant_tsc nonstop_tsc"),
            Ok(cpu) => {
                let missing: Vec<&str> = [
                    ("constant_tsc", cpu.constant_tsc),
                    ("nonstop_tsc", cpu.nonstop_tsc),
                ]
                .iter()
                .filter(|(_, present)| !present)
                .map(|(name, _)| *name)
                .collect();
                flag(
                    ID,
                    Status::Warn,
                    format!("no {}", missing.join(", no ")),
                    "the TSC changes rate with frequency or stops in deep idle, so the kernel may fall back to a slow clocksource",
                    "use a CPU with an invariant TSC, or keep it out of deep idle (idle.states)",
                    Vec::new(),
                )
            }
        }
    }

    fn sched_rt_throttling(&self) -> Finding {
        const ID: &str = "sched.rt_throttling";
        match self.facts.sched_rt_runtime_us {
            Err(ref unread) => unknown(ID, unread),
            Ok(-1) => ok(ID, "sched_rt_runtime_us=-1: no RT throttling"),
            Ok(runtime) => flag(
                ID,
                Status::Warn,
                format!("sched_rt_runtime_us={runtime}: real-time threads are throttled"),
                format!(
                    "real-time threads are stopped for the rest of each period once they have run {runtime} µs of it"
                ),
                "sysctl kernel.sched_rt_runtime_us=-1",
                Vec::new(),
            ),
        }
    }

    /// A sysctl that should read 0.
    fn sysctl_off(
        &self,
        id: &'static str,
        name: &str,
        value: &Fact<i64>,
        absent: &str,
        why: &str,
        fix: &str,
    ) -> Finding {
        match value {
            Err(unread) if unread.reason == "not found" => {
                ok(id, format!("{name} absent: {absent}"))
            }
            Err(unread) => unknown(id, unread),
            Ok(0) => ok(id, format!("{name}=0")),
            Ok(on) => flag(
                id,
                Status::Warn,
                format!("{name}={on}"),
                why,
                fix,
                Vec::new(),
            ),
        }
    }

    fn sched_timer_migration(&self) -> Finding {
        self.sysctl_off(
            "sched.timer_migration",
            "timer_migration",
            &self.facts.timer_migration,
            "not in this kernel",
            "timers of idle CPUs may be moved to the measured CPUs and expire there",
            "sysctl kernel.timer_migration=0",
        )
    }

    fn sched_numa_balancing(&self) -> Finding {
        self.sysctl_off(
            "sched.numa_balancing",
            "numa_balancing",
            &self.facts.numa_balancing,
            "not in this kernel",
            "NUMA balancing unmaps pages to sample them, so the measuring thread takes page faults",
            "sysctl kernel.numa_balancing=0",
        )
    }

    fn memory_thp(&self) -> Finding {
        const ID: &str = "memory.thp";
        match self.facts.thp.as_deref() {
            Err(unread) if unread.reason == "not found" => {
                ok(ID, "no transparent huge pages in this kernel")
            }
            Err(unread) => unknown(ID, unread),
            Ok("always") => flag(
                ID,
                Status::Warn,
                "transparent huge pages: always",
                "huge-page faults and khugepaged's compaction can stall the measuring threads",
                "transparent_hugepage=madvise on the kernel command line, or echo madvise > /sys/kernel/mm/transparent_hugepage/enabled",
                Vec::new(),
            ),
            Ok(mode) => ok(ID, format!("transparent huge pages: {mode}")),
        }
    }

    fn memory_swap(&self) -> Finding {
        const ID: &str = "memory.swap";
        match self.facts.swap {
            Err(ref unread) => unknown(ID, unread),
            Ok(swap) if swap.total_kib == 0 => ok(ID, "no swap"),
            Ok(swap) if swap.used_kib == 0 => {
                ok(ID, format!("{} KiB of swap, none in use", swap.total_kib))
            }
            Ok(swap) => flag(
                ID,
                Status::Warn,
                format!(
                    "{} KiB of {} KiB swap in use",
                    swap.used_kib, swap.total_kib
                ),
                "pages not locked in memory can be swapped out, and a major fault costs milliseconds",
                "run with -m (mlockall), and swapoff -a",
                Vec::new(),
            ),
        }
    }

    fn memory_ksm(&self) -> Finding {
        self.sysctl_off(
            "memory.ksm",
            "ksm/run",
            &self.facts.ksm_run,
            "no KSM in this kernel",
            "KSM merges pages in the background; writing a merged page faults to copy it",
            "echo 0 > /sys/kernel/mm/ksm/run",
        )
    }

    fn watchdog_nmi(&self) -> Finding {
        self.sysctl_off(
            "watchdog.nmi",
            "nmi_watchdog",
            &self.facts.nmi_watchdog,
            "no NMI watchdog in this kernel",
            "the NMI watchdog interrupts every CPU periodically with a non-maskable interrupt",
            "nmi_watchdog=0 on the kernel command line, or sysctl kernel.nmi_watchdog=0",
        )
    }

    fn watchdog_soft_lockup(&self) -> Finding {
        const ID: &str = "watchdog.soft_lockup";
        // `watchdog=0` turns both watchdogs off.
        if self.facts.watchdog == Ok(0) {
            return ok(ID, "watchdog=0");
        }
        self.sysctl_off(
            ID,
            "soft_watchdog",
            &self.facts.soft_watchdog,
            "no soft-lockup watchdog in this kernel",
            "the soft-lockup watchdog runs a timer and a thread on every CPU it watches",
            "nowatchdog on the kernel command line, or sysctl kernel.soft_watchdog=0",
        )
    }

    fn irq_affinity(&self) -> Finding {
        const ID: &str = "irq.affinity";
        let irqs = match &self.facts.irqs {
            Err(unread) => return unknown(ID, unread),
            Ok(irqs) => irqs,
        };
        let mut on_measured = Vec::new();
        let mut concerned: Vec<usize> = Vec::new();
        for irq in irqs {
            let Ok(cpus) = &irq.cpus else {
                continue;
            };
            let inside: Vec<usize> = cpus
                .iter()
                .copied()
                .filter(|cpu| self.measured.contains(cpu))
                .collect();
            if !inside.is_empty() {
                on_measured.push(format!(
                    "{} {} on CPU {}",
                    irq.number,
                    irq.name,
                    cpu_list(&inside)
                ));
                concerned.extend(inside);
            }
        }
        if on_measured.is_empty() {
            return ok(
                ID,
                format!("no device interrupt is delivered to {}", self.measured_cpus),
            );
        }
        concerned.sort_unstable();
        concerned.dedup();
        let target = self.housekeeping_target();
        let fix = match self.suggestion.housekeeping {
            Housekeeping::OneCpu => format!("none: {ONE_CPU}"),
            _ => format!(
                "echo {target} > /proc/irq/N/smp_affinity_list for each, or irqaffinity={target} on the kernel command line"
            ),
        };
        flag(
            ID,
            Status::Warn,
            format!("IRQs on measured CPUs: {}", listing(&on_measured)),
            "their handlers run on the measured CPUs and delay the measuring threads",
            fix,
            concerned,
        )
    }

    fn irq_irqbalance(&self) -> Finding {
        const ID: &str = "irq.irqbalance";
        match &self.facts.threads {
            Err(unread) => unknown(ID, unread),
            Ok(threads) => match threads.irqbalance {
                None => ok(ID, "irqbalance not running"),
                Some(pid) => {
                    let outside = self.measured_outside(&self.facts.isolated_cpus());
                    if outside.is_empty() {
                        info(
                            ID,
                            format!(
                                "irqbalance running (pid {pid}); it leaves the isolated measured CPUs alone"
                            ),
                        )
                    } else {
                        flag(
                            ID,
                            Status::Warn,
                            format!("irqbalance running (pid {pid})"),
                            "it moves interrupts onto the measured CPUs every few seconds",
                            format!(
                                "systemctl stop irqbalance, or IRQBALANCE_BANNED_CPULIST={} in its configuration",
                                cpu_list(&outside)
                            ),
                            outside,
                        )
                    }
                }
            },
        }
    }

    /// Whether `thread` preempts a measuring thread at the requested priority.
    fn outranks(&self, thread: &ThreadInfo) -> bool {
        match thread.policy {
            Policy::Deadline => true,
            Policy::Fifo | Policy::RoundRobin => thread.rt_priority >= self.priority(),
            Policy::Normal => false,
        }
    }

    /// The measured CPUs `thread` may run on.
    fn measured_cpus_of(&self, thread: &ThreadInfo) -> Vec<usize> {
        match &thread.allowed {
            Ok(allowed) => self
                .measured
                .iter()
                .copied()
                .filter(|cpu| allowed.contains(cpu))
                .collect(),
            Err(_) => self.measured.to_vec(),
        }
    }

    fn competition_rt_threads(&self) -> Finding {
        const ID: &str = "competition.rt_threads";
        let threads = match &self.facts.threads {
            Err(unread) => return unknown(ID, unread),
            Ok(threads) => threads,
        };
        let on_measured: Vec<&ThreadInfo> = threads
            .realtime_user
            .iter()
            .filter(|t| t.may_run_on(self.measured))
            .collect();
        let (above, below): (Vec<&ThreadInfo>, Vec<&ThreadInfo>) =
            on_measured.iter().partition(|t| self.outranks(t));
        if above.is_empty() {
            return ok(
                ID,
                format!(
                    "no user real-time thread at or above {} on {}{}",
                    self.priority_text(),
                    self.measured_cpus,
                    if below.is_empty() {
                        String::new()
                    } else {
                        format!(" ({} below it)", below.len())
                    }
                ),
            );
        }
        let mut concerned: Vec<usize> = above
            .iter()
            .flat_map(|t| self.measured_cpus_of(t))
            .collect();
        concerned.sort_unstable();
        concerned.dedup();
        let described: Vec<String> = above.iter().map(|t| t.describe()).collect();
        flag(
            ID,
            Status::Bad,
            format!(
                "at or above {} on the measured CPUs: {}",
                self.priority_text(),
                listing(&described)
            ),
            "these threads preempt the measuring threads, whose latency then includes their run time",
            "stop them, move them off the measured CPUs (taskset -p), or measure with a higher -p (suggested command)",
            concerned,
        )
    }

    fn competition_kernel_threads(&self) -> Finding {
        const ID: &str = "competition.kernel_threads";
        let threads = match &self.facts.threads {
            Err(unread) => return unknown(ID, unread),
            Ok(threads) => threads,
        };
        let on_measured: Vec<&ThreadInfo> = threads
            .kernel
            .iter()
            .filter(|t| t.may_run_on(self.measured))
            .collect();
        let above: Vec<&ThreadInfo> = on_measured
            .iter()
            .copied()
            .filter(|t| self.outranks(t))
            .collect();
        let described = |threads: &[&ThreadInfo]| {
            listing(&threads.iter().map(|t| t.describe()).collect::<Vec<_>>())
        };
        if above.is_empty() {
            let fact = if on_measured.is_empty() {
                format!(
                    "no ktimers/ksoftirqd/rcuc/irq thread on {}",
                    self.measured_cpus
                )
            } else {
                format!(
                    "below {}: {}",
                    self.priority_text(),
                    described(&on_measured)
                )
            };
            return ok(ID, fact);
        }
        let mut concerned: Vec<usize> = above
            .iter()
            .flat_map(|t| self.measured_cpus_of(t))
            .collect();
        concerned.sort_unstable();
        concerned.dedup();
        let highest = above.iter().map(|t| t.rt_priority).max().unwrap_or(0);
        flag(
            ID,
            Status::Warn,
            format!(
                "at or above {} on the measured CPUs: {}",
                self.priority_text(),
                described(&above)
            ),
            "these kernel threads (timers, softirqs, threaded interrupts) preempt the measuring threads",
            format!(
                "measure with -p {} or higher, or move the interrupts off the measured CPUs",
                (highest + 1).min(99)
            ),
            concerned,
        )
    }

    fn virt_hypervisor(&self) -> Finding {
        const ID: &str = "virt.hypervisor";
        match &self.facts.cpuinfo {
            Err(unread) => unknown(ID, unread),
            Ok(cpu) if !cpu.has_flags => info(ID, "not x86: no hypervisor flag to read"),
            Ok(cpu) if !cpu.hypervisor => ok(ID, "bare metal (no hypervisor flag)"),
            Ok(_) => flag(
                ID,
                Status::Warn,
                "running under a hypervisor",
                "the host can stop this virtual CPU at any time; latencies include the host's",
                "measure on bare metal, or give the guest dedicated, isolated host CPUs and an RT host kernel",
                Vec::new(),
            ),
        }
    }

    fn virt_steal(&self) -> Finding {
        const ID: &str = "virt.steal";
        let steal = match &self.facts.steal {
            Err(unread) => return unknown(ID, unread),
            Ok(steal) => steal,
        };
        let stolen: Vec<(usize, u64)> = self
            .measured
            .iter()
            .filter_map(|cpu| steal.get(cpu).map(|&ticks| (*cpu, ticks)))
            .filter(|&(_, ticks)| ticks > 0)
            .collect();
        if stolen.is_empty() {
            return ok(
                ID,
                format!("no steal time since boot on {}", self.measured_cpus),
            );
        }
        let described: Vec<String> = stolen
            .iter()
            .map(|(cpu, ticks)| format!("{ticks} ticks on CPU {cpu}"))
            .collect();
        flag(
            ID,
            Status::Warn,
            format!("steal time since boot: {}", listing(&described)),
            "the host has run other work on these virtual CPUs' time",
            "give the guest dedicated host CPUs (vCPU pinning) and an idle host",
            stolen.iter().map(|(cpu, _)| *cpu).collect(),
        )
    }

    fn smi_counting(&self) -> Finding {
        const ID: &str = "smi.counting";
        match &self.facts.cpuinfo {
            Err(unread) => unknown(ID, unread),
            Ok(cpu) => match cpu.vendor.as_deref() {
                Some("GenuineIntel") if self.facts.msr_device => ok(
                    ID,
                    "SMIs can be counted (--smi): Intel CPU, /dev/cpu/0/msr present",
                ),
                Some("GenuineIntel") => info(
                    ID,
                    "SMI counting needs the msr module (modprobe msr): /dev/cpu/0/msr absent",
                ),
                Some(vendor) => info(
                    ID,
                    format!("SMI counting needs an Intel CPU (MSR_SMI_COUNT); this is {vendor}"),
                ),
                None => info(ID, "SMI counting needs an Intel x86 CPU (MSR_SMI_COUNT)"),
            },
        }
    }

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

/// A kernel parameter's value for a message: at most 200 characters, the
/// rest counted (a copied tree's command line may be megabytes long).
fn clip_value(value: &str) -> String {
    const LIMIT: usize = 200;
    match value.char_indices().nth(LIMIT) {
        Some((at, _)) => format!("{}... ({} bytes)", &value[..at], value.len()),
        None => value.to_owned(),
    }
}
