//! Reading the machine: every file the checks judge, read once from a root
//! directory (`/`, or a copied tree in tests) into plain [`Facts`].
//!
//! Nothing here judges; nothing here calls the kernel for a fact a file
//! gives (no `uname`, no `sched_getaffinity`), so a copied tree reads
//! exactly like the machine it was copied from. A file that cannot be read
//! is an [`Unread`] with its path, which the checks report as `unknown`.
//!
//! Per-CPU files (frequency, idle states, throttle counters) are read for
//! the measured CPUs only, so the cost does not grow with the machine's
//! size; the thread scan reads one `stat` file per thread and the `status`
//! file only of the few threads that matter.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use rtlat_base::format_cpu_list;

use crate::{AuditError, Request};

/// A file that could not be read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unread {
    /// The file, under the root.
    pub path: PathBuf,
    /// Why: `not found`, `permission denied`, `not a number`, ...
    pub reason: String,
}

impl fmt::Display for Unread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} unreadable ({})", self.path.display(), self.reason)
    }
}

/// A fact read from a file, or the file that could not be read.
pub type Fact<T> = Result<T, Unread>;

/// A scheduling policy, as `stat` field 41 gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// SCHED_OTHER (0), SCHED_BATCH (3), SCHED_IDLE (5): not real-time.
    Normal,
    /// SCHED_FIFO (1).
    Fifo,
    /// SCHED_RR (2).
    RoundRobin,
    /// SCHED_DEADLINE (6): preempts every FIFO/RR thread.
    Deadline,
}

impl Policy {
    fn from_stat(value: u32) -> Policy {
        match value {
            1 => Policy::Fifo,
            2 => Policy::RoundRobin,
            6 => Policy::Deadline,
            _ => Policy::Normal,
        }
    }

    /// The short name printed in facts: `OTHER`, `FIFO`, `RR`, `DEADLINE`.
    pub const fn name(self) -> &'static str {
        match self {
            Policy::Normal => "OTHER",
            Policy::Fifo => "FIFO",
            Policy::RoundRobin => "RR",
            Policy::Deadline => "DEADLINE",
        }
    }

    /// FIFO, RR or DEADLINE.
    pub const fn is_realtime(self) -> bool {
        !matches!(self, Policy::Normal)
    }
}

/// One thread of another process that the competition checks judge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Its process.
    pub pid: u32,
    /// The thread itself.
    pub tid: u32,
    /// Its name (`comm`).
    pub comm: String,
    /// Its scheduling policy.
    pub policy: Policy,
    /// Its real-time priority (0 for non-real-time and DEADLINE).
    pub rt_priority: u32,
    /// The CPUs it may run on.
    pub allowed: Fact<Vec<usize>>,
}

impl ThreadInfo {
    /// `comm (pid 12) FIFO 99`.
    pub fn describe(&self) -> String {
        match self.policy {
            Policy::Fifo | Policy::RoundRobin => format!(
                "{} (pid {}) {} {}",
                self.comm,
                self.tid,
                self.policy.name(),
                self.rt_priority
            ),
            Policy::Normal | Policy::Deadline => {
                format!("{} (pid {}) {}", self.comm, self.tid, self.policy.name())
            }
        }
    }

    /// Whether it may run on one of `cpus` (unknown affinity counts as yes).
    pub fn may_run_on(&self, cpus: &[usize]) -> bool {
        match &self.allowed {
            Ok(allowed) => allowed.iter().any(|cpu| cpus.contains(cpu)),
            Err(_) => true,
        }
    }
}

/// What the scan of `proc/<pid>/task/<tid>` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Threads {
    /// An `irqbalance` process is running.
    pub irqbalance: Option<u32>,
    /// User threads with a real-time policy (the invoking process excluded).
    pub realtime_user: Vec<ThreadInfo>,
    /// Kernel threads that compete on a CPU: `ktimers/N`, `ksoftirqd/N`,
    /// `rcuc/N`, `irq/...` and any other real-time kernel thread except
    /// the CPU stoppers (`migration/N`, `idle_inject/N`).
    pub kernel: Vec<ThreadInfo>,
}

/// The kernel build options the checks look at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelConfig {
    /// Where it was read from.
    pub path: PathBuf,
    /// `CONFIG_HZ`.
    pub hz: Option<u32>,
    /// `CONFIG_NO_HZ_FULL=y`.
    pub nohz_full: bool,
    /// `CONFIG_PREEMPT_RT=y`.
    pub preempt_rt: bool,
    /// `CONFIG_PREEMPT_DYNAMIC=y`.
    pub preempt_dynamic: bool,
    /// `CONFIG_PREEMPT=y`.
    pub preempt: bool,
    /// `CONFIG_PREEMPT_VOLUNTARY=y`.
    pub preempt_voluntary: bool,
    /// `CONFIG_PREEMPT_NONE=y`.
    pub preempt_none: bool,
}

/// The kernel command line, split into parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cmdline {
    /// As read (trimmed).
    pub text: String,
}

impl Cmdline {
    /// The value of the last `name=value` parameter (`Some("")` for a bare
    /// `name`), `None` when absent. Arguments after `--` go to init and
    /// are not kernel parameters.
    pub fn param(&self, name: &str) -> Option<&str> {
        let mut found = None;
        for word in self.text.split_whitespace() {
            if word == "--" {
                break;
            }
            match word.split_once('=') {
                Some((key, value)) if key == name => found = Some(value),
                None if word == name => found = Some(""),
                _ => {}
            }
        }
        found
    }
}

/// What `proc/cpuinfo` says of the first CPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuInfo {
    /// `vendor_id` (`GenuineIntel`, `AuthenticAMD`); `None` off x86.
    pub vendor: Option<String>,
    /// `model name` (or `Model`/`cpu model` on other architectures).
    pub model: Option<String>,
    /// The `flags` line was present (an x86 CPU).
    pub has_flags: bool,
    /// `constant_tsc`.
    pub constant_tsc: bool,
    /// `nonstop_tsc`.
    pub nonstop_tsc: bool,
    /// `hypervisor`: running in a virtual machine.
    pub hypervisor: bool,
}

