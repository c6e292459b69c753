//! The verdict on a run: whether its numbers can be trusted, and why not.
//!
//! Every result carries one (the JSON's `"verdict"`); `--verdict` prints it
//! after the summary. It is made from what the run itself saw, never from
//! the latencies' values:
//! - the set-up: the audit's `warn`/`bad` findings that concern the
//!   measured CPUs (or the whole machine);
//! - sample sufficiency: a percentile with fewer than
//!   [`SAMPLES_BEYOND_NEEDED`] samples beyond it is not supported by the
//!   data;
//! - each measuring thread: no sample, an error, a policy that is not
//!   real-time, missed periods, involuntary context switches, migrations,
//!   page faults, SMIs;
//! - the system over the run ([`SystemDisturbances`]): steal time of the
//!   measured CPUs, thermal throttling, RT throttling in the kernel log.
//!
//! Each reason has a level, and the verdict is the worst of them:
//! [`Level::Trustworthy`] without any reason, [`Level::Untrustworthy`] for
//! what makes the numbers meaningless (a thread without a sample or with
//! an error, missed periods above [`MISSED_PERIODS_UNTRUSTWORTHY`] of the
//! periods, steal above [`STEAL_UNTRUSTWORTHY`] of the measured CPUs' time,
//! RT throttling during the run), [`Level::Caveats`] for everything else
//! (the numbers are right, but they may not be what the same run on a
//! well set-up machine would show).

use std::io::{self, Write};
use std::path::Path;

use rtlat_args::escape::Escaped;
use rtlat_audit::counters::{KernelLogFinding, RunWatch, SystemDisturbances};
use rtlat_audit::{Audit, Finding, Status};
use rtlat_core::distribution::STANDARD_PERCENTILES;
use rtlat_core::report::{RunReport, ThreadReport, ThreadStep};
use serde::Serialize;

use super::explain::micros;

pub mod injected;

/// Samples that must lie beyond a percentile for the data to support it.
pub const SAMPLES_BEYOND_NEEDED: u64 = 10;

/// Missed periods, as a share of all periods of a thread, above which the
/// run is untrustworthy (1 %): its samples are then not the periods'.
pub const MISSED_PERIODS_UNTRUSTWORTHY: f64 = 0.01;

/// Steal time, as a share of the measured CPUs' time over the run, above
/// which the run is untrustworthy (10 %): the hypervisor's scheduling, not
/// the kernel's, made its latencies.
pub const STEAL_UNTRUSTWORTHY: f64 = 0.10;

/// How far a run's numbers can be trusted, from best to worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Nothing was seen that puts the numbers in doubt.
    Trustworthy,
    /// The numbers are right, with the reasons given to weigh them.
    Caveats,
    /// The numbers say little or nothing about the machine.
    Untrustworthy,
}

impl Level {
    /// Every level, best first.
    pub const ALL: [Level; 3] = [Level::Trustworthy, Level::Caveats, Level::Untrustworthy];

    /// `trustworthy`, `caveats`, `untrustworthy`.
    pub const fn name(self) -> &'static str {
        match self {
            Level::Trustworthy => "trustworthy",
            Level::Caveats => "caveats",
            Level::Untrustworthy => "untrustworthy",
        }
    }

    /// The level of a name, `None` for anything else.
    pub fn from_name(name: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// One reason for a level below trustworthy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reason {
    /// Stable identifier: `setup.<audit check id>`, `samples.insufficient`,
    /// `thread.involuntary_switches`, `system.steal`, ...
    pub id: String,
    /// What was seen, in a sentence.
    pub text: String,
    /// The level this reason alone gives the run.
    #[serde(skip)]
    pub level: Level,
}

/// The verdict: the `"verdict"` object of the JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// The worst level of the reasons; trustworthy without any.
    pub level: Level,
    /// Why, in the order: set-up, samples, threads, system.
    pub reasons: Vec<Reason>,
    /// How long the run must be, at its interval, for every percentile
    /// quoted to have [`SAMPLES_BEYOND_NEEDED`] samples beyond it; `None`
    /// when it was long enough (or quoted no percentile).
    pub suggested_duration_s: Option<f64>,
    /// `--explain`: the worst explained sample and its dominant cause;
    /// it gives no level of its own (a cause is not a doubt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_sample: Option<WorstSample>,
}

