//! The verdict on a run, in two parts: was the number measured right (the
//! measurement), and is the machine set up for real-time work (the
//! machine)? With the worst case projected over longer horizons.
//!
//! Every result carries one (the JSON's `"verdict"`); `--verdict` prints
//! it after the summary (short, or every reason with `--verdict=full`:
//! the binary's `report::verdict::text`). It is made from what the run itself saw, never from the
//! latencies' values:
//! - the measurement ([`Measurement`]): sample sufficiency (a percentile
//!   with fewer than [`SAMPLES_BEYOND_NEEDED`] samples beyond it is not
//!   supported by the data); each measuring thread (no sample, an error, a
//!   policy that is not real-time, missed periods, involuntary context
//!   switches, migrations, page faults, SMIs); the system over the run
//!   ([`SystemDisturbances`]: steal time of the measured CPUs, thermal
//!   throttling, RT throttling in the kernel log, or a log not read); a
//!   clock coarser than the unit the latencies are shown in;
//! - the machine ([`Machine`]): the audit's `warn`/`bad` findings that
//!   concern the measured CPUs (or the whole machine): any `bad` makes it
//!   not ready, a `warn` gives caveats.
//!
//! Each reason has a level in its part's words, and each part is the worst
//! of its reasons: [`Measurement::Invalid`] for what makes the numbers
//! meaningless (a thread without a sample or with an error, missed periods
//! above [`MISSED_PERIODS_UNTRUSTWORTHY`] of the periods, steal above
//! [`STEAL_UNTRUSTWORTHY`] of the measured CPUs' time, RT throttling
//! during the run), [`Measurement::Doubtful`] for every other measurement
//! reason.
//!
//! The single [`Level`] of earlier versions stays, DERIVED from the two
//! (so that `--fail-if verdict=...` keeps its meaning): untrustworthy iff
//! the measurement is invalid, trustworthy iff it is valid and the machine
//! ready, caveats otherwise.
//!
//! The projection (`rtlat_stats::projection`) is made from the run's
//! blocks, when the tool keeps them; it gives no level (a projection
//! refused is not a doubt about the numbers measured), but it extends
//! `suggested_duration_s`.
//!
//! This crate is the judgement alone, without I/O: the caller reads the
//! counters and the clock's resolution and hands them over as
//! [`Evidence`]; the `"verdict"` object it fills is
//! [`rtlat_results::verdict`]'s (its types are re-exported here).

use rtlat_audit::counters::{KernelLogFinding, SystemDisturbances};
use rtlat_audit::{Audit, Finding, Status};
use rtlat_core::STANDARD_PERCENTILES;
use rtlat_core::{RunReport, ThreadReport, ThreadStep};
use rtlat_stats::blocks::BlockSeries;
use rtlat_stats::projection::{self, Request};

pub use rtlat_results::verdict::{
    Level, Machine, Measurement, Needs, Part, Reason, ReasonLevel, Verdict, WorstCause, WorstSample,
};

pub mod words;

/// Samples that must lie beyond a percentile for the data to support it.
pub const SAMPLES_BEYOND_NEEDED: u64 = 10;

/// Missed periods, as a share of all periods of a thread, above which the
/// measurement is invalid (1 %): its samples are then not the periods'.
pub const MISSED_PERIODS_UNTRUSTWORTHY: f64 = 0.01;

/// Steal time, as a share of the measured CPUs' time over the run, above
/// which the measurement is invalid (10 %): the hypervisor's scheduling,
/// not the kernel's, made its latencies.
pub const STEAL_UNTRUSTWORTHY: f64 = 0.10;

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
    /// Each thread's blocks (empty: the tool keeps none, nothing is
    /// projected).
    pub blocks: &'a [BlockSeries],
    /// What to project (`--horizon`, `--deadline`).
    pub request: Option<&'a Request>,
    /// The resolution of the run's clock, ns (`clock_getres`); `None`
    /// where it does not apply (a synthetic run).
    pub clock_resolution_ns: Option<i64>,
}