/// One idle state of a CPU (`cpuN/cpuidle/stateK`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleState {
    /// K.
    pub index: usize,
    /// `name`.
    pub name: String,
    /// `latency`: the exit latency in µs.
    pub exit_latency_us: u64,
    /// `disable` is not 0.
    pub disabled: bool,
}

/// The frequency, idle and throttle facts of one measured CPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuFacts {
    /// The CPU.
    pub cpu: usize,
    /// `cpufreq/scaling_governor`.
    pub governor: Fact<String>,
    /// `cpufreq/energy_performance_preference`.
    pub energy_preference: Fact<String>,
    /// `thermal_throttle/core_throttle_count` + `package_throttle_count`.
    pub throttle_count: Fact<u64>,
    /// `cpuidle/stateK`, in index order; `Err` when there is no cpuidle
    /// directory for this CPU.
    pub idle_states: Fact<Vec<IdleState>>,
}

/// Whether frequency boost (turbo) is on, and the file that says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Boost {
    /// Boost is enabled.
    pub enabled: bool,
    /// `cpufreq/boost` or `intel_pstate/no_turbo`.
    pub path: PathBuf,
}

/// Swap space, from `proc/swaps` (or `proc/meminfo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Swap {
    /// Configured swap in KiB.
    pub total_kib: u64,
    /// Swap in use in KiB.
    pub used_kib: u64,
}

/// One device interrupt of `proc/interrupts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Irq {
    /// Its number.
    pub number: u32,
    /// Its device name(s), as `proc/interrupts` ends the line.
    pub name: String,
    /// `proc/irq/N/effective_affinity_list` (or `smp_affinity_list`).
    pub cpus: Fact<Vec<usize>>,
}

/// A resource limit's soft value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// `unlimited`.
    Unlimited,
    /// A number (priority, or bytes).
    Value(u64),
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Unlimited => f.write_str("unlimited"),
            Limit::Value(value) => write!(f, "{value}"),
        }
    }
}

/// The invoking process's limits and capabilities.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Privileges {
    /// RLIMIT_RTPRIO (`Max realtime priority`, soft).
    pub rtprio: Fact<Limit>,
    /// RLIMIT_MEMLOCK in bytes (`Max locked memory`, soft).
    pub memlock: Fact<Limit>,
    /// CAP_SYS_NICE in `CapEff`.
    pub cap_sys_nice: Fact<bool>,
    /// CAP_IPC_LOCK in `CapEff`.
    pub cap_ipc_lock: Fact<bool>,
}

/// Everything read from the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    /// `proc/sys/kernel/osrelease`.
    pub release: Fact<String>,
    /// `proc/sys/kernel/version`.
    pub version: Fact<String>,
    /// `sys/kernel/realtime` reads `1`.
    pub realtime_flag: Fact<bool>,
    /// The current mode of a PREEMPT_DYNAMIC kernel, from
    /// `sys/kernel/debug/sched/preempt` (`full` of `none voluntary (full)`).
    pub preempt_mode: Fact<String>,
    /// `proc/config.gz`, or `boot/config-<release>`.
    pub config: Fact<KernelConfig>,
    /// `proc/cmdline`.
    pub cmdline: Fact<Cmdline>,
    /// `sys/devices/system/cpu/present`.
    pub present: Fact<Vec<usize>>,
    /// `sys/devices/system/cpu/possible`: what bounds the CPU lists of
    /// the command line and sysfs ([`Facts::cpu_limit`]).
    pub possible: Fact<Vec<usize>>,
    /// `sys/devices/system/cpu/online`.
    pub online: Fact<Vec<usize>>,
    /// `sys/devices/system/cpu/isolated` (as written: `""` for none).
    pub isolated: Fact<String>,
    /// `sys/devices/system/cpu/nohz_full` (absent without NO_HZ_FULL).
    pub nohz_full: Fact<String>,
    /// `sys/devices/system/cpu/smt/active`, or else whether some online
    /// CPU has a sibling.
    pub smt_active: Fact<bool>,
    /// `cpuN/topology/thread_siblings_list` of every online CPU (CPUs whose
    /// file is unreadable are missing).
    pub siblings: BTreeMap<usize, Vec<usize>>,
    /// The invoking process's `Cpus_allowed_list`.
    pub allowed: Fact<Vec<usize>>,
    /// The CPUs judged as measured: the request's, or every allowed one.
    pub measured: Vec<usize>,
    /// Facts of each measured CPU, in order.
    pub per_cpu: Vec<CpuFacts>,
    /// `cpufreq/scaling_driver` of the first measured CPU.
    pub scaling_driver: Fact<String>,
    /// `cpufreq/boost` or `intel_pstate/no_turbo`.
    pub boost: Fact<Boost>,
    /// `cpuidle/current_driver`.
    pub idle_driver: Fact<String>,
    /// `clocksource0/current_clocksource`.
    pub clocksource: Fact<String>,
    /// `clocksource0/available_clocksource`.
    pub clocksources_available: Fact<String>,
    /// `proc/cpuinfo`.
    pub cpuinfo: Fact<CpuInfo>,
    /// Steal time since boot in ticks, per CPU, from `proc/stat`.
    pub steal: Fact<BTreeMap<usize, u64>>,
    /// Steal time since boot of the whole machine (the `cpu` line).
    pub steal_total: Fact<u64>,
    /// `kernel.sched_rt_runtime_us`.
    pub sched_rt_runtime_us: Fact<i64>,
    /// `kernel.timer_migration`.
    pub timer_migration: Fact<i64>,
    /// `kernel.numa_balancing`.
    pub numa_balancing: Fact<i64>,
    /// `kernel.nmi_watchdog`.
    pub nmi_watchdog: Fact<i64>,
    /// `kernel.soft_watchdog`.
    pub soft_watchdog: Fact<i64>,
    /// `kernel.watchdog` (both watchdogs' master switch).
    pub watchdog: Fact<i64>,
    /// The selected word of `transparent_hugepage/enabled`.
    pub thp: Fact<String>,
    /// Swap configured and in use.
    pub swap: Fact<Swap>,
    /// `ksm/run`.
    pub ksm_run: Fact<i64>,
    /// Device interrupts.
    pub irqs: Fact<Vec<Irq>>,
    /// The scan of other processes' threads.
    pub threads: Fact<Threads>,
    /// The invoking process's limits and capabilities.
    pub privileges: Privileges,
    /// `dev/cpu/0/msr` exists (the msr module is loaded).
    pub msr_device: bool,
}