/// The worst sample `--explain` explained: its largest component and
/// that component's largest cause.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorstSample {
    /// The thread that took it.
    pub thread: usize,
    /// Its latency.
    pub latency_ns: i64,
    /// The largest component (`thread_latency`, `irq_latency`, ...).
    pub component: &'static str,
    /// That component's time.
    pub component_ns: i64,
    /// That component's largest cause, if it has one.
    pub cause: Option<WorstCause>,
}

/// A cause, as `--explain` names it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorstCause {
    /// `task`, `irq`, `softirq`, `idle`, ...
    pub kind: &'static str,
    /// What it was (`spin[4242]`, `24 virtio0`, ...).
    pub name: String,
    /// Its time within the component.
    pub ns: i64,
}

/// What a verdict is made from.
#[derive(Clone, Copy, Debug)]
pub struct Evidence<'a> {
    /// The run.
    pub report: &'a RunReport,
    /// The audit made before the first sample, if one was made.
    pub audit: Option<&'a Audit>,
    /// The system-wide counters over the run; `None` where they do not
    /// apply (a synthetic run measures no CPU).
    pub system: Option<&'a SystemDisturbances>,
}

impl Verdict {
    /// Judges a run.
    pub fn of(evidence: Evidence<'_>) -> Verdict {
        let report = evidence.report;
        let mut reasons = Vec::new();
        if let Some(audit) = evidence.audit {
            setup_reasons(&audit.checks, &measured_cpus(report), &mut reasons);
        }
        let sufficiency = Sufficiency::of(report);
        reasons.extend(sufficiency.reason());
        thread_reasons(&report.threads, &mut reasons);
        if let Some(system) = evidence.system {
            system_reasons(system, &mut reasons);
        }
        Verdict {
            level: reasons
                .iter()
                .map(|r| r.level)
                .max()
                .unwrap_or(Level::Trustworthy),
            reasons,
            suggested_duration_s: sufficiency.suggested_duration_s(),
            worst_sample: None,
        }
    }

    /// The `--verdict` lines: each thread's missed periods, the level, one
    /// line per reason and the suggested duration (`thread` names the
    /// threads: `Thread`, `Pair`).
    pub fn write_text(
        &self,
        w: &mut impl Write,
        report: &RunReport,
        thread: &str,
    ) -> io::Result<()> {
        for t in &report.threads {
            writeln!(
                w,
                "# {thread} {}: missed periods: {}",
                t.index, t.precise.overruns
            )?;
        }
        writeln!(w, "# Verdict: {}", self.level.name())?;
        for reason in &self.reasons {
            // A reason quotes the audit's facts (task names, the kernel
            // command line): escaped, one reason one line.
            writeln!(w, "#   {}: {}", reason.id, Escaped(&reason.text))?;
        }
        if let Some(seconds) = self.suggested_duration_s {
            writeln!(
                w,
                "# Suggested duration: {} s, for {SAMPLES_BEYOND_NEEDED} samples beyond the highest percentile quoted",
                seconds_text(seconds)
            )?;
        }
        if let Some(worst) = &self.worst_sample {
            let cause = worst.cause.as_ref().map_or(String::new(), |c| {
                let name = Escaped(&c.name);
                format!(", mostly {} {name} ({} us)", c.kind, micros(c.ns))
            });
            writeln!(
                w,
                "# Worst sample: T:{} {} us: {} {} us{cause}",
                worst.thread,
                micros(worst.latency_ns),
                worst.component,
                micros(worst.component_ns)
            )?;
        }
        Ok(())
    }
}

/// The CPUs the run measured: those its threads were pinned to; `None`
/// when a thread was not pinned (it may have run anywhere).
pub fn measured_cpus(report: &RunReport) -> Option<Vec<usize>> {
    cpu_set(report.threads.iter().map(|t| t.cpu))
}

/// The CPUs of threads pinned to `cpus` (one entry per thread), sorted
/// and each once; `None` when a thread is not pinned.
pub fn cpu_set(cpus: impl IntoIterator<Item = Option<usize>>) -> Option<Vec<usize>> {
    let mut cpus = cpus.into_iter().collect::<Option<Vec<usize>>>()?;
    cpus.sort_unstable();
    cpus.dedup();
    Some(cpus)
}