impl<'a> Evidence<'a> {
    /// A run alone: no audit, no system counters, no blocks.
    pub fn of(report: &'a RunReport) -> Evidence<'a> {
        Evidence {
            report,
            audit: None,
            system: None,
            blocks: &[],
            request: None,
            clock_resolution_ns: None,
        }
    }
}

impl<'a> Evidence<'a> {
    /// Judges the run: its reasons, the parts and level they give, what
    /// the blocks project and how long a run would be long enough.
    pub fn judge(self) -> Verdict {
        let evidence = self;
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
        reasons.extend(
            evidence
                .clock_resolution_ns
                .and_then(|ns| clock_reason(ns, report)),
        );
        let default_request = Request::default();
        let request = evidence.request.unwrap_or(&default_request);
        let together = (!evidence.blocks.is_empty())
            .then(|| BlockSeries::together(&evidence.blocks.iter().collect::<Vec<_>>()))
            .flatten();
        let projection = together
            .as_ref()
            .map(|series| projection::project(series, request));
        let needs = Needs {
            percentiles_s: sufficiency.suggested_duration_s(),
            projection_s: together
                .as_ref()
                .and_then(|series| projection_need(series, request)),
        };
        let mut verdict = Verdict::from_reasons(reasons);
        verdict.suggested_duration_s = needs.longest();
        verdict.needs = needs;
        verdict.projection = projection;
        verdict.audited = evidence.audit.is_some();
        verdict.steal_share = evidence
            .system
            .and_then(|system| system.ticks)
            .and_then(|ticks| ticks.steal_share());
        verdict
    }
}

/// The run needed to project the longest horizon of `request` from
/// `series`: (horizon, duration) when the run is shorter than that.
fn projection_need(series: &BlockSeries, request: &Request) -> Option<(f64, f64)> {
    let horizon = request.horizons_s.iter().copied().reduce(f64::max)?;
    let needed = projection::needed_duration_s(horizon);
    (series.covered_s() < needed).then_some((horizon, needed))
}

/// The clock's resolution against the unit the latencies are shown in
/// (1 us, 1 ns with `-N`): coarser, every latency is a multiple of it
/// and the figures show a precision they do not have.
fn clock_reason(resolution_ns: i64, report: &RunReport) -> Option<Reason> {
    let shown_ns = report.resolution.nanos_per_unit();
    (resolution_ns > shown_ns).then(|| {
        Reason::measurement(
            "clock.resolution",
            format!(
                "the clock's resolution ({}) is coarser than the {} the latencies are shown \
                 in: each latency is a multiple of it",
                words::duration_ns(resolution_ns),
                words::duration_ns(shown_ns)
            ),
            Measurement::Doubtful,
        )
    })
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

/// The findings at `warn` (caveats) or `bad` (not ready) that concern
/// the whole machine or one of `cpus` (`None`: any CPU).
pub fn setup_reasons(findings: &[Finding], cpus: &Option<Vec<usize>>, reasons: &mut Vec<Reason>) {
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
            let level = if finding.status == Status::Bad {
                Machine::NotReady
            } else {
                Machine::Caveats
            };
            reasons.push(Reason {
                id: format!("setup.{}", finding.id),
                text,
                level: ReasonLevel::Machine(level),
                fact: Some(finding.fact.clone()),
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
            level: ReasonLevel::Measurement(Measurement::Doubtful),
            fact: None,
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

/// Reasons that concern threads, one per kind naming every thread
/// concerned: `f` gives a thread's count (or `None`: not concerned).
fn per_thread(
    threads: &[ThreadReport],
    id: &str,
    what: &str,
    level: impl Fn(&ThreadReport) -> Measurement,
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
    Some(Reason::measurement(
        id,
        format!("{what}: {}", list.join(", ")),
        worst,
    ))
}

fn thread_reasons(threads: &[ThreadReport], reasons: &mut Vec<Reason>) {
    let caveats = |_: &ThreadReport| Measurement::Doubtful;
    let untrustworthy = |_: &ThreadReport| Measurement::Invalid;
    let nonzero = |n: u64| (n > 0).then(|| n.to_string());
    let disturbance = |get: fn(&rtlat_core::Disturbances) -> Option<u64>| {
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
                "missed periods (above {}% of a thread's periods the measurement is invalid)",
                MISSED_PERIODS_UNTRUSTWORTHY * 100.0
            ),
            |t| {
                if missed_share(t) > MISSED_PERIODS_UNTRUSTWORTHY {
                    Measurement::Invalid
                } else {
                    Measurement::Doubtful
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
                 measurement is invalid)",
                share * 100.0,
                STEAL_UNTRUSTWORTHY * 100.0
            ),
            level: ReasonLevel::Measurement(if share > STEAL_UNTRUSTWORTHY {
                Measurement::Invalid
            } else {
                Measurement::Doubtful
            }),
            fact: None,
        });
    }
    if let Some(events) = system.thermal_throttle_events
        && events > 0
    {
        reasons.push(Reason {
            id: "system.thermal_throttling".into(),
            text: format!("{events} thermal-throttle events on {cpus} during the run"),
            level: ReasonLevel::Measurement(Measurement::Doubtful),
            fact: None,
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
            level: ReasonLevel::Measurement(Measurement::Invalid),
            fact: None,
        }),
        KernelLogFinding::Read {
            records_lost: true, ..
        } => reasons.push(Reason {
            id: "system.kernel_log".into(),
            text: "RT throttling not fully checked: kernel log records were overwritten before \
                   they could be read"
                .into(),
            level: ReasonLevel::Measurement(Measurement::Doubtful),
            fact: None,
        }),
        KernelLogFinding::Read { .. } => {}
        KernelLogFinding::NotChecked(why) => reasons.push(Reason {
            id: "system.kernel_log".into(),
            text: format!("RT throttling not checked: the kernel log is not readable ({why})"),
            level: ReasonLevel::Measurement(Measurement::Doubtful),
            fact: None,
        }),
    }
}
