//! The load parts of a document, with `--load` or `--load-schedule`: the
//! top-level `"load"` object ([`LoadDto`]: the load as given, how long it
//! ran, the machine's activity over that time and each kind's work) and,
//! for a staged load, the `"phases"` array ([`PhaseDto`]: each phase the
//! run reached, its load and each thread's figures in it).

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::document::Percentiles;

/// The top-level `"load"` object.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LoadDto<'a> {
    /// The load as given (`cpu:2,memory`, `idle=10,cpu:1=10`).
    pub spec: &'a str,
    /// How long it ran, s (3 decimals).
    pub seconds: f64,
    /// The machine's activity meanwhile.
    #[serde(flatten)]
    pub activity: ActivityDto,
    /// Each kind's work.
    pub kinds: Vec<KindDto>,
}

/// The machine's activity over a load (`/proc/stat`), each `null` where
/// it could not be read.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct ActivityDto {
    /// Busy share of all CPUs, % (1 decimal).
    pub cpu_busy_percent: Option<f64>,
    /// Context switches a second (whole).
    pub context_switches_per_sec: Option<f64>,
    /// Interrupts a second (whole).
    pub interrupts_per_sec: Option<f64>,
}

/// One kind of load's work.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct KindDto {
    /// `cpu`, `memory`, ...
    pub kind: &'static str,
    /// Its workers.
    pub workers: usize,
    /// Operations done.
    pub ops: u64,
    /// How long they ran, s (3 decimals).
    pub seconds: f64,
    /// Operations a second (whole).
    pub ops_per_sec: f64,
}

/// One phase of the `"phases"` array: its name, start and duration (s),
/// its load (`null` if its load did not run) and a `"thread"` object of
/// each thread's figures in it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PhaseDto<'a> {
    /// The phase's name (`idle`, `cpu:1`).
    pub name: &'a str,
    /// When it started, s into the run (3 decimals).
    pub start: f64,
    /// How long it lasted, s (3 decimals).
    pub duration: f64,
    /// How long it was planned to last, s (3 decimals).
    pub planned_duration: f64,
    /// Its load, `null` if its load did not run.
    pub load: Option<PhaseLoadDto>,
    /// Each thread's figures in it.
    pub thread: Numbered<PhaseThreadDto>,
}

/// A phase's load: when it really started (after the start of the
/// measurement; the first phase's load starts before it, at 0) and how
/// long it ran, then as the top-level `"load"`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PhaseLoadDto {
    /// When it started, s into the run (3 decimals).
    pub start: f64,
    /// How long it ran, s (3 decimals).
    pub seconds: f64,
    /// The machine's activity meanwhile.
    #[serde(flatten)]
    pub activity: ActivityDto,
    /// Each kind's work.
    pub kinds: Vec<KindDto>,
}

/// A thread's figures in a phase: the top-level thread's keys that apply
/// to a part of the run (`min`, `max`, `avg` in the run's unit; `null`
/// without samples).
#[derive(Clone, Debug, serde::Serialize)]
pub struct PhaseThreadDto {
    /// Samples taken.
    pub cycles: u64,
    /// The smallest, in the run's unit.
    pub min: Option<i64>,
    /// The largest, in the run's unit.
    pub max: Option<i64>,
    /// `%.2f` of the average.
    pub avg: Option<f64>,
    /// Periods missed.
    pub overruns: u64,
    /// The smallest, ns.
    pub min_ns: Option<i64>,
    /// The largest, ns.
    pub max_ns: Option<i64>,
    /// The mean, ns (1 decimal).
    pub mean_ns: Option<f64>,
    /// Sample standard deviation in µs, `null` without samples.
    pub stddev: Option<f64>,
    /// Its percentiles, where the run kept a distribution.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentiles: Option<Percentiles>,
}

/// An object of numbered members, `"0": {..}, "1": {..}`, in the order
/// given (a thread's number, then its object).
#[derive(Clone, Debug, Default)]
pub struct Numbered<T>(pub Vec<(usize, T)>);

impl<T: Serialize> Serialize for Numbered<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (number, member) in &self.0 {
            // serde_json writes integer map keys as strings.
            map.serialize_entry(number, member)?;
        }
        map.end()
    }
}
