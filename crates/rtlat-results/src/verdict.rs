//! The `"verdict"` object of a document, as serde types: the verdict on
//! a run in two parts, the measurement ([`Measurement`]: was the number
//! measured right?) and the machine ([`Machine`]: is it set up for
//! real-time work?), each the worst of its [`Reason`]s, the single
//! [`Level`] derived from the two, and the projection
//! ([`rtlat_stats::projection::Projection`]).
//!
//! The judgement that fills it (which reasons a run gives, from its
//! report, audit and counters) is crate `rtlat-verdict`'s; these are the
//! types alone, with what follows from them without a run.

use rtlat_stats::projection::Projection;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

/// How far a run's numbers can be trusted, from best to worst: derived
/// from the two parts ([`Level::of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The measurement is valid and the machine ready.
    Trustworthy,
    /// The numbers are right, with the reasons given to weigh them.
    Caveats,
    /// The measurement is invalid: the numbers say little or nothing.
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

    /// The level the two parts give: untrustworthy iff the measurement is
    /// invalid; trustworthy iff it is valid and the machine ready.
    pub fn of(measurement: Measurement, machine: Machine) -> Level {
        match (measurement, machine) {
            (Measurement::Invalid, _) => Level::Untrustworthy,
            (Measurement::Valid, Machine::Ready) => Level::Trustworthy,
            _ => Level::Caveats,
        }
    }
}

/// Was the number measured right? From best to worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Measurement {
    /// Nothing was seen that puts the numbers in doubt.
    Valid,
    /// The numbers were measured, with the reasons given to weigh them.
    Doubtful,
    /// The numbers say little or nothing about the machine.
    Invalid,
}

impl Measurement {
    /// Every level, best first.
    pub const ALL: [Measurement; 3] = [
        Measurement::Valid,
        Measurement::Doubtful,
        Measurement::Invalid,
    ];

    /// `valid`, `doubtful`, `invalid`.
    pub const fn name(self) -> &'static str {
        match self {
            Measurement::Valid => "valid",
            Measurement::Doubtful => "doubtful",
            Measurement::Invalid => "invalid",
        }
    }
}

/// Is the machine set up for real-time work on the measured CPUs? From
/// best to worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Machine {
    /// No finding of the audit at `warn` or `bad` (or no audit made).
    Ready,
    /// Findings at `warn`: latencies may be higher than the machine can do.
    Caveats,
    /// A finding at `bad`: results are meaningless for real-time work.
    NotReady,
}

impl Machine {
    /// Every level, best first.
    pub const ALL: [Machine; 3] = [Machine::Ready, Machine::Caveats, Machine::NotReady];

    /// `ready`, `caveats`, `not-ready`.
    pub const fn name(self) -> &'static str {
        match self {
            Machine::Ready => "ready",
            Machine::Caveats => "caveats",
            Machine::NotReady => "not-ready",
        }
    }
}

/// Which question a reason answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Part {
    /// Was the number measured right?
    Measurement,
    /// Is the machine set up for real-time work?
    Machine,
}

impl Part {
    /// `measurement`, `machine`.
    pub const fn name(self) -> &'static str {
        match self {
            Part::Measurement => "measurement",
            Part::Machine => "machine",
        }
    }
}

/// A reason's own level, in its part's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReasonLevel {
    /// A reason about the measurement.
    Measurement(Measurement),
    /// A finding about the machine.
    Machine(Machine),
}

impl ReasonLevel {
    /// The part it belongs to.
    pub const fn part(self) -> Part {
        match self {
            ReasonLevel::Measurement(_) => Part::Measurement,
            ReasonLevel::Machine(_) => Part::Machine,
        }
    }

    /// Its name in its part's words: `doubtful`, `not-ready`.
    pub const fn name(self) -> &'static str {
        match self {
            ReasonLevel::Measurement(m) => m.name(),
            ReasonLevel::Machine(m) => m.name(),
        }
    }

    /// 0 (none), 1 or 2 (the worst of its part): which reason of a part
    /// matters most.
    pub const fn rank(self) -> u8 {
        match self {
            ReasonLevel::Measurement(m) => m as u8,
            ReasonLevel::Machine(m) => m as u8,
        }
    }
}

/// One reason for a part below its best.
#[derive(Clone, Debug, PartialEq)]
pub struct Reason {
    /// Stable identifier: `setup.<audit check id>`, `samples.insufficient`,
    /// `thread.involuntary_switches`, `system.steal`, ...
    pub id: String,
    /// What was seen, in a sentence.
    pub text: String,
    /// The level this reason alone gives its part.
    pub level: ReasonLevel,
    /// For a finding of the audit: its fact alone, what the text shows
    /// (the audit says why and how to fix it).
    pub fact: Option<String>,
}