/// The system-wide counters of a real run, read before its first sample
/// and after its last; nothing for a synthetic run (it measures no CPU).
#[derive(Debug)]
pub struct SystemWatch(Option<RunWatch>);

impl SystemWatch {
    /// Starts watching the CPUs of threads pinned to `cpus` (all CPUs if
    /// one is not pinned) when the run is `real`.
    pub fn start(real: bool, cpus: impl IntoIterator<Item = Option<usize>>) -> SystemWatch {
        SystemWatch(real.then(|| RunWatch::start(Path::new("/"), cpu_set(cpus))))
    }

    /// What the counters saw since the start.
    pub fn finish(self) -> Option<SystemDisturbances> {
        self.0.map(RunWatch::finish)
    }
}

/// The verdict on a finished run: its report, the audit in its `meta` and
/// what `system` saw.
pub fn judge(
    report: &RunReport,
    meta: &super::RunMeta,
    system: Option<&SystemDisturbances>,
) -> Verdict {
    Verdict::of(Evidence {
        report,
        audit: meta.audit.as_ref(),
        system,
    })
}

/// The findings at `warn` or `bad` that concern the whole machine or one
/// of `cpus` (`None`: any CPU).
fn setup_reasons(findings: &[Finding], cpus: &Option<Vec<usize>>, reasons: &mut Vec<Reason>) {
    let concerns_run = |finding_cpus: &[usize]| match cpus {
        _ if finding_cpus.is_empty() => true,
        None => true,
        Some(cpus) => finding_cpus.iter().any(|c| cpus.contains(c)),
    };
    for finding in findings {
        if matches!(finding.status, Status::Warn | Status::Bad) && concerns_run(&finding.cpus) {
            let text = match &finding.why {
                Some(why) => format!("{} ({}): {why}", finding.fact, finding.status.name()),
                None => format!("{} ({})", finding.fact, finding.status.name()),
            };
            reasons.push(Reason {
                id: format!("setup.{}", finding.id),
                text,
                level: Level::Caveats,
            });
        }
    }
}

/// The samples a percentile needs for [`SAMPLES_BEYOND_NEEDED`] of them to
/// lie beyond it: 10 / (1 − p), rounded up (p99.9: 10000).
pub fn samples_needed(fraction: f64) -> u64 {
    whole(SAMPLES_BEYOND_NEEDED as f64 / (1.0 - fraction), f64::ceil)
}

/// The samples of `n` that lie beyond percentile `fraction`: n × (1 − p),
/// rounded down (p99.99 of 20000: 2).
pub fn samples_beyond(n: u64, fraction: f64) -> u64 {
    whole(n as f64 * (1.0 - fraction), f64::floor)
}

/// Whether `n` samples support the percentile `fraction`.
pub fn supported(n: u64, fraction: f64) -> bool {
    n >= samples_needed(fraction)
}

/// `x` as a whole number: the nearest one when `x` is one but for the
/// rounding of `1 − p` in binary (1 − 0.9 is 0.0999..98), else `round(x)`.
fn whole(x: f64, round: fn(f64) -> f64) -> u64 {
    let nearest = x.round();
    if (x - nearest).abs() <= 1e-9 * nearest.max(1.0) {
        nearest as u64
    } else {
        round(x) as u64
    }
}

/// Each thread's standard percentiles that its samples do not support.
struct Sufficiency<'a> {
    /// Threads with a distribution and an unsupported percentile, with
    /// their labels and fractions.
    short: Vec<(&'a ThreadReport, Vec<(&'static str, f64)>)>,
}