impl Facts {
    /// The CPUs isolated from the scheduler: sysfs `isolated` and the
    /// `isolcpus=` list.
    pub fn isolated_cpus(&self) -> Vec<usize> {
        let mut cpus = self
            .isolated
            .as_ref()
            .ok()
            .and_then(|text| self.cpus_of(text))
            .unwrap_or_default();
        cpus.extend(self.isolcpus_param().unwrap_or_default());
        cpus.sort_unstable();
        cpus.dedup();
        cpus
    }

    /// The CPUs of the `isolcpus=` parameter (its flags skipped).
    pub fn isolcpus_param(&self) -> Option<Vec<usize>> {
        self.isolcpus_list().map(|list| list.cpus)
    }

    /// The `isolcpus=` parameter's list (its flags skipped), within the
    /// possible CPUs.
    pub fn isolcpus_list(&self) -> Option<CpuList> {
        let value = self.param("isolcpus")?;
        let list: Vec<&str> = value
            .split(',')
            .filter(|item| !item.chars().all(|c| c.is_ascii_alphabetic() || c == '_'))
            .collect();
        parse_cpu_list_within(&list.join(","), self.last_cpu(), self.cpu_limit())
    }

    /// How many CPUs a list may name: the possible CPUs' (the last one's
    /// number and one), else [`NR_CPUS_MAX`].
    pub fn cpu_limit(&self) -> usize {
        match &self.possible {
            Ok(possible) => possible
                .last()
                .map_or(NR_CPUS_MAX, |&last| (last + 1).min(NR_CPUS_MAX)),
            Err(_) => NR_CPUS_MAX,
        }
    }

    /// The CPUs of the kernel CPU list `text`, within the possible CPUs.
    fn cpus_of(&self, text: &str) -> Option<Vec<usize>> {
        parse_cpu_list_within(text, self.last_cpu(), self.cpu_limit()).map(|list| list.cpus)
    }

    /// The CPUs without the scheduler tick: sysfs `nohz_full`, else the
    /// `nohz_full=` parameter.
    pub fn nohz_full_cpus(&self) -> Vec<usize> {
        match &self.nohz_full {
            Ok(text) => self.cpus_of(text),
            Err(_) => self.param_cpus("nohz_full"),
        }
        .unwrap_or_default()
    }

    /// A kernel parameter's value, `None` when absent or the command line
    /// is unreadable.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.cmdline.as_ref().ok()?.param(name)
    }

    /// A kernel parameter's CPU list.
    pub fn param_cpus(&self, name: &str) -> Option<Vec<usize>> {
        self.cpus_of(self.param(name)?)
    }

    /// The highest present (or online) CPU number.
    pub fn last_cpu(&self) -> usize {
        let from = |cpus: &Fact<Vec<usize>>| cpus.as_ref().ok().and_then(|c| c.last().copied());
        from(&self.present)
            .or_else(|| from(&self.online))
            .unwrap_or(0)
    }

    /// The SMT siblings of `cpu` other than itself.
    pub fn siblings_of(&self, cpu: usize) -> Vec<usize> {
        self.siblings
            .get(&cpu)
            .map(|list| list.iter().copied().filter(|&other| other != cpu).collect())
            .unwrap_or_default()
    }

    /// The kernel is PREEMPT_RT (`None`: nothing said either way).
    pub fn is_preempt_rt(&self) -> Option<bool> {
        preemption_model(self).map(|model| model == "PREEMPT_RT")
    }
}

/// The preemption model as the environment records it: `PREEMPT_RT`,
/// `PREEMPT_DYNAMIC (full)`, `PREEMPT_DYNAMIC`, `PREEMPT`,
/// `PREEMPT_VOLUNTARY`, `PREEMPT_NONE`; `None` when nothing says.
pub fn preemption_model(facts: &Facts) -> Option<String> {
    let words: Vec<&str> = facts
        .version
        .as_deref()
        .map(|v| v.split_whitespace().collect())
        .unwrap_or_default();
    let in_version = |word: &str| words.contains(&word);
    // Older RT patches wrote `PREEMPT RT` as two words.
    let rt_in_version =
        in_version("PREEMPT_RT") || words.windows(2).any(|pair| pair == ["PREEMPT", "RT"]);
    let config = facts.config.as_ref().ok();
    if facts.realtime_flag == Ok(true) || rt_in_version || config.is_some_and(|c| c.preempt_rt) {
        return Some("PREEMPT_RT".to_owned());
    }
    if in_version("PREEMPT_DYNAMIC") || config.is_some_and(|c| c.preempt_dynamic) {
        return Some(match &facts.preempt_mode {
            Ok(mode) => format!("PREEMPT_DYNAMIC ({mode})"),
            Err(_) => "PREEMPT_DYNAMIC".to_owned(),
        });
    }
    if in_version("PREEMPT") || config.is_some_and(|c| c.preempt) {
        return Some("PREEMPT".to_owned());
    }
    match config {
        Some(c) if c.preempt_voluntary => Some("PREEMPT_VOLUNTARY".to_owned()),
        Some(c) if c.preempt_none => Some("PREEMPT_NONE".to_owned()),
        _ => None,
    }
}

/// The most CPUs a kernel can have (NR_CPUS is 8192 at most): the bound
/// of a CPU list when the tree does not say which CPUs are possible.
pub const NR_CPUS_MAX: usize = 8192;

/// A kernel CPU list read within the CPUs that can exist.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuList {
    /// The CPUs it names below the bound, each once, lowest first.
    pub cpus: Vec<usize>,
    /// What it names at or above the bound, as `(first, last)` ranges
    /// merged, lowest first: never walked through, only reported.
    pub beyond: Vec<(usize, usize)>,
}

/// Parses a kernel CPU list (`0-3,8`, `all`, `N` for the last CPU,
/// `0-7:2/4` groups, `""` for none), keeping the CPUs below
/// [`NR_CPUS_MAX`]. `None` when malformed.
pub fn parse_kernel_cpu_list(text: &str, last_cpu: usize) -> Option<Vec<usize>> {
    parse_cpu_list_within(text, last_cpu, NR_CPUS_MAX).map(|list| list.cpus)
}