impl Reason {
    /// A reason about the measurement.
    pub fn measurement(id: &str, text: String, level: Measurement) -> Reason {
        Reason {
            id: id.to_string(),
            text,
            level: ReasonLevel::Measurement(level),
            fact: None,
        }
    }

    /// The part it belongs to.
    pub fn part(&self) -> Part {
        self.level.part()
    }
}

/// `{"id", "text", "part", "level"}`, the level in the part's words.
impl Serialize for Reason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut r = s.serialize_struct("Reason", 4)?;
        r.serialize_field("id", &self.id)?;
        r.serialize_field("text", &self.text)?;
        r.serialize_field("part", self.part().name())?;
        r.serialize_field("level", self.level.name())?;
        r.end()
    }
}

/// The verdict: the `"verdict"` object of the JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// Derived from the two parts ([`Level::of`]).
    pub level: Level,
    /// The worst level of the measurement's reasons; valid without any.
    pub measurement: Measurement,
    /// The worst level of the machine's findings; ready without any.
    pub machine: Machine,
    /// Why, in the order: set-up, samples, threads, system, clock.
    pub reasons: Vec<Reason>,
    /// The share of the measured CPUs' time the hypervisor stole during
    /// the run (0.0283: 2.83 %; 0 on bare metal); `None` (`null`) when
    /// not counted. `rtlat compare` reads it: a run above its
    /// `HOST_STALLS_STEAL` has the host's stalls in its tail.
    pub steal_share: Option<f64>,
    /// How long the run must be, at its interval, for every percentile
    /// quoted to have enough samples beyond it (`rtlat_verdict`'s
    /// `SAMPLES_BEYOND_NEEDED`) and for
    /// the longest horizon asked to be projected (when the tool keeps
    /// blocks); `None` when it was long enough.
    pub suggested_duration_s: Option<f64>,
    /// The worst case over the horizons asked, or why there is none;
    /// `None` (`null`) when the tool keeps no blocks.
    pub projection: Option<Projection>,
    /// `--explain`: the worst explained sample and its dominant cause;
    /// it gives no level of its own (a cause is not a doubt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_sample: Option<WorstSample>,
    /// What `suggested_duration_s` is for (the text says it).
    #[serde(skip)]
    pub needs: Needs,
    /// Whether an audit was made (the machine's part says nothing
    /// without one).
    #[serde(skip)]
    pub audited: bool,
}

/// The durations `suggested_duration_s` is the longest of.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Needs {
    /// For the highest percentile quoted, s.
    pub percentiles_s: Option<f64>,
    /// For the longest horizon asked: (horizon, run needed), s.
    pub projection_s: Option<(f64, f64)>,
}

impl Needs {
    /// The longest, rounded up to the millisecond.
    pub fn longest(self) -> Option<f64> {
        [self.percentiles_s, self.projection_s.map(|(_, s)| s)]
            .into_iter()
            .flatten()
            .reduce(f64::max)
            .map(|s| (s * 1000.0).ceil() / 1000.0)
    }
}

/// The worst sample `--explain` explained: its largest component (or the
/// trace window, when the latency began before it and the window is
/// longer) and that one's largest cause the trace saw.
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
    /// Its deadline, ns since the start of the run.
    pub due_at_ns: i64,
    /// Its wake-up, ns since the start of the run (as `"at_ns"` in
    /// `"explain"`).
    pub at_ns: i64,
    /// When the latency began before the trace window: the window's span,
    /// ns (the cause is the window's; before it, nothing is known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_ns: Option<i64>,
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

impl Verdict {
    /// A verdict of `reasons` alone: the parts their worst levels, the
    /// level derived; nothing suggested or projected.
    pub fn from_reasons(reasons: Vec<Reason>) -> Verdict {
        let measurement = reasons
            .iter()
            .filter_map(|r| match r.level {
                ReasonLevel::Measurement(m) => Some(m),
                ReasonLevel::Machine(_) => None,
            })
            .max()
            .unwrap_or(Measurement::Valid);
        let machine = reasons
            .iter()
            .filter_map(|r| match r.level {
                ReasonLevel::Machine(m) => Some(m),
                ReasonLevel::Measurement(_) => None,
            })
            .max()
            .unwrap_or(Machine::Ready);
        Verdict {
            level: Level::of(measurement, machine),
            measurement,
            machine,
            reasons,
            steal_share: None,
            suggested_duration_s: None,
            projection: None,
            worst_sample: None,
            needs: Needs::default(),
            audited: false,
        }
    }

    /// The reasons of `part`, the most important first (highest level
    /// first, then in order).
    pub fn reasons_of(&self, part: Part) -> Vec<&Reason> {
        let mut of_part: Vec<&Reason> = self.reasons.iter().filter(|r| r.part() == part).collect();
        of_part.sort_by_key(|r| std::cmp::Reverse(r.level.rank()));
        of_part
    }
}