impl<'a> Sufficiency<'a> {
    fn of(report: &'a RunReport) -> Sufficiency<'a> {
        let short = report
            .threads
            .iter()
            .filter_map(|t| {
                let missing = unsupported(t.distribution.as_ref()?.count());
                (!missing.is_empty()).then_some((t, missing))
            })
            .collect();
        Sufficiency { short }
    }

    fn reason(&self) -> Option<Reason> {
        let (_, highest) = *STANDARD_PERCENTILES.last()?;
        let threads: Vec<String> = self
            .short
            .iter()
            .map(|(t, missing)| {
                let labels: Vec<&str> = missing.iter().map(|(l, _)| *l).collect();
                format!(
                    "thread {} ({} samples): {}",
                    t.index,
                    t.distribution.as_ref().map_or(0, |d| d.count()),
                    labels.join(", ")
                )
            })
            .collect();
        (!threads.is_empty()).then(|| Reason {
            id: "samples.insufficient".into(),
            text: format!(
                "percentiles with fewer than {SAMPLES_BEYOND_NEEDED} samples beyond them are not \
                 supported by the data: {}; p{} needs {} samples",
                threads.join("; "),
                percent_text(highest),
                samples_needed(highest)
            ),
            level: Level::Caveats,
        })
    }

    /// The longest time, over the short threads, that their interval
    /// takes to give the highest standard percentile its samples.
    fn suggested_duration_s(&self) -> Option<f64> {
        let (_, highest) = *STANDARD_PERCENTILES.last()?;
        self.short
            .iter()
            .map(|(t, _)| samples_needed(highest) as f64 * t.interval.as_nanos() as f64 / 1e9)
            .reduce(f64::max)
            .map(|s| (s * 1000.0).ceil() / 1000.0)
    }
}

/// The standard percentiles `n` samples do not support, lowest first.
pub fn unsupported(n: u64) -> Vec<(&'static str, f64)> {
    STANDARD_PERCENTILES
        .iter()
        .copied()
        .filter(|&(_, fraction)| !supported(n, fraction))
        .collect()
}

/// `99.999` for 0.99999.
fn percent_text(fraction: f64) -> String {
    let text = format!("{:.6}", fraction * 100.0);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Seconds with at most three decimals: `1000`, `0.5`.
fn seconds_text(seconds: f64) -> String {
    let text = format!("{seconds:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Reasons that concern threads, one per kind naming every thread
/// concerned: `f` gives a thread's count (or `None`: not concerned).
fn per_thread(
    threads: &[ThreadReport],
    id: &str,
    what: &str,
    level: impl Fn(&ThreadReport) -> Level,
    f: impl Fn(&ThreadReport) -> Option<String>,
) -> Option<Reason> {
    let concerned: Vec<(&ThreadReport, String)> = threads
        .iter()
        .filter_map(|t| f(t).map(|text| (t, text)))
        .collect();
    let worst = concerned.iter().map(|(t, _)| level(t)).max()?;
    let list: Vec<String> = concerned
        .iter()
        .map(|(t, text)| format!("thread {}: {text}", t.index))
        .collect();
    Some(Reason {
        id: id.to_string(),
        text: format!("{what}: {}", list.join(", ")),
        level: worst,
    })
}

fn thread_reasons(threads: &[ThreadReport], reasons: &mut Vec<Reason>) {
    let caveats = |_: &ThreadReport| Level::Caveats;
    let untrustworthy = |_: &ThreadReport| Level::Untrustworthy;
    let nonzero = |n: u64| (n > 0).then(|| n.to_string());
    let disturbance = |get: fn(&rtlat_core::report::Disturbances) -> Option<u64>| {
        move |t: &ThreadReport| t.disturbances.as_ref().and_then(get).and_then(nonzero)
    };
    let candidates = [
        per_thread(
            threads,
            "thread.error",
            "measuring threads that failed",
            untrustworthy,
            |t| {
                t.error
                    .map(|e| format!("{} failed (errno {})", step_name(e.step), e.errno))
            },
        ),
        per_thread(
            threads,
            "thread.no_samples",
            "measuring threads without a sample",
            untrustworthy,
            |t| (t.compat.cycles == 0).then(|| "0 samples".to_string()),
        ),
        per_thread(
            threads,
            "thread.missed_periods",
            &format!(
                "missed periods (above {}% of a thread's periods the run is untrustworthy)",
                MISSED_PERIODS_UNTRUSTWORTHY * 100.0
            ),
            |t| {
                if missed_share(t) > MISSED_PERIODS_UNTRUSTWORTHY {
                    Level::Untrustworthy
                } else {
                    Level::Caveats
                }
            },
            |t| {
                (t.precise.overruns > 0).then(|| {
                    format!(
                        "{} of {} periods",
                        t.precise.overruns,
                        t.compat.cycles + t.precise.overruns
                    )
                })
            },
        ),
        per_thread(
            threads,
            "thread.not_realtime",
            "measuring threads not under a real-time policy (their latencies are those of \
             ordinary scheduling)",
            caveats,
            |t| (!t.policy.is_realtime()).then(|| t.policy.name().to_string()),
        ),
        per_thread(
            threads,
            "thread.involuntary_switches",
            "involuntary context switches while measuring (something preempted the thread)",
            caveats,
            disturbance(|d| Some(d.involuntary_switches)),
        ),
        per_thread(
            threads,
            "thread.migrations",
            "moves to another CPU while measuring",
            caveats,
            disturbance(|d| d.migrations),
        ),
        per_thread(
            threads,
            "thread.major_faults",
            "major page faults while measuring (a wait for the disk)",
            caveats,
            disturbance(|d| Some(d.major_faults)),
        ),
        per_thread(
            threads,
            "thread.minor_faults",
            "minor page faults while measuring (memory not locked or not pre-faulted: -m)",
            caveats,
            disturbance(|d| Some(d.minor_faults)),
        ),
        per_thread(
            threads,
            "thread.smis",
            "System Management Interrupts while measuring (the firmware stopped the CPU)",
            caveats,
            |t| t.smi_count.and_then(nonzero),
        ),
    ];
    reasons.extend(candidates.into_iter().flatten());
}

/// A failing step in a few words.
fn step_name(step: ThreadStep) -> &'static str {
    match step {
        ThreadStep::Affinity => "pinning to its CPU",
        ThreadStep::Scheduler => "setting its policy and priority",
        ThreadStep::Wait => "waiting for a period",
        ThreadStep::SmiCounter => "reading the SMI counter",
        ThreadStep::Timer => "arming its timer",
    }
}

/// A thread's missed periods as a share of its periods (samples and missed).
fn missed_share(t: &ThreadReport) -> f64 {
    let periods = t.compat.cycles + t.precise.overruns;
    if periods == 0 {
        0.0
    } else {
        t.precise.overruns as f64 / periods as f64
    }
}

fn system_reasons(system: &SystemDisturbances, reasons: &mut Vec<Reason>) {
    let cpus = match &system.cpus {
        Some(cpus) => format!(
            "CPU {}",
            cpus.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
        None => "all CPUs (the threads were not pinned)".to_string(),
    };
    if let Some(ticks) = system.ticks
        && ticks.steal > 0
        && let Some(share) = ticks.steal_share()
    {
        reasons.push(Reason {
            id: "system.steal".into(),
            text: format!(
                "the hypervisor stole {:.2}% of the time of {cpus} during the run (above {}% the \
                 run is untrustworthy)",
                share * 100.0,
                STEAL_UNTRUSTWORTHY * 100.0
            ),
            level: if share > STEAL_UNTRUSTWORTHY {
                Level::Untrustworthy
            } else {
                Level::Caveats
            },
        });
    }
    if let Some(events) = system.thermal_throttle_events
        && events > 0
    {
        reasons.push(Reason {
            id: "system.thermal_throttling".into(),
            text: format!("{events} thermal-throttle events on {cpus} during the run"),
            level: Level::Caveats,
        });
    }
    match &system.kernel_log {
        KernelLogFinding::Read {
            rt_throttling: true,
            ..
        } => reasons.push(Reason {
            id: "system.rt_throttling".into(),
            text: format!(
                "the kernel throttled real-time tasks during the run (\"{}\")",
                rtlat_audit::counters::RT_THROTTLING_MESSAGE
            ),
            level: Level::Untrustworthy,
        }),
        KernelLogFinding::Read {
            records_lost: true, ..
        } => reasons.push(Reason {
            id: "system.kernel_log".into(),
            text: "RT throttling not fully checked: kernel log records were overwritten before \
                   they could be read"
                .into(),
            level: Level::Caveats,
        }),
        KernelLogFinding::Read { .. } => {}
        KernelLogFinding::NotChecked(why) => reasons.push(Reason {
            id: "system.kernel_log".into(),
            text: format!("RT throttling not checked: the kernel log is not readable ({why})"),
            level: Level::Caveats,
        }),
    }
}

#[cfg(test)]
mod tests;