/// Parses a kernel CPU list as [`parse_kernel_cpu_list`], keeping the
/// CPUs below `limit` and the parts at or above it in
/// [`CpuList::beyond`]. Time and memory are bounded by the text's length
/// and `limit` whatever the numbers (a list of a million `0-65535` is
/// read in one pass over a `limit`-bit set); `None` when malformed.
pub fn parse_cpu_list_within(text: &str, last_cpu: usize, limit: usize) -> Option<CpuList> {
    let text = text.trim();
    let mut set = vec![0_u64; limit.div_ceil(64)];
    let mut beyond = Vec::new();
    if text.is_empty() {
        return Some(CpuList::default());
    }
    let number = |s: &str| -> Option<usize> {
        if s == "N" {
            Some(last_cpu)
        } else {
            s.parse().ok()
        }
    };
    let items = if text == "all" {
        vec![(0, last_cpu, None)]
    } else {
        Vec::new()
    };
    let parsed = text
        .split(',')
        .filter(|_| text != "all")
        .map(|item| -> Option<ListItem> {
            let (range, group) = match item.split_once(':') {
                Some((range, group)) => {
                    let (used, size) = group.split_once('/')?;
                    let (used, size): (usize, usize) = (used.parse().ok()?, size.parse().ok()?);
                    if size == 0 {
                        return None;
                    }
                    (range, Some((used, size)))
                }
                None => (item, None),
            };
            let (start, end) = match range.split_once('-') {
                Some((start, end)) => (number(start)?, number(end)?),
                None => {
                    let cpu = number(range)?;
                    (cpu, cpu)
                }
            };
            (start <= end).then_some((start, end, group))
        });
    for item in items.into_iter().map(Some).chain(parsed) {
        let (start, end, group) = item?;
        if end >= limit {
            beyond.push((start.max(limit), end));
        }
        if start >= limit {
            continue;
        }
        let last = end.min(limit - 1);
        match group {
            // Whole groups: every CPU of the range.
            Some((used, size)) if used < size => {
                let mut first = start;
                while first <= last {
                    let group_last = (first + used.max(1) - 1).min(last);
                    if used > 0 {
                        set_range(&mut set, first, group_last);
                    }
                    first = match first.checked_add(size) {
                        Some(next) => next,
                        None => break,
                    };
                }
            }
            _ => set_range(&mut set, start, last),
        }
    }
    let cpus = (0..limit)
        .filter(|&cpu| set[cpu / 64] & (1 << (cpu % 64)) != 0)
        .collect();
    beyond.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (first, last) in beyond {
        match merged.last_mut() {
            Some(previous) if first <= previous.1.saturating_add(1) => {
                previous.1 = previous.1.max(last);
            }
            _ => merged.push((first, last)),
        }
    }
    Some(CpuList {
        cpus,
        beyond: merged,
    })
}

/// An item of a CPU list: its first and last CPU, and the group of
/// `first-last:used/size` (`used` CPUs of every `size`).
type ListItem = (usize, usize, Option<(usize, usize)>);

/// Sets the bits `first..=last` of `set`, a word at a time.
fn set_range(set: &mut [u64], first: usize, last: usize) {
    let (first_word, last_word) = (first / 64, last / 64);
    for (word, bits) in set
        .iter_mut()
        .enumerate()
        .take(last_word + 1)
        .skip(first_word)
    {
        let low = if word == first_word { first % 64 } else { 0 };
        let high = if word == last_word { last % 64 } else { 63 };
        *bits |= (u64::MAX >> (63 - high)) & (u64::MAX << low);
    }
}

