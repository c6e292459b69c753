//! rtlat monitor's `"monitor"` member, which its checkpoints and final
//! `--json` add to a cyclictest result document: what `--resume` needs to
//! go on exactly (per thread the counters and the distribution by its
//! buckets' places, the distribution's shape, the first start, the gaps
//! between a checkpoint and the start that resumed from it, and what the
//! samples mean). Its version is `checkpoint_version` ([`VERSION`]).

use serde::{Deserialize, Serialize};

/// The version of the `"monitor"` member this build writes and reads.
pub const VERSION: u32 = 1;

/// The `"monitor"` member.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MonitorState {
    /// [`VERSION`].
    pub checkpoint_version: u32,
    /// When this state was written, Unix seconds.
    pub written: f64,
    /// When the monitored run first started, Unix seconds.
    pub first_start: f64,
    /// When the process that wrote this started measuring.
    pub this_start: f64,
    /// The distributions' shape.
    pub plan: PlanState,
    /// The gaps recorded by `--resume`, oldest first.
    pub gaps: Vec<Gap>,
    /// Where and how the samples were taken; `None` in a checkpoint of an
    /// rtlat that did not record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<Measured>,
    /// Per thread, in order.
    pub threads: Vec<ThreadState>,
}

/// The shape of a distribution (rtlat-core's `DistributionPlan`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanState {
    /// Width of an exact bucket, ns.
    pub width_ns: u64,
    /// Exact buckets.
    pub exact_buckets: u64,
}

/// What a sample of the run means: the host it was taken on and every
/// option that changes it. Two runs' samples add up only when these are
/// the same.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measured {
    /// The host name (`uname -n`).
    pub host: String,
    /// Per thread, in order: its period, ns (`-i`, `-d`).
    pub interval_ns: Vec<i64>,
    /// Per thread: its scheduling policy (`--policy`, `-p`).
    pub policy: Vec<String>,
    /// Per thread: its priority (`-p`).
    pub priority: Vec<u8>,
    /// How the threads wait (`--wait`, `-r`, `-s`, `-x`).
    pub wait: String,
    /// The clock (`-c`).
    pub clock: String,
    /// How the wake-up is read (`--measure`).
    pub measure: String,
    /// The unit of the C figures (`-N`): `us` or `ns`.
    pub unit: String,
}

impl Measured {
    /// The first way in which `self` (a checkpoint's) differs from `ours`
    /// (this run's), in words: what the checkpoint had, what this run has.
    pub fn difference(&self, ours: &Measured) -> Option<String> {
        if self.host != ours.host {
            return Some(format!(
                "it was written on host '{}', this is '{}' (a checkpoint carries on the \
                 figures of one machine)",
                self.host, ours.host
            ));
        }
        let list = |items: &mut dyn Iterator<Item = String>| items.collect::<Vec<_>>().join(",");
        let micros = |ns: &[i64]| {
            list(&mut ns.iter().map(|&n| {
                if n % 1000 == 0 {
                    format!("{} us", n / 1000)
                } else {
                    format!("{n} ns")
                }
            }))
        };
        let rows: [(&str, String, String); 7] = [
            (
                "-i/--interval (or -d)",
                micros(&self.interval_ns),
                micros(&ours.interval_ns),
            ),
            ("--policy", self.policy.join(","), ours.policy.join(",")),
            (
                "-p/--priority",
                list(&mut self.priority.iter().map(u8::to_string)),
                list(&mut ours.priority.iter().map(u8::to_string)),
            ),
            ("--wait", self.wait.clone(), ours.wait.clone()),
            ("-c/--clock", self.clock.clone(), ours.clock.clone()),
            ("--measure", self.measure.clone(), ours.measure.clone()),
            (
                "-N/--nsecs (the unit)",
                self.unit.clone(),
                ours.unit.clone(),
            ),
        ];
        rows.into_iter()
            .find(|(_, theirs, ours)| theirs != ours)
            .map(|(option, theirs, ours)| {
                format!(
                    "its samples were taken with {option} {theirs}, this run's with {ours}: give \
                     the same options"
                )
            })
    }
}

/// Time not measured: from a checkpoint to the start that resumed from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gap {
    /// The checkpoint's time, Unix seconds.
    pub from: f64,
    /// The resumed start, Unix seconds.
    pub to: f64,
    /// `to - from`.
    pub seconds: f64,
}

/// One thread's totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadState {
    /// Thread number.
    pub thread: usize,
    /// Its CPU; -1 when not pinned.
    pub cpu: i64,
    /// Samples.
    pub cycles: u64,
    /// Periods missed.
    pub overruns: u64,
    /// SMIs, with `--smi`.
    pub smi: Option<u64>,
    /// Exact extremes, ns; `null` without samples.
    pub min_ns: Option<i64>,
    /// Largest.
    pub max_ns: Option<i64>,
    /// When the largest was taken, Unix seconds (µs); `null` without
    /// samples or without a time.
    #[serde(default)]
    pub max_time: Option<f64>,
    /// Sum of the samples, ns.
    pub sum_ns: i128,
    /// C's figures in the run's unit: smallest, largest, last, sum.
    pub compat_min: i64,
    /// Largest.
    pub compat_max: i64,
    /// Last.
    pub compat_act: i64,
    /// Sum.
    pub compat_sum: i64,
    /// Samples below zero.
    pub below_zero: u64,
    /// Samples above the distribution's top.
    pub above_top: u64,
    /// Wraps lost.
    pub lost_wraps: u64,
    /// (place, count) of every non-empty bucket.
    pub cells: Vec<(u64, u64)>,
}

/// The members a monitor adds at the end of its result document:
/// `"monitor"`, then `"timeline"`, one `--stats-file` line
/// ([`crate::timeline::StatsLine`]) per thread and 5 minutes, which `L`
/// writes one by one.
#[derive(Clone, Debug, Serialize)]
pub struct MonitorMembers<'a, L> {
    /// The monitor's state.
    pub monitor: &'a MonitorState,
    /// Its timeline.
    pub timeline: L,
}