/// `2-65535,70000` of [`CpuList::beyond`].
pub fn ranges_text(ranges: &[(usize, usize)]) -> String {
    ranges
        .iter()
        .map(|&(first, last)| {
            if first == last {
                first.to_string()
            } else {
                format!("{first}-{last}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Formats a CPU list the kernel's way (`2-3,8`).
pub fn cpu_list(cpus: &[usize]) -> String {
    format_cpu_list(cpus)
}

/// CPUs in a sentence: `CPU 1`, `CPUs 0-1,3`.
pub fn cpus_phrase(cpus: &[usize]) -> String {
    match cpus {
        [] => "no CPU".to_owned(),
        [one] => format!("CPU {one}"),
        _ => format!("CPUs {}", cpu_list(cpus)),
    }
}

/// Reads every fact for `request` from the tree under `root`.
pub fn gather(root: &Path, request: &Request) -> Result<Facts, AuditError> {
    let metadata = std::fs::metadata(root).map_err(|err| AuditError::Root {
        path: root.to_owned(),
        reason: io_reason(&err),
    })?;
    if !metadata.is_dir() {
        return Err(AuditError::Root {
            path: root.to_owned(),
            reason: "not a directory".to_owned(),
        });
    }
    let tree = Tree { root };
    let cpu_dir = "sys/devices/system/cpu";

    let present = tree.cpu_list(&format!("{cpu_dir}/present"));
    let possible = tree.cpu_list(&format!("{cpu_dir}/possible"));
    let online = tree.cpu_list(&format!("{cpu_dir}/online"));
    let self_status = tree.text("proc/self/status");
    let allowed = self_status.clone().and_then(|status| {
        let value = status_field(&status, "Cpus_allowed_list").unwrap_or("");
        parse_kernel_cpu_list(value, usize::MAX).ok_or_else(|| Unread {
            path: tree.path("proc/self/status"),
            reason: "no Cpus_allowed_list".to_owned(),
        })
    });
    let measured = match &request.cpus {
        Some(cpus) => {
            let mut cpus = cpus.clone();
            cpus.sort_unstable();
            cpus.dedup();
            let known = present.as_ref().or(online.as_ref());
            if let Ok(known) = known
                && let Some(&cpu) = cpus.iter().find(|cpu| !known.contains(cpu))
            {
                return Err(AuditError::CpuNotPresent {
                    cpu,
                    present: cpu_list(known),
                });
            }
            cpus
        }
        None => allowed
            .clone()
            .or_else(|_| online.clone())
            .unwrap_or_default(),
    };

    let release = tree.line("proc/sys/kernel/osrelease");
    let config = read_config(&tree, release.as_deref().ok());
    let siblings = online
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter_map(|&cpu| {
            let list = tree
                .cpu_list(&format!("{cpu_dir}/cpu{cpu}/topology/thread_siblings_list"))
                .ok()?;
            Some((cpu, list))
        })
        .collect::<BTreeMap<_, _>>();
    let smt_active = tree
        .number::<i64>(&format!("{cpu_dir}/smt/active"))
        .map(|active| active != 0)
        .or_else(|unread| {
            if siblings.is_empty() {
                Err(unread)
            } else {
                Ok(siblings.values().any(|list| list.len() > 1))
            }
        });
    let first_measured = measured.first().copied().unwrap_or(0);
    let boost = match tree.number::<i64>(&format!("{cpu_dir}/cpufreq/boost")) {
        Ok(value) => Ok(Boost {
            enabled: value != 0,
            path: tree.path(&format!("{cpu_dir}/cpufreq/boost")),
        }),
        Err(_) => tree
            .number::<i64>(&format!("{cpu_dir}/intel_pstate/no_turbo"))
            .map(|no_turbo| Boost {
                enabled: no_turbo == 0,
                path: tree.path(&format!("{cpu_dir}/intel_pstate/no_turbo")),
            }),
    };
    let clocksource_dir = "sys/devices/system/clocksource/clocksource0";
    let privileges = read_privileges(&tree, &self_status);
    let (steal, steal_total) = read_steal(&tree);

    Ok(Facts {
        version: tree.line("proc/sys/kernel/version"),
        realtime_flag: tree.number::<i64>("sys/kernel/realtime").map(|v| v == 1),
        preempt_mode: tree.line("sys/kernel/debug/sched/preempt").map(|modes| {
            modes
                .split_whitespace()
                .find_map(|word| word.strip_prefix('(')?.strip_suffix(')'))
                .unwrap_or(&modes)
                .to_owned()
        }),
        config,
        release,
        cmdline: tree.line("proc/cmdline").map(|text| Cmdline { text }),
        isolated: tree.line(&format!("{cpu_dir}/isolated")),
        nohz_full: tree.line(&format!("{cpu_dir}/nohz_full")),
        smt_active,
        siblings,
        per_cpu: measured
            .iter()
            .map(|&cpu| read_cpu(&tree, cpu_dir, cpu))
            .collect(),
        scaling_driver: tree.line(&format!(
            "{cpu_dir}/cpu{first_measured}/cpufreq/scaling_driver"
        )),
        boost,
        idle_driver: tree.line(&format!("{cpu_dir}/cpuidle/current_driver")),
        clocksource: tree.line(&format!("{clocksource_dir}/current_clocksource")),
        clocksources_available: tree.line(&format!("{clocksource_dir}/available_clocksource")),
        cpuinfo: tree.text("proc/cpuinfo").map(|text| parse_cpuinfo(&text)),
        steal,
        steal_total,
        sched_rt_runtime_us: tree.number("proc/sys/kernel/sched_rt_runtime_us"),
        timer_migration: tree.number("proc/sys/kernel/timer_migration"),
        numa_balancing: tree.number("proc/sys/kernel/numa_balancing"),
        nmi_watchdog: tree.number("proc/sys/kernel/nmi_watchdog"),
        soft_watchdog: tree.number("proc/sys/kernel/soft_watchdog"),
        watchdog: tree.number("proc/sys/kernel/watchdog"),
        thp: tree
            .line("sys/kernel/mm/transparent_hugepage/enabled")
            .map(|modes| selected_word(&modes)),
        swap: read_swap(&tree),
        ksm_run: tree.number("sys/kernel/mm/ksm/run"),
        irqs: read_irqs(&tree),
        threads: read_threads(&tree),
        privileges,
        msr_device: tree.path("dev/cpu/0/msr").exists(),
        present,
        possible,
        online,
        allowed,
        measured,
    })
}

/// The files under one root.
struct Tree<'a> {
    root: &'a Path,
}

impl Tree<'_> {
    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn unread(&self, relative: &str, reason: &str) -> Unread {
        Unread {
            path: self.path(relative),
            reason: reason.to_owned(),
        }
    }

    fn text(&self, relative: &str) -> Fact<String> {
        let path = self.path(relative);
        read_small_file(&path).map_err(|err| Unread {
            reason: io_reason(&err),
            path,
        })
    }

    fn line(&self, relative: &str) -> Fact<String> {
        self.text(relative).map(|text| text.trim().to_owned())
    }

    fn number<T: std::str::FromStr>(&self, relative: &str) -> Fact<T> {
        let text = self.line(relative)?;
        text.parse()
            .map_err(|_| self.unread(relative, &format!("'{text}' is not a number")))
    }

    fn cpu_list(&self, relative: &str) -> Fact<Vec<usize>> {
        let text = self.line(relative)?;
        parse_kernel_cpu_list(&text, 0)
            .ok_or_else(|| self.unread(relative, &format!("'{text}' is not a CPU list")))
    }
}

/// The most the audit reads of one file (decompressed, for
/// `proc/config.gz`): far above what it reads on a real machine (a kernel
/// config is a few hundred KiB, `/proc/interrupts` of a large machine a
/// few MiB), so that a copied tree with an endless file cannot make it
/// read forever.
const MAX_FILE_BYTES: usize = 16 << 20;

/// Opens `path` for reading without waiting on a FIFO, and only if it is
/// a regular file (what /proc and /sys files are): a device or a FIFO in
/// a copied tree (`--root`) would block or never end.
fn open_regular(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    Ok(file)
}

/// Reads a file of /proc or /sys: open, read until end, close. Their
/// sizes say 0, so `fs::read_to_string`'s size query and small first read
/// are two system calls per file wasted (the audit reads hundreds). Bytes
/// that are not UTF-8 (a thread may name itself anything) are replaced.
/// Refused: what is not a regular file, and more than [`MAX_FILE_BYTES`].
pub fn read_small_file(path: &Path) -> io::Result<String> {
    let mut file = open_regular(path)?;
    let mut bytes = vec![0; 4096];
    let mut length = 0;
    loop {
        if length == bytes.len() {
            if length >= MAX_FILE_BYTES {
                return Err(too_large());
            }
            bytes.resize(length * 2, 0);
        }
        match file.read(&mut bytes[length..]) {
            Ok(0) => break,
            Ok(read) => length += read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    bytes.truncate(length);
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
    })
}

fn too_large() -> io::Error {
    io::Error::other(format!("larger than {} MiB", MAX_FILE_BYTES >> 20))
}

/// `not found`, `permission denied`: the error without `(os error N)`.
fn io_reason(err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::NotFound => "not found".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => {
            let text = err.to_string();
            match text.find(" (os error") {
                Some(end) => text[..end].to_owned(),
                None => text,
            }
        }
    }
}

/// The value of `Name:\tvalue` in a `status` file.
fn status_field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key == name).then_some(value.trim())
    })
}

/// `madvise` of `always [madvise] never`.
fn selected_word(modes: &str) -> String {
    modes
        .split_whitespace()
        .find_map(|word| word.strip_prefix('[')?.strip_suffix(']'))
        .unwrap_or(modes)
        .to_owned()
}

fn read_config(tree: &Tree<'_>, release: Option<&str>) -> Fact<KernelConfig> {
    let gz = tree.path("proc/config.gz");
    let (path, text) = match open_regular(&gz) {
        Ok(file) => {
            let mut text = String::new();
            let limit = u64::try_from(MAX_FILE_BYTES).unwrap_or(u64::MAX);
            let read = flate2::read::GzDecoder::new(file)
                .take(limit + 1)
                .read_to_string(&mut text)
                .and_then(|n| {
                    if n as u64 > limit {
                        Err(too_large())
                    } else {
                        Ok(n)
                    }
                });
            read.map_err(|err| Unread {
                path: gz.clone(),
                reason: io_reason(&err),
            })?;
            (gz, text)
        }
        Err(_) => {
            let Some(release) = release else {
                return Err(tree.unread(
                    "proc/config.gz",
                    "not found, and no release to find boot/config-<release>",
                ));
            };
            let relative = format!("boot/config-{release}");
            let text = tree.text(&relative).map_err(|unread| Unread {
                reason: format!("{}, nor {}", unread.reason, gz.display()),
                ..unread
            })?;
            (tree.path(&relative), text)
        }
    };
    let mut config = KernelConfig {
        path,
        ..KernelConfig::default()
    };
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let yes = value == "y";
        match key {
            "CONFIG_HZ" => config.hz = value.parse().ok(),
            "CONFIG_NO_HZ_FULL" => config.nohz_full = yes,
            "CONFIG_PREEMPT_RT" => config.preempt_rt = yes,
            "CONFIG_PREEMPT_DYNAMIC" => config.preempt_dynamic = yes,
            "CONFIG_PREEMPT" => config.preempt = yes,
            "CONFIG_PREEMPT_VOLUNTARY" => config.preempt_voluntary = yes,
            "CONFIG_PREEMPT_NONE" => config.preempt_none = yes,
            _ => {}
        }
    }
    Ok(config)
}

fn read_cpu(tree: &Tree<'_>, cpu_dir: &str, cpu: usize) -> CpuFacts {
    let dir = format!("{cpu_dir}/cpu{cpu}");
    let throttle_count = tree
        .number::<u64>(&format!("{dir}/thermal_throttle/core_throttle_count"))
        .map(|core| {
            core + tree
                .number::<u64>(&format!("{dir}/thermal_throttle/package_throttle_count"))
                .unwrap_or(0)
        });
    CpuFacts {
        cpu,
        governor: tree.line(&format!("{dir}/cpufreq/scaling_governor")),
        energy_preference: tree.line(&format!("{dir}/cpufreq/energy_performance_preference")),
        throttle_count,
        idle_states: read_idle_states(tree, &format!("{dir}/cpuidle")),
    }
}

fn read_idle_states(tree: &Tree<'_>, dir: &str) -> Fact<Vec<IdleState>> {
    let entries =
        std::fs::read_dir(tree.path(dir)).map_err(|err| tree.unread(dir, &io_reason(&err)))?;
    let mut states: Vec<IdleState> = entries
        .filter_map(|entry| {
            let name = entry.ok()?.file_name();
            let index: usize = name.to_str()?.strip_prefix("state")?.parse().ok()?;
            let state = format!("{dir}/state{index}");
            Some(IdleState {
                index,
                name: tree.line(&format!("{state}/name")).ok()?,
                exit_latency_us: tree.number(&format!("{state}/latency")).ok()?,
                disabled: tree.number::<i64>(&format!("{state}/disable")).ok()? != 0,
            })
        })
        .collect();
    states.sort_by_key(|state| state.index);
    Ok(states)
}

fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    // The first CPU's block is enough: the others repeat it.
    for line in text.lines() {
        if line.trim().is_empty() && (info.model.is_some() || info.has_flags) {
            break;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "vendor_id" => info.vendor = Some(value.to_owned()),
            "model name" | "Model" | "cpu model" if info.model.is_none() => {
                info.model = Some(value.to_owned());
            }
            "flags" => {
                info.has_flags = true;
                for flag in value.split_whitespace() {
                    match flag {
                        "constant_tsc" => info.constant_tsc = true,
                        "nonstop_tsc" => info.nonstop_tsc = true,
                        "hypervisor" => info.hypervisor = true,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    info
}

/// Steal time per CPU and in total, from `proc/stat` (the 8th number).
fn read_steal(tree: &Tree<'_>) -> (Fact<BTreeMap<usize, u64>>, Fact<u64>) {
    let text = match tree.text("proc/stat") {
        Ok(text) => text,
        Err(unread) => return (Err(unread.clone()), Err(unread)),
    };
    let mut per_cpu = BTreeMap::new();
    let mut total = Err(tree.unread("proc/stat", "no cpu line"));
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let Some(name) = fields.next().and_then(|name| name.strip_prefix("cpu")) else {
            continue;
        };
        let Some(steal) = fields.nth(7).and_then(|steal| steal.parse::<u64>().ok()) else {
            continue;
        };
        if name.is_empty() {
            total = Ok(steal);
        } else if let Ok(cpu) = name.parse() {
            per_cpu.insert(cpu, steal);
        }
    }
    (Ok(per_cpu), total)
}

fn read_swap(tree: &Tree<'_>) -> Fact<Swap> {
    match tree.text("proc/swaps") {
        Ok(text) => {
            // Filename Type Size Used Priority, sizes in KiB.
            let mut swap = Swap {
                total_kib: 0,
                used_kib: 0,
            };
            for line in text.lines().skip(1) {
                let fields: Vec<&str> = line.split_whitespace().collect();
                if let [_, _, size, used, ..] = fields[..] {
                    swap.total_kib += size.parse::<u64>().unwrap_or(0);
                    swap.used_kib += used.parse::<u64>().unwrap_or(0);
                }
            }
            Ok(swap)
        }
        Err(unread) => {
            let meminfo = tree.text("proc/meminfo").map_err(|_| unread.clone())?;
            let kib = |name: &str| {
                status_field(&meminfo, name)
                    .and_then(|value| value.trim_end_matches("kB").trim().parse::<u64>().ok())
            };
            match (kib("SwapTotal"), kib("SwapFree")) {
                (Some(total), Some(free)) => Ok(Swap {
                    total_kib: total,
                    used_kib: total.saturating_sub(free),
                }),
                _ => Err(unread),
            }
        }
    }
}

fn read_irqs(tree: &Tree<'_>) -> Fact<Vec<Irq>> {
    let text = tree.text("proc/interrupts")?;
    let mut lines = text.lines();
    let columns = lines
        .next()
        .map(|header| header.split_whitespace().count())
        .unwrap_or(0);
    let mut irqs = Vec::new();
    for line in lines {
        let Some((number, rest)) = line.trim_start().split_once(':') else {
            continue;
        };
        // Per-CPU interrupts (LOC, RES, ...) have names, not numbers, and
        // no affinity to change.
        let Ok(number) = number.parse::<u32>() else {
            continue;
        };
        // counts for each CPU column, the chip, the hardware IRQ, the names.
        let name = rest
            .split_whitespace()
            .skip(columns + 2)
            .collect::<Vec<_>>()
            .join(" ");
        let effective = format!("proc/irq/{number}/effective_affinity_list");
        let cpus = tree
            .cpu_list(&effective)
            .or_else(|_| tree.cpu_list(&format!("proc/irq/{number}/smp_affinity_list")));
        irqs.push(Irq { number, name, cpus });
    }
    Ok(irqs)
}

/// Kernel thread families that run per CPU and compete with a measuring
/// thread on PREEMPT_RT, with the CPU number after the `/`.
const PER_CPU_KERNEL_THREADS: &[&str] = &["ktimers/", "ksoftirqd/", "rcuc/", "ktimersoftd/"];

/// CPU stopper threads: shown as FIFO 99 but only run when the kernel
/// stops a CPU on purpose (migration, hotplug).
const STOPPER_THREADS: &[&str] = &["migration/", "idle_inject/"];

/// `PF_KTHREAD` in `stat` field 9.
const PF_KTHREAD: u64 = 0x0020_0000;

fn read_threads(tree: &Tree<'_>) -> Fact<Threads> {
    let proc_dir = tree.path("proc");
    let entries =
        std::fs::read_dir(&proc_dir).map_err(|err| tree.unread("proc", &io_reason(&err)))?;
    let self_pid: Option<u32> = std::fs::read_link(tree.path("proc/self"))
        .ok()
        .and_then(|target| target.to_str()?.parse().ok());
    let mut threads = Threads::default();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if Some(pid) == self_pid {
            continue;
        }
        // A process may end while we read: what is gone is skipped.
        let Ok(tasks) = std::fs::read_dir(entry.path().join("task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Some(tid) = task
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let task_dir = format!("proc/{pid}/task/{tid}");
            let Ok(stat) = tree.text(&format!("{task_dir}/stat")) else {
                continue;
            };
            let Some(stat) = parse_task_stat(&stat) else {
                continue;
            };
            if tid == pid && stat.comm == "irqbalance" {
                threads.irqbalance = Some(pid);
            }
            let kernel = stat.flags & PF_KTHREAD != 0;
            let per_cpu = PER_CPU_KERNEL_THREADS
                .iter()
                .find_map(|family| stat.comm.strip_prefix(family)?.parse::<usize>().ok());
            let wanted = if kernel {
                per_cpu.is_some()
                    || stat.comm.starts_with("irq/")
                    || (stat.policy.is_realtime()
                        && !STOPPER_THREADS.iter().any(|s| stat.comm.starts_with(s)))
            } else {
                stat.policy.is_realtime()
            };
            if !wanted {
                continue;
            }
            let allowed = match per_cpu {
                Some(cpu) if kernel => Ok(vec![cpu]),
                _ => tree.text(&format!("{task_dir}/status")).and_then(|status| {
                    status_field(&status, "Cpus_allowed_list")
                        .and_then(|list| parse_kernel_cpu_list(list, 0))
                        .ok_or_else(|| {
                            tree.unread(&format!("{task_dir}/status"), "no Cpus_allowed_list")
                        })
                }),
            };
            let info = ThreadInfo {
                pid,
                tid,
                comm: stat.comm,
                policy: stat.policy,
                rt_priority: stat.rt_priority,
                allowed,
            };
            if kernel {
                threads.kernel.push(info);
            } else {
                threads.realtime_user.push(info);
            }
        }
    }
    let by_id = |t: &ThreadInfo| (t.pid, t.tid);
    threads.kernel.sort_by_key(by_id);
    threads.realtime_user.sort_by_key(by_id);
    Ok(threads)
}

/// The fields of a task's `stat` line (`/proc/<pid>/task/<tid>/stat`)
/// that rtlat reads: the audit's scan, and `--explain` naming a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskStat {
    /// Its name.
    pub comm: String,
    /// Its `PF_*` flags.
    pub flags: u64,
    /// Its nice value.
    pub nice: i64,
    /// Its real-time priority (0 for the other policies).
    pub rt_priority: u32,
    /// Its policy's number (`SCHED_OTHER` 0, `SCHED_FIFO` 1, `SCHED_RR`
    /// 2, `SCHED_BATCH` 3, `SCHED_IDLE` 5, `SCHED_DEADLINE` 6).
    pub policy_number: u32,
    /// Its policy, as the checks judge it.
    pub policy: Policy,
}

/// Reads a task's `stat` line; `None` when it is not one.
pub fn parse_task_stat(stat: &str) -> Option<TaskStat> {
    // `pid (comm) state ...`: comm may hold spaces and parentheses, so the
    // fields start after the last `)`; field 3 (state) is index 0.
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_owned();
    let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    let field = |number: usize| fields.get(number - 3);
    let policy_number = field(41)?.parse().ok()?;
    Some(TaskStat {
        comm,
        flags: field(9)?.parse().ok()?,
        nice: field(19)?.parse().ok()?,
        rt_priority: field(40)?.parse().ok()?,
        policy_number,
        policy: Policy::from_stat(policy_number),
    })
}

/// CAP_SYS_NICE's bit in `CapEff`.
const CAP_SYS_NICE: u32 = 23;
/// CAP_IPC_LOCK's bit in `CapEff`.
const CAP_IPC_LOCK: u32 = 14;

fn read_privileges(tree: &Tree<'_>, self_status: &Fact<String>) -> Privileges {
    let cap_eff = self_status.clone().and_then(|status| {
        status_field(&status, "CapEff")
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .ok_or_else(|| tree.unread("proc/self/status", "no CapEff"))
    });
    let capability = |bit: u32| cap_eff.clone().map(|bits| bits & (1 << bit) != 0);
    let limits = tree.text("proc/self/limits");
    let limit = |name: &str| -> Fact<Limit> {
        let text = limits.as_ref().map_err(Clone::clone)?;
        let soft = text
            .lines()
            .find_map(|line| line.strip_prefix(name)?.split_whitespace().next())
            .ok_or_else(|| tree.unread("proc/self/limits", &format!("no '{name}' line")))?;
        match soft {
            "unlimited" => Ok(Limit::Unlimited),
            value => value
                .parse()
                .map(Limit::Value)
                .map_err(|_| tree.unread("proc/self/limits", &format!("'{value}' is not a limit"))),
        }
    };
    Privileges {
        rtprio: limit("Max realtime priority"),
        memlock: limit("Max locked memory"),
        cap_sys_nice: capability(CAP_SYS_NICE),
        cap_ipc_lock: capability(CAP_IPC_LOCK),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_cpu_lists() {
        assert_eq!(parse_kernel_cpu_list("", 3), Some(vec![]));
        assert_eq!(parse_kernel_cpu_list("0-2,5\n", 7), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse_kernel_cpu_list("all", 3), Some(vec![0, 1, 2, 3]));
        assert_eq!(parse_kernel_cpu_list("2-N", 4), Some(vec![2, 3, 4]));
        assert_eq!(parse_kernel_cpu_list("0-7:1/4", 7), Some(vec![0, 4]));
        assert_eq!(parse_kernel_cpu_list("3-1", 7), None);
        assert_eq!(parse_kernel_cpu_list("x", 7), None);
        // A huge range in a kernel parameter is refused, not walked.
        // Numbers beyond the bound are kept as ranges, never walked.
        let within = |text: &str| parse_cpu_list_within(text, 1, 2).unwrap();
        // The largest number is usize::MAX (2^32 - 1 on 32-bit targets).
        let largest = usize::MAX.to_string();
        let too_large = (u128::try_from(usize::MAX).unwrap() + 1).to_string();
        assert_eq!(
            within(&format!("0-{largest}")),
            CpuList {
                cpus: vec![0, 1],
                beyond: vec![(2, usize::MAX)]
            }
        );
        assert_eq!(within("65536").beyond, vec![(65536, 65536)]);
        assert_eq!(within("65536").cpus, Vec::<usize>::new());
        assert_eq!(within("1-4,3-9,12,0-7:1/4").beyond, vec![(2, 9), (12, 12)]);
        assert_eq!(within("all").cpus, vec![0, 1]);
        assert_eq!(parse_cpu_list_within(&too_large, 1, 2), None);
        // Many ranges are one pass over a small set.
        let huge = vec!["0-65535"; 1 << 17].join(",");
        let list = parse_cpu_list_within(&huge, 1, 2).unwrap();
        assert_eq!((list.cpus, list.beyond), (vec![0, 1], vec![(2, 65535)]));
        assert_eq!(parse_kernel_cpu_list(&huge, 1).unwrap().len(), NR_CPUS_MAX);
        assert_eq!(
            parse_kernel_cpu_list("0-9:2/4,64-200:3/64", 99),
            Some(vec![
                0, 1, 4, 5, 8, 9, 64, 65, 66, 128, 129, 130, 192, 193, 194
            ])
        );
    }

    #[test]
    fn cmdline_params_take_the_last_value_and_stop_at_double_dash() {
        let cmdline = Cmdline {
            text: "ro isolcpus=1 quiet isolcpus=2-3 nosmt -- isolcpus=7".to_owned(),
        };
        assert_eq!(cmdline.param("isolcpus"), Some("2-3"));
        assert_eq!(cmdline.param("nosmt"), Some(""));
        assert_eq!(cmdline.param("ro"), Some(""));
        assert_eq!(cmdline.param("nohz_full"), None);
    }

    #[test]
    fn stat_fields_after_a_comm_with_spaces_and_parentheses() {
        let mut fields = vec!["0"; 50];
        fields[9 - 3] = "2097152";
        fields[40 - 3] = "50";
        fields[41 - 3] = "1";
        let line = format!("42 (a (b) c) {}", fields.join(" "));
        let stat = parse_task_stat(&line).expect("parsed");
        assert_eq!(stat.comm, "a (b) c");
        assert_eq!(stat.flags, PF_KTHREAD);
        assert_eq!(stat.rt_priority, 50);
        assert_eq!(stat.policy, Policy::Fifo);
    }

    #[test]
    fn selected_words() {
        assert_eq!(selected_word("always [madvise] never"), "madvise");
        assert_eq!(selected_word("plain"), "plain");
    }
}
